"""The host's protocol session with one shoe, without I/O (the sans-I/O shape of h11 / hyper-h2).

:class:`LinkSession` is fed the bytes a port received (:meth:`~LinkSession.receive_data`) and the
clock (:meth:`~LinkSession.tick`); it hands back the frames to write
(:meth:`~LinkSession.frames_to_send`) and the events for the consumer
(:meth:`~LinkSession.events`). It owns delivery (each event once, in sequence order), acks,
resend requests, the LED and counter-reset commands with their retries, and the link status.
No port, no thread, no clock of its own: every time is an argument, and its timers are
deadlines (:meth:`~LinkSession.next_deadline`). The transport that drives it is
:class:`drivers.shoe.ShoeLink`; the behaviour is described in ``docs/protocol.md`` (sections 4-7).

With a pairing ``secret`` it speaks the authenticated version 2 (``docs/protocol.md``,
"Authentication (version 2)"): a fresh challenge in every HOST_HELLO, a session per accepted
HELLO, every frame sealed and checked (MAC, counter). It only ever takes the shoe it was given
(``serial``; without one, the first shoe it accepted): any other, an unpaired one, a forged or
replayed frame is *refused* — dropped, never a change of numbering — and reported once as a
``LinkChanged`` with ``refused`` set (the machine raises a latched alert).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drivers import protocol as p
from drivers.exc import NotConnectedError, VersionError
from shoe_ctl.events import CounterReset, LinkChanged, LinkStatus, SequenceGap, ShoeInfo, ShoeRestarted

log = logging.getLogger(__name__)


@dataclass
class SessionStats:
    """Counters a :class:`LinkSession` keeps (the session's part of ``drivers.shoe.LinkStats``).

    :param delivered: events handed to the consumer.
    :param frames_in: valid frames received.
    :param bad_frames: frames dropped (COBS, length, CRC or message checks).
    :param unknown_frames: valid frames of an unknown message type (dropped).
    :param duplicates_dropped: events received again after delivery (dropped by sequence).
    :param resends: resend requests sent (an ACK whose ``want`` reports a hole).
    :param gaps: :class:`~shoe_ctl.events.SequenceGap` events raised (and sequence resets).
    :param out_of_window: events too far ahead of the next expected sequence (dropped).
    :param degraded: times the status went ``degraded``.
    :param acks: ACK frames sent (at most one per :attr:`LinkSession.ACK_MIN_GAP`).
    :param rejected: valid frames dropped by a row of the constraint table
        (``docs/protocol.md`` section 11), by the row's id: the codec's rows and the session's
        own (``C-READER-DECLARED``).
    :param restarts: :class:`~shoe_ctl.events.ShoeRestarted` events raised.
    """

    delivered: int = 0
    frames_in: int = 0
    bad_frames: int = 0
    unknown_frames: int = 0
    duplicates_dropped: int = 0
    resends: int = 0
    gaps: int = 0
    out_of_window: int = 0
    degraded: int = 0
    refused: int = 0
    acks: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    restarts: int = 0


REFUSALS = {
    "unpaired": "a shoe that speaks without authentication (not paired with this table)",
    "unknown-shoe": "a shoe with another serial number than the table's",
    "auth-failed": "a HELLO whose MAC does not verify (a shoe paired elsewhere, or a forgery)",
    "forged": "a frame without a valid MAC inside the session (another program writing into the line)",
    "replay": "a frame whose counter is not above the last one (a replay)",
}
"""The ``refused`` codes of :class:`~shoe_ctl.events.LinkChanged` and what each means."""
_LED_SPECS_CHECKED: set[tuple[Any, ...]] = set()
"""LED frame fields :meth:`LinkSession.led_spec` has checked against the protocol already."""
MAX_CHALLENGES = 16
"""Challenges a host keeps outstanding (answers to older ones are refused as stale)."""


@dataclass
class _Span:
    """Cards since a HELLO: that HELLO (its next sequence number, card total, boot count) and the
    CARD events delivered with a sequence number from its ``seq`` on."""

    hello: p.Hello
    cards: int = 0


@dataclass
class _Connection:
    """What lives as long as one open port: the frame decoder, timers (seconds), line quality."""

    opened: float
    bad_base: int
    unknown_base: int
    decoder: p.FrameDecoder = field(default_factory=p.FrameDecoder)
    quiet_reported: bool = False
    last_rx: float = 0.0
    hello_at: float = 0.0
    resend_want: int | None = None
    resend_at: float = 0.0
    ack_due: bool = False
    ack_resend: bool = False
    quality: float = 0.0
    malformed: str = ""
    malformed_at: float = 0.0
    malformed_seen: int = 0
    hello_seen: bool = False
    foreign_sealed: int = 0
    rules_seen: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.last_rx = self.hello_at = self.opened


class LinkSession:
    """The host side of protocol v1 for one shoe, across any number of port connections.

    :param name: the port's name, used in event and error texts (the URL).
    :param resume_seq: the last sequence durably recorded before a restart (the journal's);
        events up to it are dropped as duplicates and acked (docs/protocol.md section 6).
    :param auto_ack: ack every event on delivery (soak runs and tests without a journal).
    :param silence_s: seconds without a valid frame before the status is ``degraded``, and
        without a HELLO before a ``disconnected`` event says nobody answers.
    :param window: how far (sequence numbers) an event may run ahead and still be held.
    :param secret: the shoe's pairing secret (32 bytes): speak version 2, authenticated; None:
        version 1, unauthenticated (benches; ``auth`` says ``off`` in every status event).
    :param serial: the table's shoe (its serial number); a HELLO from any other is refused.
        None: the first shoe accepted is pinned for the life of the session.
    :raises ValueError: ``resume_seq`` below 0, a secret that is not 32 bytes.
    """

    HELLO_INTERVAL = 0.25
    """Seconds between HOST_HELLOs until a HELLO arrives."""
    SILENT_HELLO_INTERVAL = 1.0
    """Seconds between HOST_HELLOs while the shoe is silent after its HELLO."""
    ACK_KEEPALIVE = 0.5
    """An ACK goes out at least this often (seconds), so the shoe knows a host listens."""
    RESEND_HOLDOFF = 0.02
    """Seconds between two resend requests for the same ``want``."""
    COMMAND_RETRY = 0.3
    """Seconds between repeats of an LED or RESET_COUNTER the shoe has not reported yet."""
    MALFORMED_S = 1.0
    """Seconds a frame that broke v1 names the cause of a ``degraded`` status."""
    ACK_MIN_GAP = 0.02
    """Seconds between two ACKs at least (docs/protocol.md section 1): what changes meanwhile
    (the consumer's acks, ``want``, a resend request) goes out together in the next one."""
    STALL_S = 1.5
    """Seconds a hole in the event sequence may stay open (events held behind an event that does
    not arrive whole, e.g. one that breaks v1 every time it is resent) before the status is
    ``degraded``: the host does not hear the events the shoe sends."""

    def __init__(self, *, name: str = "shoe", resume_seq: int | None = None, auto_ack: bool = False,
                 silence_s: float = 3.0, window: int = 1024, secret: bytes | None = None,
                 serial: str | None = None) -> None:
        if resume_seq is not None and resume_seq < 0:
            raise ValueError(f"resume_seq must be >= 0, not {resume_seq}")
        if secret is not None:
            p.hello_key(secret)  # checks the size
        self._secret = secret
        self.serial = serial
        self._keys: p.SessionKeys | None = None
        self._tx_ctr = 0
        self._rx_ctr = 0
        self._challenges: list[bytes] = []
        self._refused: set[str] = set()
        self.name = name
        self.resume_seq = resume_seq
        self.auto_ack = auto_ack
        self.silence_s = silence_s
        self.window = window
        self.stats = SessionStats()
        self._out: list[bytes] = []
        self._events: list[Any] = []
        self._conn: _Connection | None = None
        self._status: LinkStatus | None = None
        # delivery
        self._expected: int | None = None
        self._acked = resume_seq or 0
        self._sent_acked = -1
        self._sent_want = 0
        self._last_ack_tx = -math.inf
        self._pending: dict[int, p.EventMsg] = {}
        self._hello: p.Hello | None = None          # this connection's hello
        self._last_hello: p.Hello | None = None     # the last hello of any connection
        self._host_seq = 0
        self._heartbeat: p.Heartbeat | None = None
        # commands the host wants the shoe to show (repeated until the shoe reports them)
        self._led: dict[str, Any] | None = None
        self._led_token = 0
        self._shoe_led_token = 0
        self._reset_wanted = False
        self._reset_target: int | None = None
        self._shoe_epoch = 0
        self._reset_floor = 0
        self._last_cmd_tx = 0.0
        # shoe restarts (docs/protocol.md section 12)
        self._span: _Span | None = None       # cards since the last HELLO
        # a hole in the event sequence: when it was first seen, and whether it was reported
        self._hole_at: float | None = None
        self._stall_reported = False

    # ------------------------------------------------------------------ outputs

    def frames_to_send(self) -> list[bytes]:
        """The frames to write, in order (each ``0x00 COBS(body) 0x00``), and forget them."""
        out, self._out = self._out, []
        return out

    def events(self) -> list[Any]:
        """The events for the consumer, in order (``CardRead``, ``ShoeFault``, ``ShoeButton``,
        ``LinkChanged``, ``SequenceGap``, ``CounterReset``, ``ShoeRestarted``), and forget them."""
        out, self._events = self._events, []
        return out

    @property
    def has_output(self) -> bool:
        """True when :meth:`frames_to_send` or :meth:`events` has something."""
        return bool(self._out or self._events)

    # ------------------------------------------------------------------ state

    @property
    def status(self) -> LinkStatus | None:
        """The last status reported (None before the first)."""
        return self._status

    @property
    def connected(self) -> bool:
        """True while this connection's HELLO has been accepted."""
        return self._hello is not None

    @property
    def hello_seen(self) -> bool:
        """True when the current (or last) connection got a HELLO with a common version."""
        return self._conn is not None and self._conn.hello_seen

    @property
    def info(self) -> ShoeInfo | None:
        """The last HELLO as :class:`~shoe_ctl.events.ShoeInfo`, or None before the first."""
        hello = self._last_hello
        return None if hello is None else hello.info()

    @property
    def shoe_state(self) -> p.Heartbeat | None:
        """The shoe's last HEARTBEAT, or None before the first."""
        return self._heartbeat

    @property
    def acked(self) -> int:
        """The highest sequence acked by the consumer (or ``resume_seq``)."""
        return self._acked

    @property
    def version(self) -> int:
        """The protocol version spoken: 2 (authenticated) with a secret, else 1."""
        return p.AUTH_VERSION if self._secret is not None else p.PROTOCOL_VERSION

    @property
    def auth(self) -> str:
        """``"hmac"`` (version 2, every frame authenticated) or ``"off"`` (version 1, a bench)."""
        return "hmac" if self._secret is not None else "off"

    @property
    def led_token(self) -> int:
        """The token of the LED pattern the host wants shown (0 before the first)."""
        return self._led_token

    # ------------------------------------------------------------------ connection

    def connection_made(self, now: float) -> None:
        """A port opened at ``now``: a fresh decoder and timers; HOST_HELLO goes out (the host
        speaks first, docs/protocol.md section 1)."""
        self._keys = None
        self._conn = _Connection(now, self.stats.bad_frames, self.stats.unknown_frames, p.SealedDecoder())
        self._host_hello()

    def connection_lost(self) -> None:
        """The port closed or failed: nothing counts until the next connection's HELLO. Delivery
        state (expected, acked, held events) and the wanted commands are kept."""
        self._hello = None
        self._keys = None

    def link_down(self, detail: str) -> None:
        """Report ``disconnected`` with ``detail`` (once while it stays so)."""
        self._set_status(LinkStatus.DISCONNECTED, detail)

    def close(self) -> None:
        """The link is closed: a final ``disconnected`` event when it was up."""
        if self._status not in (None, LinkStatus.DISCONNECTED):
            self._set_status(LinkStatus.DISCONNECTED, "link closed")

    def receive_data(self, data: bytes, now: float) -> None:
        """Bytes the port received at ``now``; frames may be split anywhere.

        :raises VersionError: a HELLO with no common version (a ``disconnected`` event is
            queued first); the transport closes the port and retries slowly.
        """
        conn = self._conn
        if conn is None:
            raise RuntimeError("receive_data before connection_made")
        items = conn.decoder.feed(data)
        stats = conn.decoder.stats
        bad_now = conn.bad_base + stats.bad_frames
        if bad_now != self.stats.bad_frames:
            hit = 0.95 ** (bad_now - self.stats.bad_frames)
            conn.quality = conn.quality * hit + (1 - hit)
            self.stats.bad_frames = bad_now
        self.stats.unknown_frames = conn.unknown_base + stats.unknown
        for rule, n in stats.rules.items():
            seen = conn.rules_seen.get(rule, 0)
            if n != seen:
                conn.rules_seen[rule] = n
                self.stats.rejected[rule] = self.stats.rejected.get(rule, 0) + n - seen
        if stats.reasons.get("message", 0) != conn.malformed_seen:
            conn.malformed_seen = stats.reasons["message"]
            conn.malformed = stats.last_malformed
            conn.malformed_at = now
        for item in items:
            msg = self._admit(item, now)
            if msg is None:
                continue
            conn.last_rx = now
            self.stats.frames_in += 1
            conn.quality *= 0.95
            self._on_message(msg, conn, now)
            if self._hello is not None:
                conn.hello_seen = True

    def tick(self, now: float) -> None:
        """Act on the timers due at ``now``: HOST_HELLO repeats, ACK keepalive and changes,
        resend requests while a hole is open, LED / RESET_COUNTER repeats, the silence and
        line-quality status. Calling it before :meth:`next_deadline` does nothing."""
        conn = self._conn
        if conn is None:
            return
        if self._hello is None:
            if now >= conn.hello_at + self.HELLO_INTERVAL:
                conn.hello_at = now
                self._host_hello()
            if not conn.quiet_reported and now >= conn.opened + self.silence_s:
                # The port opened but nothing on it answers as a shoe (wrong device, shoe off,
                # wrong baud rate): say so once per connection instead of waiting in silence.
                conn.quiet_reported = True
                if conn.foreign_sealed:
                    self._refuse("auth-failed", f"the shoe on port {self.name} seals its frames with a secret "
                                 "this table does not have (a shoe paired with another table, or a swapped "
                                 f"shoe): {conn.foreign_sealed} frames refused")
                self._set_status(LinkStatus.DISCONNECTED, f"port {self.name} open but no HELLO from a shoe for "
                                 f"{now - conn.opened:.1f} s ({self.stats.bad_frames} bad frames so far): is "
                                 "the shoe on this port, powered, at this baud rate?", force=True)
            return
        if (self._ack_due(conn) and now >= self._last_ack_tx + self.ACK_MIN_GAP) \
                or now >= self._last_ack_tx + self.ACK_KEEPALIVE:
            self._send_ack(now)
        if self._pending:  # a hole: ask again until it is filled
            self._request_resend(conn, now)
        if now >= self._last_cmd_tx + self.COMMAND_RETRY:
            if self._led_outstanding():
                self._send_led(now)
            if self._reset_wanted and self._reset_target is not None:
                self._send(p.ResetCounter(self._next_host_seq(), self._reset_target))
                self._last_cmd_tx = now
        if not self._pending:
            self._hole_at, self._stall_reported = None, False
        stalled = self._hole_at is not None and now >= self._hole_at + self.STALL_S  # as next_deadline
        silent = now - conn.last_rx
        silent_at = conn.last_rx + self.silence_s  # every deadline compared as next_deadline adds it up
        if stalled and now < silent_at:
            assert self._hole_at is not None
            self._stall_reported = True
            why = f"; the shoe sends frames that pass the CRC but break protocol v1 (a firmware defect, not " \
                  f"line noise): {conn.malformed}" if conn.malformed else ""
            self._set_status(LinkStatus.DEGRADED, f"events stalled: event {self._expected} has not arrived whole for "
                             f"{now - self._hole_at:.1f} s, {len(self._pending)} held behind it{why}")
        elif now >= silent_at:
            if now >= conn.hello_at + self.SILENT_HELLO_INTERVAL:
                conn.hello_at = now
                self._host_hello()
            self._set_status(LinkStatus.DEGRADED, f"no frame from the shoe for {silent:.1f} s")
        elif conn.quality > 0.3:
            if conn.malformed and now - conn.malformed_at < self.MALFORMED_S:
                self._set_status(LinkStatus.DEGRADED, "the shoe sends frames that pass the CRC but break protocol "
                                 f"v1 (a firmware defect, not line noise): {conn.malformed}")
            else:
                self._set_status(LinkStatus.DEGRADED, f"noisy line: {conn.quality:.0%} of recent frames bad")
        elif self._status == LinkStatus.DEGRADED and conn.quality < 0.1:
            self._set_status(LinkStatus.CONNECTED, "link recovered", self.info)

    def next_deadline(self) -> float:
        """The clock value (seconds) at which :meth:`tick` next has something to do; ``-inf``
        when it is due at once, ``inf`` with no connection."""
        conn = self._conn
        if conn is None:
            return math.inf
        if self._hello is None:
            due = conn.hello_at + self.HELLO_INTERVAL
            if not conn.quiet_reported:
                due = min(due, conn.opened + self.silence_s)
            return due
        if self._quality_status(conn) != self._status:
            return -math.inf
        due = self._last_ack_tx + self.ACK_KEEPALIVE
        if self._ack_due(conn):
            due = self._last_ack_tx + self.ACK_MIN_GAP
        if self._pending:
            due = min(due, max(conn.resend_at + self.RESEND_HOLDOFF if self._expected == conn.resend_want
                               else -math.inf, self._last_ack_tx + self.ACK_MIN_GAP))
            if self._hole_at is not None and not self._stall_reported:
                due = min(due, self._hole_at + self.STALL_S)
        if self._led_outstanding() or (self._reset_wanted and self._reset_target is not None):
            due = min(due, self._last_cmd_tx + self.COMMAND_RETRY)
        silent_at = conn.last_rx + self.silence_s
        due = min(due, max(silent_at, conn.hello_at + self.SILENT_HELLO_INTERVAL))
        if self._status != LinkStatus.DEGRADED:
            due = min(due, silent_at)
        return due

    def _quality_status(self, conn: _Connection) -> LinkStatus | None:
        """The status the line quality (or a stall already reported) asks for when the shoe is
        not silent (None: no change)."""
        if conn.quality > 0.3 or (self._pending and self._stall_reported):
            return LinkStatus.DEGRADED
        if self._status == LinkStatus.DEGRADED and conn.quality < 0.1:
            return LinkStatus.CONNECTED
        return self._status

    def _ack_due(self, conn: _Connection) -> bool:
        return (conn.ack_due or conn.ack_resend or self._acked > self._sent_acked
                or self._expected != self._sent_want)

    def _led_outstanding(self) -> bool:
        return self._led is not None and self._shoe_led_token != self._led_token

    # ------------------------------------------------------------------ the consumer's commands

    def ack(self, seq: int, now: float) -> None:
        """Cumulative ack: every event up to ``seq`` is durably recorded (docs/protocol.md,
        the durability rule); an ACK goes out at once when connected. A lower ``seq`` is a no-op.

        :raises ValueError: ``seq`` was never delivered.
        """
        delivered = (self._expected or 1) - 1
        if seq > max(delivered, self._acked):
            raise ValueError(f"cannot ack seq {seq}: only {delivered} delivered")
        if seq > self._acked:
            self._acked = seq
            if self._hello is not None and self._expected is not None:
                self._ack_soon(now)

    @staticmethod
    def led_spec(pattern: Mapping[str, Any]) -> dict[str, Any]:
        """The LED frame fields of ``pattern`` (``{"name", "leds", "mode", "on_ms", "off_ms"}``
        as ``drivers.leds.LedPattern.as_dict`` writes it), checked against protocol v1.

        :raises ValueError: an LED name, mode or time the protocol cannot carry.
        """
        name = str(pattern.get("name", ""))
        spec: dict[str, Any] = {
            "signal": name if name in p.LED_SIGNALS else "",
            "leds": tuple(pattern.get("leds", ())),
            "mode": str(pattern.get("mode", "steady")),
            "on_ms": int(pattern.get("on_ms", 0)),
            "off_ms": int(pattern.get("off_ms", 0)),
        }
        try:
            key: tuple[Any, ...] | None = tuple(spec.values())
            if key in _LED_SPECS_CHECKED:
                return spec  # the same fields passed the check before (the signals are a few patterns)
        except TypeError:  # an unhashable LED name: the check below refuses it
            key = None
        p.encode_body(p.Led(0, 1, **spec))
        if key is not None and len(_LED_SPECS_CHECKED) < 256:
            _LED_SPECS_CHECKED.add(key)
        return spec

    def show_leds(self, spec: Mapping[str, Any], now: float) -> None:
        """Show ``spec`` (from :meth:`led_spec`) with a new token; repeated every
        :data:`COMMAND_RETRY` s until the shoe reports the token, also after a reconnect.

        :raises NotConnectedError: no shoe now (the pattern is kept and sent on connect).
        """
        self._led = dict(spec)
        self._led_token = self._new_led_token(self._led_token)
        if self._hello is None:
            raise NotConnectedError(f"shoe at {self.name} not connected; LED pattern kept for later")
        self._send_led(now)

    def reset_counter(self) -> None:
        """Ask for a dispense-counter reset under the next epoch; repeated until the shoe
        reports it, then a :class:`~shoe_ctl.events.CounterReset` event (docs/protocol.md,
        RESET_COUNTER).

        :raises NotConnectedError: no shoe now (the reset is done on connect).
        """
        self._reset_wanted = True
        self._reset_target = self._shoe_epoch % 0xFFFF + 1
        self._reset_floor = self._shoe_next_seq()
        if self._hello is None:
            raise NotConnectedError(f"shoe at {self.name} not connected; counter reset kept for later")
        self._send(p.ResetCounter(self._next_host_seq(), self._reset_target))

    def _shoe_next_seq(self) -> int:
        """The highest ``next_seq`` the shoe has reported (HELLO, HEARTBEAT) or implied (the
        events received): every event made before now has a lower number."""
        seqs = [self._expected or 0]
        if self._last_hello is not None:
            seqs.append(self._last_hello.seq)
        if self._heartbeat is not None:
            seqs.append(self._heartbeat.seq)
        return max(seqs)

    # ------------------------------------------------------------------ messages

    def _on_message(self, msg: p.Message, conn: _Connection, now: float) -> None:
        if isinstance(msg, p.Hello):
            self._on_hello(msg, now)
            return
        if self._hello is None or self._expected is None:
            return  # nothing counts before this connection's hello
        if isinstance(msg, p.CardMsg | p.FaultMsg | p.ButtonMsg):
            if isinstance(msg, p.CardMsg):
                if msg.reader != "none" and msg.reader not in self._hello.readers:
                    self._reject(conn, now, "C-READER-DECLARED", f"CARD {msg.seq} names the {msg.reader} reader, "
                                 f"which the HELLO did not declare ({', '.join(self._hello.readers)})")
                    return
                # a card's epoch may be older than the shoe's (a resent card, also one made before
                # a restart): it confirms a reset only when made after the reset was asked for
                if msg.seq >= self._reset_floor:
                    self._note_epoch(msg.epoch, current=False)
            self._on_event(msg, conn, now)
        elif isinstance(msg, p.Heartbeat):
            self._heartbeat = msg
            self._shoe_led_token = msg.led_token
            self._note_epoch(msg.epoch)
            if msg.seq > self._expected:
                self._request_resend(conn, now)
        # host messages (an echo on loop://) are ignored

    def _reject(self, conn: _Connection, now: float, rule: str, text: str) -> None:
        """Drop a frame that breaks row ``rule`` of the constraint table (in its context): counted
        as a bad frame, and named as a shoe defect by the ``degraded`` status."""
        self.stats.rejected[rule] = self.stats.rejected.get(rule, 0) + 1
        self.stats.bad_frames += 1
        conn.bad_base += 1
        conn.quality = conn.quality * 0.95 + 0.05
        conn.malformed = f"{text} [{rule}]"
        conn.malformed_at = now
        log.warning("shoe %s: %s [%s]", self.name, text, rule)

    def _note_epoch(self, epoch: int, *, current: bool = True) -> None:
        """The shoe reported ``epoch`` (``current``: its epoch now, from a HEARTBEAT or HELLO; else
        from a CARD, which may be an older one). The first report of the epoch a reset asked for
        confirms it: a :class:`CounterReset` goes out before any card counted under it."""
        if current:
            self._shoe_epoch = epoch
        if self._reset_wanted and epoch == self._reset_target:
            self._reset_wanted = False
            self._shoe_epoch = epoch
            self._events.append(CounterReset(epoch))

    def _on_hello(self, hello: p.Hello, now: float) -> None:
        if hello.version != self.version and hello.version_min <= self.version <= hello.version_max:
            self._host_hello()  # an unasked hello: negotiate first
            return
        if hello.version != self.version:
            detail = (f"shoe speaks protocol {hello.version_min}..{hello.version_max}, host "
                      f"{self.version}: no common version")
            self._set_status(LinkStatus.DISCONNECTED, detail, hello.info())
            raise VersionError(detail)
        prev = self._last_hello
        pinned = self.serial or (prev.serial if prev is not None else None)
        if pinned is not None and hello.serial != pinned:
            # never a change of numbering: another shoe's HELLO (a swap, a stray or forged frame)
            # is refused and the table's own shoe, if still there, goes on as before
            self._hello_refused("unknown-shoe", hello, f"HELLO from shoe {hello.serial!r}, not the table's shoe "
                                f"{pinned!r}: refused (a swapped or foreign shoe, or a forged frame)")
            return
        self._refused.clear()
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
        elif hello.seq < self._expected:
            # its next sequence is below what was already received: the shoe lost its
            # non-volatile counter and reuses old numbers; they are new events, not duplicates
            notes.append(f"shoe's sequence numbers went back (next {hello.seq}, host had received up to "
                         f"{self._expected - 1}): its counter was reset; starting over from {hello.first_seq}, "
                         "events it held may be lost")
            log.warning("shoe %s: sequence went back from %d to %d", hello.serial, self._expected, hello.seq)
            self.stats.gaps += 1
            seq_reset = True
            self._expected = hello.first_seq
            self._acked = 0
            self._pending.clear()
        elif hello.first_seq > self._expected:
            gap_from = self._expected
        restarted = (prev is not None and prev.serial == hello.serial and prev.boot_id != hello.boot_id
                     and not seq_reset)
        if prev is not None and prev.serial == hello.serial and prev.boot_id != hello.boot_id:
            notes.append(f"shoe restarted (boot {hello.boot_id:08x})")
        if gap_from is not None:
            notes.append(f"events {gap_from}..{hello.first_seq - 1} lost by the shoe")
            self.stats.gaps += 1
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
            self._send_led(now)
        self._ack_soon(now)
        if gap_from is not None:
            # before the connected event (and any event that follows it): the consumer knows of
            # the lost events before the link is up again, so it never shows the instruction of
            # before the gap in between (docs/irregularities.md, *Sequence gap*)
            self._events.append(SequenceGap(gap_from, hello.first_seq))
        if first or notes:
            detail = "; ".join([f"shoe {hello.serial} firmware {hello.firmware}", *notes])
            self._set_status(LinkStatus.CONNECTED, detail, hello.info(), force=True, sequence_reset=seq_reset)
        self._note_span(hello, restarted)  # ShoeRestarted: after the gap and the connected event

    def _on_event(self, msg: p.EventMsg, conn: _Connection, now: float) -> None:
        expected = self._expected
        assert expected is not None
        seq = msg.seq
        if seq < expected:
            self.stats.duplicates_dropped += 1
            conn.ack_due = True  # tell the shoe what we have
            return
        if seq > expected:
            if seq - expected > self.window:
                self.stats.out_of_window += 1
            elif seq in self._pending:
                self.stats.duplicates_dropped += 1
            else:
                if not self._pending or self._hole_at is None:
                    self._hole_at, self._stall_reported = now, False  # a hole opens: reported STALL_S on
                self._pending[seq] = msg
            self._request_resend(conn, now)
            return
        self._deliver(msg)
        expected += 1
        while expected in self._pending:
            self._deliver(self._pending.pop(expected))
            expected += 1
        self._expected = expected
        if self._pending:
            self._request_resend(conn, now)

    def _note_span(self, hello: p.Hello, restarted: bool) -> None:
        """A HELLO: when the shoe restarted, post :class:`ShoeRestarted` at once (after the
        connected event and any gap, before every event that follows); the counting of cards
        starts again from this HELLO."""
        span = self._span
        self._span = _Span(hello)
        if not restarted or span is None:
            return
        a = span.hello
        counted = None
        if a.card_total is not None and hello.card_total is not None:
            counted = (hello.card_total - a.card_total) % (p.SEQ_MAX + 1)
        # events made before this HELLO that the shoe still holds and will resend
        in_flight = max(0, hello.seq - max(self._expected or 0, hello.first_seq))
        self.stats.restarts += 1
        self._events.append(ShoeRestarted(hello.serial, a.boot_id, hello.boot_id, a.boot_count, hello.boot_count,
                                          counted, span.cards, "counts-unpowered" in (hello.caps or ()),
                                          in_flight))

    def _deliver(self, msg: p.EventMsg) -> None:
        if isinstance(msg, p.CardMsg) and self._span is not None and msg.seq >= self._span.hello.seq:
            self._span.cards += 1
        self._events.append(p.to_event(msg))
        self.stats.delivered += 1
        if self.auto_ack:
            self._acked = msg.seq

    def _request_resend(self, conn: _Connection, now: float) -> None:
        want = self._expected
        if want == conn.resend_want and now < conn.resend_at + self.RESEND_HOLDOFF:
            return
        if now < self._last_ack_tx + self.ACK_MIN_GAP:
            conn.ack_resend = True  # the next ACK asks (20 ms after the last one)
            return
        self._send_ack(now, resend=True)

    # ------------------------------------------------------------------ frames out

    def _set_status(self, status: LinkStatus, detail: str, info: ShoeInfo | None = None,
                    force: bool = False, sequence_reset: bool = False) -> None:
        if status == self._status and not force:
            return
        self._status = status
        if status == LinkStatus.DEGRADED:
            self.stats.degraded += 1
        self._events.append(LinkChanged(status, detail, info, sequence_reset=sequence_reset, auth=self.auth))

    def _next_host_seq(self) -> int:
        self._host_seq = self._host_seq % p.SEQ_MAX + 1
        return self._host_seq

    def _send(self, msg: p.Message | p.Pair) -> None:
        if self._secret is None:
            self._out.append(p.encode(msg))  # type: ignore[arg-type]
        elif self._keys is not None:
            self._tx_ctr += 1
            self._out.append(p.seal(msg, self._keys.host_mac, self._tx_ctr))
        # a sealed frame outside a session is only ever a HOST_HELLO (_host_hello)

    def _host_hello(self) -> None:
        """HOST_HELLO with this host's version; version 2: a fresh challenge, under the hello key."""
        v = self.version
        msg = p.HostHello(self._next_host_seq(), v, v)
        if self._secret is None:
            self._out.append(p.encode(msg))
            return
        challenge = os.urandom(p.NONCE_SIZE)
        self._challenges = [*self._challenges[-(MAX_CHALLENGES - 1):], challenge]
        self._out.append(p.seal(msg, p.hello_key(self._secret), 0, challenge=challenge))

    # ------------------------------------------------------------------ authentication

    def _admit(self, item: object, now: float) -> p.Message | None:
        """The message in ``item`` when it may be acted on, else None (refused or ignored).

        Version 1: every message. Version 2: a sealed HELLO answering an outstanding challenge
        with a valid MAC under the session it opens (the session starts); any other sealed
        frame with a valid MAC under the session's key and a counter above the last one.
        Refused, and reported: a plain (unauthenticated) HELLO or frame, a HELLO that fails
        its MAC, a forged or replayed frame inside a session. Ignored: frames of a session
        this host did not open (before its first HELLO), the shoe's frames outside a session
        (then it is challenged again)."""
        if self._secret is None:
            return item if not isinstance(item, p.Sealed) else None  # type: ignore[return-value]
        if not isinstance(item, p.Sealed):
            msg = item
            if isinstance(msg, p.Hello):
                self._hello_refused("unpaired", msg, f"shoe {msg.serial!r} speaks protocol {msg.version_max} without "
                                    "authentication: it is not paired with this table (shoe-ctl pair)")
            elif self._keys is not None:
                self._refuse("forged", f"an unauthenticated {p.TYPE_NAMES.get(getattr(msg, 'TYPE', 0), '?')} frame "
                             "inside the session: another program writes into the shoe's line")
            else:
                self._refuse("unpaired", "the device on this port speaks without authentication: not a shoe "
                             "paired with this table (shoe-ctl pair)")
            return None
        msg = item.msg
        if isinstance(msg, p.Hello):
            return self._admit_hello(item, msg)
        keys = self._keys
        if keys is None or not item.verify(keys.shoe_mac):
            if item.verify(p.hello_key(self._secret)):
                # the shoe outside a session (power-up, replug): challenge it again, at most
                # as often as HOST_HELLOs go out anyway
                conn = self._conn
                if conn is not None and now - conn.hello_at >= self.HELLO_INTERVAL:
                    conn.hello_at = now
                    self._host_hello()
            elif keys is None:
                if self._conn is not None:
                    self._conn.foreign_sealed += 1  # an earlier host's session, or another secret
            elif self._challenges:
                # A HOST_HELLO of this host is unanswered: the shoe may already be in the session
                # it opened, whose HELLO was lost on a noisy line. Its frames cannot be checked
                # before that HELLO is seen: ignored (never acted on) and the shoe challenged
                # again, not reported as forged.
                conn = self._conn
                if conn is not None and now - conn.hello_at >= self.HELLO_INTERVAL:
                    conn.hello_at = now
                    self._host_hello()
            else:
                self._refuse("forged", f"a {p.TYPE_NAMES.get(getattr(msg, 'TYPE', 0), '?')} frame "
                             f"(seq {msg.seq}) whose MAC does not verify: a forged frame")
            return None
        if item.ctr <= self._rx_ctr:
            self._refuse("replay", f"a {p.TYPE_NAMES.get(getattr(msg, 'TYPE', 0), '?')} frame (seq {msg.seq}) "
                         f"with counter {item.ctr}, not above {self._rx_ctr}: a replayed frame")
            return None
        self._rx_ctr = item.ctr
        return msg  # type: ignore[no-any-return]

    def _admit_hello(self, item: p.Sealed, hello: p.Hello) -> p.Hello | None:
        assert self._secret is not None
        if item.challenge in self._challenges:
            keys = p.session_keys(self._secret, item.challenge, item.nonce)
            if not item.verify(keys.shoe_mac):
                self._hello_refused("auth-failed", hello, f"HELLO from shoe {hello.serial!r} fails authentication: "
                                    "a shoe paired with another secret (another table's, or a swapped shoe) or a "
                                    "forged frame")
                return None
            del self._challenges[: self._challenges.index(item.challenge) + 1]
            pinned = self.serial or (self._last_hello.serial if self._last_hello is not None else None)
            if pinned is not None and hello.serial != pinned:
                return hello  # refused by _on_hello before any of its frames could count
            self._keys = keys
            self._rx_ctr = item.ctr
            self._tx_ctr = 0
            return hello
        if item.challenge == bytes(p.NONCE_SIZE) and item.verify(p.hello_key(self._secret)):
            self._host_hello()  # an unasked HELLO of our shoe: challenge it
            return None
        self._hello_refused("auth-failed", hello, f"HELLO from shoe {hello.serial!r} answers no challenge of this "
                            "host or fails authentication: a replayed or forged frame")
        return None

    def _hello_refused(self, code: str, hello: p.Hello, detail: str) -> None:
        self._refuse(code, detail, hello.info())

    def _refuse(self, code: str, detail: str, info: ShoeInfo | None = None) -> None:
        """Count a refused frame; report ``code`` once until a HELLO is accepted again."""
        self.stats.refused += 1
        if code in self._refused:
            return
        self._refused.add(code)
        log.warning("shoe link %s: refused (%s): %s", self.name, code, detail)
        status = self._status if self._hello is not None and self._status is not None else LinkStatus.DISCONNECTED
        self._status = status
        self._events.append(LinkChanged(status, detail, info, refused=code, auth=self.auth))

    # ------------------------------------------------------------------ pairing

    def pair(self, secret: bytes) -> None:
        """Give the shoe a new pairing ``secret`` (docs/protocol.md, "Pairing"): inside an
        authenticated session the PAIR frame carries it hidden under the session's pad (a
        rotation); a version-1 connection sends it under its own hello key (the shoe must be in
        pairing mode). Then the session ends and the shoe is challenged under the new secret.

        :raises NotConnectedError: no shoe connected now.
        :raises ValueError: a secret that is not 32 bytes.
        """
        key = p.hello_key(secret)
        if self._hello is None:
            raise NotConnectedError(f"shoe at {self.name} not connected; cannot pair")
        seq = self._next_host_seq()
        if self._secret is not None and self._keys is not None:
            ctr = self._tx_ctr + 1
            self._send(p.Pair(seq, p.xor(secret, p.pair_pad(self._keys.host_to_shoe, ctr))))
        else:
            self._out.append(p.seal(p.Pair(seq, secret), key, 0))
        self._secret = bytes(secret)
        self._keys = None
        self._hello = None
        self._host_hello()

    def _new_led_token(self, after: int) -> int:
        """The token after ``after`` (1..255, wrapping) that differs from the one the shoe shows:
        a pattern whose LED frame is lost must never look shown (protocol, LED)."""
        token = after % 255 + 1
        if token == self._shoe_led_token:
            token = token % 255 + 1
        return token

    def _send_led(self, now: float) -> None:
        if self._led is not None:
            self._send(p.Led(self._next_host_seq(), self._led_token, **self._led))
            self._last_cmd_tx = now

    def _ack_soon(self, now: float, resend: bool = False) -> None:
        """An ACK now, or, within :attr:`ACK_MIN_GAP` of the last one, in the next one (what
        changes meanwhile goes out together; the resend flag is kept)."""
        if now >= self._last_ack_tx + self.ACK_MIN_GAP:
            self._send_ack(now, resend)
        elif self._conn is not None:
            self._conn.ack_due = True
            self._conn.ack_resend = self._conn.ack_resend or resend

    def _send_ack(self, now: float, resend: bool = False) -> None:
        expected = self._expected
        if expected is None:
            return
        conn = self._conn
        if conn is not None:
            resend = resend or (conn.ack_resend and bool(self._pending))
            conn.ack_due = conn.ack_resend = False
            if resend:
                conn.resend_want = expected
                conn.resend_at = now
                self.stats.resends += 1
        acked = min(self._acked, expected - 1)
        self._send(p.Ack(self._next_host_seq(), acked, expected, resend))
        self.stats.acks += 1
        self._sent_acked = acked
        self._sent_want = expected
        self._last_ack_tx = now
