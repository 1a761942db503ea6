"""Real hands through the whole stack with the journal on, then exported: same cards, same folds."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from paths import SHARED_PHH

from hil.replay import run_full, script_from_record
from shoe_ctl.config import load_profile
from shoe_ctl.export import default_machine_factory, export_hands
from shoe_ctl.phh import parse_phh, read_phh
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import recover

PHH = SHARED_PHH
COMMUNITY = "Stars/30506593746.phh"


def sample() -> list[Path]:
    """Two hands of every source folder (sorted, so the sample is stable) and the community-card hand."""
    out = []
    for folder in sorted(p for p in PHH.iterdir() if p.is_dir()):
        out += sorted(folder.glob("*.phh"))[:2]
    return [*out, PHH / COMMUNITY]


@pytest.mark.shared
def test_real_hands_round_trip_through_journal_and_export(tmp_path: Path) -> None:
    files = sample()
    recs = [read_phh(f) for f in files]
    profiles = {n: load_profile(n) for n in ("tda", "house")}
    journal = Journal(tmp_path / "table.journal", table="t1", profile="tda")
    run_full([script_from_record(r, seed=i) for i, r in enumerate(recs)], profiles, journal=journal)
    written = export_hands(journal, tmp_path / "out")
    assert len(written) == len(recs)
    for f, rec, path in zip(files, recs, written, strict=True):
        text = path.read_text()
        tomllib.loads(text)
        got = parse_phh(text, str(path))
        name = str(f.relative_to(PHH))
        assert got.variant == rec.variant, name
        assert [len(c) for c in got.cards] == [len(c) for c in rec.cards], name
        for mine, theirs in zip(got.cards, rec.cards, strict=True):
            for a, b in zip(mine, theirs, strict=True):
                assert b is None or a == b, name  # every known card where the record put it
        assert {a.player for a in got.actions if a.kind == "f"} == {a.player for a in rec.actions if a.kind == "f"}
        assert {a.player for a in got.actions if a.kind == "sm"} == {a.player for a in rec.actions if a.kind == "sm"}, name
        assert (got.community is None) == (rec.community is None), name
    # the journal ends between hands: recovery replays nothing of a hand and leaves the machine idle
    machine, last, report = recover(journal, lambda: default_machine_factory("tda"))
    assert machine.state == "idle" and last is not None and report.mismatches == []
