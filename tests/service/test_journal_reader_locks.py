"""A read-only open of the journal in the process that writes it keeps that process's SQLite
locks on the journal file: its check that the file is a journal reads the header without a
descriptor of the file in this process (docs/journal.md, "One writing process")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from posix_locks import LOCKS, held_by_me

from shoe_ctl.service.journal import Journal, JournalError
from shoe_ctl.service.journal.files import refuse_foreign


@pytest.mark.skipif(not LOCKS.exists(), reason="needs /proc/locks (Linux)")
@pytest.mark.parametrize("alias", ["same", "symlink"])
def test_a_reader_in_the_writing_process_keeps_its_locks(tmp_path: Path, alias: str) -> None:
    path = tmp_path / "t1.journal"
    with Journal(path, table="t1", profile="tda") as journal:
        journal.append_record("note", {"text": "before the reader"})
        held = held_by_me(path)
        assert held, "an open SQLite connection holds a lock on the journal file"
        seen = path
        if alias == "symlink":
            seen = tmp_path / "other-name.journal"
            seen.symlink_to(path)
        with Journal(seen, table=None, profile=None, readonly=True) as reader:
            assert [json.loads(r.body)["text"] for r in reader.records() if r.kind == "note"] == ["before the reader"]
            assert held_by_me(path) == held
        assert held_by_me(path) == held
        journal.append_record("note", {"text": "after the reader"})
    with Journal(path, table=None, profile=None, readonly=True) as again:
        assert [json.loads(r.body)["text"] for r in again.records() if r.kind == "note"] == [
            "before the reader", "after the reader"]


def test_a_foreign_file_is_still_refused_by_the_writing_process(tmp_path: Path) -> None:
    """The header is still read when this process writes a journal: another file is refused."""
    with Journal(tmp_path / "t1.journal", table="t1", profile="tda"):
        notes = tmp_path / "notes.txt"
        notes.write_text("not a journal\n")
        with pytest.raises(JournalError, match="not a shoe-ctl journal"):
            refuse_foreign(notes)


@pytest.mark.skipif(not LOCKS.exists(), reason="needs /proc/locks (Linux)")
def test_a_writer_opened_beside_a_reader_of_the_same_process_keeps_its_locks(tmp_path: Path) -> None:
    """The other order: the writer's own checks of the file (is it a journal) do not drop the
    lock the reader's connection holds."""
    path = tmp_path / "t1.journal"
    with Journal(path, table="t1", profile="tda") as first:
        first.append_record("note", {"text": "first"})
    with Journal(path, table=None, profile=None, readonly=True) as reader:
        held = held_by_me(path)
        assert held, "a reader's SQLite connection holds a lock on the journal file"
        with Journal(path, table="t1", profile="tda") as writer:
            assert held_by_me(path) == held
            writer.append_record("note", {"text": "second"})
        assert held_by_me(path) == held
        assert [json.loads(r.body)["text"] for r in reader.records() if r.kind == "note"] == ["first", "second"]
