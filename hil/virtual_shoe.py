"""The virtual shoe: the shoe side of protocol v1 on a real pseudo-terminal or on TCP.

- ``transport="pty"``: ``os.openpty()`` in raw mode. The shoe keeps a stable symlink (like the
  udev link ``/dev/serial/by-id/...`` of a real shoe) pointing at the current pty; :meth:`unplug`
  closes the master (an exact unplug: the host's reads fail with EIO) and removes the link;
  :meth:`replug` makes a new pty and re-points the link.
- ``transport="tcp"``: a listening socket on 127.0.0.1 (``url`` is ``socket://127.0.0.1:PORT``)
  for remote benches and for a host that is killed and restarted while the shoe lives on in
  another process; the newest connection replaces the previous one, on the same port.

The shoe keeps every event until the host acks it, resends from the host's ``want`` on request or
after :attr:`resend_s` without progress, and resends everything unacked after every HOST_HELLO.
Its next sequence number survives :meth:`reboot` (non-volatile in a real shoe); the unacked buffer
does not when ``lose_unacked`` is set.

Faults (:class:`Faults`, parsed from a spec such as ``corrupt=0.01,drop=0.001,unplug-every=1000``)
act on the line in both directions and on the cards; see ``docs/protocol.md``.
"""

from __future__ import annotations

import errno
import logging
import math
import os
import random
import select
import socket
import tempfile
import threading
import time
import tty
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from drivers import protocol as p
from drivers.exc import FaultSpecError, LinkClosedError, ShoeError
from hil.deck import Deck
from shoe_ctl.events import FaultKind
from shoe_ctl.rules.cards import Card, full_deck

log = logging.getLogger(__name__)

CARD_ACTIONS = ("unreadable", "double-pull", "duplicate", "foreign")
FAULT_ACTIONS = ("misread", "jam", "cover-open", "reader-error")
LINK_ACTIONS = ("unplug", "reboot")
SCHEDULABLE = CARD_ACTIONS + FAULT_ACTIONS + LINK_ACTIONS
_HB_FLAG = {FaultKind.COVER_OPEN: "cover_open", FaultKind.JAM: "jammed", FaultKind.READER_ERROR: "reader_error"}
"""Fault conditions mirrored in the HEARTBEAT flags, by the flag's field name."""
NO_HOST_LED = p.Led(0, 0, "degraded", ("amber",), "blink", 800, 800)
"""What the shoe's LEDs show while no host talks to it (docs/protocol.md, LED): amber blinking
800/800 ms, reported as LED token 0 (never sent on the wire)."""


class EmptyShoeError(ShoeError, IndexError):
    """A pull from a shoe with no card left."""


