"""An exported hand analyses back the same: ``analyze`` of the PHH that ``export`` writes gives the
bring-in, the first to act on every street and the 7th-street check the machine decided while
dealing, and raises no alert that the original record did not have."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest
from paths import EXAMPLES, SHARED_PHH

from hil.replay import run_full, script_from_record
from shoe_ctl.analyze import analyze_file
from shoe_ctl.config import load_profile
from shoe_ctl.export import PLACEHOLDER, export_hands
from shoe_ctl.phh import read_phh
from shoe_ctl.service.journal import Journal


def _hands(real: bool) -> list[Path]:
    """The shipped examples (a stud-8 bring-in all-in for the ante, an 8-player community-card
    hand, a razz suit tie); with ``real`` also the real community-card hand and three real hands of
    every source folder (sorted: a stable sample with folds, all-ins and showdowns)."""
    out = sorted(EXAMPLES.glob("*.phh"))
    if real:
        out.append(SHARED_PHH / "Stars" / "30506593746.phh")
        for folder in sorted(p for p in SHARED_PHH.iterdir() if p.is_dir()):
            out += sorted(folder.glob("*.phh"))[:3]
    return out


def _seventh(s: dict | None) -> tuple | None:
    return None if s is None else (s["live"], s["stub"], s["required"], s["procedure"])


def _alerts(report: dict) -> set[tuple[str, str]]:
    return {(a["code"], a["street"]) for a in report["alerts"]}


@pytest.mark.parametrize("real", [False, pytest.param(True, marks=pytest.mark.shared)], ids=["examples", "real"])
@pytest.mark.parametrize("rules", ["tda", "house"])
def test_analyze_of_the_export_agrees_with_the_machine(tmp_path: Path, rules: str, real: bool) -> None:
    files = _hands(real)
    profiles = {n: load_profile(n) for n in ("tda", "house")}
    profile = profiles[rules]
    journal = Journal(tmp_path / "table.journal", table="t1", profile=rules)
    recorder, _dealer = run_full([script_from_record(read_phh(f), seed=i) for i, f in enumerate(files)],
                                 profiles, rules=rules, journal=journal)
    written = export_hands(journal, tmp_path / "out")
    assert len(written) == len(recorder.hands) == len(files)
    ante_all_in = community = later_all_in = 0
    for original, hand, path in zip(files, recorder.hands, written, strict=True):
        machine = hand.summary
        got = analyze_file(path, profile).as_json()
        before = analyze_file(original, profile).as_json()
        where = f"{original.name} -> {path.name}"
        assert got["error"] is None, where
        assert got["bring_in"] == machine["bring_in"], where
        assert got["first_to_act"] == machine["first_to_act"], where
        assert _seventh(got["seventh"]) == _seventh(machine["seventh"]), where
        assert got["community_card"] == machine["community_card"], where
        assert _alerts(got) <= _alerts(before), where
        data = tomllib.loads(path.read_text())
        first = machine["first_to_act"].get("3rd")
        if first is not None and first != machine["bring_in"]:
            ante_all_in += 1  # the bring-in all-in for the ante survived: stack = ante
            bi = machine["bring_in"] - 1
            assert data["starting_stacks"][bi] == data["antes"][bi], where
        community += got["community_card"] is not None
        # stacks the table did not send are inf, except a player reported all-in (a placeholder)
        all_in = {int(x.split()[2][1:]) - 1 for x in data.get("_inputs", []) if x.split()[1] == "all-in"}
        for i, stack in enumerate(data["starting_stacks"]):
            assert stack == math.inf or stack == data["antes"][i] or i in all_in, where
            later_all_in += stack == PLACEHOLDER["stacks"]
        assert json.dumps(got, allow_nan=False)  # strict JSON
    # the examples hold one ante all-in and one community card; the real hands add another
    # community card and a player all-in on a later street
    assert ante_all_in >= 1 and community >= 1 + real and later_all_in >= real


def test_exported_file_explains_its_placeholders_and_actions(tmp_path: Path) -> None:
    profiles = {n: load_profile(n) for n in ("tda", "house")}
    journal = Journal(tmp_path / "table.journal", table="t1", profile="tda")
    run_full([script_from_record(read_phh(EXAMPLES / "stud8-bring-in-all-in.phh"))], profiles, journal=journal)
    (path,) = export_hands(journal, tmp_path / "out")
    text = path.read_text()
    data = tomllib.loads(text)
    assert data["_amounts"] == "placeholder"
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert any("placeholder" in c for c in comments) and any("act first" in c for c in comments)
    # P3 is all-in for the ante: no bring-in post; P4 opens 3rd, as the machine signalled
    assert data["starting_stacks"][2] == data["antes"][2]
    # the other stacks were not sent by the table: inf (phh-std's unknown stack), read back as such
    assert [s for i, s in enumerate(data["starting_stacks"]) if i != 2] == [math.inf] * (len(data["players"]) - 1)
    assert "starting_stacks = [inf, inf, 1, inf" in text
    assert read_phh(path).starting_stacks == tuple(data["starting_stacks"])
    pokerkit = pytest.importorskip("pokerkit")
    assert [math.isinf(s) for s in pokerkit.HandHistory.loads(text).starting_stacks] == [
        math.isinf(s) for s in data["starting_stacks"]]
    betting = [a for a in data["actions"] if not a.startswith("d ")]
    assert "p3 pb" not in betting and betting[0].startswith("p4 ")


def test_export_without_out_writes_into_a_named_dated_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import time

    from shoe_ctl.cli import main

    profiles = {n: load_profile(n) for n in ("tda", "house")}
    journal = Journal(tmp_path / "table.journal", table="table-7", profile="tda")
    run_full([script_from_record(read_phh(EXAMPLES / "razz-suit-tie.phh"))], profiles, journal=journal)
    journal.close()
    monkeypatch.chdir(tmp_path)
    day = time.strftime("%Y-%m-%d", time.gmtime())
    assert main(["export", "table.journal"]) == 0
    out = capsys.readouterr()
    folder = f"export-table-7-{day}"
    assert f"writing into {folder}/" in out.err
    assert out.out.split() == [f"{folder}/table-7-hand-1.phh"]
    assert (tmp_path / folder / "table-7-hand-1.phh").is_file()
    assert not list(tmp_path.glob("*.phh"))  # nothing in the working folder itself
