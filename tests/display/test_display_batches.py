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
from paths import SHARED
from rule_profiles import PROFILES
from sinks import Collect

from hil.replay import run_direct, script_from_record
from shoe_ctl.display import DisplayModel
from shoe_ctl.display.model import public_parts, public_state
from shoe_ctl.events import Alert, DisplayUpdate
from shoe_ctl.phh import read_phh

PHH_DIR = SHARED / "data" / "stud" / "phh"
ROOT = Path(__file__).resolve().parents[2]




@pytest.fixture(scope="module")
def commands() -> list[Any]:
    files = sorted(PHH_DIR.rglob("*.phh"))[:80]
    if not files:
        pytest.skip(f"no PHH hands under {PHH_DIR} (set SHOE_CTL_SHARED)")
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
