"""One process writes a journal: a second opener for writing (another process, or another
``Journal`` of the same one) is refused with an error naming the journal and what to do; a
killed owner releases it; read-only readers read meanwhile (docs/journal.md, "One writing
process")."""

from __future__ import annotations

import os
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from journal_owner import PROFILE, TABLE, Owner

from shoe_ctl.service.journal import Journal, JournalError, owner_lock, retention, writer_pid
from shoe_ctl.service.journal.store import Store


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[tuple[Owner, Path]]:
    path = tmp_path / "journal.sqlite3"
    own = Owner(path)
    try:
        yield own, path
    finally:
        if own.proc.poll() is None:
            own.proc.kill()
            own.proc.wait(30)
        own.stop()


def notes(path: Path) -> list[tuple[int, str]]:
    with Journal(path, table=None, profile=None, readonly=True) as j:
        return [(r.seq, r.data["n"]) for r in j.records() if r.kind == "note"]


def test_a_second_process_is_refused_and_the_owner_goes_on_writing(owner: tuple[Owner, Path]) -> None:
    own, path = owner
    first = int(own.append("first"))
    with pytest.raises(JournalError) as err:
        Journal(path, table=TABLE, profile=PROFILE)
    text = str(err.value)
    assert str(path) in text and f"pid {own.proc.pid}" in text and "stop it first" in text
    # the owner's next record takes the next sequence: nothing took it meanwhile
    assert int(own.append("second")) == first + 1
    # read-only readers read while the owner writes
    assert notes(path) == [(first, "first"), (first + 1, "second")]
    own.stop()
    with Journal(path, table=TABLE, profile=PROFILE) as j:  # released by a clean close
        assert j.append_record("note", {"n": "third"}) == first + 2


def test_a_killed_owner_releases_the_journal(owner: tuple[Owner, Path]) -> None:
    own, path = owner
    seq = int(own.append("before the kill"))
    own.proc.send_signal(signal.SIGKILL)
    own.proc.wait(30)
    with Journal(path, table=TABLE, profile=PROFILE) as j:
        assert j.append_record("note", {"n": "after"}) == seq + 1
    assert notes(path) == [(seq, "before the kill"), (seq + 1, "after")]


def test_a_second_journal_of_the_same_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path, table=TABLE, profile=PROFILE) as first:
        seq = first.append_record("note", {"n": "a"})
        with pytest.raises(JournalError, match="this process"):
            Journal(path, table=TABLE, profile=PROFILE)
        with Journal(path, table=None, profile=None, readonly=True) as reader:
            assert [r.seq for r in reader.records() if r.kind == "note"] == [seq]
        assert first.append_record("note", {"n": "b"}) == seq + 1
    with Journal(path, table=TABLE, profile=PROFILE) as again:
        assert again.append_record("note", {"n": "c"}) == seq + 2


