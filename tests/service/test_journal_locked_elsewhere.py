"""A journal whose SQLite write lock another program holds (an ``sqlite3`` shell in a
transaction, a copy tool) is refused, naming it, and left as it is: not taken for damage, copied
aside and rebuilt under that program (docs/journal.md, "One writing process")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shoe_ctl.service.journal import Journal, JournalError, journal_problem

HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.read()
"""


def _notes(path: Path) -> list[int]:
    with Journal(path, table=None, profile=None, readonly=True) as j:
        return [r.seq for r in j.records() if r.kind == "note"]


def test_a_journal_locked_by_another_program_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "is"
    with Journal(path, table="T1", profile="tda") as j:
        for n in range(5):
            j.append_record("note", {"n": n})
    kept = _notes(path)
    files = sorted(p.name for p in tmp_path.iterdir())
    before = path.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(JournalError) as refused:
            Journal(path, table="T1", profile="tda")
        said = journal_problem(path, refused.value)
        assert said.startswith(f"{path}: another program holds SQLite's lock on it"), said
        assert said.count(str(path)) == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == files  # nothing kept aside, nothing made
        assert path.read_bytes() == before
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)
    with Journal(path, table="T1", profile="tda") as j:
        assert not j.report.damage and not j.report.kept_aside
    assert _notes(path) == kept
