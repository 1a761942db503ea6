"""The idempotent close shared by the service's parts that own a thread, a port or a file.

:class:`Closeable` runs a part's release once, however many threads call ``close()``;
:func:`join_thread` joins a worker unless it is the caller itself. Imports nothing of the
project, so the drivers and the HIL harnesses may use it too. Shutdown order: ``docs/service.md``.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from typing import Any, Self


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
