"""Clear errors instead of tracebacks or silence (docs/service.md): ``hil crash --workdir`` with a
folder that does not exist, ``export`` of a journal with no finished hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hil.crash import _workdir
from shoe_ctl.service.journal import Journal


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shoe_ctl.cli", *argv], capture_output=True, text=True, timeout=120)


def test_crash_workdir_is_created_with_its_parents(tmp_path: Path) -> None:
    new = tmp_path / "a" / "b" / "runs"
    assert _workdir(new) == new and new.is_dir()
    assert _workdir(new) == new  # an existing folder is kept


def test_crash_workdir_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    proc = cli("hil", "crash", "--hands", "1", "--kills", "1", "--workdir", str(f))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"shoe-ctl hil crash: --workdir {f}: exists and is not a folder"


def test_crash_workdir_under_a_file_is_a_clear_error(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(ValueError, match="cannot create the folder"):
        _workdir(f / "sub")


def test_export_without_a_finished_hand_says_so_and_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    Journal(str(path), table="t1", profile="tda").close()
    out = tmp_path / "out"
    proc = cli("export", str(path), "--out", str(out))
    assert proc.returncode == 1
    assert f"{path}: no finished hand to export" in proc.stderr
    assert proc.stdout == "" and not out.exists()


def test_a_non_phh_file_is_named_as_such_with_its_place(tmp_path: Path) -> None:
    text = tmp_path / "notes.phh"
    text.write_text("dealer notes\nseat 3 late\n")
    toml = tmp_path / "table.phh"
    toml.write_text('[shoe]\nurl = "sim"\n')
    proc = cli("analyze", "--json", str(text), str(toml))
    assert proc.returncode == 1
    import json

    errors = [json.loads(line)["error"] for line in proc.stdout.splitlines()]
    assert errors[0].startswith(f"{text}: line 1, column 8: not a PHH hand record (not TOML: ")
    assert errors[1] == f"{toml}: top level: not a PHH hand record (TOML, but no variant or actions key)"
    assert not any("not valid TOML" in e for e in errors)
