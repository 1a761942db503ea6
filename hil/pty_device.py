"""A simulated serial device on a real pseudo-terminal: the line of the virtual readers.

:class:`PtyDevice` serves one sans-I/O device model (an object with ``receive(data, now) ->
bytes`` and ``poll(now) -> bytes``) on ``os.openpty()`` in raw mode, behind a symlink a host
opens with pyserial like the ``/dev/serial/by-id/...`` link of a real reader. The thread reads
what the host wrote, hands it to the model and writes the model's answer; every model call
happens under :attr:`lock`, which tests and harnesses also hold when they change the model
(the tags in the field, a fault). Used by :mod:`hil.virtual_pn532` and :mod:`hil.virtual_pepper`;
docs/build-a-shoe.md, "Testing without hardware".
"""

from __future__ import annotations

import logging
import os
import select
import tempfile
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)


def open_linked_pty(link_path: Path) -> tuple[int, int]:
    """A new pty in raw mode, its master non-blocking, behind the symlink ``link_path`` (replaced
    atomically): returns ``(master, slave)``. The link names the slave through this process's
    fd table: a pty's ``/dev/pts`` name may resolve in another devpts instance (containers), the
    fd never does."""
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    tmp = link_path.with_name(link_path.name + ".new")
    tmp.unlink(missing_ok=True)
    os.symlink(_link_target(slave), tmp)
    os.replace(tmp, link_path)
    return master, slave


def _link_target(slave: int) -> str:
    return f"/proc/{os.getpid()}/fd/{slave}"


def unlink_own(link_path: Path, slave: int | None) -> None:
    """Remove ``link_path`` when it still names this process's pty ``slave`` (as
    :func:`open_linked_pty` placed it); a link another process has put there since (a simulator
    started again on the same path while this one stops) is left alone. ``slave`` None: nothing."""
    if slave is None:
        return
    try:
        if os.readlink(link_path) == _link_target(slave):
            link_path.unlink()
    except OSError:  # gone already, or not a link
        pass


def close_fds(*fds: int | None) -> None:
    """Close every descriptor given (``None`` skipped); one already closed is no error."""
    for fd in fds:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


class DeviceModel(Protocol):
    """What :class:`PtyDevice` asks of a device model."""

    def receive(self, data: bytes, now: float) -> bytes:
        """Take the host's bytes; return the bytes to send now."""
        ...

    def poll(self, now: float) -> bytes:
        """The bytes due by ``now`` without new input (a delayed answer)."""
        ...


class ClosedLast:
    """What a serving thread uses (descriptors), closed once by ``close`` when the last of two
    comes: the owner's :meth:`release` and the thread's :meth:`thread_ended`. Never under a thread
    still using them, whose numbers a new pty or pipe could otherwise take.

    :param close: closes them; called at most once.
    :param running: ``False`` while no thread serves them yet (a release closes at once).
    """

    def __init__(self, close: Callable[[], None], *, running: bool = True) -> None:
        self._close_once: Callable[[], None] | None = close
        self._guard = threading.Lock()
        self._ended = not running
        self._released = False

    def _close(self) -> None:
        close, self._close_once = self._close_once, None
        if close is not None:
            close()

    def thread_ended(self) -> None:
        """Called by the serving thread on its way out: closes them if they were released."""
        with self._guard:
            self._ended = True
            if self._released:
                self._close()

    def release(self) -> bool:
        """The owner is done with them: close them now if the thread has ended (True), or leave
        them to the thread to close as it ends (False)."""
        with self._guard:
            self._released = True
            if self._ended:
                self._close()
            return self._ended


class _Served(ClosedLast):
    """One :meth:`PtyDevice.start`'s pty and the stop signal of the thread serving it, closed as
    :class:`ClosedLast` says."""

    def __init__(self, master: int, slave: int) -> None:
        super().__init__(self._close_pty)
        self.master: int | None = master
        self.slave: int | None = slave
        self.stop = threading.Event()

    def _close_pty(self) -> None:
        close_fds(self.master, self.slave)
        self.master = self.slave = None


class PtyDevice:
    """One device model on a pty.

    :param model: the device model.
    :param name: the symlink's file name in a new temporary folder (or ``link_path``).
    :param link_path: where the symlink goes (default: a new temporary folder's ``name``).
    """

    POLL_S = 0.005
    """Longest wait for the host's bytes before :meth:`DeviceModel.poll` is called (seconds): the
    thread sees a stop within this time unless a model call holds it."""

    JOIN_S = 5.0
    """How long :meth:`close` waits for the thread to end (seconds)."""

    def __init__(self, model: DeviceModel, *, name: str = "reader", link_path: str | Path | None = None) -> None:
        self.model = model
        self.lock = threading.RLock()
        self._own_dir: str | None = None
        if link_path is None:
            self._own_dir = tempfile.mkdtemp(prefix="virtual-reader-")
            link_path = Path(self._own_dir) / name
        self.link_path = Path(link_path)
        self._served: _Served | None = None
        self._thread: threading.Thread | None = None
        self.bytes_in = 0
        self.bytes_out = 0

    @property
    def url(self) -> str:
        """What a host opens with pyserial: the symlink's path."""
        return str(self.link_path)

    def start(self) -> PtyDevice:
        """Open the pty, make the link and start the thread; returns ``self``."""
        served = _Served(*open_linked_pty(self.link_path))
        self._served = served
        self._thread = threading.Thread(target=self._run, args=(served,), name=f"virtual-{self.link_path.name}",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread, close the pty and remove the link (idempotent).

        Waits up to :attr:`JOIN_S` for the thread; one still busy past it (a model call that does
        not return) keeps its pty open until it ends and closes it then, so no descriptor is
        closed under a thread that may still read or write it (a warning is logged)."""
        served, thread = self._served, self._thread
        self._served = self._thread = None
        if served is not None:
            unlink_own(self.link_path, served.slave)  # before its pty closes: no host opens it again
            served.stop.set()
            if thread is not None and thread is not threading.current_thread():
                thread.join(self.JOIN_S)
            if not served.release() and thread is not threading.current_thread():
                log.warning("%s: the device thread is still busy %.1f s after the stop; its pty closes when it "
                            "ends", self.link_path, self.JOIN_S)
        if self._own_dir is not None:
            try:
                os.rmdir(self._own_dir)
            except OSError:
                pass
            self._own_dir = None

    def __enter__(self) -> PtyDevice:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, master: int, data: bytes) -> None:
        if not data:
            return
        view = memoryview(data)
        deadline = time.monotonic() + 1.0
        while view and time.monotonic() < deadline:
            try:
                n = os.write(master, view)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            except OSError:
                return
            self.bytes_out += n
            view = view[n:]

    def _run(self, served: _Served) -> None:
        try:
            self._serve(served)
        finally:
            served.thread_ended()

    def _serve(self, served: _Served) -> None:
        master = served.master
        if master is None:
            return
        while not served.stop.is_set():
            try:
                ready, _, _ = select.select([master], [], [], self.POLL_S)
            except (OSError, ValueError):
                return
            data = b""
            if ready:
                try:
                    data = os.read(master, 4096)
                except BlockingIOError:
                    data = b""
                except OSError:
                    return
            now = time.monotonic()
            with self.lock:
                out = self.model.receive(data, now) if data else b""
                out += self.model.poll(now)
            self.bytes_in += len(data)
            self._write(master, out)
