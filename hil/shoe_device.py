"""The virtual shoe's device: the shoe firmware's link core with a simulated deck and faults.

:class:`ShoeDevice` is :class:`drivers.shoe_fw.core.ShoeCore` (the shoe side of the protocol,
the same code a real shoe runs) with what only a simulation has: a deck of known cards in place
of a reader and a card-out sensor, the card and link faults of the fault spec at each pull
(``docs/protocol.md`` section 8), and records of everything it did (the events as the host's
message objects, the cards dispensed). No thread, no port, no clock of its own: every time is
an argument (seconds). The line that carries its frames is :mod:`hil.shoe_line`;
:class:`hil.virtual_shoe.VirtualShoe` puts the two together.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from drivers import protocol as p
from drivers.exc import ShoeError
from drivers.shoe_fw import codec as fc
from drivers.shoe_fw import core as fw
from hil.deck import Deck
from hil.faults import Faults
from shoe_ctl.events import FaultKind, ForeignWhat
from shoe_ctl.rules.cards import Card, full_deck

NO_HOST_LED = p.Led(0, 0, "degraded", ("amber",), "blink", 800, 800)
"""What the shoe's LEDs show while no host talks to it (docs/protocol.md, LED): amber blinking
800/800 ms, reported as LED token 0 (never sent on the wire)."""
STOP_LED = p.Led(0, 0, "stop", ("red",), "blink", 250, 250)
"""What they show while the event buffer is full (docs/protocol.md section 5), token 0."""

_PULL_FAULTS = (("misread", "misread", FaultKind.MISREAD), ("jam", "jam", FaultKind.JAM),
                ("cover-open", "cover_open", FaultKind.COVER_OPEN),
                ("reader-error", "reader_error", FaultKind.READER_ERROR))
"""The faults a pull may report (reported and cleared at once): the schedule's action, the rate's
field of :class:`hil.faults.Faults`, the kind."""
DISPENSED_KEPT = 256
"""Cards :attr:`ShoeDevice.dispensed` keeps at most (the oldest go first): more than a deck, so a
``duplicate`` fault may copy any card of the deck loaded, and a shoe left dealing for days (with
``duplicate`` or ``foreign`` pulls that take no card from the deck) holds a bounded record."""


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


class ShoeDevice(fw.ShoeCore):
    """A shoe speaking the protocol, without I/O, with a deck inside.

    :param deck: the cards loaded.
    :param faults: card and link faults applied at each pull (line faults are the line's).
    :param seed: seeds the boot ids and every random card fault.
    :param serial: serial number reported in HELLO (1..32 bytes of UTF-8).
    :param readers: reader kinds fitted (the first one reads every card).
    :param heartbeat_s: seconds between heartbeats (a real shoe: at most 1 s).
    :param resend_s: seconds without progress before unreceived events are resent.
    :param version_range: the protocol versions it speaks.
    :param record: keep :attr:`events` (every event made, in order; a long run turns it off).
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
    :param capacity: events the unacked buffer holds (the firmware's ring; full: section 5).
    :param names_foreign: offer capability ``names-foreign`` (docs/protocol.md section 16): a
        ``foreign`` pull is then a tag of no deck the shoe knows, sent as the firmware sends it
        (CARD 0xFF, FOREIGN ``unknown``, FAULT misread cleared; the middle one in the host's own
        form). Off: a ``foreign`` pull is read as a card that is not the stub's.
    :raises ValueError: a serial number that is empty or over 32 bytes, a secret of another size.
    """

    FIRMWARE = "virtual-1.0"

    def __init__(self, deck: Deck, *, faults: Faults | None = None, seed: int = 0, serial: str = "VS-0001",
                 readers: Sequence[str] = ("rfid",), heartbeat_s: float = 0.5, resend_s: float = 0.3,
                 version_range: tuple[int, int] | None = None,
                 record: bool = True, on_event: Callable[[p.EventMsg], None] | None = None,
                 host_silence_s: float = 3.0, now: float = 0.0, secret: bytes | None = None,
                 pairing: bool = False, on_secret: Callable[[bytes], None] | None = None,
                 persistent_counters: bool = True, counts_unpowered: bool = False, capacity: int = 8192,
                 names_foreign: bool = False) -> None:
        self._rng = random.Random(seed)
        self._on_secret: Callable[[bytes], None] | None = None
        self.readers = tuple(readers)
        unknown = [r for r in self.readers if r not in p.READERS]
        if unknown or not self.readers:
            raise ValueError(f"readers {self.readers!r}: each one of {', '.join(p.READERS)}, at least one")
        mask = sum(1 << p.READERS.index(r) for r in set(self.readers))
        super().__init__(serial, readers=mask, firmware=self.FIRMWARE, random_bytes=os.urandom,
                         pairing=pairing, heartbeat_s=heartbeat_s, resend_s=resend_s,
                         host_silence_s=host_silence_s, capacity=capacity, version_range=version_range,
                         persistent_counters=persistent_counters, counts_unpowered=counts_unpowered,
                         names_foreign=names_foreign, now=now)
        self._on_secret = on_secret
        if secret is not None:
            self.set_secret(secret)
        self.deck = deck
        self.faults = faults if faults is not None else Faults()
        self.record = record
        self.on_event = on_event
        self._reader_code = p.READER_CODES[self.readers[0]]
        self._loaded: set[Card] = set(self.deck.cards())
        self._leds: dict[tuple[int, ...], p.Led] = {}
        # records
        self.pulls = 0
        self.events: list[p.EventMsg] = []
        self.dispensed: list[Card] = []
        """The cards that left since the deck was loaded (:meth:`reload` empties it), first first,
        at most :data:`DISPENSED_KEPT` (the latest); a ``duplicate`` fault copies one of them."""
        self.last_dispensed: tuple[Card, ...] = ()
        self.reboots = 0
        self.lost_on_reboot = 0
        self.pulled_unpowered = 0

    def _new_boot_id(self) -> int:
        return self._rng.randrange(1, 1 << 32)

    def on_secret(self, secret: bytes) -> None:
        if self._on_secret is not None:
            self._on_secret(secret)

    # the firmware's parts' state, read (and in tests set) as the device's own attributes

    def _cfg_attr(name: str) -> Any:  # type: ignore[misc]
        def get(self: ShoeDevice) -> Any:
            return getattr(self.cfg, name)

        def put(self: ShoeDevice, value: object) -> None:
            setattr(self.cfg, name, value)

        return property(get, put, doc=f"The firmware's ``cfg.{name}``.")

    def _part_attr(part: str, name: str) -> Any:  # type: ignore[misc]
        def get(self: ShoeDevice) -> Any:
            return getattr(getattr(self, part), name)

        def put(self: ShoeDevice, value: object) -> None:
            setattr(getattr(self, part), name, value)

        return property(get, put, doc=f"The firmware's ``{part}.{name}``.")

    serial = _cfg_attr("serial")
    heartbeat_s = _cfg_attr("heartbeat_s")
    resend_s = _cfg_attr("resend_s")
    host_silence_s = _cfg_attr("host_silence_s")
    persistent_counters = _cfg_attr("persistent_counters")
    counts_unpowered = _cfg_attr("counts_unpowered")
    secret = _part_attr("auth", "secret")
    pairing = _part_attr("auth", "pairing")
    host_frames = _part_attr("stats", "host_frames")
    host_bad_frames = _part_attr("stats", "host_bad_frames")
    host_refused = _part_attr("stats", "host_refused")
    hellos = _part_attr("stats", "hellos")
    resent = _part_attr("stats", "resent")
    del _cfg_attr, _part_attr

    @property
    def version_range(self) -> tuple[int, int]:
        """The versions spoken (see :attr:`drivers.shoe_fw.core.ShoeCore.version_range`)."""
        return fw.ShoeCore.version_range.fget(self)  # type: ignore[attr-defined,no-any-return]

    @version_range.setter
    def version_range(self, value: tuple[int, int] | None) -> None:
        self.cfg.version_range = value

    @property
    def led(self) -> p.Led | None:
        """The pattern shown, as the host's LED message (token 0: :data:`NO_HOST_LED` or
        :data:`STOP_LED`), or None (off since power-up)."""
        raw = self.lights.led
        if raw is None:
            return None
        if raw is fw.NO_HOST_LED:
            return NO_HOST_LED
        if raw is fw.STOP_LED:
            return STOP_LED
        led = self._leds.get(raw)
        if led is None:
            token, signal, leds, mode, on_ms, off_ms = raw
            names = tuple(name for bit, name in enumerate(p.LED_NAMES) if leds >> bit & 1)
            led = p.Led(0, token, p.LED_SIGNALS[signal], names, p.LED_MODES[mode], on_ms, off_ms)
            self._leds = {raw: led}
        return led

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

        foreign = False
        if due("duplicate", f.duplicate) and self.dispensed:
            out = [rng.choice(self.dispensed)]
        elif due("foreign", f.foreign):
            strangers = [c for c in full_deck() if c not in self._loaded]
            out = [rng.choice(strangers or self.dispensed or full_deck())]
            foreign = self.naming.offered
        else:
            out = [self.take()]
        if due("double-pull", f.double_pull) and self.deck.remaining():
            out.append(self.deck.take())
            self.inject_fault(FaultKind.DOUBLE_PULL, detail="2 cards left together", now=now)
        unread = due("unreadable", f.unreadable)
        for i, card in enumerate(out):
            if foreign and i == 0:
                self._foreign_tag(now)
                continue
            if unread:
                seq = self.card(fc.UNREADABLE, fc.READER_NONE, now)
            else:
                seq = self.card(card.code, self._reader_code, now)
            self._record(p.CardMsg(seq, None if unread else card, "none" if unread else self.readers[0],
                                   self.dispense, self.epoch))
        self._dispensed(out)
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

    def _foreign_tag(self, now: float) -> None:
        """A card whose tag is in no deck the shoe knows left: the firmware's three events
        (``drivers/shoe_fw/firmware.py``, a refused card; docs/protocol.md section 16)."""
        seq = self.card(fc.UNREADABLE, fc.READER_NONE, now)
        self._record(p.CardMsg(seq, None, "none", self.dispense, self.epoch))
        tag = bytes([0x04]) + self._rng.randbytes(6)  # a 7-byte ISO/IEC 14443 A UID
        seq = self.event(fc.T_FOREIGN, fc.foreign_payload(fc.FOREIGN_UNKNOWN, fc.UNREADABLE, tag, "", ""), now)
        self._record(p.ForeignMsg(seq, ForeignWhat.UNKNOWN, None, tag))
        self.inject_fault(FaultKind.MISREAD, cleared=True, now=now)

    def _record(self, msg: p.EventMsg) -> None:
        if not msg.seq:
            return  # the buffer was full: counted, no event
        if self.record:
            self.events.append(msg)
        if self.on_event is not None:
            self.on_event(msg)

    def pull_unpowered(self) -> Card:
        """One card leaves while the shoe is off (between :meth:`reboot`'s power loss and its
        power-up): no event; with ``counts_unpowered`` the sensor on its backup supply counts it
        (dispense counter and card total), otherwise nothing at all records it.

        :raises EmptyShoeError: no card left.
        """
        card = self.take()
        self.pulled_unpowered += 1
        self._dispensed([card])
        self.count_unpowered()
        return card

    def _dispensed(self, cards: list[Card]) -> None:
        """Record ``cards`` as the last pull's, keeping :attr:`dispensed` bounded."""
        self.dispensed.extend(cards)
        if len(self.dispensed) > DISPENSED_KEPT:
            del self.dispensed[:-DISPENSED_KEPT]
        self.last_dispensed = tuple(cards)

    def take(self) -> Card:
        """The next card leaves the deck, with no event at all (a card past a blind sensor).

        :raises EmptyShoeError: no card left.
        """
        try:
            return self.deck.take()
        except IndexError:
            raise EmptyShoeError("the shoe is empty") from None

    def reload(self, cards: Deck | Iterable[Card]) -> None:
        """Load a new stub (after a scramble, or a new deck) and reset the dispense counter;
        :attr:`dispensed` starts over (a duplicate is a copy of a card of the deck in the shoe)."""
        self.deck = cards if isinstance(cards, Deck) else Deck(cards)
        self._loaded = set(self.deck.cards())
        self.dispensed = []
        self.dispense = 0

    def inject_fault(self, kind: FaultKind | str, *, cleared: bool = False, detail: str = "",
                     now: float = 0.0) -> int:
        """Report a fault (or its clearing); returns the event's sequence number. Jam, cover open
        and reader error stay set in the HEARTBEAT flags from their report until their clearing."""
        kind = FaultKind(kind)
        seq: int = self.fault(p.FAULT_CODES[kind], cleared, detail, now)
        self._record(p.FaultMsg(seq, kind, cleared, detail))
        return seq

    def press(self, button: int, now: float) -> int:
        """Shoe button ``button`` (1..255) pressed; returns the event's sequence number."""
        seq: int = self.button(button, now)
        self._record(p.ButtonMsg(seq, button))
        return seq

    def reboot(self, lose_unacked: bool = True, now: float | None = None) -> int:
        """Power cycle: a new boot id, the LEDs back to 0, the unacked buffer lost when
        ``lose_unacked``; the next sequence number survives (non-volatile), and with
        ``persistent_counters`` the epoch, dispense counter and card total too (the boot count
        goes up by one); without, the dispense counter and epoch go back to 0."""
        self.reboots += 1
        lost: int = super().reboot(lose_unacked, now)
        self.lost_on_reboot += lost
        return lost
