"""HIL: the next deck's first card pulled before *Hand complete* (the hand's last card out, the
showdown on or the hand won). The dealer is stopped and told to hold it aside, out of play; the
hand that ended does not count it, and the next hand counts it out of its deck: 51 cards in the
shoe all hand, as on the felt. Both profiles, stud, stud-8 and razz, heads-up to 8 seats, and
through the virtual shoe on a pty."""

from __future__ import annotations

import pytest
from irregular_help import deck, run

from hil.dealer import HandScript, Irregularity
from shoe_ctl.rules.cards import card_text


@pytest.mark.parametrize("rules, game, seats, fold", [
    ("tda", "stud", [1, 2, 3, 4], False),
    ("house", "razz", [2, 7], False),
    ("house", "stud8", [1, 2, 3, 4, 5, 6, 7, 8], False),
    ("tda", "razz", [1, 2, 3], True),
])
def test_the_next_hand_counts_the_card_pulled_before_hand_complete(rules: str, game: str, seats: list[int],
                                                                  fold: bool) -> None:
    acts = {"4th": [("fold", s) for s in seats[1:]]} if fold else {}
    first = HandScript(seats, game, rules, deck([]), acts, irregular=[Irregularity("next-deck", "7th")],
                       acks=["card-not-expected"])
    second = HandScript(seats, game, rules, None, {})
    (a, b), _ = run([first, second])
    stop = next(x.message for x in a.alerts if x.code == "card-not-expected")
    assert "hold it aside" in stop and "next hand counts it" in stop
    assert not a.hand.set_aside  # the hand that ended does not count it
    assert b.picture is not None
    assert len(b.picture.aside) == (0 if b.picture.scrambles else 1)  # a short stub's scramble takes it in
    assert [card_text(c) for c in b.hand.set_aside] == [card_text(c) for c in b.picture.aside]
    assert b.hand.stub_count() == len(b.picture.stub())
    assert "duplicate-card" not in b.codes()


def test_the_next_deck_early_through_the_shoe_on_a_pty_wire() -> None:
    first = HandScript([1, 2, 3], "stud", "house", deck([]), {}, irregular=[Irregularity("next-deck", "7th")],
                       acks=["card-not-expected"])
    (a, b), _ = run([first, HandScript([1, 2, 3], "stud", "house", None, {})], wire=True)
    assert b.picture is not None and b.hand.stub_count() == len(b.picture.stub())
