"""The shoe's side of the link without I/O (:class:`ShoeCore`): sequence numbers, the unacked events
(:class:`~.ring.EventRing`), delivery, heartbeats, LED and counter commands, version-2
sessions (:class:`~.auth.ShoeAuth`) and the form of a FOREIGN for this host
(:class:`~.naming.ForeignNaming`). It is fed the host's bytes and the clock, queues the frames to
write and says (:attr:`~ShoeCore.dirty`) when its kept state must be saved before them; no thread,
no port, no clock of its own; runs on CircuitPython. The protocol: docs/protocol.md, sections 3-6
and 12-15; its parts and timers: docs/build-a-shoe.md, "Firmware"."""

from . import codec as c
from .auth import ShoeAuth
from .naming import RAW, ForeignNaming
from .ring import EventRing

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .ring import Entry

    Led = tuple[int, int, int, int, int, int]
    """A pattern: (token, signal, leds, mode, on_ms, off_ms)."""

NO_HOST_LED = (0, 11, 0x02, 1, 800, 800)
"""The shoe's own pattern with no host for 3 s: amber blinking 800/800 ms, signal ``degraded``,
reported as token 0 (``(token, signal, leds, mode, on_ms, off_ms)``)."""
STOP_LED = (0, 9, 0x10, 1, 250, 250)
"""The shoe's own pattern while its event buffer is full: red blinking 250/250 ms, token 0."""
_HB_FLAG = {c.FAULT_COVER_OPEN: c.HB_COVER_OPEN, c.FAULT_JAM: c.HB_JAMMED, c.FAULT_READER_ERROR: c.HB_READER_ERROR}


class ShoeConfig:
    """What a shoe is and how it paces itself (see :class:`ShoeCore`'s parameters)."""

    def __init__(self, serial: str, readers: int, firmware: str, random_bytes: "Callable[[int], bytes]",
                 heartbeat_s: float, resend_s: float, host_silence_s: float, persistent_counters: bool,
                 counts_unpowered: bool, keeps_buffer: bool, version_range: "tuple[int, int] | None") -> None:
        if not 1 <= len(serial.encode("utf-8")) <= c.MAX_STR:
            raise ValueError("serial number " + repr(serial) + " must be 1..32 bytes of UTF-8")
        self.serial = serial
        self.readers = readers
        self.firmware = firmware
        self.random_bytes = random_bytes
        self.heartbeat_s = heartbeat_s
        self.resend_s = resend_s
        self.host_silence_s = host_silence_s
        self.persistent_counters = persistent_counters
        self.counts_unpowered = counts_unpowered and persistent_counters
        self.keeps_buffer = keeps_buffer
        self.version_range = version_range


class ShoeStats:
    """What the shoe counted of the host's frames and its own sending."""

    def __init__(self) -> None:
        self.host_frames = 0
        """Host frames acted on."""
        self.host_bad_frames = 0
        """Host frames dropped by a row of the constraint table (:attr:`drop_rows`)."""
        self.host_refused = 0
        """Host frames this shoe may not act on (unauthenticated, forged, replayed, old session)."""
        self.host_unknown = 0
        self.hellos = 0
        self.resent = 0
        self.counted_while_full = 0
        self.drop_rows = {}  # type: dict[str, int]

    def drop(self, row: str) -> None:
        """One host frame dropped by ``row``."""
        if row == "F-TYPE":
            self.host_unknown += 1
            return
        self.host_bad_frames += 1
        self.drop_rows[row] = self.drop_rows.get(row, 0) + 1


