"""HIL: where the counts alone cannot place a street's cards (3rd street, three cards a seat and
two faces; a street dealt with a community card), a count that disagrees with the record stops
the dealer until the dealer places each card of the street (``place-cards``); the placement is
checked against the counts, and the record then equals the table (docs/irregularities.md,
*Placing a street's cards*). Both profiles, stud, stud-8 and razz, heads-up to 8 seats, and
through the virtual shoe on a pty."""

from __future__ import annotations

from pathlib import Path

import pytest
from irregular_help import PROFILES, assert_matches_with_extras, deck, physical, run

from hil.dealer import HandScript, Irregularity
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card, card_text, parse_card
from shoe_ctl.rules.games import Game, bring_in
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import recover

_matches = assert_matches_with_extras


# (rules, game, seats, the seat concerned)
THIRD = [
    ("tda", "stud", [1, 2, 3, 4, 5], 3),
    ("house", "stud8", [1, 2, 3, 4, 5], 2),
    ("house", "razz", [1, 2, 3, 4, 5, 6, 7, 8], 5),
    ("tda", "razz", [2, 6], 2),
    ("house", "stud", [3, 7], 3),
    ("tda", "stud8", [1, 2, 3, 4, 5, 6, 7, 8], 8),
]


@pytest.mark.parametrize("rules, game, seats, seat", THIRD)
def test_two_hole_cards_to_a_seat_at_once_placed_by_the_dealer(rules: str, game: str, seats: list[int],
                                                               seat: int) -> None:
    """Seat N gets two cards in the first round of 3rd street: stopped by the count, the dealer
    places the street's cards; the seat holds its two hole cards early, the next seat is owed its
    card, nobody holds a card too many."""
    irr = [Irregularity("extra-card", "3rd", seat)]
    sc = HandScript(seats, game, rules, deck([]), {}, irregular=irr)
    (e,), _ = run([sc])
    codes = e.codes()
    assert codes.index("card-placement") < codes.index("street-placed")
    assert "extra-card" not in codes and all(not s.extra for s in e.hand.seats)
    _matches(e)


# heads-up, the first seat's two cards then one to the other leave each seat three cards, two of
# them where the record has the other's: no count can show it; the last seat's can
ROUND = [(r, g, seats, seats[-1] if len(seats) == 2 else seat) for r, g, seats, seat in THIRD]


@pytest.mark.parametrize("rules, game, seats, seat", ROUND)
def test_two_cards_to_a_seat_then_on_round_the_table_on_third(rules: str, game: str, seats: list[int],
                                                              seat: int) -> None:
    """Seat N gets two cards, the dealer goes on round the table and then follows the display:
    every later card lies one place on, some face down where the record has an upcard. Counted
    before the betting, the street is placed by the dealer: the seat has a card too many, the seat
    left short is owed its hole card (a downcard, though it holds its upcard), and the bring-in is
    worked out from the upcards the seats hold."""
    irr = [Irregularity("extra-card", "3rd", seat, args={"report": "round"})]
    sc = HandScript(seats, game, rules, deck([]), {}, irregular=irr, acks=["house-16.25"])
    (e,), _ = run([sc])
    codes = e.codes()
    assert codes.index("card-placement") < codes.index("street-placed")
    assert len(e.hand.seats[seats.index(seat)].extra) == 1
    _matches(e)
    assert e.picture is not None
    doors: list[Card | None] = [parse_card(physical(e.picture, s)["up"][0]) for s in seats]
    k = bring_in(Game(game), doors)
    assert k is not None and e.bring_in == seats[k]


@pytest.mark.parametrize("rules, game, seats, seat", THIRD)
def test_a_seat_skipped_on_third_placed_by_the_dealer(rules: str, game: str, seats: list[int], seat: int) -> None:
    if seat == seats[-1]:
        seat = seats[0]
    irr = [Irregularity("skip-seat", "3rd", seat)]
    sc = HandScript(seats, game, rules, deck([]), {}, irregular=irr)
    (e,), _ = run([sc])
    codes = e.codes()
    assert codes.index("card-placement") < codes.index("street-placed")
    for s in e.hand.seats:
        assert not s.extra and s.card_count == (6 if e.hand.community_street else 7), s.seat
    _matches(e)


EIGHT = [1, 2, 3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize("rules, game, seat", [("tda", "stud", 3), ("house", "razz", 8), ("tda", "stud8", 1),
                                                ("house", "stud", 5)])
def test_the_community_card_dealt_to_a_seat_then_one_to_the_centre(rules: str, game: str, seat: int) -> None:
    """8 seats, 7th street short (RP-10-H, house 16.20): the community card is dealt face down to a
    seat, the next card goes to the centre, and the seat is counted one over. The dealer places the
    street's cards: the card in the centre is the community card, the seat's is a card too many
    there (house 16.25: eight cards with the community card), and the stop lasts until then."""
    irr = [Irregularity("community-to-seat", "7th", seat)]
    sc = HandScript(EIGHT, game, rules, deck([]), {}, irregular=irr, acks=["house-16.25"])
    (e,), _ = run([sc])
    assert e.hand.community_street == "7th"
    codes = e.codes()
    assert codes.index("card-placement") < codes.index("street-placed") < codes.index("house-16.25")
    assert e.picture is not None and [card_text(e.hand.community)] == [card_text(c) for c in e.picture.community]
    assert len(e.hand.seats[seat - 1].extra) == 1
    _matches(e)


@pytest.mark.parametrize("kind, street, seats, seat", [("extra-card", "3rd", [1, 2, 3, 4], 2),
                                                       ("community-to-seat", "7th", EIGHT, 4)])
def test_through_the_shoe_on_a_pty_wire(kind: str, street: str, seats: list[int], seat: int) -> None:
    args = {"report": "round"} if kind == "extra-card" else {}
    irr = [Irregularity(kind, street, seat, args=args)]
    sc = HandScript(seats, "stud", "house", deck([]), {}, irregular=irr, acks=["house-16.25"])
    (e,), _ = run([sc], wire=True)
    assert "street-placed" in e.codes()
    _matches(e)


@pytest.mark.parametrize("at", ["stop", "placed"])
def test_recovery_from_the_journal_during_and_after_the_placement(tmp_path: Path, at: str) -> None:
    """Every event journaled; the service stops while the placement STOP is up (or just after the
    placement): recovery from the journal rebuilds the same state, the same sheet or record of
    every seat and the same instruction."""
    irr = [Irregularity("extra-card", "3rd", 2, args={"report": "round"})]
    sc = HandScript([1, 2, 3, 4], "razz", "tda", deck([]), {}, irregular=irr, acks=["house-16.25"])
    log: list[object] = []
    run([sc], log=log)
    placed = next(k for k, ev in enumerate(log) if isinstance(ev, DealerInput) and ev.action is DealerAction.PLACE_CARDS)
    stop = placed if at == "stop" else placed + 1
    live = Dealing(PROFILES)
    live.start()
    with Journal(tmp_path / "j.sqlite3", table="t", profile="tda") as journal:
        for ev in log[:stop]:
            journal.append(ev)
            live.handle(ev)
        machine, _last, _report = recover(journal, lambda: Dealing(PROFILES))
    assert machine.state == live.state
    assert machine.public_state() == live.public_state() and machine.instruction() == live.instruction()
    assert ("placement" in live.public_state()) == (at == "stop")
    assert machine.hand is not None and live.hand is not None
    assert [(s.down, s.up, s.extra) for s in machine.hand.seats] == [(s.down, s.up, s.extra) for s in live.hand.seats]
