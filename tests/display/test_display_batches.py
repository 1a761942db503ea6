"""Folding a batch of commands at once (``DisplayModel.apply_all``, what the server does with the
commands that came since its last turn) gives what folding them one by one gives: the same
snapshot, version and alerts after every batch, whatever the batch boundaries, on the real hands
of ``../shared/data/stud/phh`` and on seeded random hands with irregularities, with dealer
acknowledgements in between (docs/display.md, "Updates")."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import SHARED_PHH
from rule_profiles import PROFILES
from sinks import Collect

from hil.replay import run_direct, script_from_record
from shoe_ctl.display import DisplayModel
from shoe_ctl.display import model as display_model
from shoe_ctl.embargo import public_parts, public_state, public_with
from shoe_ctl.events import Alert, DisplayUpdate, Instruction, Signal
from shoe_ctl.phh import read_phh

PHH_DIR = SHARED_PHH
pytestmark = pytest.mark.shared
ROOT = Path(__file__).resolve().parents[2]




@pytest.fixture(scope="module")
def commands() -> list[Any]:
    files = sorted(PHH_DIR.rglob("*.phh"))[:80]
    sys.path.insert(0, str(ROOT / "scripts"))
    from replay_digest import irregular_hands

    scripts = [script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)]
    tape = Collect()
    run_direct([*scripts, *irregular_hands(40)], PROFILES, sinks=[tape])
    # local alerts (the display's own: e.g. a refused input) between the machine's commands
    rng = random.Random(5)
    out: list[Any] = []
    for c in tape.commands:
        out.append(c)
        if rng.random() < 0.02:
            out.append(Alert("input-wrong-time", f"'fold' refused now (seat {rng.randint(1, 8)})"))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batches_fold_as_one_by_one(commands: list[Any], seed: int) -> None:
    rng = random.Random(seed)
    one, many = DisplayModel(), DisplayModel()
    i = 0
    while i < len(commands):
        batch = commands[i:i + rng.choice((1, 2, 3, 8, 30, 120))]
        i += len(batch)
        changed = [one.apply(c) for c in batch]
        assert many.apply_all(batch) == any(changed)
        assert many.snapshot() == one.snapshot()
        assert many.version == one.version and many.alerts() == one.alerts()
        if rng.random() < 0.1 and one.alerts():  # the dealer acknowledges one between two turns
            alert_id = rng.choice(one.alerts())["id"]
            assert one.acknowledge(alert_id) == many.acknowledge(alert_id)
    assert i == len(commands) > 1000


def test_the_parts_are_what_the_whole_filter_gives(commands: list[Any]) -> None:
    updates = [c.state for c in commands if isinstance(c, DisplayUpdate)]
    for state in updates:
        whole, parts = public_state(state), public_parts(state)
        for key, value in parts.items():
            if key == "seats":
                assert value == [{k: s[k] for k in ("seat", "up", "status") if k in s} for s in whole["seats"]]
            else:
                assert value == whole[key]
        assert set(parts) == {k for k in ("state", "hand", "instruction", "stub", "alerts", "seats") if k in whole}


def test_the_snapshot_filters_only_its_new_parts_and_gives_what_the_whole_filter_gives(
        commands: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot sends only the instruction, the alerts and the reply through the filter again
    (the shown state was filtered as it was folded in): after every command of the real hands,
    with alerts and instructions naming random cards (public or not) among them, it is exactly
    what the whole filter over the assembled snapshot gives."""
    rng = random.Random(11)
    cards = [f"{r}{s}" for r in "23456789TJQKA" for s in "cdhs"]
    mixed: list[Any] = []
    for c in commands:
        mixed.append(c)
        if rng.random() < 0.05:
            mixed.append(Alert("RP-10-H-C", f"seat {rng.randint(1, 8)} shows {rng.choice(cards)}"))
        if rng.random() < 0.03:
            mixed.append(Instruction(Signal.DEAL, f"Deal {rng.choice(cards)} to seat 2", seat=2))
    ours, whole = DisplayModel(), DisplayModel()
    redacted = 0
    for c in mixed:
        ours.apply(c)
        whole.apply(c)
        with monkeypatch.context() as m:
            m.setattr(display_model, "public_with", lambda state, _fresh, _public=None: public_state(state))
            expected = whole.snapshot()
        got = ours.snapshot()
        assert got == expected
        redacted += "??" in str(got["alerts"]) or "??" in str(got["instruction"])
    assert redacted > 50  # the texts named cards that were not public, and the filter caught them


def test_public_with_filters_the_fresh_parts_as_the_whole_filter(commands: list[Any]) -> None:
    for c in commands:
        if not isinstance(c, DisplayUpdate):
            continue
        state = {**public_state(c.state), "instruction": c.state.get("instruction"),
                 "alerts": [*(c.state.get("alerts") or []), {"code": "x", "message": "Kd and As", "down": ["2c"]}]}
        assert public_with(state, ("instruction", "alerts", "reply")) == public_state(state)


