"""A full disk under the journal is said as what it is (docs/journal.md, "The writer"): the
pruning that meets it says the disk is full, where, and what to do, in one line, and checks no
page (the file is not damaged); a clean stop that cannot journal its record says so in one line
naming the journal, not with a traceback; the writer's first failure says the same."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from small_fs import fill, small_tmpfs

from shoe_ctl.service.host import HostLife
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.journal.disk import disk_full, write_problem


def _real_full(tmp_path: Path) -> sqlite3.OperationalError:
    """SQLite's own ``SQLITE_FULL``: a database capped at its size (``max_page_count``) asked to grow."""
    db = sqlite3.connect(tmp_path / "capped.db")
    try:
        db.execute("CREATE TABLE t (x)")
        db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
        with pytest.raises(sqlite3.OperationalError) as caught:
            db.execute("INSERT INTO t VALUES (randomblob(100000))")
    finally:
        db.close()
    return caught.value


def _corrupt() -> sqlite3.DatabaseError:
    exc = sqlite3.DatabaseError("database disk image is malformed")
    exc.sqlite_errorcode = sqlite3.SQLITE_CORRUPT  # type: ignore[attr-defined]
    return exc


def test_a_full_disk_is_told_from_damage_and_named_with_its_folder(tmp_path: Path) -> None:
    full = _real_full(tmp_path)
    assert disk_full(full) and disk_full(OSError(28, "No space left on device"))
    assert not disk_full(_corrupt()) and not disk_full(OSError(5, "Input/output error"))
    words = write_problem(tmp_path / "t.journal", full)
    assert words.startswith(f"journal {tmp_path / 't.journal'}: database or disk is full: ")
    assert f"the disk holding {tmp_path}" in words and "KiB free of" in words and "free space on it" in words
    assert write_problem(tmp_path / "t.journal", _corrupt()) == \
        f"journal {tmp_path / 't.journal'}: database disk image is malformed"


def test_a_pruning_on_a_full_disk_says_so_in_one_line_and_checks_no_page(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    full = _real_full(tmp_path)
    with Journal(tmp_path / "t.journal", table="t", profile="tda", retention_days=1) as j:

        def no_room(**_kw: object) -> int:
            raise full

        j._retention.prune = no_room  # type: ignore[method-assign,assignment]
        with caplog.at_level(logging.ERROR, logger="shoe_ctl.service.journal"):
            assert j._prune_or_check() == 0
        assert j.checked is None, "a full disk is no damage: no whole-file check"
        assert j.report.damage == []
        lines = [r.getMessage() for r in caplog.records]
        assert len(lines) == 1 and not caplog.records[0].exc_info
        assert "damaged page" not in lines[0] and "retention not run" in lines[0]
        assert f"journal {j.path}" in lines[0] and "is full" in lines[0]

        def damaged(**_kw: object) -> int:
            raise _corrupt()

        j._retention.prune = damaged  # type: ignore[method-assign,assignment]
        j._prune_or_check()
        assert j.checked is not None, "a damaged page still gets the whole-file check"


def test_a_clean_stop_on_a_full_disk_logs_one_line_naming_the_journal(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    full = _real_full(tmp_path)
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        life = HostLife(boot_id_path=tmp_path / "boot_id", clock=lambda: (True, "test"))
        life.start(j)

        def no_room(*_a: object, **_kw: object) -> int:
            raise full

        j.append_record = no_room  # type: ignore[method-assign,assignment]
        with caplog.at_level(logging.ERROR, logger="shoe_ctl.service.host"):
            life.stop()
    assert len(caplog.records) == 1 and not caplog.records[0].exc_info, "one line, no traceback"
    line = caplog.records[0].getMessage()
    assert f"journal {tmp_path / 't.journal'}" in line and "is full" in line and "unclean stop" in line


def test_a_tmpfs_that_fills_is_said_full_by_the_pruning_and_the_stop(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The same on a real full filesystem: a 3 MB tmpfs, filled after a few hands."""
    with small_tmpfs(tmp_path / "mnt", 3072) as mnt:
        now = [1_000_000.0]
        j = Journal(mnt / "t.journal", table="t", profile="tda", retention_days=1, clock=lambda: now[0])
        life = HostLife(boot_id_path=tmp_path / "boot_id", clock=lambda: (True, "test"))
        try:
            life.start(j)
            for _ in range(8):
                j.begin_hand({"game": "stud"})
                for n in range(4):
                    j.append_record("note", {"n": n})
                j.end_hand({})
            fill(mnt)
            now[0] += 3 * 86400
            with caplog.at_level(logging.ERROR):
                pruned = j._prune_or_check()
                life.stop()
        finally:
            j.close()
    lines = [r.getMessage() for r in caplog.records]
    assert pruned == 0 and j.checked is None
    assert not any(r.exc_info for r in caplog.records), lines
    assert not any("damaged page" in line for line in lines), lines
    assert any("retention not run" in line and "is full" in line for line in lines), lines
    assert any("clean stop is not journaled" in line and "is full" in line for line in lines), lines
