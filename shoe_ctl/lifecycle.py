"""The idempotent close shared by the service's parts that own a thread, a port or a file, and
the stop signals of a long-running command.

:class:`Closeable` runs a part's release once, however many threads call ``close()``;
:func:`join_thread` joins a worker unless it is the caller itself; :class:`BatchWorker` is the
thread of a sink whose output may stall (the terminal's lines); :class:`StopSignals` turns SIGINT
and SIGTERM into a stop request with a bounded stop. Imports nothing of the project, so the
drivers and the HIL harnesses may use it too. Shutdown order and stopping: ``docs/service.md``.
"""

from __future__ import annotations

import faulthandler
import logging
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import FrameType
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


STOP_DEADLINE_S = 10.0
"""Seconds a whole process has, from the first stop signal (or the end of its run), to be gone:
below systemd's ``TimeoutStopSec`` (15 s, ``deploy/shoe-ctl.service``), so the stacks of a stuck
stop reach the system journal before systemd kills the process."""

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """SIGINT and SIGTERM as a request to stop a long-running command (``shoe-ctl run``,
    ``shoe-ctl floor``), with a bounded stop (docs/service.md, *Stopping*).

    Used as a context manager in the main thread. On entry it installs its own handler for both
    signals, whatever the process inherited: a background job of a non-interactive shell starts
    with SIGINT ignored, and Python then never raises ``KeyboardInterrupt``. The first signal
    sets :attr:`stop`, records :attr:`signum` and gives both signals back their previous handlers
    (a whole process: their default action), so a second one ends the process at once, whatever
    its main thread is blocked in.

    With ``whole_process`` (the command is this process's own, not a call inside a test):
    :meth:`stopping` (called by the first signal, and by the command when its run ends) arms a
    deadline: a process still there ``deadline_s`` seconds later writes every thread's stack on
    stderr (``faulthandler``, which needs no Python thread to run) and exits with status 1. It
    stays armed after the block, over the interpreter's exit. SIGUSR1 writes every thread's
    stack on stderr at any time (the process goes on). Without ``whole_process`` the deadline is
    never armed and the previous handlers come back on exit.

    :param stop: the event the first signal sets (default: a new one).
    :param deadline_s: seconds, see :data:`STOP_DEADLINE_S`.
    """

    def __init__(self, stop: threading.Event | None = None, *, whole_process: bool = False,
                 deadline_s: float = STOP_DEADLINE_S) -> None:
        self.stop = stop if stop is not None else threading.Event()
        self.whole_process = whole_process
        self.deadline_s = deadline_s
        self.signum: int | None = None
        """The first stop signal received, or None."""
        self._old: dict[int, Any] = {}
        self._armed = False

    def __enter__(self) -> Self:
        for sig in STOP_SIGNALS:
            self._old[sig] = signal.signal(sig, self._on_signal)
        if self.whole_process:
            faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True, chain=False)
        return self

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.signum = signum
        self.stop.set()
        self._restore()  # a second signal: the default action (or the handler there before)
        self.stopping()

    def stopping(self) -> None:
        """The command is stopping: with ``whole_process``, arm the deadline (once)."""
        if self.whole_process and not self._armed:
            self._armed = True
            faulthandler.dump_traceback_later(self.deadline_s, exit=True, file=sys.stderr)

    def _restore(self) -> None:
        old, self._old = self._old, {}
        for sig, handler in old.items():
            if self.whole_process or handler is None:
                handler = signal.SIG_DFL
            signal.signal(sig, handler)

    def __exit__(self, *exc: object) -> None:
        self._restore()
        if not self.whole_process:
            return
        self.stopping()  # the interpreter's exit is bounded too
