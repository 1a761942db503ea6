"""Journal paths that are no journal: refused untouched, never moved aside, re-created or chmod-ed."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from sinks import Collect

from shoe_ctl.cli import main
from shoe_ctl.config import load_profile
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal import Journal, JournalError

TEXT = b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


@pytest.mark.parametrize("readonly", [False, True])
def test_a_foreign_file_is_refused_and_left_untouched(tmp_path: Path, readonly: bool) -> None:
    path = tmp_path / "passwd"
    path.write_bytes(TEXT)
    os.chmod(path, 0o644)
    with pytest.raises(JournalError, match="not a shoe-ctl journal"):
        Journal(path, table=None if readonly else "t", profile=None if readonly else "tda", readonly=readonly)
    assert path.read_bytes() == TEXT
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["passwd"]


def test_a_folder_is_refused_and_its_mode_kept(tmp_path: Path) -> None:
    folder = tmp_path / "var"
    folder.mkdir(mode=0o755)
    with pytest.raises(JournalError, match="is a folder"):
        Journal(folder, table="t", profile="tda")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_a_device_is_refused() -> None:
    with pytest.raises(JournalError, match="not a regular file"):
        Journal("/dev/null", table="t", profile="tda")


def test_run_and_export_name_a_foreign_journal_without_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(TEXT)
    assert main(["run", "--journal", str(path), "--display", "off", "--count", "1", "--pace", "0",
                 "--exit-when-done"]) == 2
    assert main(["export", str(path), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("not a shoe-ctl journal") == 2 and "Traceback" not in err
    assert path.read_bytes() == TEXT


def test_a_journal_with_a_flipped_bit_in_its_header_is_still_opened(tmp_path: Path) -> None:
    """Damage is repaired, not refused: one flipped bit in the SQLite magic is still a journal."""
    path = tmp_path / "j.sqlite3"
    Journal(path, table="t", profile="tda").close()
    data = bytearray(path.read_bytes())
    data[3] ^= 0x04
    path.write_bytes(bytes(data))
    with Journal(path, table="t", profile="tda") as j:
        assert j.report.damage


def test_doctor_fails_a_foreign_journal_file_instead_of_advising_chmod(tmp_path: Path) -> None:
    from shoe_ctl.cli import doctor as doc
    from shoe_ctl.config import load_table_config

    (tmp_path / "table.toml").write_text("")
    cfg = load_table_config(tmp_path / "table.toml")
    path = tmp_path / "notes.txt"
    path.write_bytes(TEXT)
    os.chmod(path, 0o600)
    c = doc.check_journal(cfg, path)
    assert c.status == "fail"
    assert "not a shoe-ctl journal" in c.detail
    assert "chmod" not in c.fix


class _FullDisk:
    """A journal connection whose COMMIT fails as SQLite's does on a full disk: the transaction
    is already rolled back when the error is raised."""

    def __init__(self, real: sqlite3.Connection) -> None:
        self.real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT":
            self.real.execute("ROLLBACK")
            raise sqlite3.OperationalError("database or disk is full")
        return self.real.execute(sql, *args)


def test_a_commit_that_fails_on_a_full_disk_raises_that_error_and_the_journal_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The error is the disk's (was: 'cannot rollback - no transaction is active', hiding it);
    the failed record is not kept and the next append, with room again, works."""
    j = Journal(tmp_path / "j.sqlite3", table="t", profile="tda")
    real = j.store.db()
    monkeypatch.setattr(j.store, "db", lambda: _FullDisk(real))
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        j.append(CardRead(1, Card(0), "rfid", 1))
    monkeypatch.undo()
    j.append(CardRead(2, Card(1), "rfid", 2))
    assert [r.shoe_seq for r in j.records()] == [2]
    j.close()


