"""HIL: both hole cards dealt face up, reported one at a time as each happens. The second report
finds the other hole card already ruled the upcard: it is the second of two (house 16.2: the hand
is dead and the ante returned; TDA: RP-10-A does not cover two, a misdeal for the floor), never a
face-up card recorded as a downcard with the hand playing on. Both profiles, stud, stud-8 and
razz, heads-up to 8 seats, and through the virtual shoe on a pty."""

from __future__ import annotations

import pytest
from irregular_help import deck, physical, run

from hil.dealer import HandScript, Irregularity
from shoe_ctl.rules.cards import card_text


def _two_exposures(seat: int) -> list[Irregularity]:
    return [Irregularity("expose", "3rd", seat, 0), Irregularity("expose", "3rd", seat, 1)]


@pytest.mark.parametrize("game, seats, seat", [("stud", [1, 2, 3, 4], 2), ("razz", [3, 6], 6),
                                                ("stud8", [1, 2, 3, 4, 5, 6, 7, 8], 5)])
def test_house_the_second_report_makes_the_hand_dead(game: str, seats: list[int], seat: int) -> None:
    sc = HandScript(seats, game, "house", deck([]), {}, irregular=_two_exposures(seat))
    (e,), _ = run([sc])
    codes = e.codes()
    assert codes.count("house-16.1") == 1 and "house-16.2" in codes
    refund = next(a.message for a in e.alerts if a.code == "house-16.2")
    assert "return the ante" in refund
    dead = e.hand.seats[seats.index(seat)]
    assert dead.dead and not dead.down
    assert e.picture is not None
    phys = physical(e.picture, seat)
    assert phys["down"] == [] and [card_text(c) for c in dead.up] == phys["up"][:len(dead.up)]


@pytest.mark.parametrize("game, seats, seat", [("stud", [1, 2, 3], 1), ("razz", [2, 4, 6, 8], 8)])
def test_tda_the_second_report_is_a_misdeal_for_the_floor(game: str, seats: list[int], seat: int) -> None:
    sc = HandScript(seats, game, "tda", deck([]), {}, irregular=_two_exposures(seat), acks=["RP-10-A"])
    (e,), _ = run([sc])
    assert e.misdeal == "RP-10-A"
    assert any(a.code == "RP-10-A" and "Both hole cards" in a.message for a in e.alerts)


def test_house_one_at_a_time_through_the_shoe_on_a_pty_wire() -> None:
    sc = HandScript([1, 2, 3], "stud", "house", deck([]), {}, irregular=_two_exposures(3))
    (e,), _ = run([sc], wire=True)
    assert "house-16.2" in e.codes() and e.hand.seats[2].dead
