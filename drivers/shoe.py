"""The host side of the shoe link: :class:`ShoeLink`, whose one reader thread owns the port (opened
exclusively, :func:`claim_exclusive`; other holders found by :func:`port_holders`), moves bytes
between it and a :class:`drivers.session.LinkSession` (the protocol without I/O) and puts the
shoe's events on one queue; it never calls into the state machine. The transport, its reconnects
and the durability rule (ack only what is recorded): docs/protocol.md, section 7; the exclusive
open: docs/security.md."""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
import pkgutil
import select
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

import serial
from serial import SerialBase

from drivers import protocol as p
from drivers.exc import LinkClosedError, ShoeTimeoutError, ShoeUrlError, VersionError
from drivers.leds import pattern_for
from drivers.link_stats import LinkStats
from drivers.port_output import PortOutput, Unwritten
from drivers.session import LinkSession
from shoe_ctl.events import LinkChanged, LinkStatus, ShoeInfo
from shoe_ctl.lifecycle import Closeable, join_thread

log = logging.getLogger(__name__)

PORT_ERRORS = (serial.SerialException, OSError)
"""What a lost port raises: pyserial's own error, or the bare ``OSError`` (EIO) of an unplug."""


def url_schemes() -> list[str]:
    """The ``scheme://`` prefixes pyserial's URL handlers open (``serial.protocol_handler_packages``:
    ``socket``, ``rfc2217``, ``loop``, ``spy``, ...), sorted."""
    found: set[str] = set()
    for package_name in serial.protocol_handler_packages:
        try:
            package = importlib.import_module(package_name)
        except ImportError:
            continue
        for mod in pkgutil.iter_modules(getattr(package, "__path__", [])):
            if mod.name.startswith("protocol_"):
                found.add(mod.name.removeprefix("protocol_"))
    return sorted(found)


class EventQueueLike(Protocol):
    """Where the link puts its events: a ``queue.Queue``, or anything with its ``put``
    (e.g. the controller's :class:`shoe_ctl.service.controller.EventQueue`)."""

    def put(self, item: Any) -> None: ...


READ_CHUNK = 65536
"""The most bytes one read without waiting takes from a socket:// port."""


def is_socket_url(url: str) -> bool:
    """True for a ``socket://`` URL: a port whose ``in_waiting`` only says whether a byte waits."""
    return url.lower().startswith("socket://")


def read_some(ser: SerialBase, socket_port: bool) -> bytes:
    """One turn of a reader: at least one byte (waiting up to the port's timeout; ``b""`` when
    none came), then everything the port holds already. On a device the first byte is read on
    its own (pyserial's ``read(1)``: a ``select`` that waits and a ``read``) and the rest with one
    more read of ``in_waiting`` bytes: five system calls a turn, one fewer than asking
    ``in_waiting`` first, which is 0 at nearly every turn of a reader that keeps up. On
    ``socket://`` ``in_waiting`` only says whether a byte waits (0 or 1), so there the rest is
    taken with one read that does not wait (the port's timeout at 0 for that read, at most
    :data:`READ_CHUNK` bytes): else a burst is read two bytes a turn.

    :param socket_port: the port is a ``socket://`` one (:func:`is_socket_url` of its URL).
    :raises serial.SerialException: the port failed or the peer closed it.
    """
    if not socket_port:
        data = bytes(ser.read(1))
        if not data:
            return data
        more = ser.in_waiting
        return data + bytes(ser.read(more)) if more else data
    data = bytes(ser.read(ser.in_waiting or 1))
    if not data:
        return data
    timeout = ser.timeout
    ser.timeout = 0
    try:
        return data + bytes(ser.read(READ_CHUNK))
    finally:
        ser.timeout = timeout


def device_fd(ser: SerialBase) -> int | None:
    """The file descriptor of a port pyserial reads with ``select`` (a POSIX tty: a real shoe's
    serial device, a pty), which the reader may wait on itself; None for any other port (a URL
    handler's, a Windows port)."""
    if not isinstance(ser, serial.Serial) or os.name != "posix":
        return None
    fd = getattr(ser, "fd", None)
    return fd if isinstance(fd, int) and fd >= 0 else None