def test_controller_thread_survives_a_failing_after_event_hook() -> None:
    """A hook after an event (the journal's hand mark) that raises, e.g. on a full disk, is
    logged; the controller thread goes on handling events (was: the thread died and the service
    hung)."""
    m = Dealing({"tda": load_profile("tda")})
    c = Controller(m)
    calls: list[str] = []

    def hook(ev: object, _cmds: list[object]) -> None:
        calls.append(type(ev).__name__)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database or disk is full")

    c.add_hook(hook)
    with c:
        c.post(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
        c.post(CardRead(1, Card(5), "rfid", 1))
        deadline = time.monotonic() + 5
        while len(calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert c._thread is not None and c._thread.is_alive()
    assert calls == ["DealerInput", "CardRead"]
    assert c.errors == 1 and m.hand is not None and len(m.reads) == 1


def _written(path: Path) -> list[tuple[int, str, str]]:
    """A journal at ``path`` with one record; returns every record as (seq, kind, body)."""
    with Journal(path, table="t", profile="tda") as j:
        j.append(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
        return [(r.seq, r.kind, r.body) for r in j.records()]


def test_export_reads_a_journal_whose_name_has_uri_characters(tmp_path: Path) -> None:
    """A journal named ``table#1?.sqlite3``: a read-only open reads that file (was: SQLite's URI
    cut the name at '#', and the open failed with 'no such table')."""
    path = tmp_path / "table#1?.sqlite3"
    written = _written(path)
    with Journal(path, table=None, profile=None, readonly=True) as r:
        assert [(x.seq, x.kind, x.body) for x in r.records()] == written


def test_readonly_open_on_a_medium_that_cannot_take_the_wal_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal on a read-only medium: SQLite cannot create the -shm a WAL reader needs and
    fails to open; with no pending log the file is read as immutable (was: a traceback in
    ``shoe-ctl export``); with a pending log the error says to copy both files."""
    path = tmp_path / "j.sqlite3"
    written = _written(path)
    real = sqlite3.connect

    def no_shm(database: str, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if kwargs.get("uri") and "mode=ro" in database and "immutable=1" not in database:
            raise sqlite3.OperationalError("unable to open database file")
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", no_shm)
    with Journal(path, table=None, profile=None, readonly=True) as r:
        assert [(x.seq, x.kind, x.body) for x in r.records()] == written
    Path(f"{path}-wal").write_bytes(b"x" * 32)
    with pytest.raises(JournalError, match="write-ahead log is pending"):
        Journal(path, table=None, profile=None, readonly=True)


def test_a_journal_in_a_folder_that_cannot_be_written_is_refused_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An intact journal on a read-only medium: the writable open says the folder cannot be
    written (was: taken for a damaged journal, failing to copy it aside with 'Read-only file
    system'); nothing is created or copied."""
    path = tmp_path / "j.sqlite3"
    _written(path)
    before = sorted(p.name for p in tmp_path.iterdir())
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == tmp_path else real(p, mode))
    with pytest.raises(JournalError, match="folder .* cannot be written"):
        Journal(path, table="t", profile="tda")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_journal_whose_header_page_was_zeroed_is_damage_not_a_foreign_file(tmp_path: Path) -> None:
    """A power cut can leave the first page zeroed: that journal is opened (damage reported, the
    file kept aside), not refused as a foreign file."""
    path = tmp_path / "j.sqlite3"
    _written(path)
    data = bytearray(path.read_bytes())
    data[:4096] = bytes(4096)
    path.write_bytes(bytes(data))
    with Journal(path, table="t", profile="tda") as j:
        assert j.report.damage and j.report.kept_aside
        assert j.report.kept_aside[0].read_bytes() == bytes(data)


class _Flaky:
    """A journal whose appends fail while ``full`` is set (a full disk)."""

    def __init__(self) -> None:
        self.full = True
        self.items: list[object] = []

    def append(self, item: object) -> int:
        if self.full:
            raise sqlite3.OperationalError("database or disk is full")
        self.items.append(item)
        return len(self.items)




def test_the_dealer_is_told_once_when_the_journal_cannot_be_written() -> None:
    """A full disk: the first failed append raises a ``journal-write-failed`` alert on the
    display (was: an ERROR log line only, the dealer dealing on without durability); it is not
    repeated for every card, and comes again after the journal worked once in between."""
    m = Dealing({"tda": load_profile("tda")})
    journal = _Flaky()
    c = Controller(m, journal=journal)
    sink = Collect()
    c.add_sink(sink)

    def codes() -> list[str]:
        return [x.code for x in sink.commands if isinstance(x, Alert) and x.code == "journal-write-failed"]

    c.step(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    for i in range(1, 4):
        c.step(CardRead(i, Card(i), "rfid", i))
    assert codes() == ["journal-write-failed"]
    assert any(a["code"] == "journal-write-failed" for a in m.public_state()["alerts"])
    assert len(m.reads) == 3 and journal.items == []
    journal.full = False
    c.step(CardRead(4, Card(4), "rfid", 4))
    journal.full = True
    c.step(CardRead(5, Card(5), "rfid", 5))
    assert codes() == ["journal-write-failed", "journal-write-failed"]


def test_a_record_edited_to_a_deeply_nested_body_is_damage_not_a_traceback(tmp_path: Path) -> None:
    """Someone edits a record's body to a list nested 100,000 deep and recomputes its checksum:
    reading it (export, the open's check) names the record as damaged; nothing raises."""
    from shoe_ctl.service.journal.records import record_crc

    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        j.append(CardRead(1, Card.parse("As"), "rfid", 1))
        j.append(CardRead(2, Card.parse("Ks"), "rfid", 2))
    body = "[" * 100_000 + "]" * 100_000
    with sqlite3.connect(path) as db:
        seq, t_us, kind, hand, shoe_seq = db.execute(
            "SELECT seq, time_us, kind, hand, shoe_seq FROM records ORDER BY seq DESC LIMIT 1").fetchone()
        db.execute("UPDATE records SET body = ?, crc = ? WHERE seq = ?",
                   (body, record_crc(seq, t_us, kind, hand, shoe_seq, body), seq))
    with Journal(path, table="t", profile="tda", verify="full") as j:
        assert any("nested too deeply" in d.reason for d in j.report.damage), j.report.lines()
        assert [r.shoe_seq for r in j.records() if r.kind == "CardRead"] == [1]
