"""The host's protocol session with one shoe, without I/O (the sans-I/O shape of h11 / hyper-h2).

:class:`LinkSession` is fed the bytes a port received (:meth:`~LinkSession.receive_data`) and the
clock (:meth:`~LinkSession.tick`); it hands back the frames to write
(:meth:`~LinkSession.frames_to_send`) and the events for the consumer
(:meth:`~LinkSession.events`). No port, no thread, no clock of its own: every time is an argument,
and its timers are one table of deadlines (:mod:`drivers.link_timers`). Its parts, one concern
each: :class:`~drivers.link_admission.Admission` (authentication, sealing, the table's shoe),
:class:`~drivers.link_window.SequenceWindow` (delivery in order, acks, resends, gaps, restarts),
:class:`~drivers.link_commands.HostCommands` (LED and counter reset); it keeps the connection, the
HELLO and the link status itself. The transport that drives it is :class:`drivers.shoe.ShoeLink`;
the behaviour is described in ``docs/protocol.md`` (sections 4-7, "Authentication (version 2)").
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from drivers import link_timers as timers
from drivers import protocol as p
from drivers.exc import NotConnectedError, VersionError
from drivers.link_admission import MAX_CHALLENGES, REFUSALS, Admission
from drivers.link_commands import HostCommands, led_spec
from drivers.link_health import LinkHealth
from drivers.link_line import Line
from drivers.link_stats import LinkStats
from drivers.link_timers import DeadlineTable, Timer
from drivers.link_window import SequenceWindow
from drivers.port_output import Unwritten
from shoe_ctl.events import LinkStatus, ShoeInfo, StubDeck

__all__ = ["MAX_CHALLENGES", "REFUSALS", "LinkSession", "LinkStats"]

log = logging.getLogger(__name__)


class LinkSession:
    """The host side of the protocol for one shoe, across any number of port connections.

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
    :param resume_boot: ``(serial, boot id)`` of the shoe as the host knew it before a restart
        (the journal's): a first HELLO of that shoe with another boot id is a shoe restart
        (``ShoeRestarted``, its counts unknown), as one seen while the host ran would be.
    :param key_file: where this host keeps the shoe's secret (a path, for the texts): named when
        a link without a secret hears a paired shoe (docs/protocol.md section 14, "A host without
        the secret"); None: the default place is named.
    :raises ValueError: ``resume_seq`` below 0, a secret that is not 32 bytes.
    """

    HELLO_INTERVAL = timers.HELLO_INTERVAL
    SILENT_HELLO_INTERVAL = timers.SILENT_HELLO_INTERVAL
    ACK_KEEPALIVE = timers.ACK_KEEPALIVE
    RESEND_HOLDOFF = timers.RESEND_HOLDOFF
    COMMAND_RETRY = timers.COMMAND_RETRY
    MALFORMED_S = timers.MALFORMED_S
    ACK_MIN_GAP = timers.ACK_MIN_GAP
    WANT_WAIT_S = timers.WANT_WAIT_S
    STALL_S = timers.STALL_S

    def __init__(self, *, name: str = "shoe", resume_seq: int | None = None, auto_ack: bool = False,
                 silence_s: float = 3.0, window: int = 1024, secret: bytes | None = None,
                 serial: str | None = None, resume_boot: tuple[str, int] | None = None,
                 key_file: str | None = None) -> None:
        if resume_seq is not None and resume_seq < 0:
            raise ValueError(f"resume_seq must be >= 0, not {resume_seq}")
        self.name = name
        self.silence_s = silence_s
        self.stats = LinkStats()
        self._out: list[bytes] = []
        self._events: list[Any] = []
        self._stub: tuple[int, str] | None = None
        self._resume_boot = resume_boot
        """The last stub deck delivered (``StubDeck``: only a change is)."""
        self._admission = Admission(name, self._out, self.stats, self._refused_event, secret=secret, serial=serial)
        self._window = SequenceWindow(self._events, self.stats, self._admission, resume_seq=resume_seq,
                                      auto_ack=auto_ack, window=window)
        self._commands = HostCommands(self._events, self._admission)
        self._health = LinkHealth(name, self._events, self.stats, self._admission, self._window, silence_s,
                                  key_file)
        self._conn: Line | None = None
        self._hello: p.Hello | None = None          # this connection's hello
        self._last_hello: p.Hello | None = None     # the last hello of any connection
        self._heartbeat: p.Heartbeat | None = None
        a, w, c, h = self._admission, self._window, self._commands, self._health
        self._timers_before_hello = DeadlineTable([
            Timer("host-hello", a.host_hello_due, a.host_hello_again),
            Timer("no-shoe", h.quiet_due, h.quiet_fire),
        ])
        self._timers_in_session = DeadlineTable([
            Timer("resend", w.resend_due, w.request_resend),
            Timer("ack", w.ack_due, w.send_ack),
            Timer("command-retry", c.retry_due, c.retry),
            Timer("status", h.due, h.fire),
        ])

    # ------------------------------------------------------------------ outputs

    def frames_to_send(self) -> list[bytes]:
        """The frames to write, in order (each ``0x00 COBS(body) 0x00``), and forget them."""
        out = self._out[:]
        self._out.clear()
        return out

    def events(self) -> list[Any]:
        """The events for the consumer, in order (``CardRead``, ``ShoeFault``, ``ShoeButton``,
        ``LinkChanged``, ``SequenceGap``, ``CounterReset``, ``ShoeRestarted``), and forget them."""
        out = self._events[:]
        self._events.clear()
        return out

    @property
    def has_output(self) -> bool:
        """True when :meth:`frames_to_send` or :meth:`events` has something."""
        return bool(self._out or self._events)

    # ------------------------------------------------------------------ state

    @property
    def status(self) -> LinkStatus | None:
        """The last status reported (None before the first)."""
        return self._health.status

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
        return self._window.acked

    @property
    def serial(self) -> str | None:
        """The table's shoe as configured (None: the first shoe accepted is pinned)."""
        return self._admission.serial

    @property
    def version(self) -> int:
        """The protocol version spoken: 2 (authenticated) with a secret, else 1."""
        return self._admission.version

    @property
    def auth(self) -> str:
        """``"hmac"`` (version 2, every frame authenticated) or ``"off"`` (version 1, a bench)."""
        return self._admission.auth

    @property
    def led_token(self) -> int:
        """The token of the LED pattern the host wants shown (0 before the first)."""
        return self._commands.led_token

    # ------------------------------------------------------------------ connection

    def connection_made(self, now: float) -> None:
        """A port opened at ``now``: a fresh decoder and timers; HOST_HELLO goes out (the host
        speaks first, docs/protocol.md section 1)."""
        self._conn = self._health.line = Line(now, self.stats.bad_frames, self.stats.unknown_frames,
                                              p.SealedDecoder(sealed=self._admission.secret is not None))
        self._window.connection_made()
        self._admission.connection_made(now)

    def connection_lost(self) -> None:
        """The port closed or failed: nothing counts until the next connection's HELLO. Delivery
        state (expected, acked, held events) and the wanted commands are kept."""
        self._hello = None
        self._admission.connection_lost()

    def link_down(self, detail: str) -> None:
        """Report ``disconnected`` with ``detail`` (once while it stays so)."""
        self._health.set(LinkStatus.DISCONNECTED, detail)

    def close(self) -> None:
        """The link is closed: a final ``disconnected`` event when it was up."""
        if self._health.status not in (None, LinkStatus.DISCONNECTED):
            self._health.set(LinkStatus.DISCONNECTED, "link closed")

    def receive_data(self, data: bytes, now: float) -> None:
        """Bytes the port received at ``now``; frames may be split anywhere.

        :raises VersionError: a HELLO with no common version (a ``disconnected`` event is
            queued first); the transport closes the port and retries slowly.
        """
        conn = self._conn
        if conn is None:
            raise RuntimeError("receive_data before connection_made")
        items = conn.decoder.feed(data)
        dstats = conn.decoder.stats
        if dstats.bad_frames + dstats.unknown != conn.drops_seen:
            conn.count_drops(self.stats, now)
        admit = self._admission.admit
        for item in items:
            msg = admit(item, now)
            if msg is None:
                continue
            conn.last_rx = now
            self.stats.frames_in += 1
            conn.quality *= 0.95
            self._on_message(msg, conn, now)
            if self._hello is not None:
                conn.hello_seen = True

    def tick(self, now: float) -> None:
        """Act on the timers due at ``now`` (:meth:`next_deadline`'s table): HOST_HELLO repeats,
        resend requests while a hole is open, ACK changes and keepalive, LED / RESET_COUNTER
        repeats, the silence, stall and line-quality status. Before the deadline it does nothing."""
        if self._conn is not None:
            (self._timers_before_hello if self._hello is None else self._timers_in_session).run(now)

    def next_deadline(self) -> float:
        """The clock value (seconds) at which :meth:`tick` next has something to do; ``-inf``
        when it is due at once, ``inf`` with no connection."""
        if self._conn is None:
            return math.inf
        return (self._timers_before_hello if self._hello is None else self._timers_in_session).next_deadline()

    # ------------------------------------------------------------------ the consumer's commands

    def ack(self, seq: int, now: float) -> None:
        """Cumulative ack: every event up to ``seq`` is durably recorded (docs/protocol.md,
        the durability rule); an ACK goes out at once when connected. A lower ``seq`` is a no-op.

        :raises ValueError: ``seq`` was never delivered.
        """
        self._window.ack(seq, now, self._hello is not None)

    def ack_output(self, unwritten: Unwritten, now: float) -> None:
        """The transport's word on the last ACK frame at ``now``: what the port has not taken of
        it (:class:`drivers.port_output.Unwritten`), each time that changes. An ACK that waited
        for room paces the next from when it left; a newer one replaces a waiting one and asks
        what it asked (docs/protocol.md section 7)."""
        self._window.ack_output(unwritten, now)

    led_spec = staticmethod(led_spec)

    def show_leds(self, spec: Mapping[str, Any], now: float) -> None:
        """Show ``spec`` (from :meth:`led_spec`) with a new token; repeated every
        ``COMMAND_RETRY`` s until the shoe reports the token, also after a reconnect.

        :raises NotConnectedError: no shoe now (the pattern is kept and sent on connect).
        """
        self._commands.show(spec, now, self._hello is not None)
        if self._hello is None:
            raise NotConnectedError(f"shoe at {self.name} not connected; LED pattern kept for later")

    def reset_counter(self) -> None:
        """Ask for a dispense-counter reset under the next epoch; repeated until the shoe
        reports it, then a :class:`~shoe_ctl.events.CounterReset` event (docs/protocol.md,
        RESET_COUNTER).

        :raises NotConnectedError: no shoe now (the reset is done on connect).
        """
        self._commands.reset(self._shoe_next_seq(), self._hello is not None)
        if self._hello is None:
            raise NotConnectedError(f"shoe at {self.name} not connected; counter reset kept for later")

    def pair(self, secret: bytes) -> None:
        """Give the shoe a new pairing ``secret`` (docs/protocol.md, "Pairing"): inside an
        authenticated session the PAIR frame carries it hidden under the session's pad (a
        rotation); a version-1 connection sends it under its own hello key (the shoe must be in
        pairing mode). Then the session ends and the shoe is challenged under the new secret.

        :raises NotConnectedError: no shoe connected now.
        :raises ValueError: a secret that is not 32 bytes.
        """
        p.hello_key(secret)  # checks the size
        if self._hello is None:
            raise NotConnectedError(f"shoe at {self.name} not connected; cannot pair")
        self._admission.pair(secret)
        self._hello = None
        if self._conn is not None:
            self._conn.decoder.sealed = True  # version 2 from the PAIR on: a plain frame is refused

    def _shoe_next_seq(self) -> int:
        """The highest ``next_seq`` the shoe has reported (HELLO, HEARTBEAT) or implied (the
        events received): every event made before now has a lower number."""
        seqs = [self._window.expected or 0]
        if self._last_hello is not None:
            seqs.append(self._last_hello.seq)
        if self._heartbeat is not None:
            seqs.append(self._heartbeat.seq)
        return max(seqs)

    # ------------------------------------------------------------------ messages

    def _on_message(self, msg: p.Message, conn: Line, now: float) -> None:
        if isinstance(msg, p.Hello):
            self._on_hello(msg, now)
            return
        hello = self._hello
        window = self._window
        if hello is None or window.expected is None:
            if msg.TYPE & 0x80:
                self._host_type()
            return  # nothing else counts before this connection's hello
        if isinstance(msg, p.CardMsg | p.FaultMsg | p.ForeignMsg | p.ButtonMsg):
            if isinstance(msg, p.ForeignMsg) and not window.names_foreign:
                conn.reject(self.stats, now, "FG-UNOFFERED", f"FOREIGN {msg.seq} from a shoe whose HELLO did not "
                            "offer names-foreign", self.name)
                return
            if isinstance(msg, p.CardMsg):
                if msg.reader != "none" and msg.reader not in hello.readers:
                    conn.reject(self.stats, now, "C-READER-DECLARED", f"CARD {msg.seq} names the {msg.reader} reader, "
                                 f"which the HELLO did not declare ({', '.join(hello.readers)})", self.name)
                    return
                # a card's epoch may be older than the shoe's (a resent card, also one made before
                # a restart): it confirms a reset only when made after the reset was asked for
                commands = self._commands
                if msg.seq >= commands.reset_floor:
                    commands.note_epoch(msg.epoch, current=False)
            window.on_event(msg, now)
        elif isinstance(msg, p.StubMsg):
            self._on_stub(msg, conn, now)
        elif isinstance(msg, p.Heartbeat):
            self._heartbeat = msg
            self._commands.on_heartbeat(msg)
            if msg.seq > window.expected:
                window.request_resend(now)
        else:
            self._host_type()

    def _on_stub(self, msg: p.StubMsg, conn: Line, now: float) -> None:
        """The stub's deck (docs/protocol.md section 16): a ``StubDeck`` when it changed."""
        if not self._window.names_foreign:
            conn.reject(self.stats, now, "FG-UNOFFERED", "STUB from a shoe whose HELLO did not offer names-foreign",
                        self.name)
        elif (msg.epoch, msg.deck) != self._stub:
            self._stub = (msg.epoch, msg.deck)
            self._events.append(StubDeck(msg.epoch, msg.deck))

    def _host_type(self) -> None:
        """A type only the host sends came to the host (row ``M-DIRECTION``): an echo of its own
        frames on a looped line, or a shoe defect. Dropped and counted by the row; not a bad frame,
        so an echo never makes the line look noisy."""
        rejected = self.stats.rejected
        rejected["M-DIRECTION"] = rejected.get("M-DIRECTION", 0) + 1

    def _on_hello(self, hello: p.Hello, now: float) -> None:
        version = self.version
        if hello.version != version and hello.version_min <= version <= hello.version_max:
            self._admission.host_hello()  # an unasked hello: negotiate first
            return
        if hello.version != version:
            detail = (f"shoe speaks protocol {hello.version_min}..{hello.version_max}, host "
                      f"{version}: no common version")
            self._health.set(LinkStatus.DISCONNECTED, detail, hello.info())
            raise VersionError(detail)
        admission = self._admission
        pinned = admission.pinned
        if pinned is not None and hello.serial != pinned:
            # never a change of numbering: another shoe's HELLO (a swap, a stray or forged frame)
            # is refused and the table's own shoe, if still there, goes on as before
            admission.refuse("unknown-shoe", f"HELLO from shoe {hello.serial!r}, not the table's shoe {pinned!r}: "
                             "refused (a swapped or foreign shoe, or a forged frame)", hello.info())
            return
        admission.accepted(hello)
        prev = self._last_hello
        window = self._window
        boot = self._resume_boot
        if prev is None and boot is not None and boot[0] == hello.serial:
            # the shoe as the journal knew it: a restart while the host was down is still a restart
            prev = replace(hello, boot_id=boot[1], boot_count=None, card_total=None, dispense=None)
            window.resume_span(prev)
        window.names_foreign = "names-foreign" in (hello.caps or ())
        notes, gap_from, seq_reset, restarted = window.on_hello(hello, prev)
        first = self._hello is None
        self._hello = self._last_hello = hello
        self._health.shoe = hello.info()
        self._commands.on_hello(hello, prev, now)
        window.ack_soon(now)
        if gap_from is not None:
            # before the connected event (and any event that follows it): the consumer knows of
            # the lost events before the link is up again, so it never shows the instruction of
            # before the gap in between (docs/irregularities.md, *Sequence gap*)
            window.gap_event(gap_from, hello)
        if first or notes:
            detail = "; ".join([f"shoe {hello.serial} firmware {hello.firmware}", *notes])
            self._health.set(LinkStatus.CONNECTED, detail, hello.info(), force=True, sequence_reset=seq_reset)
        window.note_span(hello, restarted)  # ShoeRestarted: after the gap and the connected event

    def _refused_event(self, code: str, detail: str, info: ShoeInfo | None) -> None:
        self._health.refused(code, detail, info, self._hello is not None)