def read_ready(fd: int) -> bytes:
    """Every byte a device port holds, in one ``os.read`` of its descriptor (non-blocking, as
    pyserial opens it) once ``select`` said it is readable: a whole frame in one call, where
    pyserial's ``read`` takes a ``select`` of its own for each of its reads.

    :raises serial.SerialException: the port said it was readable and gave nothing (unplugged).
    :raises OSError: the port is lost (e.g. EIO).
    """
    try:
        data = os.read(fd, READ_CHUNK)
    except BlockingIOError:
        return b""
    if not data:
        raise serial.SerialException("device reports readiness to read but returned no data (device disconnected?)")
    return data


IDLE_WAIT_MAX = 0.25
"""Seconds at most the link's reader waits for bytes on a device port (:class:`IdleWait`)."""


FULL_SAID_S = 60.0
"""A device port that fills again within this many seconds of the last WARNING that it was full (a
shoe that reads in bursts) is logged at DEBUG, and so is its taking frames again."""


class IdleWait:
    """The shoe link reader's wait for bytes on a device port: on its own ``select`` over the port
    and a wake-up pipe, until the session's next timer (at most :data:`IDLE_WAIT_MAX`; a timer
    already due: ``min_s``, the reader's read timeout), for bytes, or for :meth:`wake` — which
    another thread's ack or command calls (:meth:`nearer`, from the link, lock held) when it brings
    a timer nearer than that; the bytes are then taken in one read (:func:`read_ready`). The
    wake-up pipe lives while the reader reads a port (:meth:`reading`); every method but
    :meth:`read` and :meth:`reading` runs under the link's lock.
    """

    __slots__ = ("_fd", "_pipe", "min_s", "until", "out", "stats", "on_ack", "_ack_said", "_said_at", "_loud",
                 "_dropped")

    def __init__(self, min_s: float, stats: LinkStats | None = None,
                 on_ack: Callable[[Unwritten, float], None] | None = None) -> None:
        self.min_s = min_s
        self.stats = stats or LinkStats()
        """Where the frames written are counted (``frames_out``)."""
        self.on_ack = on_ack
        """Told, with the clock (``time.monotonic``), each time what the port has not taken of the
        ACK frames changes (:meth:`drivers.session.LinkSession.ack_output`)."""
        self._ack_said = Unwritten.NONE
        self.until = 0.0
        """While the reader waits: the clock value (``time.monotonic``) it wakes at the latest; else 0."""
        self._fd: int | None = None
        self._pipe: tuple[int, int] | None = None
        self.out: PortOutput | None = None
        """The port's output: while bytes of it wait for room, the wait ends when the port has room too."""
        self._said_at = -math.inf  # when a full port was last logged at WARNING
        self._loud = False  # this filling was logged at WARNING
        self._dropped = 0  # the output's drops when this filling began

    @contextlib.contextmanager
    def reading(self, fd: int | None, lock: contextlib.AbstractContextManager[Any]) -> Iterator[None]:
        """While the reader reads the port whose descriptor is ``fd`` (None: it waits as pyserial does)."""
        with lock:
            self._fd = fd
            self._ack_said = Unwritten.NONE
            if fd is not None:
                self.out = PortOutput(fd, self.stats)
                self._pipe = os.pipe()
                for end in self._pipe:
                    os.set_blocking(end, False)
        try:
            yield
        finally:
            with lock:
                self.out = None  # what still waits for room goes with the port
                pipe, self._pipe, self._fd = self._pipe, None, None
                for end in pipe or ():
                    os.close(end)

    def read(self, ser: SerialBase, socket_port: bool, lock: contextlib.AbstractContextManager[Any],
             deadline: Callable[[], float], stop: threading.Event) -> bytes:
        """On a device port: the bytes waiting once they come (:func:`read_ready`), or ``b""`` when
        the wait for them (until the next timer, ``deadline()``) ended without any, or the link
        stops. Any other port: :func:`read_some` (pyserial's read timeout).

        :raises OSError: the port's descriptor is no longer valid (the port is lost).
        :raises serial.SerialException: the port said it was readable and gave nothing.
        """
        fd = self._fd
        pipe = self._pipe
        if fd is None or pipe is None:
            return read_some(ser, socket_port)  # (not under the lock: it waits)
        with lock:
            if stop.is_set() or self._pipe is None:
                return b""
            now = time.monotonic()
            wait = deadline() - now
            wait = min(wait if wait > 0 else self.min_s, IDLE_WAIT_MAX)
            self.until = now + wait
            out = self.out
            room = [fd] if out is not None and out.waiting else []
        try:
            ready, room, _ = select.select([fd, pipe[0]], room, [], wait)
        finally:
            self.until = 0.0
        if room:
            with lock:
                if self.out is not None and self.out.waiting:
                    self.out.drain()
                    self._note_ack(self.out)
                    if not self.out.waiting:
                        (log.info if self._loud else log.debug)(
                            "shoe link: the port takes frames again (%d dropped while it was full)",
                            self.out.dropped - self._dropped)
        if pipe[0] in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(pipe[0], 64)
        return read_ready(fd) if fd in ready else b""

    def send(self, frame: bytes, ser: SerialBase) -> None:
        """Write ``frame`` to the port ``ser`` (the link's lock held). A device port (one the
        reader reads with its descriptor: :attr:`out` set) never makes it wait for room
        (:meth:`PortOutput.send`): bytes that begin to wait wake the reader, whose wait then ends
        when the port has room too, and it writes them. A device is written only so: while the
        reader does not read it (its connection not begun, or ended and the port about to close)
        a frame for it is dropped with what waited, never written with a wait. Any other port
        (``socket://``, a URL handler's): pyserial's ``write``, which may wait.

        :raises serial.SerialException: the port failed, or its write timed out.
        :raises OSError: the port is lost.
        """
        out = self.out
        if out is None:
            if device_fd(ser) is not None:
                return  # not read now: the connection's frames go with it (the session starts afresh)
            ser.write(frame)
            self.stats.frames_out += 1
            return
        waited = out.waiting
        out.send(frame)
        self._note_ack(out)
        if out.waiting and not waited:
            now = time.monotonic()
            self._loud = now - self._said_at >= FULL_SAID_S
            if self._loud:
                self._said_at = now
            self._dropped = out.dropped
            (log.warning if self._loud else log.debug)(
                "shoe link: the port's output buffer is full (is the shoe reading?); frames wait for "
                "room, only the newest of each type kept")
            self.wake()

    def _note_ack(self, out: PortOutput) -> None:
        """Tell :attr:`on_ack` when what the port has not taken of the ACK frames changed (an ACK
        that waited for room left just now, or began to wait)."""
        state = out.unwritten(p.T_ACK)
        if state is not self._ack_said and self.on_ack is not None:
            self._ack_said = state
            self.on_ack(state, time.monotonic())

    def nearer(self, deadline: Callable[[], float]) -> None:
        """Wake the waiting reader when the next timer (``deadline()``) comes before its wake-up."""
        if self.until and deadline() < self.until:
            self.wake()

    def wake(self, lock: contextlib.AbstractContextManager[Any] | None = None) -> None:
        """End the reader's wait now (``lock``: the link's, when not held already)."""
        with lock if lock is not None else contextlib.nullcontext():
            self.until = 0.0
            if self._pipe is not None:
                with contextlib.suppress(OSError):  # BlockingIOError: a byte waits already
                    os.write(self._pipe[1], b"x")


