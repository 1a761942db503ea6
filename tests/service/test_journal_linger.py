"""The journal writer's lingering groups (docs/journal.md, "The writer"): appends nobody waits for
(the controller's shoe events, acked from the commit) may wait a few milliseconds to share an
fsync; anything somebody waits for ends that wait at once, and so do a full group and close."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shoe_ctl import events as E
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.journal import writer as W


def card(seq: int) -> E.CardRead:
    return E.CardRead(seq, Card(seq % 52), "rfid", seq)


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    j = Journal(tmp_path / "t.journal", table="t", profile="tda")
    yield j
    j.close()


def wait_acked(acked: list[int], n: int, timeout: float = 5.0) -> None:
    """Wait until ``n`` appends were acked: ``on_durable`` runs in the writer thread after the
    commit, so a flush may return before the last callbacks ran."""
    deadline = time.monotonic() + timeout
    while len(acked) < n and time.monotonic() < deadline:
        time.sleep(0.002)


def test_lingering_appends_share_commits_and_are_acked_in_order(journal: Journal) -> None:
    acked: list[int] = []
    writer = journal._writer
    assert writer is not None and journal.flush(5.0)
    groups = writer.groups
    with writer._cond:  # the writer takes no group before all 20 wait (re-entrant: submit still works)
        entries = [journal.submit([card(s)], on_durable=lambda _seqs, s=s: acked.append(s), linger=True)
                   for s in range(1, 21)]
    assert journal.flush(5.0)  # nobody waits for them: the group is committed once its linger is over
    assert all(e.done and e.error is None for e in entries)
    wait_acked(acked, 20)
    assert acked == list(range(1, 21))
    assert writer.groups - groups == 1  # not 20: one fsync each
    assert [r.shoe_seq for r in journal.records()] == list(range(1, 21))


def test_appends_made_while_the_writer_lingers_share_its_commit(journal: Journal,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Appends made one by one after the writer began to linger on the first join its group."""
    monkeypatch.setattr(W, "LINGER_S", 30.0)
    acked: list[int] = []
    writer = journal._writer
    assert writer is not None and journal.flush(5.0)
    groups = writer.groups
    entries = []
    for s in range(1, 21):
        entries.append(journal.submit([card(s)], on_durable=lambda _seqs, s=s: acked.append(s), linger=True))
        time.sleep(0.002)  # time for a commit, were the writer not lingering
        assert not any(e.done for e in entries)  # the writer lingers: nothing committed yet
    assert journal.wait_written(entries[-1], 5.0)  # somebody waits: the linger ends
    assert all(e.done and e.error is None for e in entries)
    wait_acked(acked, 20)
    assert acked == list(range(1, 21))
    assert writer.groups - groups == 1
    assert [r.shoe_seq for r in journal.records()] == list(range(1, 21))


def test_a_waited_append_ends_the_linger_at_once(journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "LINGER_S", 30.0)
    first = journal.submit([card(1)], linger=True)
    waited = journal.submit([E.DealerInput(E.DealerAction.NEW_HAND)])  # a dealer input: somebody waits
    assert journal.wait_written(waited, 5.0)
    assert first.done  # written in the same commit or before it: order kept


def test_waiting_on_a_lingering_append_ends_its_linger(journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "LINGER_S", 30.0)
    entry = journal.submit([card(1)], linger=True)
    assert journal.wait_written(entry, 5.0)


def test_wait_done_times_out_without_ending_the_linger(journal: Journal,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "LINGER_S", 30.0)
    writer = journal._writer
    assert writer is not None
    entry = journal.submit([card(1)], linger=True)
    assert not writer.wait_done(entry, 0.05)  # still lingering: nobody asked for the commit
    assert not entry.done and entry.seqs == []
    assert journal.wait_written(entry, 5.0) and entry.done and len(entry.seqs) == 1


def test_a_full_group_and_close_end_the_linger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "LINGER_S", 30.0)
    j = Journal(tmp_path / "t.journal", table="t", profile="tda")
    try:
        entries = [j.submit([card(s)], linger=True) for s in range(1, W.LINGER_ROWS + 1)]
        assert j._writer is not None and j._writer.wait_done(entries[-1], 5.0)  # a wait that keeps the linger
        last = j.submit([card(W.LINGER_ROWS + 1)], linger=True)
    finally:
        j.close()
    assert last.done and last.error is None
    with Journal(tmp_path / "t.journal", table="t", profile="tda", readonly=True) as again:
        assert [r.shoe_seq for r in again.records()][-1] == W.LINGER_ROWS + 1


