"""HIL : where no betting separates two streets (every player but one all-in),
the machine asks the dealer to confirm each street complete before the next street's first card,
so it never books a read to a seat (or a burn) on a guess. A card too many to a seat is read
before the confirmation: the dealer is stopped at once, booked to no seat, told what may have
happened; the dealer's count of the seat settles it (the card is the seat's, house 16.25 stays
effective); a burn taken before the confirmation (no mistake) is booked as the burn when the
dealer says so (``premature-done``). Cost: one input per street dealt with no betting round."""

from __future__ import annotations

import pytest
from irregular_help import Ended, deck, physical, run

from hil.dealer import HandScript, Irregularity
from shoe_ctl.rules.cards import card_text

FOUR = [1, 2, 3, 4]


def _matches(e: Ended) -> None:
    """Every seat's cards (its street cards in order, and any card too many) equal the dealer's,
    the burns and the stub."""
    assert e.picture is not None
    for s in e.hand.seats:
        phys = physical(e.picture, s.seat)
        extra = {card_text(c) for c in s.extra}
        for face in ("down", "up"):  # the seat's street cards in order, the card too many apart
            assert [card_text(c) for c in getattr(s, face)] == [c for c in phys[face] if c not in extra], s.seat
        assert sorted(card_text(c) for c in s.down + s.up + s.extra) == sorted(phys["down"] + phys["up"]), s.seat
    burns = {st: [card_text(c) for c in v] for st, v in e.hand.burns.items() if v}
    assert burns == {st: [card_text(c) for c in v] for st, v in e.picture.burns.items() if v}
    assert e.hand.stub_count() == len(e.picture.stub())


def _all_in(street: str, seats: list[int]) -> dict:
    return {street: [("all-in", s) for s in seats]}


@pytest.mark.parametrize("rules, code, status", [("house", "house-16.25", "dead"), ("tda", "house-16.25", "all-in")])
@pytest.mark.parametrize("game", ["stud", "razz", "stud8"])
def test_extra_card_on_sixth_with_no_betting_stops_the_dealer_at_once_wire(rules: str, code: str, status: str,
                                                                             game: str) -> None:
    """Three players all-in on 5th, one with chips: 6th has no betting. The dealer gives seat 4 a
    second 6th-street card: the machine stops the dealer at that read (before any 7th card), books
    it to no seat, and on the dealer's count (7 cards) gives it to seat 4; seat 4 is dealt its 7th
    card as every seat and ends with 8 cards: a dead hand (house 16.25) or the floor (TDA)."""
    irr = [Irregularity("extra-card", "6th", 4)]
    sc = HandScript(list(FOUR), game, rules, deck([]), _all_in("5th", [1, 2, 3]), irregular=irr, acks=[code])
    (e,), _ = run([sc], wire=True)
    codes = e.codes()
    k = codes.index("card-not-expected")
    msg = e.alerts[k].message
    assert "before 6th street was confirmed complete" in msg and "card-count" in msg and "premature-done" in msg
    assert "extra-card" in codes[k:] and code in codes[k:]
    stopped = next(i for i, t in enumerate(e.texts) if t.startswith("Stop: card-not-expected"))
    assert not any("(7th)" in t for t in e.texts[:stopped])  # the stop came before any 7th-street card
    s4 = e.hand.seats[3]
    assert len(s4.extra) == 1 and s4.card_count == 8 and len(s4.down) == 3
    assert e.seat(4)["status"] == ("dead" if rules == "house" else "live") or e.seat(4)["status"] == status
    assert len(e.hand.burns["7th"]) == 1
    _matches(e)


@pytest.mark.parametrize("rules", ["house", "tda"])
def test_extra_card_on_seventh_is_an_eight_card_hand_at_once(rules: str) -> None:
    irr = [Irregularity("extra-card", "7th", 4)]
    sc = HandScript(list(FOUR), "stud", rules, deck([]), _all_in("6th", [1, 2, 3]), irregular=irr,
                    acks=["house-16.25"])
    (e,), _ = run([sc])
    codes = e.codes()
    assert codes.index("card-not-expected") < codes.index("extra-card") < codes.index("house-16.25")
    stop = next(a.message for a in e.alerts if a.code == "card-not-expected")
    assert "card-count" in stop and "premature-done" not in stop  # after 7th no street's burn can follow
    assert e.hand.seats[3].card_count == 8
    assert (e.seat(4)["status"] == "dead") == (rules == "house")
    _matches(e)


