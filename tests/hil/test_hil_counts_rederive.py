"""HIL: a count that disagrees with the record re-books the street from the dealer's counts and
the order of the pulls (docs/irregularities.md, *A count that disagrees with the record*). A
seat given two cards of a street while the dealer goes on round the table, and a seat skipped
with every later card one seat on: the record equals the table afterwards, the display shows
no upcard a seat does not hold and names no first to act on a pair it does not have; every
street from 4th, both profiles, stud, stud-8 and razz, heads-up to 8 seats, and through the
virtual shoe on a pty."""

from __future__ import annotations

import pytest
from irregular_help import assert_matches_with_extras, deck, physical, run

from hil.dealer import HandScript, Irregularity

_matches = assert_matches_with_extras


# (street, rules, game, seats, the seat concerned): every street from 4th, both profiles, the
# three games, heads-up and 8 seats (7th street with 8 seats runs short: a community card or a
# scramble, which this rule leaves to the floor)
CASES = [
    ("4th", "tda", "stud", [1, 2, 3, 4, 5], 3),
    ("5th", "house", "stud", [1, 2, 3, 4, 5], 3),
    ("6th", "tda", "razz", [1, 2, 3, 4], 2),
    ("7th", "house", "stud8", [1, 2, 3, 4, 5], 2),
    ("7th", "tda", "razz", [2, 5], 2),
    ("5th", "house", "razz", [1, 2, 3, 4, 5, 6, 7, 8], 4),
    ("6th", "tda", "stud8", [1, 2, 3, 4, 5, 6, 7, 8], 1),
    ("4th", "house", "stud8", [3, 7], 3),
]


@pytest.mark.parametrize("street, rules, game, seats, seat", CASES)
def test_two_cards_to_a_seat_then_on_round_the_table(street: str, rules: str, game: str, seats: list[int],
                                                    seat: int) -> None:
    irr = [Irregularity("extra-card", street, seat, args={"report": "round"})]
    sc = HandScript(seats, game, rules, deck([]), {}, irregular=irr, acks=["card-not-expected", "house-16.25"])
    (e,), _ = run([sc])
    codes = e.codes()
    assert "extra-card" in codes and "street-rederived" in codes
    k = seats.index(seat)
    assert len(e.hand.seats[k].extra) == 1
    _matches(e)


@pytest.mark.parametrize("street, rules, game, seats, seat", CASES)
def test_a_seat_skipped_and_every_later_card_one_seat_on(street: str, rules: str, game: str, seats: list[int],
                                                         seat: int) -> None:
    if seat == seats[-1]:
        seat = seats[0]
    irr = [Irregularity("skip-seat", street, seat)]
    sc = HandScript(seats, game, rules, deck([]), {}, irregular=irr)
    (e,), _ = run([sc])
    codes = e.codes()
    assert codes.index("card-count-street") < codes.index("street-rederived")
    owed = next(a.message for a in e.alerts if a.code == "street-rederived")
    assert f"seat {seat} is owed its {street} card" in owed
    full = 6 if e.hand.community_street is not None else 7  # 8 seats: a community card on 7th
    for s in e.hand.seats:
        assert not s.extra and s.card_count == full, s.seat
    _matches(e)


def test_the_display_shows_only_what_each_seat_holds_after_the_counts() -> None:
    """Seat 3 gets two 5th-street cards and the dealer goes on round the table: after the count,
    seat 4 shows the card it holds (not the one booked to it before) and seat 5 likewise."""
    irr = [Irregularity("extra-card", "5th", 3, args={"report": "round"})]
    sc = HandScript([1, 2, 3, 4, 5], "stud", "tda", deck([]), {}, irregular=irr, acks=["card-not-expected", "house-16.25"])
    (e,), dealer = run([sc])
    assert e.picture is not None
    for s in (4, 5):
        phys = physical(e.picture, s)
        assert e.seat(s)["up"] == phys["up"], s
    _matches(e)


@pytest.mark.parametrize("kind", ["extra-card", "skip-seat"])
def test_through_the_shoe_on_a_pty_wire(kind: str) -> None:
    args = {"report": "round"} if kind == "extra-card" else {}
    irr = [Irregularity(kind, "6th", 2, args=args)]
    sc = HandScript([1, 2, 3, 4], "stud", "house", deck([]), {}, irregular=irr,
                    acks=["card-not-expected", "house-16.25"])
    (e,), _ = run([sc], wire=True)
    assert "street-rederived" in e.codes()
    _matches(e)


@pytest.mark.parametrize("street, rules, game, seats, seat", [c for c in CASES if len(c[3]) > 2])
def test_a_count_that_reaches_the_machine_before_the_last_card_of_the_round(
        street: str, rules: str, game: str, seats: list[int], seat: int) -> None:
    """Two cards to a seat, on round the table, and the seat's count reported before the last
    seat's card is read (it was on the wire): the count does not add up until that read comes;
    then the street is booked again, with no stop left asking for more counts."""
    irr = [Irregularity("extra-card", street, seat, args={"report": "round-early"})]
    sc = HandScript(seats, game, rules, deck([]), {}, irregular=irr, acks=["card-not-expected", "house-16.25"])
    (e,), _ = run([sc])
    codes = e.codes()
    assert codes.index("card-count-over") < codes.index("street-rederived")
    assert len(e.hand.seats[seats.index(seat)].extra) == 1
    _matches(e)
