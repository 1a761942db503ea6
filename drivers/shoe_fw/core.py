"""The shoe's side of the link without I/O: sequence numbers, the unacked buffer, delivery,
heartbeats, LED and counter commands, and version-2 sessions (docs/protocol.md sections 3-6,
12-15).

:class:`ShoeCore` is fed the host's bytes (:meth:`~ShoeCore.receive_data`) and the clock
(:meth:`~ShoeCore.tick`; :meth:`~ShoeCore.next_deadline`), makes events on request
(:meth:`~ShoeCore.card`, :meth:`~ShoeCore.fault`, :meth:`~ShoeCore.button`) and queues the frames
to write (:meth:`~ShoeCore.frames_to_send`). No thread, no port, no clock of its own: every time
is an argument (seconds, any monotonic origin). The unacked buffer is a fixed ring of
``capacity`` events; when it is full no event is made (no number taken), the card is still
counted, the HEARTBEAT says reader error and the LEDs show the stop pattern (section 5). Its
timers are one table, :attr:`ShoeCore.TIMERS`, read by both ``tick`` and ``next_deadline``.
What is kept across a power cycle is :meth:`~ShoeCore.kept` / :meth:`~ShoeCore.restore`; the
caller writes it to non-volatile memory when :attr:`~ShoeCore.dirty` says so, before it writes
the frames (section 3). Runs on CircuitPython.
"""

from . import codec as c

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .crypto import HmacKey  # noqa: F401 (type comments)

    Entry = tuple[int, int, bytes]
    """An event held: (seq, type, payload)."""
    Led = tuple[int, int, int, int, int, int]
    """A pattern: (token, signal, leds, mode, on_ms, off_ms)."""

NO_HOST_LED = (0, 11, 0x02, 1, 800, 800)
"""The shoe's own pattern with no host for 3 s: amber blinking 800/800 ms, signal ``degraded``,
reported as token 0 (``(token, signal, leds, mode, on_ms, off_ms)``)."""
STOP_LED = (0, 9, 0x10, 1, 250, 250)
"""The shoe's own pattern while its event buffer is full: red blinking 250/250 ms, token 0."""
_HB_FLAG = {c.FAULT_COVER_OPEN: c.HB_COVER_OPEN, c.FAULT_JAM: c.HB_JAMMED, c.FAULT_READER_ERROR: c.HB_READER_ERROR}
RAW = 0
"""An entry type of the buffer whose payload is a whole frame, sent as it is (a simulation's
broken event)."""


