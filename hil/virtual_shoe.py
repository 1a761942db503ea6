"""The virtual shoe: the shoe side of protocol v1 on a real pseudo-terminal or on TCP.

:class:`VirtualShoe` puts together the device (:class:`hil.shoe_device.ShoeDevice`: deck,
dispense counter, sequence numbers, unacked events, fault injection; no I/O) and its line
(:class:`hil.shoe_line.ShoeLine`: the pty or TCP port, the line noise and the thread), under
one lock, behind the API the tests, the soak, the benchmark and ``shoe-ctl sim`` use. The fault
spec is :class:`hil.faults.Faults`. Behaviour and API: ``docs/protocol.md`` section 8.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from drivers import protocol as p
from drivers.exc import LinkClosedError
from hil.deck import Deck
from hil.faults import CARD_ACTIONS, FAULT_ACTIONS, LINK_ACTIONS, SCHEDULABLE, Faults, LineNoise
from hil.shoe_device import NO_HOST_LED, EmptyShoeError, ShoeDevice
from hil.shoe_line import ShoeLine
from shoe_ctl.events import FaultKind
from shoe_ctl.lifecycle import Closeable
from shoe_ctl.rules.cards import Card

__all__ = ["CARD_ACTIONS", "FAULT_ACTIONS", "LINK_ACTIONS", "NO_HOST_LED", "SCHEDULABLE", "EmptyShoeError",
           "Faults", "LineNoise", "VirtualShoe"]


class _OnDevice:
    """An attribute of :class:`VirtualShoe` that is the device's attribute of the same name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, shoe: VirtualShoe | None, owner: type | None = None) -> Any:
        if shoe is None:
            return self
        return getattr(shoe.device, self.name)

    def __set__(self, shoe: VirtualShoe, value: object) -> None:
        setattr(shoe.device, self.name, value)


