"""The shoe on an RP2040 board under CircuitPython: the hardware behind the firmware's seams (the
USB CDC data port, a PN532 on a UART, the card-out beam on a GPIO, the kept state in
``microcontroller.nvm``, :class:`NvmStore`); :func:`main` builds the parts and runs the loop on
an int millisecond clock (:class:`~.loop.TicksClock`: no float, its wrap handled).
The wiring, the NVM layout and the flashing: docs/build-a-shoe.md, "Flashing the RP2040"."""

import struct

from .codec import crc32
from .core import ShoeCore
from .crypto import check_sha256
from .deckmap import uid_hex
from .firmware import Firmware
from .loop import TicksClock, turn

SLOT = 32
SECRET_AT = 64
_SECRET_SIZE = 40
_LOG_AT = 128
"""The first state slot after the secret's record (slots are 32-byte aligned)."""
_ERASED = b"\xff" * SLOT
_STATE = ">4sIIIIHHI"
_MAGIC = b"SHF1"
_KEY_MAGIC = b"SHK1"
HEARTBEAT_MS, RESEND_MS, HOST_SILENCE_MS, RESEND_HOLDOFF_MS = 500, 300, 3000, 20
"""The link core's durations on the board, in milliseconds: the board's clock is an int of
milliseconds (:class:`~.loop.TicksClock`), so every time and duration the firmware is given there
is in ms (the parameters keep the names in seconds of the bridge, which runs on ``time.monotonic``)."""
SCAN_MS, CHECK_MS, JAM_MS, BACKOFF_MS = 20, 1000, 2000, (100, 5000)
"""The firmware loop's durations on the board, in ms (:class:`~.firmware.Firmware`)."""
PAIR_PIN = "GP4"
"""The pairing button's pin (``board.GP4``): a push button to GND, held while the board starts,
puts the shoe in pairing mode (docs/protocol.md section 15)."""


def state_record(generation: int, kept: "tuple[int, int, int, int, int]") -> bytes:
    """One 32-byte state record: ``"SHF1"``, ``generation``, ``kept`` (as
    :meth:`~.core.ShoeCore.kept`), 4 reserved bytes and the CRC-32 of the bytes before it."""
    next_seq, boot_count, card_total, epoch, dispense = kept
    raw = struct.pack(_STATE, _MAGIC, generation, next_seq, boot_count, card_total & 0xFFFFFFFF, epoch, dispense, 0)
    return raw + struct.pack(">I", crc32(raw))


