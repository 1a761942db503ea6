"""Stopping the service while the journal's disk holds a commit (docs/journal.md, "Stopping on a
stalled disk"): the clean stop's record and the journal's close each wait a bounded time, the
close says in one line which journal, that its last commit did not finish and that the next start
checks it; nothing committed before is lost, and the next start recovers as after a crash. With a
commit held on an event, and on a real frozen filesystem (root only)."""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path

import pytest
from held_store import HeldCommits
from rule_profiles import PROFILES
from small_fs import loop_ext4
from waiting import wait_for

from shoe_ctl.config import LedConfig, TableConfig
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.service.host import HostLife
from shoe_ctl.service.journal import Journal, writer
from shoe_ctl.table import Table


@pytest.fixture
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "CLOSE_WAIT_S", 0.2)
    monkeypatch.setattr(HostLife, "STOP_WAIT_S", 0.2)


def _started(tmp_path: Path) -> tuple[Journal, HostLife, list[int]]:
    boot = tmp_path / "boot_id"
    boot.write_text("aaaa\n")
    journal = Journal(tmp_path / "t.journal", table="t", profile="tda")
    life = HostLife(boot, clock=lambda: (True, "seam: yes"))
    assert life.start(journal) == []
    hand = journal.begin_hand({"game": "stud"})
    seqs = [journal.append_record("decision", {"n": n}) for n in range(3)]
    return journal, life, [hand, *seqs]


def _stop_in_thread(life: HostLife, journal: Journal) -> threading.Event:
    done = threading.Event()

    def stop() -> None:
        life.stop()
        journal.close()
        done.set()

    threading.Thread(target=stop, daemon=True).start()
    return done


def test_a_stop_while_a_commit_is_held_ends_saying_so_and_the_next_start_is_as_after_a_crash(
        tmp_path: Path, short_waits: None, caplog: pytest.LogCaptureFixture) -> None:
    journal, life, _ = _started(tmp_path)
    held = HeldCommits(journal)
    copy = tmp_path / "copy"
    copy.mkdir()
    try:
        held.hold()
        journal.end_hand({}, wait=False)  # its commit is held
        assert held.inside.wait(20)
        with caplog.at_level(logging.ERROR, logger="shoe_ctl.service.journal"):
            done = _stop_in_thread(life, journal)
            stopped = done.wait(20)
        still_held = not held._gate.is_set()
        # the files as a process killed now leaves them: the next start's view if the disk never answers
        for f in tmp_path.glob("t.journal*"):
            shutil.copy(f, copy / f.name)
    finally:
        held.let_go()
    assert stopped, "the stop waited for the held commit"
    assert still_held
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(said) == 1, said
    assert str(tmp_path / "t.journal") in said[0]
    assert "last commit did not finish" in said[0] and "next start checks the journal" in said[0]
    # the held commit ends on its own; the writer's thread then closes the file and gives it up
    assert wait_for(lambda: journal.store.closed, 20), "the file stayed open after the held commit ended"

    for where in (copy, tmp_path):  # the disk never answered / it answered after the stop
        boot = tmp_path / "boot_id"
        with Journal(where / "t.journal", table="t", profile="tda") as again:
            kinds = [r.kind for r in again.records()]
            warnings = dict(HostLife(boot, clock=lambda: (True, "seam: yes")).start(again))
        assert kinds[:5] == ["host", "hand-start", "decision", "decision", "decision"], (where, kinds)
        assert "host-unclean-stop" in warnings, where
        # the clean stop queued behind the held commit was never written
        assert kinds.count("host") == 1, kinds
    assert kinds[5] == "hand-end", "the held commit itself ends written once the disk answers"


def test_a_stop_on_a_journal_that_answers_is_clean(tmp_path: Path, short_waits: None) -> None:
    journal, life, _ = _started(tmp_path)
    assert _stop_in_thread(life, journal).wait(20)
    assert journal.store.closed
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as again:
        assert HostLife(tmp_path / "boot_id", clock=lambda: (True, "seam: yes")).start(again) == []
        assert [r.data["event"] for r in again.records() if r.kind == "host"][:2] == ["power-on", "clean-stop"]


def test_a_stop_on_a_frozen_filesystem_ends_and_the_next_start_is_as_after_a_crash(
        tmp_path: Path, short_waits: None, caplog: pytest.LogCaptureFixture) -> None:
    """The same on a real filesystem frozen under the journal (``fsfreeze`` on a loop-mounted
    ext4, root only): the stop ends while it is frozen; after the thaw the file reopens with
    everything committed before the freeze, and the start says the stop was unclean."""
    with loop_ext4(tmp_path / "disk") as fs:
        journal, life, _ = _started(fs.mount)
        stopped = still_frozen = False
        try:
            fs.freeze()
            journal.end_hand({}, wait=False)  # its commit meets the frozen disk
            assert wait_for(lambda: journal._writer._since is not None, 20)  # type: ignore[union-attr]
            with caplog.at_level(logging.ERROR, logger="shoe_ctl.service.journal"):
                stopped = _stop_in_thread(life, journal).wait(30)
            still_frozen = fs.frozen
        finally:
            fs.thaw()
        closed = wait_for(lambda: journal.store.closed, 30)
        with Journal(fs.mount / "t.journal", table="t", profile="tda") as again:
            kinds = [r.kind for r in again.records()]
            warnings = dict(HostLife(fs.mount / "boot_id", clock=lambda: (True, "seam: yes")).start(again))
    assert stopped and still_frozen, "the stop waited for the frozen disk"
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(said) == 1 and "last commit did not finish" in said[0], said
    assert closed, "the file stayed open after the thaw"
    assert kinds[:5] == ["host", "hand-start", "decision", "decision", "decision"], kinds
    assert kinds.count("host") == 1 and "host-unclean-stop" in warnings


def test_the_service_stops_on_a_held_commit_and_starts_again_as_after_a_crash(
        tmp_path: Path, short_waits: None, caplog: pytest.LogCaptureFixture) -> None:
    """The whole table's stop (what ``systemctl stop`` runs) while a dealer input's commit is held:
    it ends, saying the journal's one line; the next start reports the unclean stop."""
    boot = tmp_path / "boot_id"
    boot.write_text("aaaa\n")
    path = tmp_path / "t.journal"

    def table() -> Table:
        return Table.from_config(TableConfig(leds=LedConfig(backend="mock")), profiles=PROFILES, shoe_url="sim",
                                 journal=str(path), display=None, say=lambda _line: None,
                                 host=HostLife(boot, clock=lambda: (True, "seam: yes")), wait_connected=10.0)

    first = table().start()
    journal = first.journal
    assert isinstance(journal, Journal)
    held = HeldCommits(journal)
    done = threading.Event()
    try:
        assert first.controller.wait_idle(10) and journal.flush(20)
        held.hold()
        first.controller.post(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
        assert held.inside.wait(20)
        with caplog.at_level(logging.ERROR, logger="shoe_ctl.service.journal"):
            threading.Thread(target=lambda: (first.close(), done.set()), daemon=True).start()
            stopped = done.wait(60)
        still_held = not held._gate.is_set()
    finally:
        held.let_go()
    assert stopped and still_held, "the table's stop waited for the held commit"
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name == "shoe_ctl.service.journal"]
    assert len(said) == 1 and str(path) in said[0] and "last commit did not finish" in said[0], said
    assert wait_for(lambda: journal.store.closed, 20)
    second = table()
    with second:
        assert second.controller.wait_idle(10)
        assert any(a["code"] == "host-unclean-stop" for a in second.controller.machine.alerts)