def open_port(url: str, baudrate: int, timeout: float) -> Any:
    """Open the shoe's port as the link reads it: ``exclusive`` where the handler takes it (a
    handler that rejects the keyword is opened without it), ``TIOCEXCL`` on a tty
    (:func:`claim_exclusive`), a 2 s write timeout.

    :raises serial.SerialException, OSError: the port cannot be opened.
    """
    kwargs: dict[str, Any] = {"baudrate": baudrate, "timeout": timeout, "write_timeout": 2.0}
    try:
        ser = serial.serial_for_url(url, exclusive=True, **kwargs)
    except (TypeError, ValueError) as exc:
        if "exclusive" not in str(exc):
            raise
        ser = serial.serial_for_url(url, **kwargs)
    claim_exclusive(ser)
    return ser


def open_failed(text: str, last: str) -> str:
    """One log line for a failed open: WARNING when the error differs from the last attempt's,
    DEBUG while it repeats (the retry runs every 2 s while a shoe is away); returns ``text``."""
    (log.debug if text == last else log.warning)("%s (retrying)", text)
    return text


def check_url(url: str) -> None:
    """Refuse a shoe URL whose ``scheme://`` no pyserial handler opens (the way
    ``serial.serial_for_url`` looks handlers up); a device path (no ``://``) always passes.

    :raises ShoeUrlError: naming the URL and the supported forms; or a URL that is not UTF-8 text
        (a path from the command line holding a byte the system could not decode, kept as a lone
        surrogate: the link's events name the URL, and the journal cannot write such a text).
    """
    try:
        url.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ShoeUrlError(f"shoe URL {url!r}: character {exc.start} is no UTF-8 text (a byte the system could "
                           "not decode); name the port by a path in UTF-8 (/dev/serial/by-id/...)") from None
    if "://" not in url:
        return
    scheme = url.lower().split("://", 1)[0]
    for package_name in serial.protocol_handler_packages:
        try:
            importlib.import_module(package_name)
            importlib.import_module(f".protocol_{scheme}", package_name)
        except (ImportError, ValueError, TypeError):
            continue
        return
    forms = ", ".join(f"{s}://..." for s in url_schemes())
    raise ShoeUrlError(f"shoe URL {url!r}: pyserial knows no {scheme!r} scheme; use a device path "
                       f"(/dev/serial/by-id/..., /dev/ttyUSB0, COM3) or a URL: {forms} "
                       "(e.g. socket://HOST:PORT)")


