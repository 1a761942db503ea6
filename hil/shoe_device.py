"""The virtual shoe's device: a model of a shoe's firmware with no I/O (sans-I/O).

:class:`ShoeDevice` holds the deck, the dispense counter and epoch, the sequence numbers, the
buffer of unacked events, the LED pattern and the fault conditions. It is fed the host's bytes
(:meth:`~ShoeDevice.receive_data`) and the clock (:meth:`~ShoeDevice.tick`), and the dealer's
actions (:meth:`~ShoeDevice.pull`, :meth:`~ShoeDevice.inject_fault`, :meth:`~ShoeDevice.press`);
it hands back the frames to write (:meth:`~ShoeDevice.frames_to_send`). No thread, no port, no
clock of its own: every time is an argument (seconds). The line that carries its frames is
:mod:`hil.shoe_line`; :class:`hil.virtual_shoe.VirtualShoe` puts the two together. What a shoe
does is ``docs/protocol.md`` (sections 3-5); the fault spec is section 8. A device given a
pairing ``secret`` speaks version 2 (every frame sealed, a session per host challenge, host
frames without a valid MAC and a fresh counter refused: ``docs/protocol.md``, "Authentication
(version 2)"); one in pairing mode takes its secret from a PAIR frame.
"""

from __future__ import annotations

import os
import random
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from drivers import protocol as p
from drivers.exc import ShoeError
from hil.deck import Deck
from hil.faults import Faults
from shoe_ctl.events import FaultKind
from shoe_ctl.rules.cards import Card, full_deck

_HB_FLAG = {FaultKind.COVER_OPEN: "cover_open", FaultKind.JAM: "jammed", FaultKind.READER_ERROR: "reader_error"}
"""Fault conditions mirrored in the HEARTBEAT flags, by the flag's field name."""
NO_HOST_LED = p.Led(0, 0, "degraded", ("amber",), "blink", 800, 800)
"""What the shoe's LEDs show while no host talks to it (docs/protocol.md, LED): amber blinking
800/800 ms, reported as LED token 0 (never sent on the wire)."""


_PULL_FAULTS = (("misread", "misread", FaultKind.MISREAD), ("jam", "jam", FaultKind.JAM),
                ("cover-open", "cover_open", FaultKind.COVER_OPEN),
                ("reader-error", "reader_error", FaultKind.READER_ERROR))
"""The faults a pull may report (reported and cleared at once): the schedule's action, the rate's
field of :class:`hil.faults.Faults`, the kind."""


class EmptyShoeError(ShoeError, IndexError):
    """A pull from a shoe with no card left."""


@dataclass(frozen=True)
class Pull:
    """What one pull did: ``card`` left (the first one of a double pull; ``cards`` all of them),
    and the link action the fault spec asks for after it (``"unplug"``, ``"reboot"``,
    ``"reboot-keep"`` (the buffer kept) or None),
    the shoe then away for ``away_s`` seconds."""

    card: Card
    cards: tuple[Card, ...]
    after: str | None = None
    away_s: float = 0.0


