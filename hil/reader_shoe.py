"""A reader-backed shoe in simulation: the Pi bridge on a virtual PN532 and a mock beam.

:class:`ReaderShoe` is everything of a built shoe but the hardware, which is simulated below the
serial port and the GPIO: a :class:`hil.virtual_pn532.VirtualReader` on a pty, the PN532 reader
module (``drivers/shoe_fw/readers/pn532.py``) on it through pyserial and Adafruit's driver, the
card-out beam on a gpiozero ``MockFactory`` pin, and the bridge (``drivers/shoe_bridge.py``:
the firmware's loop, its state file and the shoe's pty). A deck is enrolled for it (52 seeded
UIDs sealed under the pairing secret, ``shoe_ctl.service.decks``). :meth:`ReaderShoe.pull` is a
card crossing the mouth as a dealer pulls it: its tag placed in the field, the beam broken, the
reader's scans, the beam restored, the tag gone. The shoe-ctl side opens :attr:`ReaderShoe.url`
like any shoe. It has what the harnesses use of :class:`hil.virtual_shoe.VirtualShoe` (``url``,
``pull``, ``reload``, ``unacked_count``, ``wait_acked``, ``card_events``) and, for faults,
:meth:`ReaderShoe.reader_fault` and :meth:`ReaderShoe.restart_bridge`. docs/build-a-shoe.md,
"Testing without hardware".
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drivers.reader_port import GPIO_LIBRARY, PN532_LIBRARY, require_libraries
from drivers.shoe_bridge import Bridge, GpioBeam, SecretFile
from drivers.shoe_fw import codec as fwc
from drivers.shoe_fw import deckmap
from drivers.shoe_fw.readers.pn532 import PN532Reader
from hil.virtual_pn532 import Tag, VirtualReader
from shoe_ctl.rules.cards import Card, card_text, full_deck
from shoe_ctl.service.decks import NEW_DECK_ORDER, DeckFolder

BEAM_PIN = 17
"""The beam's BCM GPIO (the mock pin's number; docs/build-a-shoe.md, "Wiring")."""
FOREIGN_TAG = Tag(bytes.fromhex("05f0e1d2c3b4a5"))
"""A tag in no deck this shoe enrols (its decks' UIDs all start 04): a foreign card."""


def seeded_uids(seed: int, count: int = deckmap.DECK_SIZE) -> list[bytes]:
    """``count`` distinct 7-byte NTAG-like UIDs (first byte 04) from ``seed``."""
    rng = random.Random(seed)
    out: list[bytes] = []
    seen: set[bytes] = set()
    while len(out) < count:
        uid = b"\x04" + bytes(rng.randrange(256) for _ in range(6))
        if uid not in seen:
            seen.add(uid)
            out.append(uid)
    return out


class ReaderShoe:
    """The simulated reader-backed shoe.

    :param workdir: where the bridge's state, the deck folder and the shoe's link go.
    :param serial: the shoe's serial; ``secret``: its pairing secret (32 bytes; the host's copy
        is the caller's business).
    :param seed: the deck's UIDs.
    :param scans: reader scans while the beam is broken in each pass.
    :param port_timeout: the reader port's read timeout (seconds; each scan waits it once).
    :param reader_timeout: the PN532 module's answer timeout (seconds).
    :param firmware: keyword arguments for the firmware's loop (timers).
    :param paired: give the bridge the pairing secret (protocol version 2); unpaired, it speaks
        version 1 and every tag is foreign to it (the seals cannot be checked).
    :param plan: what happens before a pull, by the pull's number (1, 2, ...): ``"restart"``
        (:meth:`restart_bridge`) or a PN532 fault (:meth:`reader_fault`).
    """

    def __init__(self, workdir: str | Path, *, serial: str, secret: bytes, seed: int = 0, scans: int = 2,
                 port_timeout: float = 0.005, reader_timeout: float = 1.0,
                 firmware: dict[str, Any] | None = None, plan: dict[int, str] | None = None,
                 paired: bool = True) -> None:
        import serial as pyserial

        require_libraries("the simulated reader shoe", [GPIO_LIBRARY, PN532_LIBRARY])
        from gpiozero import DigitalInputDevice
        from gpiozero.pins.mock import MockFactory

        self.workdir = Path(workdir)
        self.serial = serial
        self.scans = scans
        self.firmware = firmware
        self.decks = self.workdir / "decks"
        self.state = self.workdir / "bridge"
        self.link = self.workdir / "shoe"
        self.deck_id = f"soak-{seed}"
        uids = seeded_uids(seed)
        DeckFolder(self.decks, secret).write(self.deck_id, "hil", NEW_DECK_ORDER, uids)
        by_name = {card_text(c): c for c in full_deck()}
        self.tags: dict[Card, Tag] = {by_name[name]: Tag(uid) for name, uid in zip(NEW_DECK_ORDER, uids, strict=True)}
        self.codes: dict[int, Card] = {deckmap.card_code(card_text(c)): c for c in self.tags}
        if paired:  # else the bridge speaks version 1 only, and no deck map is live for it
            SecretFile(self.state).save(secret)
        self.virtual = VirtualReader(link_path=self.workdir / "pn532").start()
        self.port = pyserial.Serial(self.virtual.url, 115200, timeout=port_timeout)
        # a generous answer timeout: on a loaded test machine the chip's thread may wait its turn
        self.reader = PN532Reader(self.port, reset_pin=self.virtual.reset_line, timeout=reader_timeout)
        self.pins = MockFactory()
        self.beam_pin = self.pins.pin(BEAM_PIN)
        self.beam_pin.drive_high()  # the beam is whole: the receiver's output high
        self.beam_device = DigitalInputDevice(BEAM_PIN, pull_up=None, active_state=True, pin_factory=self.pins)
        self._stub: list[Card] = []
        self._lock = threading.RLock()
        self.sent: dict[int, Card | None] = {}
        """Every CARD event the shoe made, by sequence number (across bridge restarts)."""
        self.faults_sent: list[tuple[int, int, bool]] = []
        """Every FAULT made: (seq, kind, cleared)."""
        self.plan = dict(plan or {})
        self.pulls = 0
        self.bridge: Any = None
        self.bridge_starts = 0
        self.passes = 0
        self.reader_faults = 0

    # ---------------------------------------------------------------- the bridge

    def _start_bridge(self) -> None:
        bridge = Bridge(state=self.state, link=self.link, serial=self.serial, reader=self.reader,
                        beam=GpioBeam(self.beam_device), decks=self.decks, firmware=self.firmware)
        made = bridge.core.made

        def record(seq: int, mtype: int, payload: bytes) -> None:
            if mtype == fwc.T_CARD:
                self.sent[seq] = self.codes.get(payload[0])
            elif mtype == fwc.T_FAULT:
                self.faults_sent.append((seq, payload[0], bool(payload[1] & 1) if len(payload) > 1 else False))
            made(seq, mtype, payload)

        bridge.core.made = record  # type: ignore[method-assign]
        self.bridge = bridge.start()
        self.bridge_starts += 1

    def start(self) -> ReaderShoe:
        """Start the bridge (the reader is started by its firmware)."""
        with self._lock:
            self._start_bridge()
        return self

    def restart_bridge(self, down_s: float = 0.0) -> None:
        """Stop the bridge (a power cut of the shoe between two passes: its state file is what
        survives) and start it again after ``down_s`` seconds."""
        with self._lock:
            if self.bridge is not None:
                self.bridge.close()
            time.sleep(down_s)
            self._start_bridge()

    def close(self) -> None:
        with self._lock:
            if self.bridge is not None:
                self.bridge.close()
                self.bridge = None
            self.beam_device.close()
            self.port.close()
            self.virtual.close()

    @property
    def url(self) -> str:
        """The shoe's link (what ``shoe-ctl run --shoe`` opens)."""
        return str(self.link)

    # ---------------------------------------------------------------- the dealer's side

    def reload(self, cards: Sequence[Card]) -> None:
        """Load a stub into the shoe (next card first)."""
        with self._lock:
            self._stub = list(cards)

    @property
    def remaining(self) -> int:
        return len(self._stub)

    def pull(self) -> Card | None:
        """Pull the next card through the mouth; returns it (None: the shoe is empty).

        :raises TimeoutError: the bridge did not see the pass within 10 s.
        """
        with self._lock:
            if not self._stub:
                return None
            self.pulls += 1
            planned = self.plan.get(self.pulls)
            if planned == "restart":
                self.restart_bridge()
            elif planned is not None and not self.reader_fault(planned):
                raise TimeoutError(f"pull {self.pulls}: the reader did not come back after {planned}")
            card = self._stub.pop(0)
            self.pass_tags([self.tags[card]])
            return card

    def pass_tags(self, tags: Sequence[Tag], timeout_s: float = 10.0) -> float:
        """One pass of the beam with ``tags`` in the field while it is broken; returns the wall
        time (``time.time()``) the beam was restored, when the card had left."""
        with self._lock:
            bridge = self.bridge
            before = bridge.fw.passes
            self.virtual.place(*tags)
            self.beam_pin.drive_low()
            self.virtual.wait_listings(self.scans, timeout_s)
            self.beam_pin.drive_high()
            restored = time.time()
            end = time.monotonic() + timeout_s
            while bridge.fw.passes == before:
                if time.monotonic() > end:
                    raise TimeoutError(f"the bridge did not see the pass within {timeout_s:g} s")
                time.sleep(0.001)
            self.virtual.clear()
            self.passes += 1
            return restored

    def reader_fault(self, kind: str, timeout_s: float = 15.0) -> bool:
        """Make the PN532 fail (``no-ack``, ``bad-checksum``, ``hang``, ``stale``) between passes
        and wait until the firmware has reported it and brought the reader back (its FAULT
        reader-error begun and ended). False when it did not within ``timeout_s``."""
        with self._lock:
            fw = self.bridge.fw
            self.virtual.fault(kind)
            if kind == "stale":  # a stale answer shows only after a reset: make one happen
                self.virtual.fault("hang")
            self.reader_faults += 1
            end = time.monotonic() + timeout_s
            while fw.health.ok:
                if time.monotonic() > end:
                    return False
                time.sleep(0.002)
            while not fw.health.ok:
                if time.monotonic() > end:
                    return False
                time.sleep(0.005)
            return True

    def bench_actions(self) -> dict[str, Any]:
        """What the conformance kit's operator (``hil.conform.CallableOperator``) can do on this
        shoe, by action: ``pull-card`` passes the
        next card's tag across the mouth (its time: the beam restored), ``pull-foreign`` a tag of no
        enrolled deck (:data:`FOREIGN_TAG`), ``power-cycle`` restarts
        the bridge, ``unplug`` and ``replug`` take the shoe's pty away and give it back while the
        bridge runs on."""
        deck = list(self.tags.values())

        def pull() -> float:
            tag = deck[self.passes % len(deck)]
            return self.pass_tags([tag])

        def pull_foreign() -> float:
            return self.pass_tags([FOREIGN_TAG])

        def power_cycle() -> None:
            self.restart_bridge()

        def unplug() -> None:
            with self._lock:
                self.bridge.unplug()

        def replug() -> None:
            with self._lock:
                self.bridge.replug()

        return {"pull-card": pull, "pull-foreign": pull_foreign, "power-cycle": power_cycle, "unplug": unplug,
                "replug": replug}

    # ---------------------------------------------------------------- what the harness checks

    def unacked_count(self) -> int:
        with self._lock:
            return 0 if self.bridge is None else int(self.bridge.core.unacked_count())

    def wait_acked(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while self.unacked_count():
            if time.monotonic() > end:
                return False
            time.sleep(0.01)
        return True

    def card_events(self) -> dict[int, Card | None]:
        """The CARD events made: sequence number -> card (None: unreadable)."""
        return dict(self.sent)


class _OwnedReaderShoe(ReaderShoe):
    """A :class:`ReaderShoe` in a temporary folder of its own, removed on :meth:`close`."""

    def close(self) -> None:
        import shutil

        super().close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def temporary_reader_shoe(seed: int = 0, secret: bytes | None = None) -> ReaderShoe:
    """A started :class:`ReaderShoe` in a new temporary folder (removed when it is closed),
    paired with ``secret`` (protocol version 2) or unpaired (None: version 1): what ``shoe-ctl
    conform --shoe bridge-virtual`` runs the kit against.

    :raises ReaderLibraryError: gpiozero or the PN532 driver is not installed.
    """
    import tempfile

    require_libraries("the simulated reader shoe", [GPIO_LIBRARY, PN532_LIBRARY])
    folder = Path(tempfile.mkdtemp(prefix="shoe-ctl-bridge-"))
    return _OwnedReaderShoe(folder, serial="BR-0001", secret=secret or bytes(32), seed=seed,
                            paired=secret is not None).start()
