"""What the journal's writer and the controller hand the floor publisher, without a broker: which
records it publishes next (``FloorPublisher._after``: those handed over after their commit when
they follow the last one published without a gap, none when nothing was handed over after it,
else the journal's own, read again: at a start, after a replay asked from further back, and once
more were committed than the publisher keeps),
and when a new public state asks for a step (not while the event's commit is still to come: the
commit asks for it; docs/floor.md, "Nothing lost, nothing twice"), and where the steps run (the
network loop's thread, "The network loop")."""

from __future__ import annotations

import threading
import time
from typing import Any

from waiting import wait_for

from shoe_ctl.events import DisplayUpdate, Instruction, Signal
from shoe_ctl.floor.broker import free_port
from shoe_ctl.floor.netloop import NetLoop
from shoe_ctl.floor.publisher import HANDED_MAX, STATE_HELD_MAX, FloorPublisher
from shoe_ctl.service.journal.records import Record


class _Journal:
    """Records 1..n as a journal gives them after a sequence."""

    def __init__(self) -> None:
        self.rows: list[Record] = []
        self.pending = 0  # appends queued, not yet committed
        self.failing: BaseException | None = None
        self.listeners: list[Any] = []

    def add_commit_listener(self, fn: Any) -> bool:
        self.listeners.append(fn)
        return True

    def commit(self, n: int) -> list[Record]:
        start = len(self.rows) + 1
        new = [Record(seq, 1_000 + seq, "note", None, None, f'{{"n": {seq}}}') for seq in range(start, start + n)]
        self.rows += new
        return new

    def records(self, since: int | None) -> Any:
        return iter([r for r in self.rows if r.seq > (since or 0)])


def _publisher(journal: _Journal) -> FloorPublisher:
    return FloorPublisher(journal, table="t1", room="room-1", host="127.0.0.1", port=1)


def _seqs(records: Any) -> list[int]:
    return [r.seq for r in records]


def test_handed_records_are_published_without_a_read() -> None:
    journal = _Journal()
    pub = _publisher(journal)
    pub._committed(journal.commit(3))
    assert _seqs(pub._after(0)) == [1, 2, 3] and pub.journal_reads == 0
    pub._committed(journal.commit(2))
    assert _seqs(pub._after(3)) == [4, 5] and pub.journal_reads == 0  # 1-3 published: dropped
    assert pub.records_handed == 5


def test_the_journal_is_read_when_the_handed_records_do_not_follow() -> None:
    journal = _Journal()
    journal.commit(4)  # committed before the publisher listened (a restart)
    pub = _publisher(journal)
    pub._committed(journal.commit(2))
    assert _seqs(pub._after(1)) == [2, 3, 4, 5, 6] and pub.journal_reads == 1  # the gap: read
    assert _seqs(pub._after(6)) == [] and pub.journal_reads == 1  # nothing handed over since 6: no read
    # a replay asked from further back than what was handed over
    pub._committed(journal.commit(1))
    assert _seqs(pub._after(2)) == [3, 4, 5, 6, 7] and pub.journal_reads == 2


def test_a_read_that_overlapped_a_commits_hand_over_is_not_read_again() -> None:
    """A read of the journal (at a start) that already got a commit whose records were handed over
    after it: the step of that hand-over reads nothing (nothing was handed over after the last
    record read; a commit still being handed over asks for its own step)."""
    journal = _Journal()
    journal.commit(3)  # committed before the publisher listened
    pub = _publisher(journal)
    overlapped = journal.commit(2)  # committed, its hand-over still to come
    assert _seqs(pub._after(0)) == [1, 2, 3, 4, 5] and pub.journal_reads == 1  # none handed over yet
    pub._committed(overlapped)  # the hand-over, after the read
    assert _seqs(pub._after(5)) == [] and pub.journal_reads == 1
    pub._committed(journal.commit(2))
    assert _seqs(pub._after(5)) == [6, 7] and pub.journal_reads == 1
    assert _seqs(pub._after(2)) == [3, 4, 5, 6, 7] and pub.journal_reads == 2  # a replay: read


def test_more_records_than_kept_are_read_from_the_journal() -> None:
    journal = _Journal()
    pub = _publisher(journal)
    pub._committed(journal.commit(HANDED_MAX + 5))  # a long broker outage: the oldest are dropped
    assert len(pub._handed) == HANDED_MAX
    got = _seqs(pub._after(0))
    assert got == list(range(1, HANDED_MAX + 6)) and pub.journal_reads == 1
    pub._committed(journal.commit(1))
    assert _seqs(pub._after(HANDED_MAX + 5)) == [HANDED_MAX + 6] and pub.journal_reads == 1


