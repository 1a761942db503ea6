"""HIL : a seat to act first taken out of the hand during the betting round (an
absent player killed when the action reaches it, house 16.9, or a TDA absence first reported in
the betting, RP-10-C / Rule 30): the action moves to the next live seat, on the display and in the
hand's summary; the record still equals the table."""

from __future__ import annotations

import pytest
from irregular_help import assert_table_matches, deck, run

from hil.dealer import HandScript, Irregularity

FOUR = [1, 2, 3, 4]
# door cards 9s 8s 7s 6s: seat 4 brings in (stud); in razz seat 1 (9s is the highest)
THIRD = ["As", "Ks", "2c", "Qs", "Ah", "Kh", "Qh", "Jh", "9s", "8s", "7s", "6s"]


def _absent(rules: str, street: str, seat: int, game: str = "stud", seats: list[int] = FOUR) -> HandScript:
    irr = [Irregularity("absent", street, seat, args={"at": "betting", "action_reached": True})]
    return HandScript(list(seats), game, rules, deck(THIRD), {}, irregular=irr)


@pytest.mark.parametrize("rules, code", [("house", "house-16.9"), ("tda", "RP-10-C")])
@pytest.mark.parametrize("game, bring_in, after", [("stud", 4, 1), ("razz", 1, 2)])
def test_absent_bring_in_killed_in_the_betting_the_action_moves_on_wire(rules: str, code: str, game: str,
                                                                         bring_in: int, after: int) -> None:
    sc = _absent(rules, "3rd", bring_in, game)
    (e,), _ = run([sc], wire=True)
    assert code in e.codes()
    assert e.bring_in == bring_in and e.first["3rd"] == after
    texts = [t for t in e.texts if t.startswith("Betting on 3rd")]
    assert texts[0].endswith(f"seat {bring_in} acts first")  # before the report
    assert texts[-1] == f"Betting on 3rd: bring-in seat {bring_in} (out of the hand); seat {after} acts first"
    assert e.seat(bring_in)["status"] == "killed"
    assert_table_matches(e)


@pytest.mark.parametrize("rules", ["house", "tda"])
def test_absent_first_to_act_on_fifth_killed_the_action_moves_on(rules: str) -> None:
    """The same on a later street: whoever acts first on 5th is absent and killed."""
    (plain,), _ = run([HandScript(list(FOUR), "stud", rules, deck(THIRD), {})])
    first = plain.first["5th"]
    assert first is not None
    (e,), _ = run([_absent(rules, "5th", first)])
    nxt = FOUR[(FOUR.index(first) + 1) % 4]
    assert e.first["5th"] == nxt and e.seat(first)["status"] == "killed"
    assert [t for t in e.texts if t.startswith("Betting on 5th")][-1] == f"Betting on 5th: seat {nxt} acts first"
    assert_table_matches(e)


def test_heads_up_absent_bring_in_killed_the_other_wins() -> None:
    (e,), _ = run([_absent("house", "3rd", 2, seats=[1, 2])])
    assert e.seat(2)["status"] == "killed" and e.seat(1)["status"] == "live"
    assert e.texts[-1] == "Seat 1 wins without showdown"
    assert_table_matches(e)