class Lights:
    """The pattern the shoe shows (:attr:`led`: ``(token, signal, leds, mode, on_ms, off_ms)``,
    None when off since power-up): the host's, the no-host pattern, or the stop pattern while
    the buffer is full (the host's then kept for later); the fault conditions of the HEARTBEAT
    flags, and those a full buffer kept from being reported."""

    def __init__(self) -> None:
        self.led = None  # type: Led | None
        self._held = None  # type: Led | None
        self.full = False
        self.conditions = 0
        self.pending = 0

    def token(self) -> int:
        """The token of the pattern shown (0: none, or the shoe's own)."""
        return self.led[0] if self.led is not None else 0

    def show(self, led: "Led") -> None:
        """A host pattern: shown, or kept while the buffer is full."""
        if self.full:
            self._held = led
        else:
            self.led = led

    def set_full(self, full: bool) -> bool:
        """The buffer became full or freed; True when that changed what is shown."""
        if full == self.full:
            return False
        self.full = full
        if full:
            if self.led is not STOP_LED:
                self._held = self.led if self.led is not NO_HOST_LED else None
            self.led = STOP_LED
        else:
            self.led, self._held = self._held, None
        return True

    def condition(self, flag: int, cleared: bool) -> None:
        """A HEARTBEAT flag's condition began or ended (``flag`` 0: not a condition)."""
        if cleared:
            self.conditions &= ~flag
        else:
            self.conditions |= flag

    def flags(self) -> int:
        """HEARTBEAT's flags: the conditions, and reader error while the buffer is full."""
        return self.conditions | (c.HB_READER_ERROR if self.full else 0)

    def power_up(self) -> None:
        self.led = None
        self._held = None
        self.full = False


class Outbox:
    """The frames waiting for the line, at most :attr:`MAX` (the oldest dropped beyond: the
    events among them are resent)."""

    MAX = 1024

    def __init__(self) -> None:
        self._frames = []  # type: list[bytes]

    def emit(self, frame: bytes) -> None:
        """Queue one frame."""
        if len(self._frames) >= self.MAX:
            self._frames.pop(0)
        self._frames.append(frame)

    def take(self) -> list[bytes]:
        """Every frame queued, oldest first; the queue empties."""
        out, self._frames = self._frames, []
        return out


def _boot_id(random_bytes: "Callable[[int], bytes]") -> int:
    """A random nonzero u32 (docs/protocol.md, HELLO ``boot_id``)."""
    while True:
        b = random_bytes(4)
        n = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]
        if n:
            return n


def _hello_payload(core: "ShoeCore", version: int) -> bytes:
    """The HELLO payload of ``core`` now, with its records (section 12)."""
    cfg = core.cfg
    vmin, vmax = core.version_range
    caps = counters = None
    if cfg.persistent_counters:
        caps = c.CAP_PERSISTENT | (c.CAP_UNPOWERED if cfg.counts_unpowered else 0)
        counters = (core.boot_count, core.card_total, core.dispense)
    if cfg.keeps_buffer:
        caps = (caps or 0) | c.CAP_KEEPS_BUFFER
    if core.naming.offered:
        caps = (caps or 0) | c.CAP_NAMES_FOREIGN
    return c.hello_payload(version, vmin, vmax, core.boot_id, core.ring.oldest(core.next_seq), core.epoch,
                           core.lights.token(), cfg.readers, cfg.firmware, cfg.serial, caps, counters)