class VirtualShoe(Closeable):
    """A shoe with a deck inside, speaking protocol v1 on a pty or TCP.

    :param deck: the cards loaded (a :class:`~hil.deck.Deck` or a sequence of cards).
    :param transport: ``"pty"`` or ``"tcp"``.
    :param link_path: the stable symlink for ``pty`` (default: a new temporary directory's
        ``shoe``).
    :param faults: a :class:`Faults`, a spec string, or None.
    :param seed: seeds every random choice of the fault injection.
    :param port: TCP port (0 = any free one; kept across unplug/replug).
    :param serial: serial number reported in HELLO.
    :param heartbeat_s: seconds between heartbeats (a real shoe: at most 1 s).
    :param resend_s: seconds without progress before unreceived events are resent.
    :param record: keep :attr:`events` (every event sent, in order); a long soak turns it off
        and uses ``on_event``.
    :param on_event: called with each new event message (under the shoe's lock), just before
        its frame is written.
    :param host_silence_s: seconds without a valid host frame after which the shoe's LEDs show
        :data:`NO_HOST_LED` instead of the host's last pattern (protocol: 3 s).
    :param secret: the pairing secret (32 bytes): the shoe speaks the authenticated version 2
        (:class:`hil.shoe_device.ShoeDevice`); ``pairing``: it takes a secret from a PAIR frame;
        ``on_secret``: called with each new secret.
    :param persistent_counters: keep epoch, dispense counter, card total and boot count across
        reboots and report them in HELLO (default, docs/protocol.md section 12); False: a shoe of
        the first revision.
    :param counts_unpowered: the sensor counts cards pulled while the shoe is off.
    :param names_foreign: offer capability ``names-foreign``: a ``foreign`` pull is a tag of no
        deck, named by a FOREIGN event to a host that takes it (docs/protocol.md sections 8 and
        16); off by default.
    :raises ValueError: an unknown transport, or a serial number that is empty or over 32 bytes.
    """

    FIRMWARE = ShoeDevice.FIRMWARE
    RESEND_ON_REQUEST = ShoeDevice.RESEND_ON_REQUEST
    RESEND_ON_TIMEOUT = ShoeDevice.RESEND_ON_TIMEOUT
    RESEND_HOLDOFF = ShoeDevice.RESEND_HOLDOFF

    # the device's state and records, read (and, in tests, set) through the shoe
    deck = _OnDevice()
    faults = _OnDevice()
    serial = _OnDevice()
    readers = _OnDevice()
    heartbeat_s = _OnDevice()
    resend_s = _OnDevice()
    host_silence_s = _OnDevice()
    version_range = _OnDevice()
    record = _OnDevice()
    on_event = _OnDevice()
    boot_id = _OnDevice()
    next_seq = _OnDevice()
    dispense = _OnDevice()
    epoch = _OnDevice()
    led = _OnDevice()
    pulls = _OnDevice()
    events = _OnDevice()
    dispensed = _OnDevice()
    last_dispensed = _OnDevice()
    host_frames = _OnDevice()
    host_bad_frames = _OnDevice()
    host_refused = _OnDevice()
    secret = _OnDevice()
    pairing = _OnDevice()
    hellos = _OnDevice()
    resent = _OnDevice()
    reboots = _OnDevice()
    lost_on_reboot = _OnDevice()
    boot_count = _OnDevice()
    card_total = _OnDevice()
    pulled_unpowered = _OnDevice()

    def __init__(self, deck: Deck | Sequence[Card] | None = None, *, transport: str = "pty",
                 link_path: str | Path | None = None, faults: Faults | str | None = None, seed: int = 0,
                 host: str = "127.0.0.1", port: int = 0, serial: str = "VS-0001",
                 readers: Sequence[str] = ("rfid",), heartbeat_s: float = 0.5, resend_s: float = 0.3,
                 version_range: tuple[int, int] | None = None,
                 record: bool = True, on_event: Callable[[p.EventMsg], None] | None = None,
                 host_silence_s: float = 3.0, secret: bytes | None = None, pairing: bool = False,
                 on_secret: Callable[[bytes], None] | None = None, persistent_counters: bool = True,
                 counts_unpowered: bool = False, names_foreign: bool = False) -> None:
        if transport not in ("pty", "tcp"):
            raise ValueError(f"transport must be 'pty' or 'tcp', not {transport!r}")
        faults = faults if isinstance(faults, Faults) else Faults.parse(faults)
        cards = deck if isinstance(deck, Deck) else Deck.seeded(seed) if deck is None else Deck(deck)
        self.device = ShoeDevice(cards, faults=faults, seed=seed, serial=serial, readers=readers,
                                 heartbeat_s=heartbeat_s, resend_s=resend_s, version_range=version_range,
                                 record=record, on_event=on_event, host_silence_s=host_silence_s,
                                 now=time.monotonic(), secret=secret, pairing=pairing, on_secret=on_secret,
                                 persistent_counters=persistent_counters, counts_unpowered=counts_unpowered,
                                 names_foreign=names_foreign)
        self._lock = threading.RLock()
        super().__init__(self._lock)
        self.line = ShoeLine(self.device, self._lock, transport=transport, link_path=link_path, faults=faults,
                             seed=seed, host=host, port=port)
        self.unplugs = 0

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> VirtualShoe:
        """Plug in and start the shoe's thread (returns self).

        :raises LinkClosedError: after :meth:`close`.
        """
        with self._lock:
            if self._closed:
                raise LinkClosedError("the virtual shoe is closed")
            if not self.line.started:
                self.line.start()
        return self

    def _close(self) -> None:
        """``close()``: unplug, stop and join the line's thread, remove the link."""
        self.line.stop()

    def __enter__(self) -> VirtualShoe:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        """What :class:`drivers.shoe.ShoeLink` opens: the symlink path, or ``socket://host:port``."""
        return self.line.url

    @property
    def transport(self) -> str:
        """``"pty"`` or ``"tcp"``."""
        return self.line.transport

    @property
    def link_path(self) -> Path | None:
        """The stable symlink of a pty shoe (None on TCP)."""
        return self.line.link_path

    @property
    def plugged(self) -> bool:
        """True while plugged in."""
        return self.line.plugged

    @property
    def tx_overflow(self) -> int:
        """Writes lost because nobody read the line."""
        return self.line.tx_overflow

    @property
    def errors(self) -> int:
        """Unexpected errors in the shoe's thread (each logged)."""
        return self.line.errors

    # ---------------------------------------------------------------- the dealer's side

    def pull(self) -> Card:
        """Dispense the next card: its CARD event goes on the wire (with any card fault due).

        :returns: the card that physically left (for a double pull, the first; see
            :attr:`last_dispensed`).
        :raises EmptyShoeError: no card left.
        :raises LinkClosedError: after :meth:`close`.
        """
        with self._lock:
            if self._closed:
                raise LinkClosedError("the virtual shoe is closed")
            try:
                done = self.device.pull(time.monotonic())
            finally:
                self.line.flush()
            if done.after in ("reboot", "reboot-keep"):
                self.reboot(lose_unacked=done.after == "reboot", away_s=done.away_s)
            elif done.after == "unplug":
                self.unplug()
                self.line.replug_after(done.away_s)
            return done.card

    def _take(self) -> Card:
        return self.device.take()

    def remaining(self) -> int:
        """Cards left in the shoe."""
        return self.device.deck.remaining()

    def pair(self, secret: bytes) -> None:
        """Pair the shoe with ``secret`` (32 bytes; what a pairing button and a PAIR frame do on a
        real shoe): it speaks the authenticated version 2 from its next HELLO.

        :raises ValueError: a secret of another size.
        """
        with self._lock:
            self.device.set_secret(secret)
            if self.line.plugged:
                self.device.say_hello()
                self.line.flush()

    def reload(self, cards: Deck | Iterable[Card]) -> None:
        """Load a new stub (after a scramble, or a new deck) and reset the dispense counter."""
        with self._lock:
            self.device.reload(cards)

    def inject_fault(self, kind: FaultKind | str, *, cleared: bool = False, detail: str = "") -> int:
        """Report a fault (or its clearing); returns the event's sequence number. Jam, cover open
        and reader error stay set in the HEARTBEAT flags from their report until their clearing."""
        with self._lock:
            try:
                return self.device.inject_fault(kind, cleared=cleared, detail=detail, now=time.monotonic())
            finally:
                self.line.flush()

    def press(self, button: int = 1) -> int:
        """Press shoe button ``button`` (1..255); returns the event's sequence number."""
        with self._lock:
            try:
                return self.device.press(button, time.monotonic())
            finally:
                self.line.flush()

    def unacked_count(self) -> int:
        """Events the shoe holds that the host has not acked."""
        return self.device.unacked_count()

    def wait_acked(self, timeout: float = 5.0) -> bool:
        """Wait until every event is acked; False on timeout."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not self.device.unacked_count():
                return True
            time.sleep(0.005)
        return not self.device.unacked_count()

    # ---------------------------------------------------------------- link faults

    def unplug(self) -> None:
        """Pull the cable: the pty master closes (host reads fail with EIO) and the link goes,
        or the TCP connection closes and new ones are refused."""
        with self._lock:
            self.unplugs += 1
            self.line.replug_at = None
            self.line.unplug()

    def replug(self) -> None:
        """Plug back in: a new pty behind the same symlink, or TCP connections accepted again.

        :raises LinkClosedError: after :meth:`close`.
        """
        with self._lock:
            if self._closed:
                raise LinkClosedError("the virtual shoe is closed")
            self.line.replug_at = None
            if not self.line.plugged:
                self.line.plug()
            self.line.wake()

    def reboot(self, *, lose_unacked: bool = True, away_s: float = 0.0, pulls_while_off: int = 0) -> list[Card]:
        """Power-cycle the shoe: unplug, a new boot id, the LEDs back to 0, the unacked buffer lost
        when ``lose_unacked``; the next sequence number survives, and the counters as
        :meth:`ShoeDevice.reboot` says. ``pulls_while_off`` cards leave while it is off
        (:meth:`ShoeDevice.pull_unpowered`). Plugs back in after ``away_s`` seconds (0: at once)
        and says HELLO unasked. Returns the cards pulled while off."""
        with self._lock:
            self.line.unplug()
            off = [self.device.pull_unpowered() for _ in range(pulls_while_off)]
            self.device.reboot(lose_unacked=lose_unacked)
            self.line.replug_after(away_s)
            if self.line.plugged:
                self.device.say_hello()
                self.line.flush()
        return off
