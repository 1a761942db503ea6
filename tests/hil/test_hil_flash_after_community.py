"""HIL: after a 7th-street community card (TDA RP-10-H, house 16.20) no seat was dealt a 7th-street
card, so a hole card reported flashed on 7th (``exposed-card`` or ``card-off-table``) is refused
with the reason and changes nothing: no card is taken out of play, no replacement is promised,
and the showdown finds every hand whole (no house 16.26 call over a six-card hand). Both profiles,
stud, stud-8 and razz, 8 seats, and through the virtual shoe on a pty."""

from __future__ import annotations

import pytest
from irregular_help import deck, physical, run

from hil.dealer import HandScript, Irregularity
from shoe_ctl.rules.cards import card_text

EIGHT = [1, 2, 3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize("rules, game, off", [("tda", "stud", False), ("tda", "razz", True), ("house", "stud8", False),
                                               ("house", "stud", True), ("tda", "stud8", False)])
def test_a_hole_card_flashed_after_the_community_card_stays_in_play(rules: str, game: str, off: bool) -> None:
    irr = [Irregularity("flash", "7th", 3, args={"off": off} if off else {})]
    sc = HandScript(EIGHT, game, rules, deck([]), {}, irregular=irr)
    (e,), _ = run([sc])
    assert e.hand.community_street == "7th"
    refused = [a.message for a in e.alerts if a.code == "input-wrong-time"]
    assert any("community card" in m and "seat 3" in m for m in refused), refused
    assert "house-16.26" not in e.codes() and "RP-10-B" not in e.codes()
    assert e.picture is not None
    for s in e.hand.seats:
        assert s.card_count == 6 and not s.extra, s.seat  # and the community card: seven
        phys = physical(e.picture, s.seat)
        assert [card_text(c) for c in s.down] == phys["down"] and [card_text(c) for c in s.up] == phys["up"]


def test_a_hole_card_flashed_after_the_community_card_wire() -> None:
    irr = [Irregularity("flash", "7th", 5)]
    sc = HandScript(EIGHT, "stud", "tda", deck([]), {}, irregular=irr)
    (e,), _ = run([sc], wire=True)
    assert "house-16.26" not in e.codes() and all(s.card_count == 6 for s in e.hand.seats)