class ShoeCore:
    """One shoe's link state.

    :param serial: the serial number (1..32 bytes of UTF-8).
    :param readers: the readers fitted, as HELLO's mask (bit 0 RFID, bit 1 optical).
    :param firmware: HELLO's firmware text.
    :param random_bytes: a function n -> n random bytes (``os.urandom``), for boot ids and nonces.
    :param secret: the pairing secret (32 bytes): version 2 only; None: version 1 until paired.
    :param pairing: pairing mode: a PAIR sealed under its own secret's hello key is taken.
    :param heartbeat_s: seconds between heartbeats; ``resend_s``: without progress before a
        resend; ``host_silence_s``: without a host frame before the no-host pattern.
    :param capacity: events the unacked buffer holds (at least 256 in a real shoe).
    :param version_range: the versions spoken (default: 2..2 paired, 1..1 not).
    :param persistent_counters: epoch, dispense, card total and boot count survive a restart
        (the caller keeps :meth:`kept`); HELLO carries the caps and counters records.
    :param counts_unpowered: the sensor counts while the shoe is off (capability bit 1).
    :param keeps_buffer: the unacked buffer survives a power loss (capability bit 2).
    :param names_foreign: the shoe names a card of another deck by FOREIGN events (capability
        bit 3; section 16, :class:`~.naming.ForeignNaming`).
    :param now: the clock at power-up.
    :raises ValueError: a serial number that is empty or over 32 bytes, a secret of another size.
    """

    FIRMWARE = "shoe_fw-1.0"
    RESEND_ON_REQUEST = 16
    """Events resent for an ACK with the resend flag."""
    RESEND_ON_TIMEOUT = 32
    """Events resent when the host's ``want`` has not moved for ``resend_s``."""
    RESEND_ON_HELLO = 512
    """Events resent after a HOST_HELLO with a common version (the rest on request)."""
    RESEND_HOLDOFF = 0.02
    """Seconds before a resend request for the same ``want`` is acted on again."""
    TIMERS = ("no_host", "heartbeat", "resend")
    """The timers, in the order ``tick`` runs them: each ``<name>`` has ``_<name>_due()`` (the
    clock value it is due at, or None when it is not armed) and ``_<name>(now)``."""

    def __init__(self, serial: str, readers: int = 1, firmware: str = "",
                 random_bytes: "Callable[[int], bytes] | None" = None, secret: bytes | None = None,
                 pairing: bool = False, heartbeat_s: float = 0.5, resend_s: float = 0.3,
                 host_silence_s: float = 3.0, capacity: int = 256, version_range: tuple[int, int] | None = None,
                 persistent_counters: bool = True, counts_unpowered: bool = False, keeps_buffer: bool = False,
                 names_foreign: bool = False, now: float = 0.0) -> None:
        if random_bytes is None:
            import os
            random_bytes = os.urandom
        self.cfg = ShoeConfig(serial, readers, firmware or self.FIRMWARE, random_bytes, heartbeat_s, resend_s,
                              host_silence_s, persistent_counters, counts_unpowered, keeps_buffer, version_range)
        self.auth = ShoeAuth(self.on_secret, pairing)
        if secret is not None:
            self.auth.set_secret(secret)
        self.ring = EventRing(capacity, now)
        self.stats = ShoeStats()
        self.lights = Lights()
        self._splitter = c.FrameSplitter()
        self._out = Outbox()
        # kept state
        self.next_seq = 1
        self.boot_id = self._new_boot_id()
        self.boot_count = 1
        self.card_total = 0
        self.dispense = 0
        self.epoch = 0
        self.dirty = True
        self.naming = ForeignNaming(names_foreign)
        """The form of FOREIGN events for this connection's host (section 16)."""
        # timers
        self._host_rx_at = now
        self._next_hb = now

    # ---------------------------------------------------------------- pairing and versions

    @property
    def version_range(self) -> tuple[int, int]:
        """The versions spoken: (2, 2) when paired, (1, 1) when not, unless configured."""
        if self.cfg.version_range is not None:
            return self.cfg.version_range
        v = c.V2 if self.auth.secret is not None else c.V1
        return (v, v)

    def set_secret(self, secret: bytes) -> None:
        """Pair with ``secret`` (32 bytes); any session ends. :raises ValueError: another size."""
        self.auth.set_secret(secret)

    def on_secret(self, secret: bytes) -> None:
        """Called with each new secret (a pairing or a rotation): a subclass keeps it."""

    # ---------------------------------------------------------------- kept state

    def kept(self) -> tuple[int, int, int, int, int]:
        """What survives a power cycle: ``(next_seq, boot_count, card_total, epoch, dispense)``
        (the last three matter only with persistent counters; the buffer: ``ring.held()``)."""
        return (self.next_seq, self.boot_count, self.card_total, self.epoch, self.dispense)

    def restore(self, kept: tuple[int, int, int, int, int], held: "Sequence[Entry]" = (),
                now: float | None = None) -> None:
        """Power-up from kept state: ``kept`` as :meth:`kept` returns it (the boot count goes up
        by one, a new boot id), ``held`` the events kept in non-volatile memory (keeps-buffer).
        ``next_seq`` becomes at least the newest held event + 1 (section 3)."""
        next_seq, boot_count, card_total, epoch, dispense = kept
        self.ring.clear()
        for entry in held:
            self.ring.push(entry)
        self.next_seq = max(next_seq, held[-1][0] + 1 if held else 1, 1)
        self.boot_count = boot_count + 1
        if self.cfg.persistent_counters:
            self.card_total, self.epoch, self.dispense = card_total, epoch, dispense
        self.boot_id = self._new_boot_id()
        self._power_up(now)

    def reboot(self, lose_unacked: bool = True, now: float | None = None) -> int:
        """A power cycle in place: a new boot id, the boot count + 1, the LEDs off, the session
        gone; the buffer lost when ``lose_unacked``; without persistent counters the dispense
        counter and epoch back to 0. Returns the number of events lost."""
        lost = 0
        if lose_unacked:
            lost = len(self.ring)
            self.ring.clear()
        self.boot_id = self._new_boot_id()
        self.boot_count += 1
        if not self.cfg.persistent_counters:
            self.dispense = 0
            self.epoch = 0
        self._power_up(now)
        return lost

    def _power_up(self, now: float | None) -> None:
        self.lights.power_up()
        self.auth.session = None
        self.naming.forget()
        self.ring.want = self.next_seq
        if now is not None:
            self._host_rx_at = now
            self._next_hb = now
        self.dirty = True

    def _new_boot_id(self) -> int:
        return _boot_id(self.cfg.random_bytes)

    def unacked_count(self) -> int:
        """Events held unacked."""
        return len(self.ring)

    def unacked(self) -> list[int]:
        """Their sequence numbers, oldest first."""
        return [e[0] for e in self.ring.held()]

    # ---------------------------------------------------------------- the line

    def frames_to_send(self) -> list[bytes]:
        """The frames to write, in order (each ``0x00 COBS(body) 0x00``), and forget them."""
        return self._out.take()

    def _emit(self, frame: bytes) -> None:
        self._out.emit(frame)

    def plugged_in(self, now: float) -> None:
        """A new line at ``now``: forget a partial host frame and the session; host silence
        counts from now."""
        self._host_rx_at = now
        self.new_peer()

    def new_peer(self) -> None:
        """Another host connection on the same line: forget a partial frame and the session."""
        self._splitter.reset()
        self.auth.session = None
        self.naming.forget()

    def receive_data(self, data: bytes, now: float) -> None:
        """Bytes from the host at ``now`` (frames may be split anywhere); what is dropped or
        refused is counted in :attr:`stats`."""
        for encoded in self._splitter.feed(data):
            try:
                admitted = self.auth.admit(c.checked_body(encoded))
            except c.DropFrame as exc:
                self.stats.drop(exc.args[0])
                continue
            if admitted is None:
                self.stats.host_refused += 1
                continue
            self.stats.host_frames += 1
            self._host_rx_at = now
            self._on_host(admitted[0], admitted[1], now)
        while self._splitter.too_long:
            self._splitter.too_long -= 1
            self.stats.drop("F-LONG")

    # ---------------------------------------------------------------- timers

    def tick(self, now: float) -> None:
        """Run the timers due at ``now`` (:attr:`TIMERS`); before :meth:`next_deadline` it does
        nothing."""
        for name in self.TIMERS:
            due = getattr(self, "_" + name + "_due")()
            if due is not None and now >= due:
                getattr(self, "_" + name)(now)

    def next_deadline(self) -> float:
        """The clock value at which :meth:`tick` next has something to do."""
        best = self._next_hb  # the heartbeat is always armed
        for name in self.TIMERS:
            due = getattr(self, "_" + name + "_due")()
            if due is not None and due < best:
                best = due
        return best

    def _no_host_due(self) -> float | None:
        if self.lights.led is NO_HOST_LED or self.lights.full:
            return None
        return self._host_rx_at + self.cfg.host_silence_s

    def _no_host(self, now: float) -> None:
        self.lights.led = NO_HOST_LED  # no host: a stale "deal" light must not stay on
        self._next_hb = now

    def _heartbeat_due(self) -> float | None:
        return self._next_hb

    def _heartbeat(self, now: float) -> None:
        self._next_hb = now + self.cfg.heartbeat_s
        self._send_heartbeat()

    def _resend_due(self) -> float | None:
        return self.ring.resend_due(self.next_seq, self.cfg.resend_s)

    def _resend(self, now: float) -> None:
        self._resend_from(max(self.ring.want, self.ring.oldest(self.next_seq)), now, self.RESEND_ON_TIMEOUT)

    # ---------------------------------------------------------------- events

    def card(self, code: int, reader: int, now: float) -> int:
        """A card left the shoe: the dispense counter and card total go up, and its CARD is made
        (``code`` 0..51 with ``reader`` 1 or 2, or 0xFF with reader 0). Returns its sequence
        number, or 0 when the buffer is full (the card counted, no event)."""
        self.dispense = min(self.dispense + 1, 0xFFFF)
        self.card_total = (self.card_total + 1) & 0xFFFFFFFF
        self.dirty = True
        seq = self.event(c.T_CARD, c.card_payload(code, reader, self.dispense, self.epoch), now)
        if not seq:
            self.stats.counted_while_full += 1
        return seq

    def count_unpowered(self) -> None:
        """A card left while the shoe was off: counted only with counts-unpowered."""
        if self.cfg.counts_unpowered:
            self.dispense = min(self.dispense + 1, 0xFFFF)
            self.card_total = (self.card_total + 1) & 0xFFFFFFFF
            self.dirty = True

    def fault(self, kind: int, cleared: bool, detail: str, now: float) -> int:
        """A FAULT (``kind`` 1..5). Jam, cover open and reader error set or clear their HEARTBEAT
        flag. Returns its sequence number, or 0 with a full buffer (a condition still present
        when space frees is reported then)."""
        flag = _HB_FLAG.get(kind, 0)
        self.lights.condition(flag, cleared)
        seq = self.event(c.T_FAULT, c.fault_payload(kind, cleared, detail), now)
        if not seq and flag:
            self.lights.pending |= flag
        return seq

    def button(self, number: int, now: float) -> int:
        """Shoe button ``number`` (1..255) pressed; its sequence number, or 0 with a full buffer."""
        return self.event(c.T_BUTTON, c.button_payload(number), now)

    def raw_event(self, frame: bytes, now: float) -> int:
        """Hold and send a prepared ``frame`` under the next number, as an event (a simulation's
        malformed event, which a real shoe never makes). Returns the number."""
        seq = self.next_seq
        self.next_seq += 1
        self.ring.hold((seq, RAW, frame), now)
        self._emit(frame)
        return seq

    def event(self, mtype: int, payload: bytes, now: float) -> int:
        """Make an event of type ``mtype`` (CARD, FAULT, FOREIGN, BUTTON) with ``payload``: its
        number taken, held, sent in the form this host takes. Returns its number, 0 with a full
        buffer (no number taken). :meth:`card`, :meth:`fault` and :meth:`button` build it."""
        if self.ring.full():
            self._set_full(True)
            return 0
        seq = self.next_seq
        self.next_seq += 1
        self.dirty = True
        self.ring.hold((seq, mtype, payload), now)
        self.made(seq, mtype, payload)
        self.naming.send([(seq, mtype, payload)], self.auth, self._emit)
        if self.ring.full():
            self._set_full(True)
        return seq

    def made(self, seq: int, mtype: int, payload: bytes) -> None:
        """Called with each new event, just before its frame is queued (a subclass records)."""

    def _set_full(self, full: bool) -> None:
        if self.lights.set_full(full):
            self._send_heartbeat()

    # ---------------------------------------------------------------- messages

    def say_hello(self) -> None:
        """An unasked HELLO (power-up, a replug): the highest version spoken."""
        self._send_hello(self.version_range[1], None)

    def _send_hello(self, version: int, challenge: bytes | None) -> None:
        self.stats.hellos += 1
        payload = _hello_payload(self, version)
        if self.auth.secret is None:
            self._emit(self.auth.frame(c.T_HELLO, self.next_seq, payload))
            return
        nonce = self.cfg.random_bytes(c.NONCE_SIZE)
        if challenge is None:
            self.auth.session = None
            challenge = bytes(c.NONCE_SIZE)
        elif version == c.V2:
            self.auth.open_session(challenge, nonce)
        self._emit(self.auth.frame(c.T_HELLO, self.next_seq, payload, challenge + nonce))

    def _send_heartbeat(self) -> None:
        payload = c.heartbeat_payload(self.dispense, self.epoch, self.lights.token(), self.lights.flags(),
                                      len(self.ring))
        self._emit(self.auth.frame(c.T_HEARTBEAT, self.next_seq, payload))
        self.naming.after_heartbeat(self.auth, self.next_seq, self.epoch, self._emit)

    def _resend_from(self, want: int, now: float, limit: int) -> None:
        self.stats.resent += self.naming.send(self.ring.from_want(want, limit, now), self.auth, self._emit)

    def _on_host(self, mtype: int, fields: tuple, now: float) -> None:  # type: ignore[type-arg]
        if mtype == c.T_ACK:
            # a FOREIGN that waited for the host's first ACK goes now, as if it asked for a resend
            self._on_ack(fields[0], fields[1], self.naming.ack(fields[3]) or fields[2], now)
        elif mtype == c.T_HOST_HELLO:
            self._on_host_hello(fields[0], fields[1], now)
        elif mtype == c.T_LED:
            self._on_led(fields, now)
        elif mtype == c.T_RESET:
            self._on_reset(fields[0], now)
        elif mtype == c.T_PAIR and self.auth.take(fields[0]):  # pairing or rotation, kept
            self.say_hello()  # under the new secret: the host challenges again

    def _on_ack(self, acked: int, want: int, resend: bool, now: float) -> None:
        if acked >= self.next_seq or want > self.next_seq:
            self.stats.drop("A-BEYOND")  # acks what was never sent
            return
        self.ring.acked(acked, want, now)
        if self.lights.full and not self.ring.full():
            self._set_full(False)
            pending, self.lights.pending = self.lights.pending, 0
            for kind in (c.FAULT_COVER_OPEN, c.FAULT_JAM, c.FAULT_READER_ERROR):
                if pending & self.lights.conditions & _HB_FLAG[kind]:
                    self.fault(kind, False, "", now)  # still present: reported now
        if resend and want < self.next_seq and self.ring.resend_asked(want, now, self.RESEND_HOLDOFF):
            self._resend_from(want, now, self.RESEND_ON_REQUEST)

    def _on_host_hello(self, vmin: int, vmax: int, now: float) -> None:
        self.naming.forget()  # a new host: its first ACK says whether it takes FOREIGN
        lo = max(vmin, self.version_range[0])
        hi = min(vmax, self.version_range[1])
        self._send_hello(hi if lo <= hi else 0, self.auth.challenge)
        if lo <= hi:
            self.ring.want = self.ring.oldest(self.next_seq)
            self._resend_from(self.ring.want, now, self.RESEND_ON_HELLO)

    def _on_led(self, fields: "Led", now: float) -> None:
        self.lights.show(fields)
        self._send_heartbeat()

    def _on_reset(self, epoch: int, now: float) -> None:
        if epoch != self.epoch:
            self.epoch = epoch
            self.dispense = 0
            self.dirty = True
        self._send_heartbeat()
