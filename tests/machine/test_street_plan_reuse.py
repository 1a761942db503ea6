"""A normal street's plan handed out again (``shoe_ctl.rules.stub._NORMAL_PLANS``) is the plan the
street would get made afresh: real hands and seeded irregular ones (short stubs, exposed cards,
folds, premature cards) replayed with the kept plans and with none give the same commands, and
plans are kept (docs/performance.md, "Direct replay: a margin over 2x")."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from paths import SHARED_PHH
from rule_profiles import PROFILES
from sinks import Collect

from hil.replay import run_direct, script_from_record
from shoe_ctl.phh import read_phh
from shoe_ctl.rules import stub

ROOT = Path(__file__).resolve().parents[2]


def _commands(scripts: list[Any]) -> list[Any]:
    tape = Collect()
    run_direct(scripts, PROFILES, sinks=[tape])
    return tape.commands


@pytest.mark.shared
def test_kept_plans_deal_as_plans_made_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted(SHARED_PHH.rglob("*.phh"))[:60]
    sys.path.insert(0, str(ROOT / "scripts"))
    from replay_digest import irregular_hands

    def scripts() -> list[Any]:
        return [*(script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)),
                *irregular_hands(40)]

    monkeypatch.setattr(stub, "_NORMAL_PLANS", {})
    kept = _commands(scripts())
    assert stub._NORMAL_PLANS, "normal plans are kept"
    reused = _commands(scripts())  # the same streets again: plans handed out from the cache
    monkeypatch.setattr(stub, "_NORMAL_PLANS_MAX", 0)
    monkeypatch.setattr(stub, "_NORMAL_PLANS", {})
    fresh = _commands(scripts())
    assert not stub._NORMAL_PLANS
    assert kept == reused == fresh and len(fresh) > 1000
