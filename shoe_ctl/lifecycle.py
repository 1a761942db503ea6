"""The idempotent close shared by the service's parts that own a thread, a port or a file.

:class:`Closeable` runs a part's release once, however many threads call ``close()``;
:func:`join_thread` joins a worker unless it is the caller itself; :class:`BatchWorker` is the
thread of a sink whose output may stall (the terminal's lines). Imports nothing of the project,
so the drivers and the HIL harnesses may use it too. Shutdown order: ``docs/service.md``.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Self

log = logging.getLogger(__name__)


class Closeable:
    """Base of a part with an idempotent, thread-safe ``close()``.

    The first ``close()`` sets :attr:`closed` and calls :meth:`_closing` while holding the close
    lock, then :meth:`_close` without it; every later or concurrent call returns at once (it does
    not wait for the first one to finish). A subclass whose own methods check ``self._closed``
    under a lock of its own passes that lock, so a close cannot fall in the middle of them.

    :param lock: the lock (or ``threading.Condition``) that guards the closed flag; default a new
        ``threading.Lock``.
    """

    _closed: bool

    def __init__(self, lock: AbstractContextManager[Any] | None = None) -> None:
        self._closed = False
        self._close_lock: AbstractContextManager[Any] = lock if lock is not None else threading.Lock()

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called (the release may still be running)."""
        return self._closed

    def _begin_close(self) -> bool:
        """Mark the part closed and run :meth:`_closing`, under the close lock.

        :returns: True for the one call that closed it; False when it was closed already. A
            subclass whose ``close`` takes arguments calls this and releases when it is True.
        """
        with self._close_lock:
            if self._closed:
                return False
            self._closed = True
            self._closing()
            return True

    def close(self) -> None:
        """Release the part (idempotent; safe from any thread)."""
        if self._begin_close():
            self._close()

    def _closing(self) -> None:
        """Runs once, under the close lock, right after the flag is set: signal the workers
        (set a stop event, notify a condition). Must not block. Default: nothing."""

    def _close(self) -> None:
        """Runs once, after :meth:`_closing`, without the lock: join threads, close ports and
        files. Default: nothing."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def join_thread(thread: threading.Thread | None, timeout: float) -> bool:
    """Join ``thread`` for at most ``timeout`` seconds; ``None`` and the calling thread itself (a
    close from the worker's own callback) are not joined.

    :returns: True when the thread is not running any more (or was not joined: ``None``, never
        started); False when it is still alive (the timeout passed, or it is the caller).
    """
    if thread is None:
        return True
    if thread is threading.current_thread():
        return False
    if thread.ident is None:
        return True
    thread.join(timeout)
    return not thread.is_alive()


class BatchWorker(Closeable):
    """A thread that hands what was put since its last turn to ``write(items, dropped)``: the first
    item after a quiet spell at once, then at most one turn per ``gap_s`` with everything that came
    meanwhile, so a burst is one write (docs/service.md, *The terminal*).

    :meth:`put` never blocks, so a ``write`` stalled on its output (a paused terminal, a pipe
    nobody reads) holds up nobody: at most ``max_waiting`` items wait, beyond that the oldest are
    dropped, counted in :attr:`dropped`, and ``write`` is told how many since its last turn.
    ``write`` runs in the worker's thread; an exception from it is logged and the next turn comes.
    ``close()`` lets the worker write what waits (for at most ``join_s`` seconds) and stops it.

    :param name: the thread's name.
    :param write: ``write(items, dropped)``: the items in the order put, and the items dropped
        since the last turn.
    """

    def __init__(self, name: str, write: Callable[[list[Any], int], None], *, gap_s: float = 0.01,
                 max_waiting: int = 1000, join_s: float = 2.0) -> None:
        self._cond = threading.Condition()
        super().__init__(self._cond)
        self._write = write
        self._gap_s = gap_s
        self._join_s = join_s
        self._waiting: deque[Any] = deque(maxlen=max_waiting)
        self._busy = False  # the thread holds items taken from _waiting and not yet written
        self.dropped = 0
        """Items dropped so far because ``max_waiting`` were waiting."""
        self._dropped_told = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, item: object) -> None:
        """Queue ``item`` (any thread; returns at once; ignored after ``close()``)."""
        with self._cond:
            if self._closed:
                return
            if len(self._waiting) == self._waiting.maxlen:
                self.dropped += 1  # the deque lets the oldest go
            self._waiting.append(item)
            if not self._busy:
                self._cond.notify_all()  # a busy thread takes the rest at its next turn

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until everything put so far is written; False on timeout (a stalled output)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._waiting and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._busy = False
                self._cond.notify_all()  # flush() waiters
                self._cond.wait_for(lambda: self._waiting or self._closed)
                if not self._waiting:
                    return  # closed, everything written
                items = list(self._waiting)
                self._waiting.clear()
                dropped, self._dropped_told = self.dropped - self._dropped_told, self.dropped
                self._busy = True
            try:
                self._write(items, dropped)
            except Exception:  # noqa: BLE001 - the worker outlives a bad turn
                log.exception("%s: a write failed", self._thread.name)
            with self._cond:  # items coming meanwhile wait without a wake-up; a close ends the gap
                self._cond.wait_for(lambda: self._closed, self._gap_s)

    def _closing(self) -> None:
        self._cond.notify_all()

    def _close(self) -> None:
        join_thread(self._thread, self._join_s)