def claim_exclusive(ser: SerialBase) -> bool:
    """Set ``TIOCEXCL`` on an open tty port: from now on the kernel refuses every other
    ``open()`` of the device with EBUSY (a process with CAP_SYS_ADMIN excepted) until the port
    is closed. pyserial's ``exclusive=True`` is only an advisory ``flock`` that another program
    need not ask for. Returns False for a port without a tty file descriptor (a socket or
    ``loop://`` URL) or where the ioctl fails."""
    try:
        fd = ser.fileno()
    except (AttributeError, OSError, ValueError, serial.SerialException):
        return False
    try:
        import fcntl
        import termios

        if not os.isatty(fd):
            return False
        fcntl.ioctl(fd, termios.TIOCEXCL)
    except (ImportError, OSError):
        return False
    return True


def port_holders(device: str, *, proc: str = "/proc", exclude: int | None = None) -> list[tuple[int, str]]:
    """Processes that hold ``device`` open, found by the links of ``/proc/<pid>/fd/*``:
    ``[(pid, command line), ...]`` sorted by pid; ``exclude`` (default: this process) left out.
    Only the processes this user may inspect are seen (run as root, or as the service user, to
    see them all). A URL or a path that does not exist gives ``[]``. On a pseudo-terminal the
    process holding its master side is the far end of the line (a virtual shoe, ``shoe-ctl
    sim``), not a second reader, and is not listed (``/proc/<pid>/fdinfo``'s ``tty-index``)."""
    if "://" in device or not os.path.exists(device):
        return []
    target = os.path.realpath(device)
    exclude = os.getpid() if exclude is None else exclude
    pty_index = target.rsplit("/", 1)[1] if target.startswith("/dev/pts/") else None
    found: list[tuple[int, str]] = []
    try:
        pids = [int(n) for n in os.listdir(proc) if n.isdigit()]
    except OSError:
        return []
    for pid in sorted(pids):
        if pid == exclude:
            continue
        fd_dir = os.path.join(proc, str(pid), "fd")
        try:
            links = os.listdir(fd_dir)
        except OSError:
            continue
        holds = far_end = False
        for fd in links:
            try:
                link = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            holds = holds or link == target
            far_end = far_end or (pty_index is not None and link in ("/dev/ptmx", "/dev/pts/ptmx")
                                  and _tty_index(proc, pid, fd) == pty_index)
        if not holds or far_end:
            continue
        try:
            with open(os.path.join(proc, str(pid), "cmdline"), "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            cmd = "?"
        found.append((pid, cmd or "?"))
    return found


def port_shared(device: str, holders: list[tuple[int, str]], status: LinkStatus | None, auth: str) -> LinkChanged:
    """The ``port-shared`` refusal event (logged as a warning) for ``holders`` of ``device``
    (:func:`port_holders`), under the link's ``status`` and ``auth``."""
    who = ", ".join(f"pid {pid} ({cmd[:60]})" for pid, cmd in holders)
    detail = f"another program holds the shoe's port {device}: {who}; it can read every card and write frames"
    log.warning("shoe link: %s", detail)
    return LinkChanged(status or LinkStatus.DISCONNECTED, detail, refused="port-shared", auth=auth)


def _tty_index(proc: str, pid: int, fd: str) -> str | None:
    """The pty number a ``/dev/ptmx`` descriptor is the master of (None when unknown)."""
    try:
        with open(os.path.join(proc, str(pid), "fdinfo", fd)) as fh:
            for line in fh:
                if line.startswith("tty-index:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


class ShoeLink(Closeable):
    """The serial link to one shoe: the port, its reader thread, and a :class:`LinkSession`.

    :param url: anything ``serial.serial_for_url`` opens: ``/dev/serial/by-id/...``,
        ``socket://host:port``, ``spy://...``, ``loop://``. Opened with ``exclusive=True``
        (an advisory ``flock`` on POSIX ports; URL handlers without locking ignore it, and a
        handler that rejects the keyword is opened without it). A scheme pyserial does not
        know raises :class:`~drivers.exc.ShoeUrlError` here (:func:`check_url`); a port that
        fails to open is retried, one log line per attempt (WARNING when the error is new,
        DEBUG while it repeats; a traceback only at DEBUG).
    :param events: the consumer's queue (anything with ``put``); receives ``CardRead``, ``ShoeFault``, ``ShoeButton``,
        ``LinkChanged``, ``SequenceGap`` and ``CounterReset`` values, in order, each once.
    :param baudrate: line speed in baud (ignored by socket URLs).
    :param resume_seq: the last sequence the consumer durably recorded before a restart (from the
        journal): events up to it are dropped as duplicates and acked at once. Ignored (with a
        note in the ``connected`` event's detail) when the shoe has never issued that sequence.
    :param auto_ack: ack every event on delivery (soak runs, tests); otherwise the consumer calls
        :meth:`ack` after recording.
    :param backoff: first and largest pause between reopen attempts, in seconds.
    :param silence_s: seconds without a valid frame before the link is ``degraded``.
    :param window: how far (in sequence numbers) events may run ahead of the next expected one
        and still be held for in-order delivery.
    :param secret: the shoe's pairing secret (32 bytes): protocol version 2, every frame
        authenticated; None: version 1, unauthenticated (a bench).
    :param serial: the table's shoe; a HELLO from another serial is refused
        (:class:`drivers.session.LinkSession`).
    :param resume_boot: ``(serial, boot id)`` the journal last knew the shoe by: a shoe that
        restarted while the host was down is reported as restarted (``ShoeRestarted``).
    :param key_file: where this host keeps the shoe's secret, for the texts
        (:class:`drivers.session.LinkSession`).
    :raises ValueError: ``resume_seq`` below 0, a secret that is not 32 bytes.
    """

    READ_TIMEOUT = 0.02
    """Seconds a read waits for bytes before the session's timers are looked at."""

    def __init__(self, url: str, events: EventQueueLike, *, baudrate: int = 115200,
                 resume_seq: int | None = None, auto_ack: bool = False,
                 backoff: tuple[float, float] = (0.02, 2.0), silence_s: float = 3.0,
                 window: int = 1024, secret: bytes | None = None, serial: str | None = None,
                 resume_boot: tuple[str, int] | None = None, key_file: str | None = None) -> None:
        self._session = LinkSession(name=url, resume_seq=resume_seq, auto_ack=auto_ack,
                                    silence_s=silence_s, window=window, secret=secret, serial=serial,
                                    resume_boot=resume_boot, key_file=key_file)
        check_url(url)
        self.url = url
        self.baudrate = baudrate
        self.resume_seq = resume_seq
        self.auto_ack = auto_ack
        self._events = events
        self._backoff = backoff
        self._lock = threading.RLock()
        super().__init__(self._lock)
        self._stop = threading.Event()
        self._connected_evt = threading.Event()
        self._thread: threading.Thread | None = None
        self._ser: SerialBase | None = None
        self._holders_said: tuple[int, ...] = ()
        self._idle = IdleWait(self.READ_TIMEOUT, self._session.stats, self._session.ack_output)

    # ------------------------------------------------------------------ public API

    def start(self) -> ShoeLink:
        """Start the reader thread (returns self).

        :raises LinkClosedError: after :meth:`close`.
        """
        with self._lock:
            if self._closed:
                raise LinkClosedError("the shoe link is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"shoe-link {self.url}", daemon=True)
                self._thread.start()
        return self

    def _closing(self) -> None:
        """``close()``, under the lock: the reader is told to stop."""
        self._stop.set()

    def _close(self) -> None:
        """``close()``: wake and join the reader thread, close the port; a final ``disconnected``
        event is queued when the link was up."""
        ser = self._ser
        if ser is not None and hasattr(ser, "cancel_read"):
            try:
                ser.cancel_read()
            except PORT_ERRORS:
                pass
        self._idle.wake(self._lock)
        join_thread(self._thread, 10.0)
        self._close_port()
        with self._lock:
            self._session.close()
            self._flush()

    def __enter__(self) -> ShoeLink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stats(self) -> LinkStats:
        """A snapshot of the counters (:class:`LinkStats`)."""
        with self._lock:
            return self._session.stats.snapshot()

    @property
    def info(self) -> ShoeInfo | None:
        """The shoe's hello as :class:`~shoe_ctl.events.ShoeInfo`, or None before the first one."""
        return self._session.info

    @property
    def status(self) -> LinkStatus | None:
        """The last status reported (None before the first attempt)."""
        return self._session.status

    @property
    def connected(self) -> bool:
        """True while a session with the shoe is up (``connected`` or ``degraded``)."""
        return self._connected_evt.is_set()

    @property
    def shoe_state(self) -> p.Heartbeat | None:
        """The shoe's last heartbeat (dispense counter, epoch, LED token shown, cover/jam/reader
        flags, unacked count), or None before the first one of this link."""
        return self._session.shoe_state

    @property
    def acked(self) -> int:
        """The highest sequence acked by the consumer (or ``resume_seq``)."""
        return self._session.acked

    def wait_connected(self, timeout: float = 5.0) -> ShoeInfo:
        """Block until the shoe's hello arrived.

        :raises ShoeTimeoutError: not connected within ``timeout`` seconds.
        """
        if not self._connected_evt.wait(timeout):
            raise ShoeTimeoutError(f"no hello from the shoe at {self.url} within {timeout} s")
        info = self.info
        assert info is not None
        return info

    def ack(self, seq: int) -> None:
        """Cumulative ack: every event up to ``seq`` is durably recorded; the shoe may forget
        them. Call it after the journal write. Acks never go backwards (a lower ``seq`` is a
        no-op). The ACK is written at once, from the caller's thread.

        :raises ValueError: ``seq`` was never delivered.
        """
        session = self._session
        with self._lock:
            try:
                session.ack(seq, time.monotonic())
            finally:
                if session.has_output:
                    self._flush()
                else:  # held for the next ACK frame (20 ms after the last): the reader sends it
                    self._idle.nearer(session.next_deadline)

    def try_send_leds(self, pattern: Mapping[str, Any]) -> bool:
        """:meth:`send_leds` for a thread that must not wait (the controller's, which holds the
        instruction): True when the pattern was handed to the link and its LED frame written (what
        a full output buffer did not take waits for room, :class:`drivers.port_output.PortOutput`,
        and the reader writes it: a frame is never cut nor overtaken); False, with nothing
        done, when that cannot be had without waiting: another thread holds the link (the reader
        in its turn, an ack being written), or the port is not a device (a URL handler's write may
        wait). Then call :meth:`send_leds` from a thread that may wait.

        :raises ValueError: an LED name, mode or time the protocol cannot carry.
        :raises NotConnectedError: the shoe is away now (the pattern is still kept).
        :raises LinkClosedError: after :meth:`close`.
        """
        spec = LinkSession.led_spec(pattern)
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._ser is not None and device_fd(self._ser) is None:
                return False
            self._show_leds(spec)
        finally:
            self._lock.release()
        return True

    def send_leds(self, pattern: Mapping[str, Any] | str) -> None:
        """Show ``pattern`` on the shoe's own LEDs. ``pattern`` is a signal name (``"deal"``)
        or a dict ``{"name", "leds", "mode", "on_ms", "off_ms"}`` as
        :meth:`drivers.leds.LedPattern.as_dict` writes it. The link keeps the latest pattern and
        re-sends it until the shoe reports it (heartbeat token), also after a reconnect.

        :raises ValueError: an LED name, mode or time the protocol cannot carry.
        :raises NotConnectedError: the shoe is away now (the pattern is still kept).
        :raises LinkClosedError: after :meth:`close`.
        """
        if isinstance(pattern, str):
            pattern = pattern_for(pattern).as_dict()
        spec = LinkSession.led_spec(pattern)  # validate now, in the caller's thread
        with self._lock:
            self._show_leds(spec)

    def _show_leds(self, spec: Mapping[str, Any]) -> None:
        """:meth:`send_leds` of a checked pattern, lock held."""
        if self._closed:
            raise LinkClosedError("the shoe link is closed")
        try:
            self._session.show_leds(spec, time.monotonic())
        finally:
            self._flush()

    @property
    def auth(self) -> str:
        """``"hmac"`` (version 2, authenticated) or ``"off"`` (version 1, a bench)."""
        return self._session.auth

    def pair(self, secret: bytes, timeout: float = 5.0) -> ShoeInfo:
        """Give the connected shoe the new pairing ``secret`` and wait until it answers under it
        (:meth:`drivers.session.LinkSession.pair`: a rotation inside the session, or a shoe in
        pairing mode).

        :raises NotConnectedError: no shoe connected now.
        :raises ShoeTimeoutError: the shoe did not answer under the new secret in ``timeout`` s.
        """
        with self._lock:
            try:
                self._session.pair(secret)
                self._connected_evt.clear()
            finally:
                self._flush()
        return self.wait_connected(timeout)

    def reset_counter(self) -> None:
        """Reset the shoe's dispense counter (a new deck or stub is loaded). Idempotent on the
        wire (an epoch number); re-sent until the shoe reports the new epoch, also after a
        reconnect. When the shoe first reports it, a :class:`~shoe_ctl.events.CounterReset`
        goes on the event queue (before any card counted under the new epoch).

        :raises NotConnectedError: the shoe is away now (the reset is still done on reconnect).
        :raises LinkClosedError: after :meth:`close`.
        """
        with self._lock:
            if self._closed:
                raise LinkClosedError("the shoe link is closed")
            try:
                self._session.reset_counter()
            finally:
                self._flush()

    # ------------------------------------------------------------------ session <-> port

    def _flush(self) -> None:
        """Write the frames the session asks for and queue its events (lock held)."""
        session = self._session
        for frame in session.frames_to_send():
            self._write(frame)
        for event in session.events():
            if isinstance(event, LinkChanged):
                log.info("shoe link %s: %s", event.status, event.detail)
            self._events.put(event)
        if session.connected and not self._connected_evt.is_set():
            self._connected_evt.set()
        self._idle.nearer(session.next_deadline)  # e.g. an ack held for the next ACK frame: the reader sends it

    def _write(self, frame: bytes) -> None:
        """Write one frame (lock held); a port error here is left for the reader to find (it sees
        it too). On a device port it never waits for room (:class:`drivers.port_output.PortOutput`:
        what a full output buffer leaves goes out from the reader as room comes), so neither the
        journal's committing thread writing an ack nor the reader holding the lock waits on a shoe
        that does not read."""
        ser = self._ser
        if ser is None:
            return
        try:
            self._idle.send(frame, ser)
        except PORT_ERRORS as exc:
            log.debug("write failed: %s", exc)

    # ------------------------------------------------------------------ port

    def _open(self) -> Any:
        ser = open_port(self.url, self.baudrate, self.READ_TIMEOUT)
        self._check_holders(getattr(ser, "port", None) or self.url)
        return ser

    def _check_holders(self, device: str) -> None:
        """Another process holding the shoe's device can read every card (hole cards included)
        and write frames: a ``port-shared`` refusal event, once per set of holders."""
        holders = port_holders(device)
        key = tuple(pid for pid, _ in holders)
        if holders and key != self._holders_said:
            self._holders_said = key
            self._events.put(port_shared(device, holders, self._session.status, self._session.auth))

    def _close_port(self) -> None:
        with self._lock:
            ser, self._ser = self._ser, None
        if ser is not None:
            with contextlib.suppress(*PORT_ERRORS):
                ser.close()

    def _link_down(self, detail: str) -> None:
        with self._lock:
            self._session.link_down(detail)
            self._flush()

    # ------------------------------------------------------------------ reader thread

    def _run(self) -> None:
        delay = self._backoff[0]
        connections = 0
        last_error = ""
        while not self._stop.is_set():
            try:
                ser = self._open()
            except PORT_ERRORS as exc:
                self._session.stats.port_errors += 1
                last_error = open_failed(f"cannot open {self.url}: {exc}", last_error)
                self._link_down(f"cannot open {self.url}: {exc}")
                self._stop.wait(delay)
                delay = min(delay * 2, self._backoff[1])
                continue
            except Exception as exc:  # a handler bug: report, retry slowly
                self._session.stats.port_errors += 1
                last_error = open_failed(f"cannot open {self.url}: {exc!r}", last_error)
                log.debug("opening %s failed", self.url, exc_info=True)
                self._link_down(f"cannot open {self.url}: {exc!r}")
                self._stop.wait(self._backoff[1])
                continue
            last_error = ""
            with self._lock:
                self._ser = ser
                if self._stop.is_set():
                    break
            if connections:
                self._session.stats.reconnects += 1
            connections += 1
            reason = "port closed"
            try:
                self._connection(ser)
            except PORT_ERRORS as exc:
                self._session.stats.port_errors += 1
                reason = f"port lost: {exc}"
            except VersionError as exc:
                reason = str(exc)
                delay = self._backoff[1]
            except Exception as exc:  # never a silent dead thread
                log.exception("shoe link session failed")
                reason = f"link error: {exc!r}"
                delay = self._backoff[1]
            finally:
                if self._session.hello_seen and delay < self._backoff[1]:
                    delay = self._backoff[0]  # the shoe was there: reconnect at once
                with self._lock:
                    self._session.connection_lost()
                    self._connected_evt.clear()
                self._close_port()
            if self._stop.is_set():
                break
            self._link_down(reason)
            self._stop.wait(delay)
            delay = min(delay * 2, self._backoff[1])

    def _connection(self, ser: SerialBase) -> None:
        """One open port until it fails or the link stops: bytes in go to the session, its
        timers are run when their deadline has come, its frames go out."""
        session = self._session
        socket_port = is_socket_url(self.url)
        with self._idle.reading(None if socket_port else device_fd(ser), self._lock):
            with self._lock:
                session.connection_made(time.monotonic())
                self._flush()
            while not self._stop.is_set():
                data = self._idle.read(ser, socket_port, self._lock, session.next_deadline, self._stop)
                now = time.monotonic()
                with self._lock:
                    try:
                        if data:
                            session.receive_data(data, now)
                        if now >= session.next_deadline():
                            session.tick(now)
                    finally:
                        self._flush()