class NvmStore:
    """The kept state in a byte array that survives power loss (``microcontroller.nvm``).

    On the RP2040 that array is one 4 KiB flash sector, and CircuitPython's ``nvm`` programs a
    write into bytes that are still erased (all ``0xFF``) as it is, but erases and rewrites the
    whole sector for any other write. So a save appends its record to the next erased slot after
    the newest (no erase: a power loss can only tear that one record, and the newest before it
    stands), and only when none is left erases the sector once, writing the new record and the
    pairing secret back: one erase per :attr:`slots` saves instead of one per save (flash wears
    out after a finite number of erases). The slots are the first two of the first layout (0
    and 32) and every 32 bytes from 128 to the end; the secret stays at 64. The layout:
    docs/build-a-shoe.md, "Flashing the RP2040".

    :param nvm: at least 104 bytes, slice-assignable.
    """

    def __init__(self, nvm: "bytearray") -> None:
        if len(nvm) < SECRET_AT + _SECRET_SIZE:
            raise ValueError("non-volatile memory of " + str(len(nvm)) + " bytes: 104 needed")
        self.nvm = nvm
        self.slots = [0, SLOT] + list(range(_LOG_AT, len(nvm) - SLOT + 1, SLOT))
        """Where a state record may be, in the order they are filled."""
        self.generation = 0
        self.torn = 0
        self.erases = 0
        """Saves that erased the sector (a full log, or a secret written over another)."""
        self._newest = -1  # index in slots of the newest whole record; -1: none
        self._loaded = False

    def _slot(self, at: int) -> "tuple | None":  # type: ignore[type-arg]
        raw = bytes(self.nvm[at:at + SLOT])
        if raw[:4] != _MAGIC or crc32(raw[:-4]) != struct.unpack(">I", raw[-4:])[0]:
            return None
        return struct.unpack(_STATE, raw[:-4])

    def load(self) -> "tuple[int, int, int, int, int] | None":
        """``(next_seq, boot_count, card_total, epoch, dispense)`` of the newest whole record, or
        None for a new board. A record that is not whole (a torn write) is counted in
        :attr:`torn`."""
        best = None
        self._newest = -1
        self.torn = 0
        for i in range(len(self.slots)):
            at = self.slots[i]
            got = self._slot(at)
            if got is None:
                if bytes(self.nvm[at:at + 4]) == _MAGIC:
                    self.torn += 1
                continue
            if best is None or got[1] > best[1]:
                best = got
                self._newest = i
        self._loaded = True
        if best is None:
            return None
        self.generation = best[1]
        return (best[2], best[3], best[4], best[5], best[6])

    def save(self, kept: "tuple[int, int, int, int, int]", held: "object" = None) -> None:
        """Write ``kept`` (as :meth:`~.core.ShoeCore.kept`) as the newest record: into the next
        erased slot, or, with none left, the sector erased once and written with it and the
        secret. ``held`` is ignored: this board keeps no buffer across a power loss."""
        if not self._loaded:
            self.load()  # never below a newer record already kept
        self.generation += 1
        raw = state_record(self.generation, kept)
        for i in range(self._newest + 1, len(self.slots)):
            at = self.slots[i]
            if bytes(self.nvm[at:at + SLOT]) == _ERASED:
                self.nvm[at:at + SLOT] = raw  # programmed without an erase
                self._newest = i
                return
        image = bytearray(b"\xff" * len(self.nvm))
        image[0:SLOT] = raw
        image[SECRET_AT:SECRET_AT + _SECRET_SIZE] = bytes(self.nvm[SECRET_AT:SECRET_AT + _SECRET_SIZE])
        self.nvm[0:len(self.nvm)] = image  # the one erase, then the sector written again
        self.erases += 1
        self._newest = 0

    def load_secret(self) -> "bytes | None":
        """The pairing secret kept, or None (never paired, or the record is not whole)."""
        raw = bytes(self.nvm[SECRET_AT:SECRET_AT + _SECRET_SIZE])
        if raw[:4] != _KEY_MAGIC or crc32(raw[:-4]) != struct.unpack(">I", raw[-4:])[0]:
            return None
        return raw[4:36]

    def save_secret(self, secret: bytes) -> None:
        """Keep the pairing secret (32 bytes); the sector is erased and written again when a
        secret is there already (a rotation), the state records with it."""
        raw = _KEY_MAGIC + bytes(secret)
        if bytes(self.nvm[SECRET_AT:SECRET_AT + _SECRET_SIZE]) != b"\xff" * _SECRET_SIZE:
            self.erases += 1
        self.nvm[SECRET_AT:SECRET_AT + _SECRET_SIZE] = raw + struct.pack(">I", crc32(raw))


class DigitalBeam:
    """The card-out beam on a digital input: ``pin`` has a ``value`` (``digitalio.DigitalInOut``
    set as input with a pull-up; an IR break-beam receiver pulls it low while the beam is
    broken). ``broken_level``: the level that means broken."""

    def __init__(self, pin: "object", broken_level: bool = False) -> None:
        self.pin = pin
        self.broken_level = broken_level

    def broken(self) -> bool:
        """True while the beam is interrupted."""
        return bool(self.pin.value) == self.broken_level  # type: ignore[attr-defined]


class _KeptShoe(ShoeCore):
    """The link core whose new secrets go to the store."""

    store = None  # type: NvmStore | None

    def on_secret(self, secret: bytes) -> None:
        if self.store is not None:
            self.store.save_secret(secret)


def build(nvm: "bytearray", serial: str, reader: "object", beam: "object", lookup: "object",
          random_bytes: "object", now: float, pairing: bool = False) -> "tuple[Firmware, NvmStore]":
    """The firmware over ``nvm``: the kept state and secret restored (a new shoe when there is
    none), the reader started; ``now``: the board's clock, an int of ms. Returns
    ``(firmware, store)``."""
    store = NvmStore(nvm)
    kept = store.load()
    core = _KeptShoe(serial, firmware="shoe_fw-rp2040-1.0", random_bytes=random_bytes,  # type: ignore[arg-type]
                     pairing=pairing, names_foreign=True, heartbeat_s=HEARTBEAT_MS, resend_s=RESEND_MS,
                     host_silence_s=HOST_SILENCE_MS, now=now)
    core.RESEND_HOLDOFF = RESEND_HOLDOFF_MS
    core.store = store
    secret = store.load_secret()
    if secret is not None:
        core.set_secret(secret)
    if kept is not None:
        core.restore(kept, (), now)
    else:
        core.boot_count = 1
    fw = Firmware(core, reader, beam, lookup, scan_s=SCAN_MS, check_s=CHECK_MS, jam_s=JAM_MS,  # type: ignore[arg-type]
                  backoff=BACKOFF_MS, now=now)
    store.save(core.kept())
    core.dirty = False
    fw.start(now)
    core.say_hello()
    return fw, store