def test_a_hold_keeps_lingering_appends_until_it_ends_then_commits_them_at_once(
        journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    """During a hold (the controller's, around one event) lingering appends do not wake the writer,
    even past ``LINGER_S``; its end commits them, in one group, without the linger's timer."""
    monkeypatch.setattr(W, "LINGER_S", 0.01)
    monkeypatch.setattr(W, "BUSY_S", 0.0)  # a dealer's pace: the last commit ended long before
    acked: list[int] = []
    writer = journal._writer
    assert writer is not None and journal.flush(5.0)
    groups = writer.groups
    journal.hold()
    entries = [journal.submit([card(s)], on_durable=lambda _seqs, s=s: acked.append(s), linger=True)
               for s in range(1, 4)]
    assert not writer.wait_done(entries[-1], 0.1)  # ten lingers long: still held
    assert not any(e.done for e in entries)
    monkeypatch.setattr(W, "LINGER_S", 30.0)  # the hold's end, not the timer, commits them
    journal.release()
    assert writer.wait_done(entries[-1], 5.0)
    assert all(e.done and e.error is None for e in entries)
    wait_acked(acked, 3)
    assert acked == [1, 2, 3]
    assert writer.groups - groups == 1
    assert [r.shoe_seq for r in journal.records()] == [1, 2, 3]


def test_holds_nest_and_what_is_waited_for_is_committed_during_one(journal: Journal,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "LINGER_S", 30.0)
    monkeypatch.setattr(W, "BUSY_S", 0.0)  # a dealer's pace: each hold's end commits at once
    writer = journal._writer
    assert writer is not None
    journal.hold()
    journal.hold()
    first = journal.submit([card(1)], linger=True)
    waited = journal.submit([E.DealerInput(E.DealerAction.NEW_HAND)])  # a dealer input: somebody waits
    assert journal.wait_written(waited, 5.0) and first.done  # order kept, the hold notwithstanding
    second = journal.submit([card(2)], linger=True)
    journal.release()  # one hold still on
    assert not writer.wait_done(second, 0.05)
    assert journal.flush(5.0) and second.done  # a flush waits for it: committed at once
    third = journal.submit([card(3)], linger=True)
    journal.release()  # the last hold ends
    assert writer.wait_done(third, 5.0) and third.error is None
    journal.release()  # one too many: nothing held, nothing breaks
    journal.hold()
    fourth = journal.submit([card(4)], linger=True)
    assert not writer.wait_done(fourth, 0.05)  # a new hold: it lingers again
    journal.release()
    assert writer.wait_done(fourth, 5.0) and fourth.error is None
    assert [r.shoe_seq for r in journal.records() if r.kind == "CardRead"] == [1, 2, 3, 4]


def test_a_hold_ending_right_after_a_commit_lets_its_group_linger_for_company(
        journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    """Events coming faster than ``BUSY_S`` apart (a dealer pulling at once): a hold's end wakes
    the writer, which then lingers for the next events' appends as without a hold; a hold ending
    later than ``BUSY_S`` after the last commit commits at once."""
    monkeypatch.setattr(W, "LINGER_S", 30.0)
    monkeypatch.setattr(W, "BUSY_S", 30.0)  # every hold after a commit ends "right after" it
    writer = journal._writer
    assert writer is not None
    journal.hold()
    first = journal.submit([card(1)], linger=True)
    journal.release()
    assert writer.wait_done(first, 5.0) and first.error is None  # no commit before it: at once
    groups = writer.groups
    journal.hold()
    second = journal.submit([card(2)], linger=True)
    journal.release()
    assert not writer.wait_done(second, 0.1)  # lingering for company, not committed at once
    journal.hold()
    third = journal.submit([card(3)], linger=True)
    journal.release()
    assert not writer.wait_done(third, 0.05)
    assert journal.flush(5.0) and second.done and third.done  # a wait ends the linger
    assert writer.groups - groups == 1  # the two events shared one commit
    monkeypatch.setattr(W, "BUSY_S", 0.0)  # the last commit now ended long enough ago
    journal.hold()
    fourth = journal.submit([card(4)], linger=True)
    journal.release()
    assert writer.wait_done(fourth, 5.0) and fourth.error is None  # at once: the linger is 30 s
    assert [r.shoe_seq for r in journal.records() if r.kind == "CardRead"] == [1, 2, 3, 4]
