"""The idempotent close shared by the service's parts (shoe_ctl.lifecycle)."""

from __future__ import annotations

import threading
import time
from typing import Any

from shoe_ctl.lifecycle import BatchWorker, Closeable, join_thread


def held(lock: Any) -> bool:
    """True when another thread cannot take ``lock`` now (a Lock, RLock or Condition)."""
    got: list[bool] = []

    def probe() -> None:
        got.append(lock.acquire(blocking=False))
        if got[0]:
            lock.release()

    t = threading.Thread(target=probe)
    t.start()
    t.join(5)
    return got == [False]


class Worker(Closeable):
    """A part with a worker thread that runs until closed; counts its hooks."""

    def __init__(self, lock: threading.Lock | threading.Condition | None = None) -> None:
        super().__init__(lock)
        self.stop = threading.Event()
        self.closing_calls = 0
        self.close_calls = 0
        self.lock_held_in_closing: bool | None = None
        self.thread = threading.Thread(target=self.stop.wait, daemon=True)
        self.thread.start()

    def _closing(self) -> None:
        self.closing_calls += 1
        self.lock_held_in_closing = held(self._close_lock)
        self.stop.set()

    def _close(self) -> None:
        self.close_calls += 1
        time.sleep(0.01)  # a slow release: concurrent closes must not run it again meanwhile
        join_thread(self.thread, 5)


def test_close_runs_the_release_once_however_many_threads_call_it() -> None:
    w = Worker()
    assert not w.closed
    callers = [threading.Thread(target=w.close) for _ in range(16)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(5)
    w.close()
    assert w.closed
    assert (w.closing_calls, w.close_calls) == (1, 1)
    assert not w.thread.is_alive()


def test_closing_runs_under_the_lock_and_close_without_it() -> None:
    w = Worker()
    w.close()
    assert w.lock_held_in_closing is True
    assert not held(w._close_lock)  # released once close() returned


def test_a_shared_lock_holds_a_close_until_the_owner_releases_it() -> None:
    """A part that checks its closed flag under its own lock passes that lock: a close waits for
    the method holding it, and the method sees the part open throughout."""
    lock = threading.Lock()
    w = Worker(lock)
    done = threading.Event()

    def close() -> None:
        w.close()
        done.set()

    with lock:
        t = threading.Thread(target=close, daemon=True)
        t.start()
        assert not done.wait(0.1)
        assert not w.closed
    assert done.wait(5)
    assert w.closed and w.close_calls == 1


def test_a_condition_may_guard_the_flag() -> None:
    cond = threading.Condition()
    w = Worker(cond)
    w.close()
    assert w.lock_held_in_closing is True and w.closed and w.close_calls == 1


def test_begin_close_is_true_for_one_caller_only() -> None:
    w = Worker()
    assert [w._begin_close() for _ in range(3)] == [True, False, False]
    assert w.closing_calls == 1 and w.close_calls == 0
    w._close()


def test_context_manager_closes() -> None:
    with Worker() as w:
        assert not w.closed
    assert w.closed and w.close_calls == 1


def test_the_base_alone_closes_without_hooks() -> None:
    c = Closeable()
    c.close()
    c.close()
    assert c.closed


def test_join_thread_skips_none_unstarted_and_the_calling_thread() -> None:
    assert join_thread(None, 1) is True
    assert join_thread(threading.Thread(target=lambda: None), 1) is True
    seen: list[bool] = []
    t = threading.Thread(target=lambda: seen.append(join_thread(threading.current_thread(), 1)))
    t.start()
    t.join(5)
    assert seen == [False]


def test_join_thread_reports_a_thread_that_outlives_the_timeout() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    start = time.monotonic()
    assert join_thread(t, 0.05) is False
    assert time.monotonic() - start >= 0.05
    stop.set()
    assert join_thread(t, 5) is True


def test_a_batch_worker_takes_a_burst_in_one_turn_and_outlives_a_failed_write() -> None:
    turns: list[tuple[list[int], int]] = []
    release, entered = threading.Event(), threading.Event()

    def write(items: list[int], dropped: int) -> None:
        turns.append((items, dropped))
        if items == [0]:
            entered.set()
            release.wait(5)  # the output stalls on the first turn
        if items == [99]:
            raise OSError("a failed write")

    worker = BatchWorker("test-batch", write, gap_s=0.0, max_waiting=10)
    try:
        worker.put(0)
        assert entered.wait(5)  # the first turn took item 0 alone and stalls in write
        assert not worker.flush(0.2)  # stalled in write
        for n in range(1, 31):
            worker.put(n)  # never blocks: 30 items, 10 kept
        release.set()
        assert worker.flush(5)
        assert turns[1] == (list(range(21, 31)), 20)  # the newest 10, in order, and the 20 dropped
        worker.put(99)
        assert worker.flush(5)
        worker.put(100)  # the turn after the failed one still comes
        assert worker.flush(5)
        assert turns[-1] == ([100], 0) and worker.dropped == 20
    finally:
        worker.close()
    worker.put(101)  # after close: ignored
    assert turns[-1] == ([100], 0)
