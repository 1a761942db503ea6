"""A journal whose disk stalls (a commit stuck in its fsync: a frozen filesystem, a stalled SD
card) never stops the controller (docs/journal.md, "The writer"): the hand marks a hand's end
and the next hand's start call for are queued without the store's lock, the pruning a hand's end
calls for runs in a thread of its own, and the dealer's next input is still answered and a STOP
still shown while the commit is held. Once the disk goes on, the record is the same as without
the stall."""

from __future__ import annotations

import errno
import threading
from pathlib import Path

import pytest
from held_store import HeldCommits
from rule_profiles import PROFILES
from sinks import Collect
from waiting import wait_for

from shoe_ctl.events import Alert, DealerAction, DealerInput, Instruction
from shoe_ctl.machine import Dealing
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal import Journal, writer
from shoe_ctl.service.journal.retention import PRUNE_EVERY_S
from shoe_ctl.service.recovery import HandMarks


def _answered(tape: Collect, ref: int) -> bool:
    return any(isinstance(c, Instruction) and c.ref == ref for c in tape.commands)


def test_a_hand_ending_while_a_commit_is_held_leaves_the_controller_answering(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "t.journal", table="t", profile="tda")
    machine = Dealing(PROFILES)
    ctl = Controller(machine, journal=journal)
    ctl.add_hook(HandMarks(journal, machine, wait=False).after_event)
    tape = Collect()
    ctl.add_sink(tape)
    held = HeldCommits(journal)
    try:
        with ctl:
            assert ctl.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2], "ref": 1}))
            assert wait_for(lambda: _answered(tape, 1), 20)
            assert journal.flush(20) and journal.current_hand == 1
            held.hold()
            # the hand ends (its hand-end is due) while the misdeal's own record is stuck
            assert ctl.post(DealerInput(DealerAction.MISDEAL, None, {"confirm": True, "ref": 2}))
            assert held.inside.wait(20), "the misdeal's commit never started"
            assert ctl.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2], "ref": 3}))
            answered = wait_for(lambda: _answered(tape, 3), 20)
            # the writer reports the journal failing: the STOP still reaches the dealer
            for tell in journal._writer._listeners:  # type: ignore[union-attr]
                tell(OSError("disk stalled"))
            stopped = wait_for(lambda: any(isinstance(c, Alert) and c.code == "journal-write-failed"
                                           for c in tape.commands), 20)
            still_held = not held._gate.is_set() and held.held == 1
            held.let_go()
            assert answered, "the controller stopped answering behind the held commit"
            assert stopped, "the journal's STOP never reached the dealer"
            assert still_held
            assert machine.hand_no == 2
            assert journal.flush(20)
        marks = [(r.kind, r.hand) for r in journal.records() if r.kind in ("hand-start", "hand-end")]
        inputs = [r.seq for r in journal.records() if r.kind == "DealerInput"]
        ended = next(r.seq for r in journal.records() if r.kind == "hand-end")
    finally:
        held.let_go()
        journal.close()
    assert marks == [("hand-start", 1), ("hand-end", 1), ("hand-start", 2)]
    assert inputs[1] < ended < inputs[2], "the hand-end comes after the misdeal, before the next hand's input"


def test_the_pruning_a_hand_end_calls_for_waits_in_its_own_thread(tmp_path: Path) -> None:
    """An hour after the last pruning a hand's end prunes; on the controller's path (``wait``
    false) that runs beside it, so a held commit does not hold ``end_hand``."""
    now = [1_000_000.0]
    journal = Journal(tmp_path / "t.journal", table="t", profile="tda", retention_days=1, clock=lambda: now[0])
    held = HeldCommits(journal)
    try:
        now[0] += PRUNE_EVERY_S + 1
        held.hold()
        journal.begin_hand({"game": "stud"}, wait=False)  # its commit is held
        assert held.inside.wait(20)
        done = threading.Event()
        threading.Thread(target=lambda: (journal.end_hand({}, wait=False), done.set()), daemon=True).start()
        returned = done.wait(20)
        held.let_go()
        assert returned, "end_hand waited for the held commit"
        assert journal.flush(20)
        assert wait_for(lambda: journal._retention.last_prune == now[0], 20), "the pruning never ran"
    finally:
        held.let_go()
        journal.close()
    with Journal(tmp_path / "t.journal", table="t", profile="tda", readonly=True) as j:
        assert [r.kind for r in j.records()] == ["hand-start", "hand-end"]


def test_a_commit_held_past_the_stall_limit_stops_the_dealer_until_it_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit that does not end (a frozen disk) never reports an error of its own: past
    ``STALL_S`` the writer reports it as a failure, so the dealer gets the journal's STOP, and its
    end reports the journal writing again."""
    monkeypatch.setattr(writer, "STALL_S", 0.2)
    journal = Journal(tmp_path / "t.journal", table="t", profile="tda")
    machine = Dealing(PROFILES)
    ctl = Controller(machine, journal=journal)
    tape = Collect()
    ctl.add_sink(tape)
    told: list[BaseException | None] = []
    journal.add_state_listener(told.append)
    held = HeldCommits(journal)
    try:
        with ctl:
            held.hold()
            assert ctl.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2], "ref": 1}))
            assert held.inside.wait(20)
            stopped = wait_for(lambda: any(isinstance(c, Alert) and c.code == "journal-write-failed"
                                           for c in tape.commands), 20)
            failing = journal.failing
            held.let_go()
            assert stopped, "no STOP for a commit the disk holds"
            assert isinstance(failing, writer.StalledCommit) and "waited 0.2 s for the disk" in str(failing)
            assert wait_for(lambda: told[-1:] == [None], 20), told
            assert journal.failing is None and journal.flush(20)
            alert = next(c for c in tape.commands if isinstance(c, Alert) and c.code == "journal-write-failed")
            assert alert.latched and "waited 0.2 s for the disk" in alert.message
            assert "not answering" in alert.message and "SD card" in alert.message
            assert "free space" not in alert.message, "a stall is no full disk"
            assert wait_for(lambda: not ctl._journal_failing, 20)
        kinds = [r.kind for r in journal.records()]
    finally:
        held.let_go()
        journal.close()
    assert isinstance(told[0], writer.StalledCommit) and len(told) == 2
    assert "DealerInput" in kinds, "the input held with the commit is written once it ends"


def test_the_stop_says_what_to_do_by_what_the_disk_did() -> None:
    """The journal's STOP names a stalled disk, a full disk and any other failed write apart,
    each with what a dealer or technician does; each keeps the error's own words."""
    stalled = writer.stop_words(writer.StalledCommit("a commit has waited 5 s for the disk"))
    full = writer.stop_words(OSError(errno.ENOSPC, "No space left on device"))
    other = writer.stop_words(OSError(errno.EIO, "Input/output error"))
    assert len({stalled, full, other}) == 3
    assert "not answering" in stalled and "SD card" in stalled and "the hand waits" in stalled
    assert "waited 5 s for the disk" in stalled
    assert "is full" in full and "free space" in full and "No space left" in full
    assert "Input/output error" in other and "fix the journal's storage" in other
    for words in (stalled, full, other):
        assert "keeps them" in words and "do not switch the table off" in words
    for words in (full, other):
        assert "not answering" not in words