def pairing_held(pin: "object", pull_up: "object") -> bool:
    """Whether the pairing button is held: ``pin`` (a ``digitalio.DigitalInOut``) is read once
    with the internal pull-up ``pull_up`` on; a button to GND held reads low. The pin is released
    (``deinit``) either way."""
    pin.switch_to_input(pull=pull_up)  # type: ignore[attr-defined]
    try:
        return not pin.value  # type: ignore[attr-defined]
    finally:
        pin.deinit()  # type: ignore[attr-defined]


def main(port: "object" = None, nvm: "object" = None, reader: "object" = None, beam: "object" = None,
         lookup: "object" = None, clock: "object" = None, turns: "int | None" = None,
         pairing: "bool | None" = None) -> "Firmware":
    """Run the shoe: each part left None is the board's (the USB CDC data port, the NVM, a
    PN532 on UART GP0/GP1 with its reset on GP2, the beam on GP3, the live decks in
    ``/decks`` sealed under the kept secret, ``supervisor.ticks_ms``, pairing mode while the
    button on :data:`PAIR_PIN` is held at start). ``turns``: stop after that many turns (tests);
    None: for ever. Returns the firmware (when it stops)."""
    import os

    import microcontroller

    check_sha256()  # before anything: an older CircuitPython is named on the console, not a pairing that fails
    if port is None:
        import usb_cdc
        port = usb_cdc.data
        if port is None:
            raise RuntimeError("the USB CDC data port is off: copy boot.py to CIRCUITPY and reset the board")
        port.timeout = 0  # type: ignore[attr-defined]
        # never wait on a host that holds the port open but does not read: CircuitPython's default
        # (None) would block the loop, beam and reader included, until it reads; a frame cut
        # short is dropped by the host and its event sent again
        port.write_timeout = 0  # type: ignore[attr-defined]
    if nvm is None:
        nvm = microcontroller.nvm
    if clock is None:
        import supervisor
        clock = TicksClock(supervisor.ticks_ms)
    if beam is None or reader is None:
        import board
        import busio
        import digitalio
        if beam is None:
            pin = digitalio.DigitalInOut(board.GP3)
            pin.switch_to_input(pull=digitalio.Pull.UP)
            beam = DigitalBeam(pin)
        if reader is None:
            # lazy: the board's RAM holds only the reader it has
            from .readers.pn532 import PN532Reader
            reset = digitalio.DigitalInOut(board.GP2)
            reset.switch_to_output(value=True)
            uart = busio.UART(board.GP0, board.GP1, baudrate=115200, timeout=0.05)
            reader = PN532Reader(uart, reset)
    if pairing is None:
        import board
        import digitalio
        pairing = pairing_held(digitalio.DigitalInOut(getattr(board, PAIR_PIN)), digitalio.Pull.UP)
    serial = "FW-" + uid_hex(bytes(microcontroller.cpu.uid[:6]))
    if pairing:
        print("shoe", serial, "in pairing mode: run shoe-ctl pair")
    now = clock()  # type: ignore[operator]
    store = NvmStore(nvm)  # type: ignore[arg-type]
    if lookup is None:
        lookup = _decks(store.load_secret(), os)
    fw, store = build(nvm, serial, reader, beam, lookup, os.urandom, now,  # type: ignore[arg-type]
                      pairing=pairing)
    n = 0
    while turns is None or n < turns:
        turn(fw, port, store, clock())  # type: ignore[operator]
        n += 1
    return fw


def _decks(secret: "bytes | None", os: "object") -> "object":
    """The live decks' lookup from ``/decks`` on the board (none without a secret)."""
    from .deckmap import DeckBook, load_folder, seal_key

    if secret is None:
        return DeckBook().lookup

    def read(path: str) -> bytes:
        with open(path, "rb") as fh:
            return fh.read()

    book, errors = load_folder("/decks", seal_key(secret), os.listdir, read)  # type: ignore[attr-defined]
    for line in errors:
        print("decks:", line)
    return book.lookup
