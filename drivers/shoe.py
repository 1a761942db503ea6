"""The host side of the shoe link: :class:`ShoeLink` over pyserial, protocol v1.

One reader thread owns the port: it opens ``serial.serial_for_url(url, exclusive=True)``, says
HOST_HELLO (the host speaks first: pyserial discards what arrived before the port opened), waits
for the shoe's HELLO, then delivers the shoe's events once each and in sequence order to one
``queue.Queue`` as :mod:`shoe_ctl.events` values. A lost port (``SerialException`` or any
``OSError``: an unplugged USB adapter raises EIO) ends the session; the thread reopens with
exponential backoff. Connection changes are :class:`~shoe_ctl.events.LinkChanged` events on the
same queue; the thread never dies silently (an unexpected error becomes a ``disconnected`` event
and a retry). The link never calls into the state machine.

The durability point: the consumer calls :meth:`ShoeLink.ack` with an event's ``seq`` *after*
that event is durably recorded (the journal); only then does the shoe forget it. With
``auto_ack=True`` the link acks on delivery (soak runs and tests without a journal).
See ``docs/protocol.md`` for the protocol and the link's state chart.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

import serial

from drivers import protocol as p
from drivers.exc import LinkClosedError, NotConnectedError, ShoeTimeoutError, ShoeUrlError, VersionError
from shoe_ctl.events import CounterReset, LinkChanged, LinkStatus, SequenceGap, ShoeInfo

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


def check_url(url: str) -> None:
    """Refuse a shoe URL whose ``scheme://`` no pyserial handler opens (the way
    ``serial.serial_for_url`` looks handlers up); a device path (no ``://``) always passes.

    :raises ShoeUrlError: naming the URL and the supported forms.
    """
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


@dataclass
class LinkStats:
    """Counters of one :class:`ShoeLink` since it was created.

    :param delivered: events handed to the consumer.
    :param frames_in: valid frames received.
    :param frames_out: frames written.
    :param bad_frames: frames dropped (COBS, length, CRC or message checks).
    :param unknown_frames: valid frames of an unknown message type (dropped).
    :param duplicates_dropped: events received again after delivery (dropped by sequence).
    :param resends: resend requests sent to the shoe (an ACK whose ``want`` reports a hole).
    :param reconnects: sessions opened after the first.
    :param port_errors: port losses and failed opens.
    :param gaps: :class:`~shoe_ctl.events.SequenceGap` events raised.
    :param out_of_window: events too far ahead of the next expected sequence (dropped).
    :param degraded: times the link went ``degraded``.
    """

    delivered: int = 0
    frames_in: int = 0
    frames_out: int = 0
    bad_frames: int = 0
    unknown_frames: int = 0
    duplicates_dropped: int = 0
    resends: int = 0
    reconnects: int = 0
    port_errors: int = 0
    gaps: int = 0
    out_of_window: int = 0
    degraded: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counters as a JSON-safe dict."""
        return asdict(self)


class ShoeLink:
    """The serial link to one shoe.

    :param url: anything ``serial.serial_for_url`` opens: ``/dev/serial/by-id/...``,
        ``socket://host:port``, ``spy://...``, ``loop://``. Opened with ``exclusive=True``
        (an advisory ``flock`` on POSIX ports; URL handlers without locking ignore it, and a
        handler that rejects the keyword is opened without it). A scheme pyserial does not
        know raises :class:`~drivers.exc.ShoeUrlError` here (:func:`check_url`); a port that
        fails to open is retried, one log line per attempt (WARNING when the error is new,
        DEBUG while it repeats; a traceback only at DEBUG).
    :param events: the consumer's queue; receives ``CardRead``, ``ShoeFault``, ``ShoeButton``,
        ``LinkChanged`` and ``SequenceGap`` values, in order, each once.
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
    """

    READ_TIMEOUT = 0.02
    HELLO_INTERVAL = 0.25
    ACK_KEEPALIVE = 0.5
    RESEND_HOLDOFF = 0.02
    COMMAND_RETRY = 0.3

    def __init__(self, url: str, events: queue.Queue[Any], *, baudrate: int = 115200,
                 resume_seq: int | None = None, auto_ack: bool = False,
                 backoff: tuple[float, float] = (0.02, 2.0), silence_s: float = 3.0,
                 window: int = 1024) -> None:
        if resume_seq is not None and resume_seq < 0:
            raise ValueError(f"resume_seq must be >= 0, not {resume_seq}")
        check_url(url)
        self.url = url
        self.baudrate = baudrate
        self.resume_seq = resume_seq
        self.auto_ack = auto_ack
        self._events = events
        self._backoff = backoff
        self._silence_s = silence_s
        self._window = window
        self._lock = threading.RLock()
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._connected_evt = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._ser: Any = None
        self._stats = LinkStats()
        self._status: LinkStatus | None = None
        # delivery state (reader thread; ack() reads/writes _acked under the lock)
        self._expected: int | None = None
        self._acked = resume_seq or 0
        self._sent_acked = -1
        self._pending: dict[int, p.EventMsg] = {}
        self._hello: p.Hello | None = None          # this session's hello
        self._last_hello: p.Hello | None = None     # the last hello of any session
        self._host_seq = 0
        # commands the host wants the shoe to show (re-sent until the shoe reports them)
        self._led: dict[str, Any] | None = None
        self._led_token = 0
        self._shoe_led_token = 0
        self._reset_wanted = False
        self._reset_target: int | None = None
        self._shoe_epoch = 0
        self._last_cmd_tx = 0.0
        self._heartbeat: p.Heartbeat | None = None

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

    def close(self) -> None:
        """Stop the reader thread, close the port and join. Idempotent; a final ``disconnected``
        event is queued when the link was up."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            ser = self._ser
        if ser is not None and hasattr(ser, "cancel_read"):
            try:
                ser.cancel_read()
            except PORT_ERRORS:
                pass
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(10.0)
        self._close_port()
        if self._status not in (None, LinkStatus.DISCONNECTED):
            self._set_status(LinkStatus.DISCONNECTED, "link closed")

    def __enter__(self) -> ShoeLink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stats(self) -> LinkStats:
        """A snapshot of the counters (:class:`LinkStats`)."""
        with self._lock:
            return replace(self._stats)

    @property
    def info(self) -> ShoeInfo | None:
        """The shoe's hello as :class:`~shoe_ctl.events.ShoeInfo`, or None before the first one."""
        hello = self._last_hello
        return None if hello is None else hello.info()

    @property
    def status(self) -> LinkStatus | None:
        """The last status reported (None before the first attempt)."""
        return self._status

    @property
    def connected(self) -> bool:
        """True while a session with the shoe is up (``connected`` or ``degraded``)."""
        return self._connected_evt.is_set()

    @property
    def shoe_state(self) -> p.Heartbeat | None:
        """The shoe's last heartbeat (dispense counter, epoch, LED token shown, cover/jam/reader
        flags, unacked count), or None before the first one of this link."""
        return self._heartbeat

    @property
    def acked(self) -> int:
        """The highest sequence acked by the consumer (or ``resume_seq``)."""
        return self._acked

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
        no-op).

        :raises ValueError: ``seq`` was never delivered.
        """
        with self._lock:
            delivered = (self._expected or 1) - 1
            if seq > max(delivered, self._acked):
                raise ValueError(f"cannot ack seq {seq}: only {delivered} delivered")
            if seq > self._acked:
                self._acked = seq
                if self._hello is not None and self._expected is not None:
                    # at once, from the caller's thread: the reader thread would send it only when
                    # it next wakes (a frame from the shoe, or its read timeout)
                    self._send_ack(time.monotonic())

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
            from drivers.leds import pattern_for

            pattern = pattern_for(pattern).as_dict()
        name = str(pattern.get("name", ""))
        spec: dict[str, Any] = {
            "signal": name if name in p.LED_SIGNALS else "",
            "leds": tuple(pattern.get("leds", ())),
            "mode": str(pattern.get("mode", "steady")),
            "on_ms": int(pattern.get("on_ms", 0)),
            "off_ms": int(pattern.get("off_ms", 0)),
        }
        p.encode_body(p.Led(0, 1, **spec))  # validate now, in the caller's thread
        with self._lock:
            if self._closed:
                raise LinkClosedError("the shoe link is closed")
            self._led = spec
            self._led_token = self._new_led_token(self._led_token)
            if self._hello is None:
                raise NotConnectedError(f"shoe at {self.url} not connected; LED pattern kept for later")
            self._send_led()

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
            self._reset_wanted = True
            self._reset_target = self._shoe_epoch % 0xFFFF + 1
            if self._hello is None:
                raise NotConnectedError(f"shoe at {self.url} not connected; counter reset kept for later")
            self._send(p.ResetCounter(self._next_host_seq(), self._reset_target))

    # ------------------------------------------------------------------ events out

    def _put(self, event: Any) -> None:
        self._events.put(event)

    def _set_status(self, status: LinkStatus, detail: str, info: ShoeInfo | None = None,
                    force: bool = False, sequence_reset: bool = False) -> None:
        if status == self._status and not force:
            return
        self._status = status
        if status == LinkStatus.DEGRADED:
            self._stats.degraded += 1
        log.info("shoe link %s: %s", status, detail)
        self._put(LinkChanged(status, detail, info, sequence_reset=sequence_reset))

    # ------------------------------------------------------------------ port

    def _open(self) -> Any:
        kwargs: dict[str, Any] = {"baudrate": self.baudrate, "timeout": self.READ_TIMEOUT,
                                  "write_timeout": 2.0}
        try:
            return serial.serial_for_url(self.url, exclusive=True, **kwargs)
        except (TypeError, ValueError) as exc:
            if "exclusive" not in str(exc):
                raise
            return serial.serial_for_url(self.url, **kwargs)

    def _close_port(self) -> None:
        with self._lock:
            ser, self._ser = self._ser, None
        if ser is not None:
            try:
                ser.close()
            except PORT_ERRORS:
                pass

    def _next_host_seq(self) -> int:
        self._host_seq = self._host_seq % p.SEQ_MAX + 1
        return self._host_seq

    def _send(self, msg: p.Message) -> None:
        """Write one frame; a port error here is left for the reader to find (it sees it too)."""
        frame = p.encode(msg)
        ser = self._ser
        if ser is None:
            return
        try:
            with self._write_lock:
                ser.write(frame)
        except PORT_ERRORS as exc:
            log.debug("write failed: %s", exc)
            return
        self._stats.frames_out += 1

    def _new_led_token(self, after: int) -> int:
        """The token after ``after`` (1..255, wrapping) that differs from the one the shoe shows:
        a pattern whose LED frame is lost must never look shown (protocol, LED)."""
        token = after % 255 + 1
        if token == self._shoe_led_token:
            token = token % 255 + 1
        return token

    def _send_led(self) -> None:
        if self._led is not None:
            self._send(p.Led(self._next_host_seq(), self._led_token, **self._led))
            self._last_cmd_tx = time.monotonic()

    def _send_ack(self, now: float, resend: bool = False) -> None:
        expected = self._expected
        if expected is None:
            return
        acked = min(self._acked, expected - 1)
        self._send(p.Ack(self._next_host_seq(), acked, expected, resend))
        self._sent_acked = acked
        self._sent_want = expected
        self._last_ack_tx = now

    # ------------------------------------------------------------------ reader thread

    def _run(self) -> None:
        delay = self._backoff[0]
        sessions = 0
        last_error = ""
        while not self._stop.is_set():
            try:
                ser = self._open()
            except PORT_ERRORS as exc:
                self._stats.port_errors += 1
                last_error = self._open_failed(f"cannot open {self.url}: {exc}", last_error)
                self._set_status(LinkStatus.DISCONNECTED, f"cannot open {self.url}: {exc}")
                self._stop.wait(delay)
                delay = min(delay * 2, self._backoff[1])
                continue
            except Exception as exc:  # a handler bug: report, retry slowly
                self._stats.port_errors += 1
                last_error = self._open_failed(f"cannot open {self.url}: {exc!r}", last_error)
                log.debug("opening %s failed", self.url, exc_info=True)
                self._set_status(LinkStatus.DISCONNECTED, f"cannot open {self.url}: {exc!r}")
                self._stop.wait(self._backoff[1])
                continue
            last_error = ""
            with self._lock:
                self._ser = ser
                if self._stop.is_set():
                    break
            if sessions:
                self._stats.reconnects += 1
            sessions += 1
            reason = "port closed"
            self._session_hello = False
            try:
                self._session(ser)
            except PORT_ERRORS as exc:
                self._stats.port_errors += 1
                reason = f"port lost: {exc}"
            except VersionError as exc:
                reason = str(exc)
                delay = self._backoff[1]
            except Exception as exc:  # never a silent dead thread
                log.exception("shoe link session failed")
                reason = f"link error: {exc!r}"
                delay = self._backoff[1]
            finally:
                if self._session_hello and delay < self._backoff[1]:
                    delay = self._backoff[0]  # the shoe was there: reconnect at once
                self._connected_evt.clear()
                with self._lock:
                    self._hello = None
                self._close_port()
            if self._stop.is_set():
                break
            self._set_status(LinkStatus.DISCONNECTED, reason)
            self._stop.wait(delay)
            delay = min(delay * 2, self._backoff[1])

    @staticmethod
    def _open_failed(text: str, last: str) -> str:
        """One log line for a failed open: WARNING when the error differs from the last
        attempt's, DEBUG while it repeats (the retry runs every 2 s while a shoe is away)."""
        (log.debug if text == last else log.warning)("%s (retrying)", text)
        return text

    def _session(self, ser: Any) -> bool:
        """One open port until it fails or the link stops; True when a hello arrived."""
        decoder = p.FrameDecoder()
        bad_base = self._stats.bad_frames
        unknown_base = self._stats.unknown_frames
        malformed_seen = 0
        now = time.monotonic()
        self._send(p.HostHello(self._next_host_seq()))
        state = _Session(now)
        got_hello = False
        while not self._stop.is_set():
            data = ser.read(ser.in_waiting or 1)
            if data:
                more = ser.in_waiting
                if more:
                    data += ser.read(more)
                msgs = decoder.feed(data)
                now = time.monotonic()
                stats = decoder.stats
                bad_now = bad_base + stats.bad_frames
                if bad_now != self._stats.bad_frames:
                    state.quality = state.quality * 0.95 ** (bad_now - self._stats.bad_frames) + (
                        1 - 0.95 ** (bad_now - self._stats.bad_frames))
                    self._stats.bad_frames = bad_now
                self._stats.unknown_frames = unknown_base + stats.unknown
                if stats.reasons.get("message", 0) != malformed_seen:
                    malformed_seen = stats.reasons["message"]
                    state.malformed = stats.last_malformed
                    state.malformed_at = now
                if msgs:
                    state.last_rx = now
                for msg in msgs:
                    self._stats.frames_in += 1
                    state.quality *= 0.95
                    with self._lock:
                        self._on_message(msg, state, now)
                if not got_hello and self._hello is not None:
                    got_hello = self._session_hello = True
            else:
                now = time.monotonic()
            with self._lock:
                self._tick(state, now)
        return got_hello

    # ------------------------------------------------------------------ protocol (lock held)

    def _on_message(self, msg: p.Message, state: _Session, now: float) -> None:
        if isinstance(msg, p.Hello):
            self._on_hello(msg, now)
            return
        if self._hello is None or self._expected is None:
            return  # nothing counts before this session's hello
        if isinstance(msg, p.CardMsg | p.FaultMsg | p.ButtonMsg):
            if isinstance(msg, p.CardMsg):
                # a card's epoch may be older than the shoe's (a resent card): it only confirms
                self._note_epoch(msg.epoch, current=False)
            self._on_event(msg, state, now)
        elif isinstance(msg, p.Heartbeat):
            self._heartbeat = msg
            self._shoe_led_token = msg.led_token
            self._note_epoch(msg.epoch)
            if msg.seq > self._expected:
                self._request_resend(state, now)
        # host messages (an echo on loop://) are ignored

    def _note_epoch(self, epoch: int, *, current: bool = True) -> None:
        """The shoe reported ``epoch`` (``current``: its epoch now, from a HEARTBEAT or HELLO; else
        from a CARD, which may be an older one). The first report of the epoch a reset asked for
        confirms it: a :class:`CounterReset` goes on the queue before any card counted under it."""
        if current:
            self._shoe_epoch = epoch
        if self._reset_wanted and epoch == self._reset_target:
            self._reset_wanted = False
            self._shoe_epoch = epoch
            self._put(CounterReset(epoch))

    def _on_hello(self, hello: p.Hello, now: float) -> None:
        if hello.version != p.PROTOCOL_VERSION and hello.version_min <= p.PROTOCOL_VERSION <= hello.version_max:
            self._send(p.HostHello(self._next_host_seq()))  # an unasked hello: negotiate first
            return
        if hello.version != p.PROTOCOL_VERSION:
            detail = (f"shoe speaks protocol {hello.version_min}..{hello.version_max}, host "
                      f"{p.PROTOCOL_VERSION}: no common version")
            self._set_status(LinkStatus.DISCONNECTED, detail, hello.info())
            raise VersionError(detail)
        prev = self._last_hello
        notes: list[str] = []
        gap_from: int | None = None
        seq_reset = False
        if self._expected is None:
            resume = self.resume_seq
            if resume is None:
                self._expected = hello.first_seq
            elif resume > hello.seq - 1:
                notes.append(f"resume point {resume} is beyond the shoe's last sequence {hello.seq - 1}:"
                             " another or reset shoe; resume ignored")
                seq_reset = True
                self._expected = hello.first_seq
                self._acked = 0
            else:
                self._expected = resume + 1
                if hello.first_seq > self._expected:
                    gap_from = self._expected
        elif prev is not None and prev.serial != hello.serial:
            notes.append(f"another shoe (serial {hello.serial!r}, was {prev.serial!r})")
            self._expected = hello.first_seq
            self._acked = 0
            self._pending.clear()
        elif hello.seq < self._expected:
            # its next sequence is below what was already received: the shoe lost its
            # non-volatile counter and reuses old numbers; they are new events, not duplicates
            notes.append(f"shoe's sequence numbers went back (next {hello.seq}, host had received up to "
                         f"{self._expected - 1}): its counter was reset; starting over from {hello.first_seq}, "
                         "events it held may be lost")
            log.warning("shoe %s: sequence went back from %d to %d", hello.serial, self._expected, hello.seq)
            self._stats.gaps += 1
            seq_reset = True
            self._expected = hello.first_seq
            self._acked = 0
            self._pending.clear()
        elif hello.first_seq > self._expected:
            gap_from = self._expected
        if prev is not None and prev.serial == hello.serial and prev.boot_id != hello.boot_id:
            notes.append(f"shoe restarted (boot {hello.boot_id:08x})")
        if gap_from is not None:
            notes.append(f"events {gap_from}..{hello.first_seq - 1} lost by the shoe")
            self._stats.gaps += 1
            self._expected = hello.first_seq
        for seq in [s for s in self._pending if s < self._expected]:
            del self._pending[seq]
        first = self._hello is None
        self._hello = hello
        self._last_hello = hello
        self._shoe_epoch = hello.epoch
        self._shoe_led_token = hello.led_token
        if self._reset_wanted:
            if hello.epoch == self._reset_target:
                self._note_epoch(hello.epoch)
            else:
                if self._reset_target is None or prev is None or prev.serial != hello.serial:
                    self._reset_target = hello.epoch % 0xFFFF + 1
                self._send(p.ResetCounter(self._next_host_seq(), self._reset_target))
        if self._led is not None and hello.led_token != self._led_token:
            if hello.led_token == 0 or prev is None or prev.boot_id != hello.boot_id:
                self._led_token = self._new_led_token(hello.led_token)
            self._send_led()
        self._send_ack(now)
        if first or notes:
            detail = "; ".join([f"shoe {hello.serial} firmware {hello.firmware}", *notes])
            self._set_status(LinkStatus.CONNECTED, detail, hello.info(), force=True, sequence_reset=seq_reset)
        if gap_from is not None:  # after the connected event, before any event that follows it
            self._put(SequenceGap(gap_from, hello.first_seq))
        self._connected_evt.set()

    def _on_event(self, msg: p.EventMsg, state: _Session, now: float) -> None:
        expected = self._expected
        assert expected is not None
        seq = msg.seq
        if seq < expected:
            self._stats.duplicates_dropped += 1
            state.ack_due = True  # tell the shoe what we have
            return
        if seq > expected:
            if seq - expected > self._window:
                self._stats.out_of_window += 1
            elif seq in self._pending:
                self._stats.duplicates_dropped += 1
            else:
                self._pending[seq] = msg
            self._request_resend(state, now)
            return
        self._deliver(msg)
        expected += 1
        while expected in self._pending:
            self._deliver(self._pending.pop(expected))
            expected += 1
        self._expected = expected
        if self._pending:
            self._request_resend(state, now)

    def _deliver(self, msg: p.EventMsg) -> None:
        self._put(p.to_event(msg))
        self._stats.delivered += 1
        if self.auto_ack:
            self._acked = msg.seq

    def _request_resend(self, state: _Session, now: float) -> None:
        want = self._expected
        if want == state.resend_want and now - state.resend_at < self.RESEND_HOLDOFF:
            return
        state.resend_want = want
        state.resend_at = now
        self._stats.resends += 1
        self._send_ack(now, resend=True)

    def _tick(self, state: _Session, now: float) -> None:
        if self._hello is None:
            if now - state.hello_at >= self.HELLO_INTERVAL:
                state.hello_at = now
                self._send(p.HostHello(self._next_host_seq()))
            if not state.quiet_reported and now - state.opened >= self._silence_s:
                # The port opened but nothing on it answers as a shoe (wrong device, shoe off,
                # wrong baud rate): say so once per session instead of waiting in silence.
                state.quiet_reported = True
                self._set_status(LinkStatus.DISCONNECTED, f"port {self.url} open but no HELLO from a shoe for "
                                 f"{now - state.opened:.1f} s ({self._stats.bad_frames} bad frames so far): is "
                                 "the shoe on this port, powered, at this baud rate?", force=True)
            return
        if (state.ack_due or self._acked > self._sent_acked or self._expected != self._sent_want
                or now - self._last_ack_tx >= self.ACK_KEEPALIVE):
            state.ack_due = False
            self._send_ack(now)
        if self._pending:  # a hole: ask again until it is filled
            self._request_resend(state, now)
        if now - self._last_cmd_tx >= self.COMMAND_RETRY:
            if self._led is not None and self._shoe_led_token != self._led_token:
                self._send_led()
            if self._reset_wanted and self._reset_target is not None:
                self._send(p.ResetCounter(self._next_host_seq(), self._reset_target))
                self._last_cmd_tx = now
        silent = now - state.last_rx
        if silent >= self._silence_s:
            if now - state.hello_at >= 1.0:
                state.hello_at = now
                self._send(p.HostHello(self._next_host_seq()))
            self._set_status(LinkStatus.DEGRADED, f"no frame from the shoe for {silent:.1f} s")
        elif state.quality > 0.3:
            if state.malformed and now - state.malformed_at < 1.0:
                self._set_status(LinkStatus.DEGRADED, "the shoe sends frames that pass the CRC but break protocol "
                                 f"v1 (a firmware defect, not line noise): {state.malformed}")
            else:
                self._set_status(LinkStatus.DEGRADED, f"noisy line: {state.quality:.0%} of recent frames bad")
        elif self._status == LinkStatus.DEGRADED and state.quality < 0.1:
            self._set_status(LinkStatus.CONNECTED, "link recovered", self.info)

    _last_ack_tx = 0.0
    _session_hello = False
    _sent_want = 0


class _Session:
    """Per-session timers and counters of the reader thread."""

    __slots__ = ("last_rx", "hello_at", "resend_want", "resend_at", "ack_due", "quality", "malformed",
                 "malformed_at", "opened", "quiet_reported")

    def __init__(self, now: float) -> None:
        self.opened = now
        self.quiet_reported = False
        self.last_rx = now
        self.hello_at = now
        self.resend_want: int | None = None
        self.resend_at = 0.0
        self.ack_due = False
        self.quality = 0.0
        self.malformed = ""
        self.malformed_at = 0.0