@pytest.mark.parametrize("street, seats, ante_all_in", [("4th", FOUR, [1, 2, 3]), ("5th", [1, 2], [1]),
                                                        ("7th", FOUR, [2, 3, 4])])
def test_burn_taken_before_the_confirmation_is_the_burn(street: str, seats: list[int], ante_all_in: list[int]) -> None:
    """No mistake: the dealer burns for the next street before confirming the street (there is no
    betting to wait for): stopped at the read, the dealer says it is the next street's burn
    (``premature-done``) and the street goes on from it: no second burn, nothing set aside."""
    prev = {"4th": "3rd", "5th": "4th", "7th": "6th"}[street]
    irr = [Irregularity("premature", prev, count=1)]
    sc = HandScript(list(seats), "stud", "tda", deck([]), {}, ante_all_in=ante_all_in, irregular=irr)
    (e,), _ = run([sc])
    codes = e.codes()
    assert "street-confirmed" in codes and "RP-5-D" not in codes and "house-16.16" not in codes
    assert len(e.hand.burns[street]) == 1 and not e.hand.set_aside
    for s in seats:
        assert e.hand.seats[seats.index(s)].card_count == 7
    _matches(e)


def test_cost_one_confirmation_per_street_without_betting() -> None:
    """The cost in dealer inputs: one ``betting-complete`` per street dealt with no betting round
    (here 3rd to 7th: five), and none more in a hand where everyone can bet."""
    sc = HandScript([1, 2], "stud", "tda", deck([]), {}, ante_all_in=[1])
    (e,), dealer = run([sc])
    confirms = [t for t in e.texts if "confirm the street complete" in t]
    assert len({t.split()[0] for t in confirms}) == 5
    (plain,), _ = run([HandScript([1, 2], "stud", "tda", deck([]), {})])
    assert not any("confirm the street complete" in t for t in plain.texts)
    _matches(e)


@pytest.mark.parametrize("rules", ["house", "tda"])
@pytest.mark.parametrize("street, all_in", [("7th", True), ("5th", False), ("4th", True)])
def test_extra_card_mid_street_found_by_the_counts(rules: str, street: str, all_in: bool) -> None:
    """Seat 2 gets two cards in a row; the machine books the second to seat 3 (its turn) and the
    dealer deals on as the display says, so seat 3 has none. When the street's betting (or its
    confirmation) comes, the dealer counts the seats: seat 2 one over (the machine names the reads
    that may be its card and waits), seat 3 one short: that read goes to seat 2 as a card too many,
    seat 3 is dealt its card again; the record equals the table, and an 8-card hand is dead
    (house 16.25) or goes to the floor (TDA)."""
    prev = {"4th": "3rd", "5th": "4th", "7th": "6th"}[street]
    acts = {prev: [("all-in", 1), ("all-in", 2), ("all-in", 3)]} if all_in else {}
    irr = [Irregularity("extra-card", street, 2, args={"report": "check"})]
    sc = HandScript(list(FOUR), "stud", rules, deck([]), acts, irregular=irr,
                    acks=["card-count-over", "house-16.25"])
    (e,), _ = run([sc])
    codes = e.codes()
    assert codes.index("card-count-over") < codes.index("extra-card")
    over = next(a.message for a in e.alerts if a.code == "card-count-over")
    assert "(seat 3)" in over
    assert e.hand.seats[1].card_count == 8 and len(e.hand.seats[1].extra) == 1
    assert "house-16.25" in codes
    assert (e.seat(2)["status"] == "dead") == (rules == "house")
    for s in (1, 3, 4):
        assert e.hand.seats[s - 1].card_count == 7
    _matches(e)