class ShoeDevice:
    """A shoe speaking protocol v1, without I/O.

    :param deck: the cards loaded.
    :param faults: card and link faults applied at each pull (line faults are the line's).
    :param seed: seeds the boot ids and every random card fault.
    :param serial: serial number reported in HELLO (1..32 bytes of UTF-8).
    :param readers: reader kinds fitted (the first one reads every card).
    :param heartbeat_s: seconds between heartbeats (a real shoe: at most 1 s).
    :param resend_s: seconds without progress before unreceived events are resent.
    :param version_range: the protocol versions it speaks.
    :param record: keep :attr:`events` (every event made, in order).
    :param on_event: called with each new event message, just before its frame is queued.
    :param host_silence_s: seconds without a valid host frame before the LEDs show
        :data:`NO_HOST_LED` (protocol: 3 s).
    :param now: the clock at power-up (seconds).
    :param secret: the pairing secret (:data:`drivers.protocol.SECRET_SIZE` bytes): the device
        then speaks version 2 only; None: version 1, unauthenticated, until paired.
    :param pairing: pairing mode (a real shoe: a button held at power-up): a PAIR frame sealed
        under its own secret's hello key sets the secret.
    :param on_secret: called with each new secret (a rotation or a pairing), to keep it.
    :param persistent_counters: keep the epoch, the dispense counter, the card total and the boot
        count across power cycles and report them in HELLO (capability ``persistent-counters``,
        docs/protocol.md section 12); False: a shoe of the first revision (no ``caps`` record,
        counter and epoch back to 0 at each power-up).
    :param counts_unpowered: the card sensor and the card total work while the shoe is off
        (capability ``counts-unpowered``): :meth:`pull_unpowered` counts the card.
    :raises ValueError: a serial number that is empty or over 32 bytes, a secret of another size.
    """

    FIRMWARE = "virtual-1.0"
    RESEND_ON_REQUEST = 16
    """Events resent for an ACK with the resend flag."""
    RESEND_ON_TIMEOUT = 32
    """Events resent when the host's ``want`` has not moved for :attr:`resend_s`."""
    RESEND_ON_HELLO = 512
    """Events resent after a HOST_HELLO with a common version (the rest follow on request)."""
    RESEND_HOLDOFF = 0.02
    """Seconds before a resend request for the same ``want`` is acted on again."""

    def __init__(self, deck: Deck, *, faults: Faults | None = None, seed: int = 0, serial: str = "VS-0001",
                 readers: Sequence[str] = ("rfid",), heartbeat_s: float = 0.5, resend_s: float = 0.3,
                 version_range: tuple[int, int] | None = None,
                 record: bool = True, on_event: Callable[[p.EventMsg], None] | None = None,
                 host_silence_s: float = 3.0, now: float = 0.0, secret: bytes | None = None,
                 pairing: bool = False, on_secret: Callable[[bytes], None] | None = None,
                 persistent_counters: bool = True, counts_unpowered: bool = False) -> None:
        if not 1 <= len(serial.encode("utf-8")) <= p.MAX_STR:
            raise ValueError(f"serial number {serial!r} must be 1..{p.MAX_STR} bytes of UTF-8")
        self.deck = deck
        self.faults = faults if faults is not None else Faults()
        self.serial = serial
        self.readers = tuple(readers)
        self.heartbeat_s = heartbeat_s
        self.resend_s = resend_s
        self.host_silence_s = host_silence_s
        self.persistent_counters = persistent_counters
        self.counts_unpowered = counts_unpowered and persistent_counters
        self.secret: bytes | None = None
        self._version_range = version_range
        self.pairing = pairing
        self.on_secret = on_secret
        if secret is not None:
            self.set_secret(secret)
        self.record = record
        self.on_event = on_event
        self._rng = random.Random(seed)
        self._decoder: p.FrameDecoder = p.SealedDecoder()
        self._session: p.SessionKeys | None = None
        self._tx_ctr = 0
        self._rx_ctr = 0
        self._challenge: bytes | None = None
        self.host_refused = 0
        self._out: list[bytes] = []
        self._host_rx_at = now
        # protocol state
        self.boot_id = self._new_boot_id()
        self.boot_count = 1
        self.card_total = 0
        self.next_seq = 1
        self._unacked: OrderedDict[int, p.EventMsg | bytes] = OrderedDict()  # bytes: a raw frame (tests)
        self._host_want = 1
        self._progress_at = 0.0
        self._resend_req: tuple[int, float] = (0, 0.0)
        self._next_hb = 0.0
        self.dispense = 0
        self.epoch = 0
        self.led: p.Led | None = None
        self._conditions: set[FaultKind] = set()
        self._loaded: set[Card] = set(self.deck.cards())
        # records
        self.pulls = 0
        self.events: list[p.EventMsg] = []
        self.dispensed: list[Card] = []
        self.last_dispensed: tuple[Card, ...] = ()
        self.host_frames = 0
        self.host_bad_frames = 0
        self.hellos = 0
        self.resent = 0
        self.reboots = 0
        self.lost_on_reboot = 0
        self.pulled_unpowered = 0

    # ---------------------------------------------------------------- pairing

    @property
    def version_range(self) -> tuple[int, int]:
        """The protocol versions it speaks: (2, 2) when paired, (1, 1) when not, unless given."""
        if self._version_range is not None:
            return self._version_range
        v = p.AUTH_VERSION if self.secret is not None else p.PROTOCOL_VERSION
        return (v, v)

    @version_range.setter
    def version_range(self, value: tuple[int, int] | None) -> None:
        self._version_range = value

    def set_secret(self, secret: bytes) -> None:
        """Pair with ``secret`` (32 bytes); any session ends (the host challenges again).

        :raises ValueError: a secret of another size.
        """
        p.hello_key(secret)
        self.secret = bytes(secret)
        self._session = None
        if self.on_secret is not None:
            self.on_secret(self.secret)

    # ---------------------------------------------------------------- output

    def frames_to_send(self) -> list[bytes]:
        """The frames to write, in order (each ``0x00 COBS(body) 0x00``), and forget them."""
        out, self._out = self._out, []
        return out

    def unacked_count(self) -> int:
        """Events held that the host has not acked."""
        return len(self._unacked)

    def unacked(self) -> list[int]:
        """The sequence numbers held unacked, oldest first."""
        return list(self._unacked)

    # ---------------------------------------------------------------- the line

    def plugged_in(self, now: float) -> None:
        """A new line (plugged in at ``now``): forget any partial host frame, and count host
        silence from now."""
        self._host_rx_at = now
        self._decoder.reset()
        self._session = None

    def new_peer(self) -> None:
        """Another host connection on the same line (TCP): forget any partial host frame."""
        self._decoder.reset()
        self._session = None

    def receive_data(self, data: bytes, now: float) -> None:
        """Bytes from the host at ``now``; frames may be split anywhere. Bad frames are counted
        in :attr:`host_bad_frames` and never acted on."""
        for item in self._decoder.feed(data):
            msg = self._admit(item)
            if msg is None:
                self.host_refused += 1  # unauthenticated, forged, replayed or of an old session
                continue
            self.host_frames += 1
            self._host_rx_at = now
            self._on_host(msg, now)
        self.host_bad_frames = self._decoder.stats.bad_frames

    def _admit(self, item: object) -> p.Message | p.Pair | None:
        """The host message in ``item`` when this shoe may act on it, else None: a version-1
        shoe takes plain frames (and, in pairing mode, a PAIR); a paired one only sealed frames
        with a valid MAC (HOST_HELLO: the hello key; any other: the session's key and a counter
        above the last one)."""
        if not isinstance(item, p.Sealed):
            return item if self.secret is None else None  # type: ignore[return-value]
        msg = item.msg
        if isinstance(msg, p.Pair) and self.pairing and self.secret is None:
            return msg if item.verify(p.hello_key(msg.secret)) else None
        if self.secret is None:
            return None
        if isinstance(msg, p.HostHello):
            if not item.verify(p.hello_key(self.secret)):
                return None
            self._challenge = item.challenge
            return msg
        session = self._session
        if session is None or item.ctr <= self._rx_ctr or not item.verify(session.host_mac):
            return None
        self._rx_ctr = item.ctr
        if isinstance(msg, p.Pair):
            return p.Pair(msg.seq, p.xor(msg.secret, p.pair_pad(session.host_to_shoe, item.ctr)))
        return msg  # type: ignore[no-any-return]

    def _frame(self, msg: p.Message, *, challenge: bytes = b"", nonce: bytes = b"") -> bytes:
        """``msg`` as a frame: version 1 unpaired; sealed with the session's key and the next
        counter, or (no session) the hello key."""
        if self.secret is None:
            return p.encode(msg)
        self._tx_ctr += 1
        key: bytes | p.MacKey = self._session.shoe_mac if self._session is not None else p.hello_key(self.secret)
        return p.seal(msg, key, self._tx_ctr, challenge=challenge, nonce=nonce)

    def tick(self, now: float) -> None:
        """Act on the timers due at ``now``: the no-host LED pattern after :attr:`host_silence_s`,
        the heartbeat, the resend on timeout. Calling it before :meth:`next_deadline` does
        nothing."""
        if now >= self._host_rx_at + self.host_silence_s and self.led is not NO_HOST_LED:  # as next_deadline
            self.led = NO_HOST_LED  # no host: a stale "deal" light must not stay on
            self._next_hb = now
        if now >= self._next_hb:
            self._next_hb = now + self.heartbeat_s
            self._heartbeat()
        if self._resend_pending() and now >= self._progress_at + self.resend_s:
            self._resend_from(max(self._host_want, next(iter(self._unacked))), now, self.RESEND_ON_TIMEOUT)

    def next_deadline(self) -> float:
        """The clock value (seconds) at which :meth:`tick` next has something to do."""
        due = self._next_hb
        if self.led is not NO_HOST_LED:
            due = min(due, self._host_rx_at + self.host_silence_s)
        if self._resend_pending():
            due = min(due, self._progress_at + self.resend_s)
        return due

    def _resend_pending(self) -> bool:
        return bool(self._unacked) and self.next_seq > self._host_want

    def say_hello(self) -> None:
        """An unasked HELLO (after power-up or a replug): it carries the highest version spoken."""
        self._send_hello(self.version_range[1])

    # ---------------------------------------------------------------- the dealer's side

    def pull(self, now: float) -> Pull:
        """One card leaves at ``now``: its CARD event is made (with any card fault the spec says
        is due at this pull: duplicate, foreign, double pull, unreadable, FAULT reports).

        :returns: the :class:`Pull`, with the link action due after it.
        :raises EmptyShoeError: no card left.
        """
        self.pulls += 1
        n = self.pulls
        f = self.faults
        todo = set(f.schedule.get(n, ()))
        rng = self._rng

        def due(action: str, rate: float) -> bool:
            return action in todo or (rate > 0 and rng.random() < rate)

        if due("duplicate", f.duplicate) and self.dispensed:
            out = [rng.choice(self.dispensed)]
        elif due("foreign", f.foreign):
            strangers = [c for c in full_deck() if c not in self._loaded]
            out = [rng.choice(strangers or self.dispensed or full_deck())]
        else:
            out = [self.take()]
        if due("double-pull", f.double_pull) and self.deck.remaining():
            out.append(self.deck.take())
            self._event(p.FaultMsg(0, FaultKind.DOUBLE_PULL, False, "2 cards left together"), now)
        unread = due("unreadable", f.unreadable)
        for card in out:
            self.dispense = min(self.dispense + 1, 0xFFFF)
            self.card_total = (self.card_total + 1) & p.SEQ_MAX
            reader = self.readers[0]
            self._event(p.CardMsg(self.next_seq, None if unread else card, "none" if unread else reader,
                                  self.dispense, self.epoch), now)
        self.dispensed.extend(out)
        self.last_dispensed = tuple(out)
        for action, rate_name, kind in _PULL_FAULTS:
            if due(action, getattr(f, rate_name)):
                self.inject_fault(kind, now=now)
                self.inject_fault(kind, cleared=True, now=now)
        after: str | None = None
        if "reboot" in todo or (f.reboot_every and n % f.reboot_every == 0):
            after = "reboot"
        elif "reboot-keep" in todo:
            after = "reboot-keep"
        elif "unplug" in todo or (f.unplug_every and n % f.unplug_every == 0):
            after = "unplug"
        return Pull(out[0], tuple(out), after, f.unplug_ms / 1000.0)

    def pull_unpowered(self) -> Card:
        """One card leaves while the shoe is off (between :meth:`reboot`'s power loss and its
        power-up): no event; with ``counts_unpowered`` the sensor on its backup supply counts it
        (dispense counter and card total), otherwise nothing at all records it.

        :raises EmptyShoeError: no card left.
        """
        card = self.take()
        self.pulled_unpowered += 1
        self.dispensed.append(card)
        self.last_dispensed = (card,)
        if self.counts_unpowered:
            self.dispense = min(self.dispense + 1, 0xFFFF)
            self.card_total = (self.card_total + 1) & p.SEQ_MAX
        return card

    def take(self) -> Card:
        """The next card leaves the deck, with no event at all (a card past a blind sensor).

        :raises EmptyShoeError: no card left.
        """
        try:
            return self.deck.take()
        except IndexError:
            raise EmptyShoeError("the shoe is empty") from None

    def reload(self, cards: Deck | Iterable[Card]) -> None:
        """Load a new stub (after a scramble, or a new deck) and reset the dispense counter."""
        self.deck = cards if isinstance(cards, Deck) else Deck(cards)
        self._loaded = set(self.deck.cards())
        self.dispense = 0

    def inject_fault(self, kind: FaultKind | str, *, cleared: bool = False, detail: str = "",
                     now: float = 0.0) -> int:
        """Report a fault (or its clearing); returns the event's sequence number. Jam, cover open
        and reader error stay set in the HEARTBEAT flags from their report until their clearing."""
        kind = FaultKind(kind)
        if kind in _HB_FLAG:
            if cleared:
                self._conditions.discard(kind)
            else:
                self._conditions.add(kind)
        return self._event(p.FaultMsg(0, kind, cleared, detail), now)

    def press(self, button: int, now: float) -> int:
        """Shoe button ``button`` (1..255) pressed; returns the event's sequence number."""
        return self._event(p.ButtonMsg(0, button), now)

    def reboot(self, *, lose_unacked: bool = True) -> None:
        """Power cycle: a new boot id, the LEDs back to 0, the unacked buffer lost when
        ``lose_unacked``; the next sequence number survives (non-volatile), and with
        ``persistent_counters`` the epoch, dispense counter and card total too (the boot count
        goes up by one); without, the dispense counter and epoch go back to 0."""
        self.reboots += 1
        if lose_unacked:
            self.lost_on_reboot += len(self._unacked)
            self._unacked.clear()
        self.boot_id = self._new_boot_id()
        self.boot_count += 1
        if not self.persistent_counters:
            self.dispense = 0
            self.epoch = 0
        self.led = None
        self._session = None
        self._host_want = self.next_seq

    def _new_boot_id(self) -> int:
        return self._rng.randrange(1, 1 << 32)

    # ---------------------------------------------------------------- protocol

    def _event(self, msg: p.CardMsg | p.FaultMsg | p.ButtonMsg, now: float) -> int:
        seq = self.next_seq
        self.next_seq += 1
        if msg.seq != seq:  # a message made with its number already is taken as it is
            msg = replace(msg, seq=seq)
        frame = self._frame(msg)
        if not self._unacked:
            self._progress_at = now
        self._unacked[seq] = msg
        if self.record:
            self.events.append(msg)
        if self.on_event is not None:
            self.on_event(msg)
        self._out.append(frame)
        return seq

    def _send_hello(self, version: int, challenge: bytes | None = None) -> None:
        """HELLO; paired, an answer to a ``challenge`` opens a new session (a fresh nonce, the
        counters from 1), an unasked one goes under the hello key with a zero challenge."""
        self.hellos += 1
        first = next(iter(self._unacked), self.next_seq)
        ext: dict[str, Any] = {}
        if self.persistent_counters:
            caps = ("persistent-counters", "counts-unpowered") if self.counts_unpowered else ("persistent-counters",)
            ext = {"caps": caps, "boot_count": self.boot_count, "card_total": self.card_total,
                   "dispense": self.dispense}
        hello = p.Hello(self.next_seq, version, self.version_range[0], self.version_range[1], self.boot_id, first,
                        self.epoch, self.led.token if self.led else 0, self.readers, self.FIRMWARE, self.serial,
                        **ext)
        if self.secret is None:
            self._out.append(p.encode(hello))
            return
        nonce = os.urandom(p.NONCE_SIZE)
        if challenge is None:
            self._session = None
            challenge = bytes(p.NONCE_SIZE)
        elif version == p.AUTH_VERSION:
            self._session = p.session_keys(self.secret, challenge, nonce)
            self._tx_ctr = self._rx_ctr = 0
        self._out.append(self._frame(hello, challenge=challenge, nonce=nonce))

    def _heartbeat(self) -> None:
        flags = {_HB_FLAG[kind]: True for kind in self._conditions}
        self._out.append(self._frame(p.Heartbeat(self.next_seq, self.dispense, self.epoch,
                                              self.led.token if self.led else 0,
                                              unacked=min(len(self._unacked), 0xFFFF), **flags)))

    def _resend_from(self, want: int, now: float, limit: int = RESEND_ON_HELLO) -> None:
        sent = 0
        for seq, msg in self._unacked.items():
            if seq >= want:
                self._out.append(msg if isinstance(msg, bytes) else self._frame(msg))
                sent += 1
                if sent >= limit:
                    break
        self.resent += sent
        self._progress_at = now

    def _on_host(self, msg: p.Message | p.Pair, now: float) -> None:
        if isinstance(msg, p.Pair):
            self.set_secret(msg.secret)  # pairing or rotation: the host challenges again
            self.say_hello()
        elif isinstance(msg, p.Ack):
            if msg.acked >= self.next_seq or msg.want > self.next_seq:
                self.host_bad_frames += 1  # acks what was never sent: ignore
                return
            while self._unacked:
                seq = next(iter(self._unacked))
                if seq > msg.acked:
                    break
                del self._unacked[seq]
            if msg.want > self._host_want:
                self._host_want = msg.want
                self._progress_at = now
            if msg.resend and msg.want < self.next_seq:
                last_want, last_at = self._resend_req
                if msg.want != last_want or now - last_at >= self.RESEND_HOLDOFF:
                    self._resend_req = (msg.want, now)
                    self._resend_from(msg.want, now, self.RESEND_ON_REQUEST)
        elif isinstance(msg, p.HostHello):
            lo = max(msg.version_min, self.version_range[0])
            hi = min(msg.version_max, self.version_range[1])
            self._send_hello(hi if lo <= hi else 0, self._challenge)
            if lo <= hi:
                self._host_want = next(iter(self._unacked), self.next_seq)
                self._resend_from(self._host_want, now)
        elif isinstance(msg, p.Led):
            self.led = msg
            self._heartbeat()
        elif isinstance(msg, p.ResetCounter):
            if msg.epoch != self.epoch:
                self.epoch = msg.epoch
                self.dispense = 0
            self._heartbeat()
