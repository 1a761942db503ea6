"""Copying the live journal aside (a record found damaged while the service runs) keeps this
process's SQLite locks on the journal file: a descriptor of that file opened and closed in the
same process would drop every POSIX lock the process holds on it (docs/journal.md, "Damage: found, reported, nothing intact thrown away")."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from posix_locks import LOCKS, held_by_me

from shoe_ctl.service.journal import Journal, OpenReport
from shoe_ctl.service.journal.aside import keep_aside
from shoe_ctl.service.journal.files import private_copy


@pytest.mark.skipif(not LOCKS.exists(), reason="needs /proc/locks (Linux)")
def test_the_live_journal_copied_aside_keeps_its_locks(tmp_path: Path) -> None:
    path = tmp_path / "t1.journal"
    with Journal(path, table="t1", profile="tda") as journal:
        journal.append_record("note", {"text": "before the copy"})
        held = held_by_me(path)
        assert held, "an open SQLite connection holds a lock on the journal file"
        report = OpenReport(path)
        base = keep_aside(path, time.time(), report)
        assert held_by_me(path) == held
        assert base.read_bytes() == path.read_bytes()
        assert report.kept_aside and report.kept_aside[0] == base
        journal.append_record("note", {"text": "after the copy"})
    with Journal(path, table=None, profile=None, readonly=True) as again:
        assert [json.loads(r.body)["text"] for r in again.records() if r.kind == "note"] == ["before the copy",
                                                                                        "after the copy"]


def test_a_copy_of_a_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="gone.journal"):
        private_copy(tmp_path / "gone.journal", tmp_path / "copy")