@dataclass
class Faults:
    """What goes wrong, by rate or by schedule.

    Line faults, probabilities per byte, in both directions: ``corrupt`` (the byte is XORed with
    a random nonzero value), ``drop`` (the byte is lost), ``garbage`` (a random byte is inserted
    before it). ``delay``: probability per frame that it waits ``delay_ms`` before it is written.

    Card faults, probabilities per pull: ``unreadable`` (the card leaves unread), ``double_pull``
    (two cards leave together; a DOUBLE_PULL fault and both cards are reported), ``duplicate`` (a
    copy of a card already dealt leaves instead of the next card), ``foreign`` (a card from another
    deck: one not loaded in this stub), and fault reports ``misread``, ``jam``, ``cover_open``,
    ``reader_error`` (reported and cleared at once).

    Link faults: ``unplug_every`` / ``reboot_every`` N pulls (a reboot loses the unacked buffer);
    the shoe is away for ``unplug_ms`` milliseconds.

    ``schedule``: pull number (1-based) -> actions from :data:`SCHEDULABLE`, applied on that pull
    (card actions) or after it (faults, unplug, reboot).
    """

    corrupt: float = 0.0
    drop: float = 0.0
    garbage: float = 0.0
    delay: float = 0.0
    delay_ms: float = 20.0
    unreadable: float = 0.0
    double_pull: float = 0.0
    duplicate: float = 0.0
    foreign: float = 0.0
    misread: float = 0.0
    jam: float = 0.0
    cover_open: float = 0.0
    reader_error: float = 0.0
    unplug_every: int = 0
    reboot_every: int = 0
    unplug_ms: float = 0.0
    schedule: dict[int, list[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str | None) -> Faults:
        """Parse ``key=value,key=value``; keys are the field names with ``-`` for ``_``
        (``unplug-every=1000``), and ``ACTION-at=N:N:N`` schedules an action at pull numbers.
        An empty spec or ``none`` is no faults.

        :raises FaultSpecError: an unknown key, a bad number, a probability outside 0..1.
        """
        faults = cls()
        if not spec or spec.strip().lower() == "none":
            return faults
        names = {f.name: f for f in fields(cls) if f.name != "schedule"}
        for item in spec.split(","):
            item = item.strip()
            if not item:
                continue
            key, sep, value = item.partition("=")
            key = key.strip().lower()
            if not sep:
                raise FaultSpecError(f"fault spec {spec!r}: {item!r} is not key=value")
            if key.endswith("-at"):
                action = key[:-3]
                if action not in SCHEDULABLE:
                    raise FaultSpecError(f"fault spec {spec!r}: unknown action {action!r} "
                                         f"(known: {', '.join(SCHEDULABLE)})")
                for n in value.split(":"):
                    try:
                        at = int(n)
                    except ValueError:
                        raise FaultSpecError(f"fault spec {spec!r}: {key}: {n!r} is not a pull number") from None
                    if at < 1:
                        raise FaultSpecError(f"fault spec {spec!r}: {key}: pull numbers start at 1")
                    faults.schedule.setdefault(at, []).append(action)
                continue
            attr = key.replace("-", "_")
            f = names.get(attr)
            if f is None:
                known = ", ".join(sorted(n.replace("_", "-") for n in names))
                raise FaultSpecError(f"fault spec {spec!r}: unknown key {key!r} (known: {known}, ACTION-at)")
            try:
                number: float = int(value) if f.type in (int, "int") else float(value)
            except ValueError:
                raise FaultSpecError(f"fault spec {spec!r}: {key}={value!r} is not a number") from None
            if number < 0 or (f.type in (float, "float") and not attr.endswith("_ms") and number > 1):
                raise FaultSpecError(f"fault spec {spec!r}: {key}={value} out of range")
            setattr(faults, attr, number)
        return faults

    @property
    def line_noise(self) -> bool:
        """True when any line fault is set."""
        return bool(self.corrupt or self.drop or self.garbage or self.delay)


class _Noise:
    """Line faults for one direction; geometric gaps so a clean byte costs nothing."""

    def __init__(self, faults: Faults, rng: random.Random) -> None:
        self.rng = rng
        self.rates = (faults.corrupt, faults.drop, faults.garbage)
        self.next = [self._gap(r) for r in self.rates]
        self.delay = faults.delay
        self.delay_s = faults.delay_ms / 1000.0
        self.counts = [0, 0, 0]

    def _gap(self, rate: float) -> float:
        if rate <= 0:
            return math.inf
        if rate >= 1:
            return 0
        return int(math.log(1.0 - self.rng.random()) / math.log(1.0 - rate))

    def apply(self, data: bytes) -> bytes:
        n = len(data)
        if min(self.next) >= n:
            self.next = [x - n for x in self.next]
            return data
        hits: list[tuple[int, int]] = []
        for kind in range(3):
            while self.next[kind] < n:
                hits.append((int(self.next[kind]), kind))
                self.next[kind] += 1 + self._gap(self.rates[kind])
            self.next[kind] -= n
        out = bytearray(data)
        for pos, kind in sorted(hits, reverse=True):
            if pos >= len(out):
                continue
            self.counts[kind] += 1
            if kind == 0:
                out[pos] ^= self.rng.randrange(1, 256)
            elif kind == 1:
                del out[pos]
            else:
                out.insert(pos, self.rng.randrange(256))
        return bytes(out)

    def maybe_delay(self) -> None:
        if self.delay and self.rng.random() < self.delay:
            time.sleep(self.delay_s)


class VirtualShoe:
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
    :param on_event: called with each new event message (under the shoe's lock).
    :param host_silence_s: seconds without a valid host frame after which the shoe's LEDs show
        :data:`NO_HOST_LED` instead of the host's last pattern (protocol: 3 s).
    :raises ValueError: an unknown transport, or a serial number that is empty or over 32 bytes.
    """

    FIRMWARE = "virtual-1.0"
    RESEND_ON_REQUEST = 16
    RESEND_ON_TIMEOUT = 32
    RESEND_HOLDOFF = 0.02

    def __init__(self, deck: Deck | Sequence[Card] | None = None, *, transport: str = "pty",
                 link_path: str | Path | None = None, faults: Faults | str | None = None, seed: int = 0,
                 host: str = "127.0.0.1", port: int = 0, serial: str = "VS-0001",
                 readers: Sequence[str] = ("rfid",), heartbeat_s: float = 0.5, resend_s: float = 0.3,
                 version_range: tuple[int, int] = (p.PROTOCOL_VERSION, p.PROTOCOL_VERSION),
                 record: bool = True, on_event: Callable[[p.EventMsg], None] | None = None,
                 host_silence_s: float = 3.0) -> None:
        if transport not in ("pty", "tcp"):
            raise ValueError(f"transport must be 'pty' or 'tcp', not {transport!r}")
        if not 1 <= len(serial.encode("utf-8")) <= p.MAX_STR:
            raise ValueError(f"serial number {serial!r} must be 1..{p.MAX_STR} bytes of UTF-8")
        self.deck = deck if isinstance(deck, Deck) else Deck.seeded(seed) if deck is None else Deck(deck)
        self.transport = transport
        self.faults = faults if isinstance(faults, Faults) else Faults.parse(faults)
        self.serial = serial
        self.readers = tuple(readers)
        self.heartbeat_s = heartbeat_s
        self.resend_s = resend_s
        self.host_silence_s = host_silence_s
        self._host_rx_at = time.monotonic()
        self.version_range = version_range
        self.record = record
        self.on_event = on_event
        self._rng = random.Random(seed)
        self._noise_out = _Noise(self.faults, random.Random(seed * 7919 + 1))
        self._noise_in = _Noise(self.faults, random.Random(seed * 7919 + 2))
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._decoder = p.FrameDecoder()
        # link
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
        self._plugged = False
        self._replug_at: float | None = None
        # protocol state
        self.boot_id = self._new_boot_id()
        self.next_seq = 1
        self._unacked: OrderedDict[int, bytes] = OrderedDict()
        self._host_want = 1
        self._progress_at = 0.0
        self._resend_req: tuple[int, float] = (0, 0.0)
        self._next_hb = 0.0
        self.dispense = 0
        self.epoch = 0
        self.led: p.Led | None = None
        self._conditions: set[FaultKind] = set()
        self._seq_host = 0
        self._closed = False
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
        self.unplugs = 0
        self.lost_on_reboot = 0
        self.tx_overflow = 0
        self.errors = 0

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> VirtualShoe:
        """Plug in and start the shoe's thread (returns self)."""
        with self._lock:
            if self._closed:
                raise LinkClosedError("the virtual shoe is closed")
            if self._thread is not None:
                return self
            if self.transport == "tcp":
                self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                self._listener.bind((self._host, self._port))
                self._listener.listen(4)
                self._listener.setblocking(False)
                self._port = self._listener.getsockname()[1]
            self._plug()
            self._thread = threading.Thread(target=self._run, name="virtual-shoe", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Unplug, stop and join the thread, remove the link. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)
        with self._lock:
            self._unplug_io()
            if self._listener is not None:
                self._listener.close()
                self._listener = None
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self._own_dir is not None:
                try:
                    os.rmdir(self._own_dir)
                except OSError:
                    pass

    def __enter__(self) -> VirtualShoe:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        """What :class:`drivers.shoe.ShoeLink` opens: the symlink path, or ``socket://host:port``."""
        if self.transport == "tcp":
            return f"socket://{self._host}:{self._port}"
        assert self.link_path is not None
        return str(self.link_path)

    @property
    def plugged(self) -> bool:
        """True while plugged in."""
        return self._plugged

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
                out = [self._take()]
            if due("double-pull", f.double_pull) and self.deck.remaining():
                out.append(self.deck.take())
                self._event(p.FaultMsg(0, FaultKind.DOUBLE_PULL, False, "2 cards left together"))
            unread = due("unreadable", f.unreadable)
            for card in out:
                self.dispense = min(self.dispense + 1, 0xFFFF)
                reader = self.readers[0]
                self._event(p.CardMsg(0, None if unread else card, "none" if unread else reader,
                                      self.dispense, self.epoch))
            self.dispensed.extend(out)
            self.last_dispensed = tuple(out)
            for action, kind in (("misread", FaultKind.MISREAD), ("jam", FaultKind.JAM),
                                 ("cover-open", FaultKind.COVER_OPEN), ("reader-error", FaultKind.READER_ERROR)):
                if due(action, getattr(f, action.replace("-", "_"))):
                    self.inject_fault(kind)
                    self.inject_fault(kind, cleared=True)
            if "reboot" in todo or (f.reboot_every and n % f.reboot_every == 0):
                self.reboot(lose_unacked=True, away_s=f.unplug_ms / 1000.0)
            elif "unplug" in todo or (f.unplug_every and n % f.unplug_every == 0):
                self.unplug()
                self._replug_after(f.unplug_ms / 1000.0)
            return out[0]

    def _take(self) -> Card:
        try:
            return self.deck.take()
        except IndexError:
            raise EmptyShoeError("the shoe is empty") from None

    def remaining(self) -> int:
        """Cards left in the shoe."""
        return self.deck.remaining()

    def reload(self, cards: Deck | Iterable[Card]) -> None:
        """Load a new stub (after a scramble, or a new deck) and reset the dispense counter."""
        with self._lock:
            self.deck = cards if isinstance(cards, Deck) else Deck(cards)
            self._loaded = set(self.deck.cards())
            self.dispense = 0

    def inject_fault(self, kind: FaultKind | str, *, cleared: bool = False, detail: str = "") -> int:
        """Report a fault (or its clearing); returns the event's sequence number. Jam, cover open
        and reader error stay set in the HEARTBEAT flags from their report until their clearing."""
        with self._lock:
            kind = FaultKind(kind)
            if kind in _HB_FLAG:
                if cleared:
                    self._conditions.discard(kind)
                else:
                    self._conditions.add(kind)
            return self._event(p.FaultMsg(0, kind, cleared, detail))

    def press(self, button: int = 1) -> int:
        """Press shoe button ``button`` (1..255); returns the event's sequence number."""
        with self._lock:
            return self._event(p.ButtonMsg(0, button))

    def unacked_count(self) -> int:
        """Events the shoe holds that the host has not acked."""
        return len(self._unacked)

    def wait_acked(self, timeout: float = 5.0) -> bool:
        """Wait until every event is acked; False on timeout."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not self._unacked:
                return True
            time.sleep(0.005)
        return not self._unacked

    # ---------------------------------------------------------------- link faults

    def unplug(self) -> None:
        """Pull the cable: the pty master closes (host reads fail with EIO) and the link goes,
        or the TCP connection closes and new ones are refused."""
        with self._lock:
            self.unplugs += 1
            self._replug_at = None
            self._unplug_io()

    def replug(self) -> None:
        """Plug back in: a new pty behind the same symlink, or TCP connections accepted again."""
        with self._lock:
            if self._closed:
                raise LinkClosedError("the virtual shoe is closed")
            self._replug_at = None
            if not self._plugged:
                self._plug()
            self._wake()

    def reboot(self, *, lose_unacked: bool = True, away_s: float = 0.0) -> None:
        """Power-cycle the shoe: unplug, a new boot id, the dispense counter, epoch and LEDs back
        to 0, the unacked buffer lost when ``lose_unacked``; the next sequence number survives.
        Plugs back in after ``away_s`` seconds (0: at once) and says HELLO unasked."""
        with self._lock:
            self.reboots += 1
            self._unplug_io()
            if lose_unacked:
                self.lost_on_reboot += len(self._unacked)
                self._unacked.clear()
            self.boot_id = self._new_boot_id()
            self.dispense = 0
            self.epoch = 0
            self.led = None
            self._host_want = self.next_seq
            self._replug_after(away_s)
            if self._plugged:
                self._send_hello(self.version_range[1])

    def _replug_after(self, seconds: float) -> None:
        if seconds <= 0:
            self._plug()
        else:
            self._replug_at = time.monotonic() + seconds
            self._wake()

    def _new_boot_id(self) -> int:
        return self._rng.randrange(1, 1 << 32)

    # ---------------------------------------------------------------- transport (lock held)

    def _plug(self) -> None:
        if self.transport == "pty":
            master, slave = os.openpty()
            tty.setraw(slave)
            os.set_blocking(master, False)
            self._master, self._slave = master, slave
            assert self.link_path is not None
            tmp = self.link_path.with_name(self.link_path.name + ".new")
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            # the link names the slave through this process's fd table: a pty's /dev/pts name
            # may resolve in another devpts instance (containers), the fd never does
            os.symlink(f"/proc/{os.getpid()}/fd/{slave}", tmp)
            os.replace(tmp, self.link_path)
        self._plugged = True
        self._host_rx_at = time.monotonic()
        self._decoder.reset()
        self._wake()

    def _unplug_io(self) -> None:
        self._plugged = False
        if self.transport == "pty":
            if self.link_path is not None:
                try:
                    self.link_path.unlink()
                except FileNotFoundError:
                    pass
            for fd in (self._master, self._slave):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._master = self._slave = None
        elif self._conn is not None:
            try:
                self._conn.close()
            except OSError:
                pass
            self._conn = None
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def _tx(self, frame: bytes) -> None:
        if not self._plugged:
            return
        noise = self._noise_out
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

    # ---------------------------------------------------------------- protocol (lock held)

    def _event(self, msg: p.CardMsg | p.FaultMsg | p.ButtonMsg) -> int:
        seq = self.next_seq
        self.next_seq += 1
        msg = replace(msg, seq=seq)
        frame = p.encode(msg)
        if not self._unacked:
            self._progress_at = time.monotonic()
        self._unacked[seq] = frame
        if self.record:
            self.events.append(msg)
        if self.on_event is not None:
            self.on_event(msg)
        self._tx(frame)
        return seq

    def _send_hello(self, version: int) -> None:
        self.hellos += 1
        first = next(iter(self._unacked), self.next_seq)
        self._tx(p.encode(p.Hello(self.next_seq, version, self.version_range[0], self.version_range[1],
                                  self.boot_id, first, self.epoch, self.led.token if self.led else 0,
                                  self.readers, self.FIRMWARE, self.serial)))

    def _heartbeat(self) -> None:
        flags = {_HB_FLAG[kind]: True for kind in self._conditions}
        self._tx(p.encode(p.Heartbeat(self.next_seq, self.dispense, self.epoch,
                                      self.led.token if self.led else 0, unacked=min(len(self._unacked), 0xFFFF),
                                      **flags)))

    def _resend_from(self, want: int, now: float, limit: int = 512) -> None:
        sent = 0
        for seq, frame in self._unacked.items():
            if seq >= want:
                self._tx(frame)
                sent += 1
                if sent >= limit:
                    break
        self.resent += sent
        self._progress_at = now

    def _on_host(self, msg: p.Message, now: float) -> None:
        if isinstance(msg, p.Ack):
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
            self._send_hello(hi if lo <= hi else 0)
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

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:  # a bug here must not leave a silent dead shoe
                log.exception("virtual shoe step failed")
                self.errors += 1
                time.sleep(0.01)

    def _step(self) -> None:
        if True:
            with self._lock:
                fds: list[Any] = [self._wake_r]
                if self._master is not None:
                    fds.append(self._master)
                if self._listener is not None:
                    fds.append(self._listener)
                if self._conn is not None:
                    fds.append(self._conn)
            try:
                ready, _, _ = select.select(fds, [], [], 0.02)
            except (OSError, ValueError):
                return  # an fd closed under us by unplug(): loop with the new set
            data = b""
            with self._lock:
                if self._stop.is_set():
                    return
                now = time.monotonic()
                for r in ready:
                    if r == self._wake_r:
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
                if data:
                    for msg in self._decoder.feed(self._noise_in.apply(data)):
                        self.host_frames += 1
                        self._host_rx_at = now
                        self._on_host(msg, now)
                    self.host_bad_frames = self._decoder.stats.bad_frames
                if self._replug_at is not None and now >= self._replug_at:
                    self._replug_at = None
                    self._plug()
                    self._send_hello(self.version_range[1])
                if now - self._host_rx_at >= self.host_silence_s and self.led is not NO_HOST_LED:
                    self.led = NO_HOST_LED  # no host: a stale "deal" light must not stay on
                    self._next_hb = now
                if now >= self._next_hb:
                    self._next_hb = now + self.heartbeat_s
                    self._heartbeat()
                if (self._unacked and self.next_seq > self._host_want
                        and now - self._progress_at >= self.resend_s):
                    self._resend_from(max(self._host_want, next(iter(self._unacked))), now, self.RESEND_ON_TIMEOUT)

    def _accept(self) -> None:
        assert self._listener is not None
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        if not self._plugged:
            conn.close()
            return
        if self._conn is not None:
            self._conn.close()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._conn = conn
        self._decoder.reset()