def test_a_folded_seat_keeps_its_upcards_when_the_fold_comes_in_a_batch() -> None:
    """A mucked seat whose upcards leave the machine's state keeps showing them (the upcards of
    the update before the fold): also when that update and the fold are folded in one batch."""
    def update(status: str, up: list[str], n: int) -> DisplayUpdate:
        return DisplayUpdate({"hand": 3, "state": "hand_betting", "street": "4th", "community": None,
                              "seats": [{"seat": 1, "status": status, "up": up, "down_count": 2},
                                        {"seat": 2, "status": "live", "up": ["2c", f"{n}h"], "down_count": 2}]})

    batch = [update("live", ["As"], 3), update("live", ["As", "Kd"], 4), update("folded", [], 5), update("folded", [], 6)]
    one, many = DisplayModel(), DisplayModel()
    for c in batch:
        one.apply(c)
    many.apply_all(batch)
    assert one.snapshot()["seats"][0]["up"] == ["As", "Kd"]
    assert many.snapshot() == one.snapshot()


def _update(hand: int = 3, state: str = "hand_fourth_betting", seats: Any = None, **kw: Any) -> DisplayUpdate:
    return DisplayUpdate({"hand": hand, "state": state, "street": "4th", "community": None,
                          "seats": seats if seats is not None else [], "alerts": [], **kw})


def _seat(n: int, up: list[Any], status: str = "live") -> dict[str, Any]:
    return {"seat": n, "status": status, "up": up, "down_count": 2, "down": ["2h", "3h"]}


