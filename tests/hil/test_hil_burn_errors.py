"""HIL : burn errors found late. Two burns reported after the whole street was
dealt in order (one card more than the plan left the shoe): the correction lists every move (the
last seat's card aside, each card one seat on, the top burn to the first seat) and, carried out,
the record equals the table and the stub count is the cards in the shoe. TDA's "let it stand"
(Rule 38) on every street."""

from __future__ import annotations

import pytest
from irregular_help import assert_table_matches, deck, run

from hil.dealer import HandScript, Irregularity

FOUR = [1, 2, 3, 4]
SIX = [1, 2, 3, 4, 5, 6]


def _sc(rules: str, irr: list[Irregularity], seats: list[int] = FOUR, game: str = "stud",
        actions: dict | None = None) -> HandScript:
    return HandScript(list(seats), game, rules, deck([]), actions or {}, irregular=irr)


@pytest.mark.parametrize("rules", ["house", "tda"])
@pytest.mark.parametrize("street, seats, game", [("4th", SIX, "stud"), ("6th", FOUR, "razz"), ("5th", [1, 2], "stud8"),
                                                 ("7th", FOUR, "stud")])
def test_two_burns_reported_after_the_street_every_card_moves_wire(rules: str, street: str, seats: list[int],
                                                                    game: str) -> None:
    sc = _sc(rules, [Irregularity("burn-two", street, args={"after": "street"})], seats, game)
    (e,), _ = run([sc], wire=True)
    alert = next(a for a in e.alerts if a.code == "house-16.15")
    face = "down" if street == "7th" else "up"
    places = [f"seat {s} {face}" for s in seats]
    want = (f"{places[-1]} -> set-aside", *(f"{places[n - 1]} -> {places[n]}" for n in range(len(places) - 1, 0, -1)),
            f"burn {street} -> {places[0]}")
    assert alert.moves == want
    assert "card-not-expected" in e.codes()
    assert len(e.hand.set_aside) == 1 and len(e.hand.burns[street]) == 1
    for s in seats:
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert e.hand.stub_count() == 52 - 3 * len(seats) - 4 - 4 * len(seats) - 1
    assert_table_matches(e)


def test_two_burns_reported_at_once_still_one_move() -> None:
    (e,), _ = run([_sc("house", [Irregularity("burn-two", "5th")])])
    assert next(a for a in e.alerts if a.code == "house-16.15").moves == ("burn 5th -> seat 1 up",)
    assert_table_matches(e)


@pytest.mark.parametrize("street", ["4th", "5th", "6th", "7th"])
@pytest.mark.parametrize("kind", ["burn-two", "no-burn"])
def test_tda_rule_38_let_it_stand_on_every_street(street: str, kind: str) -> None:
    """TDA: the floor lets the cards dealt stand on any street (Rule 38: the burn is not there to
    keep the order): the record becomes what was dealt; house allows it on 7th only."""
    irr = [Irregularity(kind, street, count=2, args={"stands": True})]
    (e,), _ = run([_sc("tda", irr)])
    alert = next(a for a in e.alerts if a.code == "house-16.15")
    assert "stand" in alert.message and not alert.moves
    for s in FOUR:
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert_table_matches(e)
    if street != "7th":
        (h,), _ = run([_sc("house", irr)])
        assert "stand" not in next(a for a in h.alerts if a.code == "house-16.15").message
        assert_table_matches(h)