def test_the_lock_file_is_private_and_a_foreign_file_gets_none(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    lock = Path(f"{path}.lock")
    lock.write_text("")
    os.chmod(lock, 0o644)
    with Journal(path, table=TABLE, profile=PROFILE):
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        assert lock.read_text().strip() == str(os.getpid())
    assert lock.exists()  # kept: removing it could let two writers lock two files of one name
    notes_txt = tmp_path / "notes.txt"
    notes_txt.write_text("not a journal\n" * 10)
    with pytest.raises(JournalError, match="not a shoe-ctl journal"):
        Journal(notes_txt, table=TABLE, profile=PROFILE)
    assert not Path(f"{notes_txt}.lock").exists()
    assert notes_txt.read_text() == "not a journal\n" * 10


def test_a_refused_open_leaves_the_journal_free(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path, table=TABLE, profile=PROFILE) as j:
        first = j.append_record("note", {"n": "a"})
    with pytest.raises(JournalError, match="table"):
        Journal(path, table="another table", profile=PROFILE)
    with Journal(path, table=TABLE, profile=PROFILE) as j:  # not refused as held by this process
        assert j.append_record("note", {"n": "b"}) == first + 1


def test_the_writer_is_found_without_taking_the_lock(owner: tuple[Owner, Path], tmp_path: Path) -> None:
    own, path = owner
    assert writer_pid(path) == own.proc.pid
    assert own.append("still mine").isdigit()  # asking took nothing from the owner
    own.stop()
    assert writer_pid(path) is None  # the lock file stays, nobody holds it
    assert writer_pid(tmp_path / "none.sqlite3") is None  # no lock file at all


def test_the_writer_is_read_from_the_holders_line_only(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    owner_lock(path).write_text("")
    st = owner_lock(path).stat()
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    locks = tmp_path / "locks"
    locks.write_text(f"1: POSIX  ADVISORY  WRITE 11 {where} 0 EOF\n"
                     f"2: FLOCK  ADVISORY  WRITE 12 {where}0 0 EOF\n"
                     f"2: -> FLOCK  ADVISORY  WRITE 13 {where} 0 EOF\n")
    assert writer_pid(path, locks) is None  # a POSIX lock, another inode, a waiter
    locks.write_text(locks.read_text() + f"3: FLOCK  ADVISORY  WRITE 14 {where} 0 EOF\n")
    assert writer_pid(path, locks) == 14
    # a device named otherwise than stat names it: the inode and the id written in the lock file
    other = f"ff:ff:{st.st_ino}"
    locks.write_text(f"1: FLOCK  ADVISORY  WRITE 15 {other} 0 EOF\n")
    assert writer_pid(path, locks) is None  # 15 is not the id in the lock file
    owner_lock(path).write_text("15\n")
    assert writer_pid(path, locks) == 15
    assert writer_pid(path, tmp_path / "no-such-table") is None


def test_a_second_writer_through_another_name_of_the_journal_is_refused(owner: tuple[Owner, Path],
                                                                         tmp_path: Path) -> None:
    """A symlink to the journal, or to its folder, names the same journal: one lock (was: a lock
    file per name, so a second writer through the alias opened and took the owner's sequence)."""
    own, path = owner
    first = int(own.append("first"))
    (tmp_path / "alias.sqlite3").symlink_to(path.name)
    (tmp_path / "linked").symlink_to(tmp_path, target_is_directory=True)
    for alias in (tmp_path / "alias.sqlite3", tmp_path / "linked" / path.name):
        with pytest.raises(JournalError) as err:
            Journal(alias, table=TABLE, profile=PROFILE)
        assert f"journal {alias} is open for writing by another process (pid {own.proc.pid}" in str(err.value)
        assert writer_pid(alias) == own.proc.pid
    assert int(own.append("second")) == first + 1
    assert not (tmp_path / "alias.sqlite3.lock").exists()


def test_an_open_that_fails_after_the_store_opened_gives_back_what_it_took(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pruning that raises at the open (a fault of the program, not the file's): the open fails
    with it, and the store, its writer and the file's ownership are given back, so the next open
    takes the journal."""
    path = tmp_path / "journal.sqlite3"
    with Journal(path, table="t", profile="tda") as j:
        j.append_record("note", {"n": "kept"})
    stores: list[Store] = []
    real_init = Store.__init__

    def noting(self: Store, *args: object, **kw: object) -> None:
        real_init(self, *args, **kw)  # type: ignore[arg-type]
        stores.append(self)

    def broken(self: object, *args: object, **kw: object) -> int:
        raise RuntimeError("pruning broke")

    monkeypatch.setattr(Store, "__init__", noting)
    monkeypatch.setattr(retention.Retention, "prune", broken)
    with pytest.raises(RuntimeError, match="pruning broke"):
        Journal(path, table="t", profile="tda", retention_days=1)
    assert len(stores) == 1 and stores[0].closed, "the store of the failed open stayed open"
    writers = [t for t in threading.enumerate() if t.name.startswith(f"{path.name}-") and t.is_alive()]
    assert writers == [], writers
    monkeypatch.undo()
    with Journal(path, table="t", profile="tda", retention_days=0) as again:  # ownership was given back
        assert [r.data["n"] for r in again.records() if r.kind == "note"] == ["kept"]