_DEAL = {"signal": "deal", "text": "Deal up to seat 2", "seat": 2, "face": "up"}
_NOTE = {"id": 4, "code": "RP-10-H-C", "message": "short stub", "latched": False, "street": "4th"}
_CASES = {
    # a folded seat keeps the upcards of the update before its fold, read by the upcards-only path
    "fold kept": ([_update(seats=[_seat(1, [])])],
                  [_update(seats=[_seat(1, ["As"])]), _update(seats=[_seat(1, ["As", "Kd"])]),
                   _update(seats=[_seat(1, [], "folded")]), _update(seats=[_seat(1, [], "folded")])], 3),
    # a folded seat listing as many upcards as it had, or more, is what it keeps from then on
    "fold lists more": ([_update(seats=[_seat(1, ["As"])])],
                        [_update(seats=[_seat(1, ["As", "Kd"], "folded")]), _update(seats=[_seat(1, [], "folded")])], 1),
    # an upcard that is not one card token goes through the filter ("??!"), not around it
    "odd upcard": ([_update(seats=[_seat(1, [])])],
                   [_update(seats=[_seat(1, ["As", "Ah!"])]), _update(seats=[_seat(1, [], "folded")])], 0),
    # an instruction the next update does not replace, with no Instruction command after it
    "instruction kept": ([_update()],
                         [_update(instruction={"signal": "deal", "text": "Deal up to seat 2", "seat": 2,
                                               "face": "up", "street": "4th"}), _update()], 0),
    # the NO HAND screen drops the alerts shown just before it: those of the update before idle
    "idle next": ([_update(alerts=[_NOTE])],
                  [_update(), _update(state="idle", alerts=[_NOTE])], 0),
    # a listed alert hides the display's own alert of the same code, message and seat for good
    "alerts listed": ([_update(), Alert("RP-10-H-C", "short stub", street="4th")],
                      [_update(alerts=[_NOTE]), _update()], 0),
    # the same alerts listed again, naming no card, nothing between: read for the upcards alone
    "same alerts": ([_update(alerts=[_NOTE])], [_update(alerts=[_NOTE]), _update(alerts=[_NOTE])], 1),
    # ... but an Alert command between meets a local alert the first update would have hidden
    "same alerts, an alert between": (
        [_update(), Alert("RP-10-H-C", "short stub", street="4th")],
        [_update(alerts=[_NOTE]), Alert("RP-10-H-C", "short stub", street="4th"), _update(alerts=[_NOTE]),
         Alert("card-not-expected", "a card left the shoe")], 0),
    # ... and an alert naming a card that is public in one update only is filtered in each
    "same alerts naming a card": (
        [_update(seats=[_seat(1, ["Kd"])]), Alert("c", "read 3: ??")],
        [_update(seats=[_seat(1, ["Kd"])], alerts=[{**_NOTE, "code": "c", "message": "read 3: Qs"}]),
         _update(seats=[_seat(1, ["Kd", "Qs"])], alerts=[{**_NOTE, "code": "c", "message": "read 3: Qs"}])], 0),
    # the same instruction again with no Instruction command between, numbered in both stubs
    "same instruction": ([_update()],
                         [_update(instruction=_DEAL, stub={"count": 40, "drawn": 2}),
                          _update(instruction=_DEAL, stub={"count": 39, "drawn": 3})], 1),
    # ... numbered in the first update's stub only: the shown instruction keeps that number
    "same instruction, numbered once": ([_update()],
                                        [_update(instruction=_DEAL, stub={"count": 40, "drawn": 2}),
                                         _update(instruction=_DEAL)], 0),
    # ... naming a card public in the second update only: each is filtered with its own cards
    "same instruction naming a card": ([_update()],
                                       [_update(instruction={**_DEAL, "cards": ["Qs"]}),
                                        _update(seats=[_seat(1, ["Qs"])], instruction={**_DEAL, "cards": ["Qs"]})], 0),
    # a new hand resets what the display keeps per hand
    "hand changes": ([_update(seats=[_seat(1, ["As", "Kd"])])],
                     [_update(hand=4, seats=[_seat(1, ["Qc"])]), _update(hand=4, seats=[_seat(1, [], "folded")])], 0),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_each_reason_for_the_whole_path(case: str) -> None:
    """Each condition of the upcards-only path (``DisplayModel._skim``) on a batch that needs it:
    the batch folds as one by one, and the path is taken exactly as often as expected."""
    before, batch, skimmed = _CASES[case]
    one, many = DisplayModel(), DisplayModel()
    for c in before:
        one.apply(c)
        many.apply(c)
    for c in batch:
        one.apply(c)
    many.apply_all(batch)
    assert many.snapshot() == one.snapshot() and many.alerts() == one.alerts()
    assert many.skimmed == skimmed


def test_the_real_hands_take_the_upcards_only_path(commands: list[Any]) -> None:
    """Most replaced updates of a real deal are folded in by their upcards and statuses alone
    (``DisplayModel._skim``), and the result is the same as one by one (above)."""
    many = DisplayModel()
    replaced = 0
    for i in range(0, len(commands), 30):
        batch = commands[i:i + 30]
        many.apply_all(batch)
        replaced += max(0, sum(isinstance(c, DisplayUpdate) for c in batch) - 1)
    assert replaced > 1000 and many.skimmed > replaced // 2


_UP = st.lists(st.sampled_from(["As", "Kd", "10h", "Qc", "Ah!", "Ah Kd", "??", 7, None, ["2c"]]), max_size=3)
_SEAT = st.fixed_dictionaries({"seat": st.sampled_from([1, 2, "3"]), "up": _UP | st.none() | st.just("Ks"),
                               "status": st.sampled_from(["live", "folded", "dead", "all-in 9s", 3])},
                              optional={"down": st.lists(st.sampled_from(["2h", "3h", "Qs"]), max_size=2)})
_STATE = st.fixed_dictionaries(
    {"hand": st.sampled_from([1, 2, "2"]), "state": st.sampled_from(["hand_third_deal", "hand_showdown", "idle", 4])},
    optional={"seats": st.lists(_SEAT, max_size=3) | st.just("none"),
              "alerts": st.sampled_from([[], None, [{"id": 4, "code": "c", "message": "read 3: Qs", "latched": False}],
                                         [{"id": 5, "code": "c", "message": "late", "latched": True}]]),
              "instruction": st.fixed_dictionaries({"signal": st.sampled_from(["deal", "betting"]),
                                                    "text": st.sampled_from(["Deal up to seat 1", "Qs to seat 2"]),
                                                    "seat": st.sampled_from([1, 2, None]), "face": st.just("up")}),
              "stub": st.fixed_dictionaries({"drawn": st.integers(0, 3), "count": st.just(40)}),
              "community": st.sampled_from([None, "Qs"])})
_COMMAND = (st.builds(DisplayUpdate, _STATE)
            | st.builds(Instruction, st.sampled_from([Signal.DEAL, Signal.BETTING]),
                        st.sampled_from(["Deal up to seat 1", "Betting: Qs acts"]), seat=st.sampled_from([1, None]),
                        ref=st.sampled_from([None, 7]))
            | st.builds(Alert, st.sampled_from(["c", "input-wrong-time"]), st.sampled_from(["read 3: Qs", "late"]),
                        seat=st.sampled_from([None, 2])))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_COMMAND, min_size=1, max_size=8), min_size=1, max_size=6))
def test_generated_batches_fold_as_one_by_one(batches: list[list[Any]]) -> None:
    """Generated updates, the odd ones included (upcards that are not one card token, a hand or
    an ``idle`` between, alerts, an instruction with no ``Instruction`` after it): every batch
    folds as its commands one by one, whichever path each replaced update takes."""
    one, many = DisplayModel(), DisplayModel()
    for batch in batches:
        changed = [one.apply(c) for c in batch]
        assert many.apply_all(batch) == any(changed)
        assert many.snapshot() == one.snapshot()
        assert many.version == one.version and many.alerts() == one.alerts()
