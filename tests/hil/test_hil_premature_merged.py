"""HIL : a premature final downcard that merged with the hole cards is ruled and
counted once, in both profiles: TDA (RP-5-D, interpretation) keeps it as the seat's 7th card and
returns only the other premature cards to the stub, calling the floor; house 16.17 lets it stand
and sets the others aside. The seat never gets another 7th card; the record equals the table."""

from __future__ import annotations

import pytest
from irregular_help import assert_table_matches, deck, run

from hil.dealer import HandScript, Irregularity

FOUR = [1, 2, 3, 4]


@pytest.mark.parametrize("rules, code", [("tda", "RP-5-D"), ("house", "house-16.16")])
@pytest.mark.parametrize("seats, count, merged, game", [
    (FOUR, 2, 1, "stud"), (FOUR, 3, 2, "razz"), ([1, 2], 2, 1, "stud8"), ([1, 2, 3, 4, 5, 6], 4, 3, "stud")])
def test_merged_premature_final_downcard_counted_once_wire(rules: str, code: str, seats: list[int], count: int,
                                                           merged: int, game: str) -> None:
    irr = [Irregularity("premature", "6th", count=count, args={"merged": [merged]})]
    sc = HandScript(list(seats), game, rules, deck([]), {}, irregular=irr, acks=[code])
    (e,), _ = run([sc], wire=True)
    alert = next(a for a in e.alerts if a.code == code)
    assert "merged" in alert.message and f"seat {merged}" in alert.message or "house-16.17" in alert.message
    assert alert.latched == (rules == "tda")  # TDA: the floor confirms
    assert not any(t == f"Deal down to seat {merged} (7th)" for t in e.texts)
    for s in seats:
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4, s
    assert sum(len(s.down) + len(s.up) for s in e.hand.seats) == 7 * len(seats)
    assert_table_matches(e)