def test_a_new_state_asks_for_a_step_unless_a_commit_is_coming() -> None:
    journal = _Journal()
    pub = _publisher(journal)
    pub._notified = bool(journal.add_commit_listener(pub._committed))  # as start() listens
    state = {"hand": 1, "state": "idle"}
    pub.handle_all([Instruction(Signal.IDLE, "No hand")])
    assert not pub._poked and pub._latest is None  # nothing for the floor: no step
    journal.pending = 1  # the event's record queued: its commit asks for the step
    pub.handle_all([DisplayUpdate(state)])
    assert pub._latest is state and not pub._poked
    for fn in journal.listeners:
        fn(journal.commit(1))
    assert pub._poked  # the commit: record and state in one step
    pub._poked = False
    journal.pending = 0  # nothing queued (a dealer input's record waited for its commit)
    pub.handle_all([DisplayUpdate(state)])
    assert pub._poked
    pub._poked = False
    journal.pending, journal.failing = 1, OSError("disk full")  # queued but no commit coming soon
    pub.handle_all([DisplayUpdate(state)])
    assert pub._poked


def test_the_steps_run_in_the_network_loops_thread() -> None:
    """No thread of its own: a commit's step runs in the loop's thread (where paho writes what it
    publishes), several asks before it begins make one step, and a step made for a commit also
    moves the timed step on (one timer on the loop)."""
    journal = _Journal()
    net = NetLoop("floor-test-net")
    pub = FloorPublisher(journal, table="t1", room="room-1", host="127.0.0.1", port=free_port(), loop=net)
    ran: list[int] = []
    step = pub._step

    def counted() -> int:
        ran.append(threading.get_ident())
        return step()

    pub._step = counted  # type: ignore[method-assign]
    try:
        before = {t.name for t in threading.enumerate()}
        pub.start()
        assert wait_for(lambda: len(ran) == 1, 5)  # the first step, at the start
        assert not any(t.name.startswith("floor-pub-t1") for t in threading.enumerate())
        assert {t.name for t in threading.enumerate()} - before <= {"floor-test-net", "floor-test-net-connect",
                                                                     "floor-test-net-connect-try"}
        timer = pub._timer
        assert timer is not None and not timer.cancelled
        time.sleep(0.05)  # the next step's idle timer falls later than this one's
        done = threading.Event()
        net.call_soon(lambda: done.wait(5))  # the loop busy: the asks below wait for it
        for _ in range(3):
            pub._committed(journal.commit(1))
        done.set()
        assert wait_for(lambda: len(ran) == 2, 5)
        time.sleep(0.2)
        assert len(ran) == 2, "three commits before the step began: one step"
        assert set(ran) == {net.thread_id}
        assert timer.cancelled and pub._timer is not None and pub._timer is not timer
    finally:
        pub.close(timeout=0.5)
        net.stop()


def test_a_tile_held_back_goes_with_the_first_step_after_the_interval() -> None:
    """A new tile within ``state_interval`` of the last is held back; the first step after the
    interval sends the newest (a commit's step, usually), and the timed step that would send it
    otherwise is set ``STATE_HELD_MAX`` intervals after the last tile, not at the interval's end."""
    pub = _publisher(_Journal())
    sent: list[tuple[str, bytes]] = []
    pub.client.publish = lambda topic, payload=None, **_kw: sent.append((topic, payload))  # type: ignore[assignment,method-assign,misc]

    def state(count: int) -> dict[str, Any]:
        return {"hand": 1, "state": "hand_third_deal", "street": "3rd", "stub": {"count": count, "required": 10}}

    pub._latest = state(40)
    pub._publish_state()
    assert [t for t, _ in sent] == [pub.topics.state]
    first_at = pub._state_at
    pub._due = float("inf")
    pub._latest = state(39)  # a card later, within the interval
    pub._publish_state()
    assert len(sent) == 1, "held back"
    assert pub._due == first_at + STATE_HELD_MAX * pub.state_interval
    pub._latest = state(38)  # another, still held back: the newest is kept
    pub._publish_state()
    assert len(sent) == 1
    pub._state_at -= pub.state_interval  # the interval over: the next step, whatever asked for it
    pub._publish_state()
    assert len(sent) == 2 and b'"count":38' in sent[1][1]