class ShoeCore:
    """One shoe's link state.

    :param serial: the serial number (1..32 bytes of UTF-8).
    :param readers: the readers fitted, as HELLO's mask (bit 0 RFID, bit 1 optical).
    :param firmware: HELLO's firmware text.
    :param random_bytes: a function n -> n random bytes (``os.urandom``), for boot ids and nonces.
    :param secret: the pairing secret (32 bytes): version 2 only; None: version 1 until paired.
    :param pairing: pairing mode: a PAIR sealed under its own secret's hello key is taken.
    :param capacity: events the unacked buffer holds (at least 256 in a real shoe).
    :param persistent_counters: epoch, dispense, card total and boot count survive a restart
        (the caller keeps :meth:`kept`); HELLO carries the caps and counters records.
    :param counts_unpowered: the sensor counts while the shoe is off (capability bit 1).
    :param keeps_buffer: the unacked buffer survives a power loss (capability bit 2).
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
    MAX_OUT = 1024
    """Frames queued for the line at most; the oldest are dropped beyond (resent later)."""
    TIMERS = ("no_host", "heartbeat", "resend")
    """The timers, in the order ``tick`` runs them: each ``<name>`` has ``_<name>_due()`` (the
    clock value it is due at, or None when it is not armed) and ``_<name>(now)``."""

    def __init__(self, serial: str, readers: int = 1, firmware: str = "",
                 random_bytes: "Callable[[int], bytes] | None" = None, secret: bytes | None = None,
                 pairing: bool = False, heartbeat_s: float = 0.5, resend_s: float = 0.3,
                 host_silence_s: float = 3.0, capacity: int = 256, version_range: tuple[int, int] | None = None,
                 persistent_counters: bool = True, counts_unpowered: bool = False, keeps_buffer: bool = False,
                 now: float = 0.0) -> None:
        if not 1 <= len(serial.encode("utf-8")) <= c.MAX_STR:
            raise ValueError("serial number " + repr(serial) + " must be 1..32 bytes of UTF-8")
        if random_bytes is None:
            import os
            random_bytes = os.urandom
        self.serial = serial
        self.readers_mask = readers
        self.firmware = firmware or self.FIRMWARE
        self.random_bytes = random_bytes  # type: Callable[[int], bytes]
        self.heartbeat_s = heartbeat_s
        self.resend_s = resend_s
        self.host_silence_s = host_silence_s
        self.persistent_counters = persistent_counters
        self.counts_unpowered = counts_unpowered and persistent_counters
        self.keeps_buffer = keeps_buffer
        self._version_range = version_range
        self.pairing = pairing
        self.secret = None  # type: bytes | None
        self._hello_key = None  # type: HmacKey | None
        if secret is not None:
            self.set_secret(secret)
        self._splitter = c.FrameSplitter()
        self._session = None  # type: c.Session | None
        self._tx_ctr = 0
        self._rx_ctr = 0
        self._challenge = bytes(c.NONCE_SIZE)
        self._out = []  # type: list[bytes]
        self._host_rx_at = now
        # the ring of unacked events: (seq, type, payload)
        self.capacity = capacity
        self._ring = [None] * capacity  # type: list[Entry | None]
        self._head = 0
        self._count = 0
        # kept state
        self.next_seq = 1
        self.boot_id = self._new_boot_id()
        self.boot_count = 1
        self.card_total = 0
        self.dispense = 0
        self.epoch = 0
        self.dirty = True
        # link state
        self._host_want = 1
        self._progress_at = now
        self._resend_req_want = 0
        self._resend_req_at = 0.0
        self._next_hb = now
        self._led_raw = None  # type: Led | None
        self._held_led = None  # type: Led | None
        self.conditions = 0
        self.full = False
        self._pending_conditions = 0
        # counts
        self.host_frames = 0
        self.host_bad_frames = 0
        self.host_refused = 0
        self.host_unknown = 0
        self.hellos = 0
        self.resent = 0
        self.counted_while_full = 0
        self.drop_rows = {}  # type: dict[str, int]

    # ---------------------------------------------------------------- pairing and versions

    @property
    def version_range(self) -> tuple[int, int]:
        """The versions spoken: (2, 2) when paired, (1, 1) when not, unless given."""
        if self._version_range is not None:
            return self._version_range
        v = c.V2 if self.secret is not None else c.V1
        return (v, v)

    @version_range.setter
    def version_range(self, value: tuple[int, int] | None) -> None:
        self._version_range = value

    def set_secret(self, secret: bytes) -> None:
        """Pair with ``secret`` (32 bytes); any session ends.

        :raises ValueError: a secret of another size.
        """
        if len(secret) != c.SECRET_SIZE:
            raise ValueError("a pairing secret is 32 bytes, not " + str(len(secret)))
        self.secret = bytes(secret)
        self._hello_key = c.hello_key(self.secret)
        self._session = None
        self.on_secret(self.secret)

    def on_secret(self, secret: bytes) -> None:
        """Called with each new secret (a pairing or a rotation): the caller keeps it."""

    # ---------------------------------------------------------------- kept state

    def kept(self) -> tuple[int, int, int, int, int]:
        """What survives a power cycle, as a tuple ``(next_seq, boot_count, card_total, epoch,
        dispense)`` (the last three only with persistent counters; the buffer: :meth:`held`)."""
        return (self.next_seq, self.boot_count, self.card_total, self.epoch, self.dispense)

    def held(self) -> "list[Entry]":
        """The unacked events, oldest first: a list of ``(seq, type, payload)``."""
        out = []  # type: list[Entry]
        for i in range(self._count):
            out.append(self._entry(i))
        return out

    def restore(self, kept: tuple[int, int, int, int, int], held: "Sequence[Entry]" = (),
                now: float | None = None) -> None:
        """Power-up from kept state: ``kept`` as :meth:`kept` returns it (the boot count goes up
        by one, a new boot id), ``held`` the events kept in non-volatile memory (keeps-buffer).
        ``next_seq`` becomes at least the newest held event + 1 (section 3)."""
        next_seq, boot_count, card_total, epoch, dispense = kept
        self._clear()
        for entry in held:
            self._push(entry)
        newest = held[-1][0] + 1 if held else 1
        self.next_seq = max(next_seq, newest, 1)
        self.boot_count = boot_count + 1
        if self.persistent_counters:
            self.card_total = card_total
            self.epoch = epoch
            self.dispense = dispense
        self.boot_id = self._new_boot_id()
        self._power_up(now)

    def reboot(self, lose_unacked: bool = True, now: float | None = None) -> int:
        """A power cycle in place: a new boot id, the boot count + 1, the LEDs off, the session
        gone; the buffer lost when ``lose_unacked``; without persistent counters the dispense
        counter and epoch back to 0. Returns the number of events lost."""
        lost = 0
        if lose_unacked:
            lost = self._count
            self._clear()
        self.boot_id = self._new_boot_id()
        self.boot_count += 1
        if not self.persistent_counters:
            self.dispense = 0
            self.epoch = 0
        self._power_up(now)
        return lost

    def _power_up(self, now: float | None) -> None:
        self._led_raw = None
        self._held_led = None
        self.full = False
        self._session = None
        self._host_want = self.next_seq
        if now is not None:
            self._host_rx_at = now
            self._next_hb = now
        self.dirty = True

    def _new_boot_id(self) -> int:
        while True:
            b = self.random_bytes(4)
            n = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]
            if n:
                return n

    # ---------------------------------------------------------------- the ring

    def _clear(self) -> None:
        for i in range(self.capacity):
            self._ring[i] = None
        self._head = 0
        self._count = 0

    def _push(self, entry: "Entry") -> None:
        self._ring[(self._head + self._count) % self.capacity] = entry
        self._count += 1

    def _entry(self, i: int) -> "Entry":
        entry = self._ring[(self._head + i) % self.capacity]
        assert entry is not None
        return entry

    def _oldest(self) -> int:
        return self._entry(0)[0] if self._count else self.next_seq

    def _pop(self) -> None:
        self._ring[self._head] = None
        self._head = (self._head + 1) % self.capacity
        self._count -= 1

    def unacked_count(self) -> int:
        """Events held unacked."""
        return self._count

    def unacked(self) -> list[int]:
        """Their sequence numbers, oldest first."""
        return [e[0] for e in self.held()]

    # ---------------------------------------------------------------- output

    def frames_to_send(self) -> list[bytes]:
        """The frames to write, in order (each ``0x00 COBS(body) 0x00``), and forget them."""
        out, self._out = self._out, []
        return out

    def _emit(self, frame: bytes) -> None:
        if len(self._out) >= self.MAX_OUT:
            self._out.pop(0)
        self._out.append(frame)

    def _frame(self, mtype: int, seq: int, payload: bytes, extra: bytes = b"") -> bytes:
        if self.secret is None:
            return c.frame_of(c.body_v1(mtype, seq, payload))
        self._tx_ctr += 1
        key = self._session.shoe_mac if self._session is not None else self._hello_key
        assert key is not None
        return c.frame_of(c.body_v2(mtype, seq, payload, key, self._tx_ctr, extra))

    # ---------------------------------------------------------------- the line

    def plugged_in(self, now: float) -> None:
        """A new line at ``now``: forget a partial host frame and the session; host silence
        counts from now."""
        self._host_rx_at = now
        self._splitter.reset()
        self._session = None

    def new_peer(self) -> None:
        """Another host connection on the same line: forget a partial frame and the session."""
        self._splitter.reset()
        self._session = None

    def receive_data(self, data: bytes, now: float) -> None:
        """Bytes from the host at ``now`` (frames may be split anywhere). Frames that break a
        row are counted (:attr:`host_bad_frames`, :attr:`drop_rows`), unknown types apart
        (:attr:`host_unknown`), frames this shoe may not act on in :attr:`host_refused`."""
        for encoded in self._splitter.feed(data):
            try:
                body = c.checked_body(encoded)
                admitted = self._admit(body)
            except c.DropFrame as exc:
                row = exc.args[0]
                if row == "F-TYPE":
                    self.host_unknown += 1
                else:
                    self.host_bad_frames += 1
                    self.drop_rows[row] = self.drop_rows.get(row, 0) + 1
                continue
            if admitted is None:
                self.host_refused += 1
                continue
            self.host_frames += 1
            self._host_rx_at = now
            self._on_host(admitted[0], admitted[1], now)
        if self._splitter.too_long:
            self.host_bad_frames += self._splitter.too_long
            self._splitter.too_long = 0

    def _admit(self, body: bytes) -> "tuple[int, tuple] | None":  # type: ignore[type-arg]
        """``(type, fields)`` of a host frame this shoe may act on, or None (refused): unpaired,
        plain frames (and in pairing mode a PAIR sealed under its own secret's hello key);
        paired, sealed frames with a valid MAC (HOST_HELLO: the hello key; others: the
        session's key and a counter above the last).

        :raises DropFrame: a frame that breaks a row (in the version whose layout it fits).
        """
        mtype = body[0]
        try:
            sealed = c.Sealed(body)
            fields = c.parse_host(mtype, sealed.payload)
        except c.DropFrame as sealed_error:
            try:
                plain = c.parse_host(mtype, body[5:])
            except c.DropFrame:
                if sealed_error.args[0] not in ("M-LENGTH", "F-TYPE"):
                    raise sealed_error from None
                raise
            return (mtype, plain) if self.secret is None else None
        if self.secret is None:
            if mtype == c.T_PAIR and self.pairing and sealed.verify(c.hello_key(fields[0])):
                return (mtype, fields)
            return None
        if mtype == c.T_HOST_HELLO:
            if self._hello_key is None or not sealed.verify(self._hello_key):
                return None
            self._challenge = sealed.challenge
            return (mtype, fields)
        session = self._session
        if session is None or sealed.ctr <= self._rx_ctr or not sealed.verify(session.host_mac):
            return None
        self._rx_ctr = sealed.ctr
        if mtype == c.T_PAIR:
            pad = c.pair_pad(session.host_to_shoe, sealed.ctr)
            secret = fields[0]
            return (mtype, (bytes([secret[i] ^ pad[i] for i in range(c.SECRET_SIZE)]),))
        return (mtype, fields)

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
        best = None  # type: float | None
        for name in self.TIMERS:
            due = getattr(self, "_" + name + "_due")()
            if due is not None and (best is None or due < best):
                best = due
        assert best is not None  # the heartbeat is always armed
        return best

    def _no_host_due(self) -> float | None:
        if self._led_raw is NO_HOST_LED or self.full:
            return None
        return self._host_rx_at + self.host_silence_s

    def _no_host(self, now: float) -> None:
        self._led_raw = NO_HOST_LED  # no host: a stale "deal" light must not stay on
        self._next_hb = now

    def _heartbeat_due(self) -> float | None:
        return self._next_hb

    def _heartbeat(self, now: float) -> None:
        self._next_hb = now + self.heartbeat_s
        self._send_heartbeat()

    def _resend_due(self) -> float | None:
        if self._count and self.next_seq > self._host_want:
            return self._progress_at + self.resend_s
        return None

    def _resend(self, now: float) -> None:
        self._resend_from(max(self._host_want, self._oldest()), now, self.RESEND_ON_TIMEOUT)

    # ---------------------------------------------------------------- events

    @property
    def led(self) -> "Led | None":
        """The pattern shown: ``(token, signal, leds, mode, on_ms, off_ms)`` (token 0 for
        :data:`NO_HOST_LED` and :data:`STOP_LED`), or None (off since power-up)."""
        return self._led_raw

    def led_token(self) -> int:
        """The token of the pattern shown (0: none, or the shoe's own)."""
        return self._led_raw[0] if self._led_raw is not None else 0

    def card(self, code: int, reader: int, now: float) -> int:
        """A card left the shoe: the dispense counter and card total go up, and its CARD is made
        (``code`` 0..51 with ``reader`` 1 or 2, or 0xFF with reader 0). Returns its sequence
        number, or 0 when the buffer is full (the card counted, no event)."""
        self.dispense = min(self.dispense + 1, 0xFFFF)
        self.card_total = (self.card_total + 1) & 0xFFFFFFFF
        self.dirty = True
        return self._event(c.T_CARD, c.card_payload(code, reader, self.dispense, self.epoch), now)

    def count_unpowered(self) -> None:
        """A card left while the shoe was off: counted only with counts-unpowered."""
        if self.counts_unpowered:
            self.dispense = min(self.dispense + 1, 0xFFFF)
            self.card_total = (self.card_total + 1) & 0xFFFFFFFF
            self.dirty = True

    def fault(self, kind: int, cleared: bool, detail: str, now: float) -> int:
        """A FAULT (``kind`` 1..5). Jam, cover open and reader error set or clear their HEARTBEAT
        flag. Returns its sequence number, or 0 with a full buffer (a condition still present
        when space frees is reported then)."""
        flag = _HB_FLAG.get(kind, 0)
        if flag:
            if cleared:
                self.conditions &= ~flag
            else:
                self.conditions |= flag
        seq = self._event(c.T_FAULT, c.fault_payload(kind, cleared, detail), now)
        if not seq and flag:
            self._pending_conditions |= flag
        return seq

    def button(self, number: int, now: float) -> int:
        """Shoe button ``number`` (1..255) pressed; its sequence number, or 0 with a full buffer."""
        return self._event(c.T_BUTTON, c.button_payload(number), now)

    def raw_event(self, frame: bytes, now: float) -> int:
        """Hold and send a prepared ``frame`` under the next number, as an event (a simulation's
        malformed event, which a real shoe never makes). Returns the number."""
        seq = self.next_seq
        self.next_seq += 1
        self._hold(seq, RAW, frame, now)
        self._emit(frame)
        return seq

    def _event(self, mtype: int, payload: bytes, now: float) -> int:
        if self._count >= self.capacity:
            self._set_full(True)
            if mtype == c.T_CARD:
                self.counted_while_full += 1
            return 0
        seq = self.next_seq
        self.next_seq += 1
        self.dirty = True
        self._hold(seq, mtype, payload, now)
        self.made(seq, mtype, payload)
        self._emit(self._frame(mtype, seq, payload))
        if self._count >= self.capacity:
            self._set_full(True)
        return seq

    def made(self, seq: int, mtype: int, payload: bytes) -> None:
        """Called with each new event, just before its frame is queued (a subclass records)."""

    def _hold(self, seq: int, mtype: int, payload: bytes, now: float) -> None:
        if not self._count:
            self._progress_at = now
        self._push((seq, mtype, payload))

    def _set_full(self, full: bool) -> None:
        if full == self.full:
            return
        self.full = full
        if full:
            if self._led_raw is not STOP_LED:
                self._held_led = self._led_raw if self._led_raw is not NO_HOST_LED else None
            self._led_raw = STOP_LED
        else:
            self._led_raw = self._held_led
            self._held_led = None
        self._send_heartbeat()

    # ---------------------------------------------------------------- messages

    def say_hello(self) -> None:
        """An unasked HELLO (power-up, a replug): the highest version spoken."""
        self._send_hello(self.version_range[1], None)

    def _send_hello(self, version: int, challenge: bytes | None) -> None:
        self.hellos += 1
        vmin, vmax = self.version_range
        caps = counters = None
        if self.persistent_counters:
            caps = c.CAP_PERSISTENT | (c.CAP_UNPOWERED if self.counts_unpowered else 0)
            counters = (self.boot_count, self.card_total, self.dispense)
        if self.keeps_buffer:
            caps = (caps or 0) | c.CAP_KEEPS_BUFFER
        payload = c.hello_payload(version, vmin, vmax, self.boot_id, self._oldest(), self.epoch, self.led_token(),
                                  self.readers_mask, self.firmware, self.serial, caps, counters)
        if self.secret is None:
            self._emit(c.frame_of(c.body_v1(c.T_HELLO, self.next_seq, payload)))
            return
        nonce = self.random_bytes(c.NONCE_SIZE)
        if challenge is None:
            self._session = None
            challenge = bytes(c.NONCE_SIZE)
        elif version == c.V2:
            self._session = c.Session(self.secret, challenge, nonce)
            self._tx_ctr = self._rx_ctr = 0
        self._emit(self._frame(c.T_HELLO, self.next_seq, payload, challenge + nonce))

    def _send_heartbeat(self) -> None:
        flags = self.conditions | (c.HB_READER_ERROR if self.full else 0)
        self._emit(self._frame(c.T_HEARTBEAT, self.next_seq,
                               c.heartbeat_payload(self.dispense, self.epoch, self.led_token(), flags, self._count)))

    def _resend_from(self, want: int, now: float, limit: int) -> None:
        sent = 0
        for i in range(self._count):
            seq, mtype, payload = self._entry(i)
            if seq >= want:
                self._emit(payload if mtype == RAW else self._frame(mtype, seq, payload))
                sent += 1
                if sent >= limit:
                    break
        self.resent += sent
        self._progress_at = now

    def _on_host(self, mtype: int, fields: tuple, now: float) -> None:  # type: ignore[type-arg]
        if mtype == c.T_ACK:
            self._on_ack(fields[0], fields[1], fields[2], now)
        elif mtype == c.T_HOST_HELLO:
            self._on_host_hello(fields[0], fields[1], now)
        elif mtype == c.T_LED:
            self._on_led(fields, now)
        elif mtype == c.T_RESET:
            self._on_reset(fields[0], now)
        elif mtype == c.T_PAIR:
            self.set_secret(fields[0])  # pairing or rotation: the host challenges again
            self.say_hello()

    def _on_ack(self, acked: int, want: int, resend: bool, now: float) -> None:
        if acked >= self.next_seq or want > self.next_seq:
            self.host_bad_frames += 1  # A-BEYOND: acks what was never sent
            self.drop_rows["A-BEYOND"] = self.drop_rows.get("A-BEYOND", 0) + 1
            return
        while self._count and self._entry(0)[0] <= acked:
            self._pop()
        if want > self._host_want:
            self._host_want = want
            self._progress_at = now
        if self.full and self._count < self.capacity:
            self._set_full(False)
            self._report_pending(now)
        if resend and want < self.next_seq:
            if want != self._resend_req_want or now - self._resend_req_at >= self.RESEND_HOLDOFF:
                self._resend_req_want = want
                self._resend_req_at = now
                self._resend_from(want, now, self.RESEND_ON_REQUEST)

    def _report_pending(self, now: float) -> None:
        pending, self._pending_conditions = self._pending_conditions, 0
        for kind in (c.FAULT_COVER_OPEN, c.FAULT_JAM, c.FAULT_READER_ERROR):
            if pending & _HB_FLAG[kind] and self.conditions & _HB_FLAG[kind]:
                self.fault(kind, False, "", now)

    def _on_host_hello(self, vmin: int, vmax: int, now: float) -> None:
        lo = max(vmin, self.version_range[0])
        hi = min(vmax, self.version_range[1])
        self._send_hello(hi if lo <= hi else 0, self._challenge)
        if lo <= hi:
            self._host_want = self._oldest()
            self._resend_from(self._host_want, now, self.RESEND_ON_HELLO)

    def _on_led(self, fields: "Led", now: float) -> None:
        if self.full:
            self._held_led = fields  # shown when space frees
        else:
            self._led_raw = fields
        self._send_heartbeat()

    def _on_reset(self, epoch: int, now: float) -> None:
        if epoch != self.epoch:
            self.epoch = epoch
            self.dispense = 0
            self.dirty = True
        self._send_heartbeat()
