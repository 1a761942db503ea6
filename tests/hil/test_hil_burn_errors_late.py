"""HIL: a burn error ruled "stands" (house 16.15 on the final downcard; TDA Rule 38 on any street)
leaves the alert and the display saying the same thing, wherever in the street it is found:
two burns found once every card of the street is out give the card read after the street to the
player the ruling leaves owed one (no card more is asked for, no eighth card); no burn found then
burns nothing and goes to the betting. Both profiles, stud, stud-8 and razz, heads-up to six
seats, and through the virtual shoe on a pty."""

from __future__ import annotations

from typing import Any

import pytest
from irregular_help import Ended, deck, physical, run

from hil.dealer import HandScript, Irregularity
from shoe_ctl.events import Alert, Instruction, Signal
from shoe_ctl.rules.cards import card_text


class Order:
    """Alerts and instructions in the order the machine gave them."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def handle(self, c: object) -> None:
        if isinstance(c, (Alert, Instruction)):
            self.seen.append(c)

    def close(self) -> None:
        return None


def _matches(e: Ended) -> None:
    assert e.picture is not None
    for s in e.hand.seats:
        phys = physical(e.picture, s.seat)
        assert [card_text(c) for c in s.down] == phys["down"], s.seat
        assert [card_text(c) for c in s.up] == phys["up"], s.seat
        assert not s.extra and s.card_count == 7, s.seat
    assert e.hand.stub_count() == len(e.picture.stub())


def _agree(order: Order) -> str:
    """The ruling's words and the next instruction agree; returns the ruling's words."""
    k = next(n for n, c in enumerate(order.seen) if isinstance(c, Alert) and c.code == "house-16.15")
    words = order.seen[k].message
    nxt = next(c for c in order.seen[k + 1:] if isinstance(c, Instruction) and c.signal is not Signal.STOP)
    if "burn one card now" in words:
        assert nxt.signal is Signal.BURN, (words, nxt.text)
    elif "card is out" in words:
        assert nxt.signal in (Signal.BETTING, Signal.SHOWDOWN), (words, nxt.text)
    else:
        assert "deal on" in words and nxt.signal in (Signal.DEAL, Signal.BURN), (words, nxt.text)
    return words


CASES = [
    ("7th", "house", "stud", [1, 2, 3, 4]),
    ("7th", "tda", "razz", [1, 2, 3, 4, 5, 6]),
    ("7th", "house", "stud8", [4, 6]),
    ("4th", "tda", "stud", [1, 2, 3]),
    ("5th", "tda", "stud8", [2, 3, 5, 8]),
    ("6th", "tda", "razz", [1, 7]),
]


@pytest.mark.parametrize("street, rules, game, seats", CASES)
def test_two_burns_found_after_the_street_stand_without_an_eighth_card(street: str, rules: str, game: str,
                                                                      seats: list[int]) -> None:
    irr = [Irregularity("burn-two", street, args={"stands": True, "after": "street"})]
    sc = HandScript(seats, game, rules, deck([]), {}, irregular=irr, acks=["card-not-expected"])
    order = Order()
    (e,), _ = run([sc], sinks=(order,))
    words = _agree(order)
    assert f"seat {seats[-1]}'s" in words
    _matches(e)


@pytest.mark.parametrize("street, rules, game, seats", CASES)
@pytest.mark.parametrize("found", ["late", "mid-street"])
def test_no_burn_standing_says_what_the_display_asks(street: str, rules: str, game: str, seats: list[int],
                                                     found: str) -> None:
    count = len(seats) if found == "late" else max(1, len(seats) - 1)
    irr = [Irregularity("no-burn", street, count=count, args={"stands": True})]
    sc = HandScript(seats, game, rules, deck([]), {}, irregular=irr)
    order = Order()
    (e,), _ = run([sc], sinks=(order,))
    words = _agree(order)
    assert ("burn one card now" in words) == (count < len(seats))
    _matches(e)


def test_two_burns_found_late_through_the_shoe_on_a_pty_wire() -> None:
    irr = [Irregularity("burn-two", "7th", args={"stands": True, "after": "street"})]
    sc = HandScript([1, 2, 3], "stud", "house", deck([]), {}, irregular=irr, acks=["card-not-expected"])
    order = Order()
    (e,), _ = run([sc], wire=True, sinks=(order,))
    _agree(order)
    _matches(e)
