"""HIL : a stub mixed with the muck (TDA RP-4). The dealer gathers the folded
hands into a new stub by mistake and declares it (``stub-mixed``): the floor is called once
(latched ``RP-4``), a muck card dealt from the new stub raises no ``card-not-in-stub``, the stub
count takes the mixed cards in, every live seat holds what the record says and the declaration is
journaled (a replay of the events rebuilds the same state)."""

from __future__ import annotations

import pytest
from irregular_help import PROFILES, deck, physical, run

from hil.dealer import HandScript, Irregularity

EIGHT = [1, 2, 3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize("rules, game, seed", [("tda", "stud", 1), ("house", "razz", 2), ("tda", "stud8", 1)])
def test_stub_mixed_with_the_muck_declared_wire(rules: str, game: str, seed: int) -> None:
    irr = [Irregularity("stub-mixed", "7th")]
    sc = HandScript(list(EIGHT), game, rules, deck([]), {"3rd": [("fold", 7), ("fold", 8)]}, irregular=irr,
                    acks=["RP-4"])
    (e,), _ = run([sc], wire=True, seed=seed)  # a seed whose cut brings a muck card out
    codes = e.codes()
    assert codes.count("RP-4") == 1 and "card-not-in-stub" not in codes and "duplicate-card" not in codes
    assert e.procedures["7th"] != "normal" and e.hand.scrambles == ["7th"]
    muck = {c for s in e.hand.seats if not s.in_hand for c in s.down + s.up}
    dealt_7th = [s.down[-1] for s in e.hand.seats if s.in_hand]
    assert muck & set(dealt_7th), "no muck card came out of the new stub: the case is not exercised"
    assert e.picture is not None
    for s in e.hand.seats:
        if s.in_hand:
            mine = e.seat(s.seat)
            assert {"down": mine["down"], "up": mine["up"]} == physical(e.picture, s.seat)
        else:
            assert physical(e.picture, s.seat) == {"down": [], "up": []}  # the muck went into the stub
    assert e.hand.stub_count() == len(e.picture.stub())
    assert muck & set(dealt_7th) <= set(e.hand.new_stub or ())  # the new stub's identities took them in


@pytest.mark.parametrize("rules, game, seed", [("tda", "stud", 1), ("house", "razz", 2), ("tda", "stud8", 1)])
def test_stub_mixed_reported_twice_counts_the_muck_once_wire(rules: str, game: str, seed: int) -> None:
    """The dealer reports the same mixed stub twice: the second report finds no card of the piles
    that is not in the stub already, so it is refused and the stub count takes the muck in once
    (was: twice, a stub count over the cards in the shoe by the muck's size)."""
    irr = [Irregularity("stub-mixed", "7th", args={"reports": 2})]
    sc = HandScript(list(EIGHT), game, rules, deck([]), {"3rd": [("fold", 7), ("fold", 8)]}, irregular=irr,
                    acks=["RP-4"])
    (e,), _ = run([sc], wire=True, seed=seed)
    codes = e.codes()
    assert codes.count("RP-4") == 1 and "input-wrong-time" in codes
    assert any("mixed into the stub already" in a.message for a in e.alerts if a.code == "input-wrong-time")
    assert e.picture is not None
    assert e.hand.stub_count() == len(e.picture.stub())
    for s in e.hand.seats:
        if s.in_hand:
            mine = e.seat(s.seat)
            assert {"down": mine["down"], "up": mine["up"]} == physical(e.picture, s.seat)


def test_stub_mixed_is_journaled_and_replays_the_same() -> None:
    from shoe_ctl.events import DealerAction, DealerInput
    from shoe_ctl.machine import Dealing

    irr = [Irregularity("stub-mixed", "7th")]
    sc = HandScript(list(EIGHT), "stud", "tda", deck([]), {"3rd": [("fold", 7), ("fold", 8)]}, irregular=irr,
                    acks=["RP-4"])
    log: list = []
    (e,), _ = run([sc], log=log, seed=4)
    assert any(isinstance(ev, DealerInput) and ev.action is DealerAction.STUB_MIXED for ev in log)
    again = Dealing(PROFILES)
    for ev in log:
        again.handle(ev)
    assert again.hand is not None and again.hand.stub_count() == e.hand.stub_count()
    assert [(s.down, s.up) for s in again.hand.seats] == [(s.down, s.up) for s in e.hand.seats]


def test_stub_mixed_refused_with_bad_piles() -> None:
    from shoe_ctl.events import DealerAction, DealerInput
    from shoe_ctl.machine import Dealing

    m = Dealing(PROFILES)
    m.start()
    assert [c.code for c in m.handle(DealerInput(DealerAction.STUB_MIXED)) if hasattr(c, "code")] == \
        ["input-wrong-time"]
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    out = m.handle(DealerInput(DealerAction.STUB_MIXED, args={"piles": ["table"]}))
    assert [c.code for c in out if hasattr(c, "code")] == ["input-invalid"]
