"""The virtual shoe's line: a real pseudo-terminal or a TCP port, and the thread that serves it.

:class:`ShoeLine` moves bytes between the host and a :class:`hil.shoe_device.ShoeDevice`: it
reads what the host wrote, passes it through the line noise (:class:`hil.faults.LineNoise`) to
the device, runs the device's timers at their deadline and writes the device's frames, with noise.

- ``transport="pty"``: ``os.openpty()`` in raw mode, behind a stable symlink (like the udev link
  ``/dev/serial/by-id/...`` of a real shoe) re-pointed at every replug; an unplug closes the
  master (an exact unplug: the host's reads fail with EIO) and removes the link.
- ``transport="tcp"``: a listening socket (``socket://127.0.0.1:PORT``, the same port across
  replugs); the newest connection replaces the previous one.

Every device call and every write happens under one lock shared with
:class:`hil.virtual_shoe.VirtualShoe`. See ``docs/protocol.md`` section 8.
"""

from __future__ import annotations

import errno
import logging
import os
import random
import select
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from hil.faults import Faults, LineNoise
from hil.pty_device import ClosedLast, close_fds, open_linked_pty, unlink_own
from hil.shoe_device import ShoeDevice

log = logging.getLogger(__name__)


class ShoeLine:
    """The line of one virtual shoe.

    :param device: the shoe on the line.
    :param lock: the lock that guards the device (held around every device call and write).
    :param transport: ``"pty"`` or ``"tcp"``.
    :param link_path: the stable symlink for ``pty`` (default: a new temporary directory's ``shoe``).
    :param faults: the line faults (``corrupt``, ``drop``, ``garbage`` per byte, ``delay`` per frame).
    :param seed: seeds the noise of both directions.
    :param host: TCP address to listen on.
    :param port: TCP port (0 = any free one; kept across unplug/replug).
    :raises ValueError: an unknown transport.
    """

    POLL_S = 0.02
    """Longest wait for the host's bytes before the device's timers are looked at (seconds)."""

    JOIN_S = 5.0
    """How long :meth:`stop` waits for the thread to end (seconds)."""

    def __init__(self, device: ShoeDevice, lock: threading.RLock, *, transport: str = "pty",
                 link_path: str | Path | None = None, faults: Faults | None = None, seed: int = 0,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        if transport not in ("pty", "tcp"):
            raise ValueError(f"transport must be 'pty' or 'tcp', not {transport!r}")
        faults = faults if faults is not None else Faults()
        self.device = device
        self.lock = lock
        self.transport = transport
        self.noise_out = LineNoise(faults, random.Random(seed * 7919 + 1))
        self.noise_in = LineNoise(faults, random.Random(seed * 7919 + 2))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        self._wake_r: int | None = wake_r
        self._wake_w: int | None = wake_w
        self._closer = ClosedLast(self._close, running=False)
        self._own_dir: str | None = None
        if transport == "pty" and link_path is None:
            self._own_dir = tempfile.mkdtemp(prefix="virtual-shoe-")
            link_path = Path(self._own_dir) / "shoe"
        self.link_path = Path(link_path) if link_path is not None else None
        self._host = host
        self._port = port
        self._master: int | None = None
        self._slave: int | None = None
        self._listener: socket.socket | None = None
        self._conn: socket.socket | None = None
        self.plugged = False
        self.replug_at: float | None = None
        self.tx_overflow = 0
        self.errors = 0

    @property
    def url(self) -> str:
        """What a host opens: the symlink path, or ``socket://host:port``."""
        if self.transport == "tcp":
            return f"socket://{self._host}:{self._port}"
        assert self.link_path is not None
        return str(self.link_path)

    # ---------------------------------------------------------------- lifecycle (lock held)

    def start(self) -> None:
        """Listen (TCP), plug in and start the thread."""
        if self.transport == "tcp":
            self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._listener.bind((self._host, self._port))
            self._listener.listen(4)
            self._listener.setblocking(False)
            self._port = self._listener.getsockname()[1]
        self.plug()
        self._closer = ClosedLast(self._close)
        self._thread = threading.Thread(target=self._run, name="virtual-shoe", daemon=True)
        self._thread.start()

    @property
    def started(self) -> bool:
        """True once :meth:`start` ran."""
        return self._thread is not None

    def stop(self) -> None:
        """Stop the thread and join it (call without the lock), then unplug and close everything
        (idempotent).

        Waits up to :attr:`JOIN_S` for the thread; one still busy past it (a device call that does
        not return) keeps the line's descriptors (its wake pipe, the pty) until it ends and closes
        them then, so none is closed under a thread that may still use it, whose number a new pty
        or pipe could otherwise take (a warning is logged). The link goes at once."""
        self._stop.set()
        self.wake()
        thread = self._thread
        here = thread is threading.current_thread()
        if thread is not None and not here:
            thread.join(self.JOIN_S)
        if self.transport == "pty" and self.link_path is not None:
            unlink_own(self.link_path, self._slave)  # no host opens this shoe again (another's link stays)
        if not self._closer.release() and not here:
            log.warning("%s: the virtual shoe's thread is still busy %.1f s after the stop; its line closes "
                        "when it ends", self.url, self.JOIN_S)

    def _close(self) -> None:
        """Unplug and close the line's descriptors and its folder (once, :class:`ClosedLast`)."""
        with self.lock:
            self.unplug()
            if self._listener is not None:
                self._listener.close()
                self._listener = None
            wake_r, wake_w = self._wake_r, self._wake_w
            self._wake_r = self._wake_w = None
            close_fds(wake_r, wake_w)
            if self._own_dir is not None:
                try:
                    os.rmdir(self._own_dir)
                except OSError:
                    pass
                self._own_dir = None

    # ---------------------------------------------------------------- plug (lock held)

    def plug(self) -> None:
        """Plug in: a new pty behind the symlink, or TCP connections accepted."""
        if self.transport == "pty":
            assert self.link_path is not None
            self._master, self._slave = open_linked_pty(self.link_path)
        self.plugged = True
        self.device.plugged_in(time.monotonic())
        self.wake()

    def unplug(self) -> None:
        """Pull the cable: the pty and its link go (the host reads EIO), or the TCP connection
        closes and new ones are refused."""
        self.plugged = False
        if self.transport == "pty":
            if self.link_path is not None:
                unlink_own(self.link_path, self._slave)
            close_fds(self._master, self._slave)
            self._master = self._slave = None
        elif self._conn is not None:
            try:
                self._conn.close()
            except OSError:
                pass
            self._conn = None
        self.wake()

    def replug_after(self, seconds: float) -> None:
        """Plug back in now (``seconds <= 0``) or after ``seconds`` (from the line's thread)."""
        if seconds <= 0:
            self.plug()
        else:
            self.replug_at = time.monotonic() + seconds
            self.wake()

    def wake(self) -> None:
        """Make the thread look at its file descriptors and timers again (nothing once closed)."""
        wake_w = self._wake_w
        if wake_w is None:
            return
        try:
            os.write(wake_w, b"x")
        except OSError:
            pass

    # ---------------------------------------------------------------- bytes out (lock held)

    def flush(self) -> None:
        """Write every frame the device has queued, in order, each through the line noise."""
        for frame in self.device.frames_to_send():
            self.tx(frame)

    def tx(self, frame: bytes) -> None:
        """Write one frame (lost when unplugged or when nobody reads, as on a real UART)."""
        if not self.plugged:
            return
        noise = self.noise_out
        noise.maybe_delay()
        data = noise.apply(frame)
        try:
            if self._master is not None:
                while data:
                    n = os.write(self._master, data)
                    data = data[n:]
            elif self._conn is not None:
                self._conn.sendall(data)
        except BlockingIOError:
            self.tx_overflow += 1   # nobody reads: the bytes go nowhere, as on a real UART
        except OSError as exc:
            if exc.errno not in (errno.EIO, errno.EPIPE, errno.ECONNRESET, errno.EBADF):
                raise
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # ---------------------------------------------------------------- the thread

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    self._step()
                except Exception:  # a bug here must not leave a silent dead shoe
                    log.exception("virtual shoe step failed")
                    self.errors += 1
                    time.sleep(0.01)
        finally:
            self._closer.thread_ended()

    def _step(self) -> None:
        with self.lock:
            if self._wake_r is None:
                return  # closed: the loop sees the stop
            fds: list[Any] = [self._wake_r]
            if self._master is not None:
                fds.append(self._master)
            if self._listener is not None:
                fds.append(self._listener)
            if self._conn is not None:
                fds.append(self._conn)
        try:
            ready, _, _ = select.select(fds, [], [], self.POLL_S)
        except (OSError, ValueError):
            return  # an fd closed under us by unplug(): loop with the new set
        with self.lock:
            if self._stop.is_set():
                return
            now = time.monotonic()
            data = self._read(ready)
            device = self.device
            if data:
                device.receive_data(self.noise_in.apply(data), now)
                self.flush()
            if self.replug_at is not None and now >= self.replug_at:
                self.replug_at = None
                self.plug()
                device.say_hello()
                self.flush()
            if now >= device.next_deadline():
                device.tick(now)
                self.flush()

    def _read(self, ready: list[Any]) -> bytes:
        data = b""
        for r in ready:
            if self._wake_r is not None and r == self._wake_r:
                try:
                    os.read(self._wake_r, 4096)
                except OSError:
                    pass
            elif r is self._listener and self._listener is not None:
                self._accept()
            elif self._master is not None and r == self._master:
                try:
                    data += os.read(self._master, 4096)
                except OSError:
                    pass  # EIO while nobody holds the slave: no host
            elif self._conn is not None and r is self._conn:
                try:
                    chunk = self._conn.recv(4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    self._conn.close()
                    self._conn = None
                data += chunk
        return data

    def _accept(self) -> None:
        assert self._listener is not None
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        if not self.plugged:
            conn.close()
            return
        if self._conn is not None:
            self._conn.close()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._conn = conn
        self.device.new_peer()
