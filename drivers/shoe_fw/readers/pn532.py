"""The PN532 reader module: an NXP PN532 over UART (HSU) through Adafruit's ``adafruit_pn532``.

Implements the reader seam (:mod:`shoe_fw.reader`) on the driver's ``PN532_UART``, which needs
of its port only ``read``, ``write``, ``in_waiting`` and ``reset_input_buffer``: a pyserial
``Serial`` on the Pi, a ``busio.UART`` on the RP2040 board. The frames are the chip's (PN532
User Manual UM0701-02): ``start()`` wakes the chip and sends SAMConfiguration (normal mode),
RFConfiguration item 5 (MxRtyPassiveActivation: a bounded number of tries, so an empty field
gets an answer) and GetFirmwareVersion (IC ``0x32``); ``scan()`` sends InListPassiveTarget with
MaxTg 2 at 106 kbps type A, so two tags at the mouth are both reported (the driver's own
``read_passive_target`` asks for one); ``check()`` is GetFirmwareVersion, and any other answer
(a stale one after a reset) is an error; ``reset()`` pulses the reset line (:mod:`.pins`) and
starts again. Every failure of the conversation is a :class:`shoe_fw.reader.ReaderError` naming
the command. Wiring and jumpers: docs/build-a-shoe.md.
"""

try:
    from typing import Any
except ImportError:  # CircuitPython: annotations only
    pass

from ..deckmap import uid_hex
from ..reader import ReaderError

GET_FIRMWARE_VERSION = 0x02
SAM_CONFIGURATION = 0x14
RF_CONFIGURATION = 0x32
IN_LIST_PASSIVE_TARGET = 0x4A
PN532_IC = 0x32
"""GetFirmwareVersion's IC byte for a PN532."""
TYPE_A_106 = 0x00
"""InListPassiveTarget's BrTy for 106 kbps ISO/IEC 14443 type A."""
MAX_TARGETS = 2
"""The most targets the chip lists at once (UM0701-02: MaxTg is 1 or 2)."""
PASSIVE_RETRIES = 1
"""MxRtyPassiveActivation: tries after the first before an empty field is answered (0xFF: never)."""
_RESPONSE_MAX = 1 + MAX_TARGETS * (1 + 2 + 1 + 1 + 10 + 1 + 32)
"""The longest InListPassiveTarget answer asked for: NbTg, then per target Tg, SENS_RES,
SEL_RES, NFCIDLength, NFCID1 (up to 10), ATS length and ATS."""


def parse_targets(data: bytes) -> "list[bytes]":
    """The UIDs of InListPassiveTarget's answer at 106 kbps type A (``data`` after ``D5 4B``):
    NbTg, then per target Tg, SENS_RES (2 bytes), SEL_RES, NFCIDLength, NFCID1 and, when SEL_RES
    says ISO/IEC 14443-4 (bit 0x20), ATS length and the ATS (UM0701-02 section 7.3.5).

    :returns: a list of UIDs (bytes), 0..2 of them.
    :raises ValueError: an answer cut short, more than 2 targets, or a UID not 4, 7 or 10 bytes.
    """
    if not data:
        raise ValueError("empty target list")
    count = data[0]
    if count > MAX_TARGETS:
        raise ValueError(str(count) + " targets listed, at most " + str(MAX_TARGETS))
    uids = []  # type: list[bytes]
    at = 1
    for _ in range(count):
        if at + 5 > len(data):
            raise ValueError("target data cut short")
        sel_res = data[at + 3]
        size = data[at + 4]
        if size not in (4, 7, 10):
            raise ValueError("a UID of " + str(size) + " bytes")
        at += 5
        if at + size > len(data):
            raise ValueError("UID cut short")
        uids.append(bytes(data[at:at + size]))
        at += size
        if sel_res & 0x20:
            if at >= len(data) or data[at] < 1 or at + data[at] > len(data):
                raise ValueError("ATS cut short")
            at += data[at]
    return uids


class PN532Reader:
    """A PN532 on a UART.

    :param uart: the port (``read``, ``write``, ``in_waiting``, ``reset_input_buffer``); a
        pyserial ``Serial`` at 115200 baud with a short read timeout (20..50 ms: every answer
        shorter than the driver asks for waits that long).
    :param reset_pin: the pin wired to the chip's RSTPDN (:mod:`.pins`), or None: then
        :meth:`reset` only wakes and configures the chip again.
    :param timeout: seconds to wait for each ACK and answer (a PN532 ACKs within a
        millisecond and lists targets, with one retry, within tens of milliseconds).
    :param name: the module's name in messages.
    """

    def __init__(self, uart: "Any", reset_pin: "Any" = None, timeout: float = 0.1, name: str = "pn532") -> None:
        self.name = name
        self._uart = uart
        self._reset_pin = reset_pin
        self._timeout = timeout
        self._chip = None  # type: Any
        self.firmware = None  # type: tuple[int, ...] | None
        """(IC, Ver, Rev, Support) from the last good GetFirmwareVersion, or None."""

    def _error(self, what: str, detail: str) -> ReaderError:
        return ReaderError(self.name + ": " + what + ": " + detail)

    def _call(self, what: str, command: int, params: bytes = b"", response_length: int = 0) -> bytes:
        chip = self._chip
        if chip is None:
            raise self._error(what, "not started")
        try:
            answer = chip.call_function(command, response_length=response_length, params=params,
                                        timeout=self._timeout)
        except ReaderError:
            raise
        except Exception as exc:  # the driver raises RuntimeError, BusyError, IndexError, OSError
            raise self._error(what, _describe(exc)) from None
        if answer is None:
            raise self._error(what, "no answer")
        return bytes(answer)

    def start(self) -> None:
        """Wake the chip (with a reset pulse when there is a reset pin) and configure it.

        :raises ReaderError: no driver, no answer, or an answer that is not a PN532's.
        """
        try:
            chip_class = _chip_class()
        except ImportError as exc:
            raise self._error("start", "the adafruit_pn532 library is missing (" + str(exc) + ")") from None
        self._chip = None
        try:
            chip = chip_class(self._uart, reset=self._reset_pin)  # reset pulse, wake-up, GetFirmwareVersion
        except Exception as exc:
            raise self._error("wake-up", _describe(exc)) from None
        self._chip = chip
        self._call("SAMConfiguration", SAM_CONFIGURATION, bytes([0x01, 0x14, 0x01]))
        self._call("RFConfiguration", RF_CONFIGURATION, bytes([0x05, 0xFF, 0x01, PASSIVE_RETRIES]))
        self.check()

    def scan(self) -> "list[bytes]":
        """The UIDs of the tags in the field now (0, 1 or 2).

        :raises ReaderError: no ACK, no answer, a bad checksum, an answer to another command,
            or target data that does not parse.
        """
        answer = self._call("InListPassiveTarget", IN_LIST_PASSIVE_TARGET, bytes([MAX_TARGETS, TYPE_A_106]),
                            _RESPONSE_MAX)
        try:
            return parse_targets(answer)
        except ValueError as exc:
            raise self._error("InListPassiveTarget", str(exc)) from None

    def check(self) -> None:
        """GetFirmwareVersion; a PN532 answers IC ``0x32``.

        :raises ReaderError: no answer, or another answer (a stale one after a reset).
        """
        answer = self._call("GetFirmwareVersion", GET_FIRMWARE_VERSION, b"", 4)
        if len(answer) < 4 or answer[0] != PN532_IC:
            raise self._error("GetFirmwareVersion", "answered " + _hex(answer) + ", not a PN532")
        self.firmware = tuple(answer[:4])

    def reset(self) -> None:
        """Pulse the reset line (when wired) and :meth:`start` again; bounded by the driver's
        waits (0.2 s of pulse, 0.5 s for a chip that does not answer its GetFirmwareVersion).

        :raises ReaderError: the chip stays dead or answers wrongly.
        """
        self.start()


_CHIP_CLASS = []  # type: list[Any]
WAKE_UP = b"\x55\x55" + bytes(15)
"""The HSU wake-up the driver sends: two 0x55 bytes and a long preamble of zeros (UM0701-02)."""


def _chip_class() -> "Any":
    """The driver's ``PN532_UART`` with a wake-up that sends the HSU wake-up bytes only: the
    driver's own also sends SAMConfiguration with a fixed 1 s wait, which :meth:`PN532Reader.start`
    sends itself with the module's timeout, so a dead chip holds the firmware's loop for the
    reset pulse and one GetFirmwareVersion (0.5 s in the driver), not 1.5 s more.

    :raises ImportError: no ``adafruit_pn532``.
    """
    if not _CHIP_CLASS:
        import time

        from adafruit_pn532.uart import PN532_UART

        class Chip(PN532_UART):  # type: ignore[misc]
            def _wakeup(self) -> None:
                if self._reset_pin:
                    self._reset_pin.value = True
                    time.sleep(0.01)
                self.low_power = False
                self._uart.write(WAKE_UP)

        _CHIP_CLASS.append(Chip)
    return _CHIP_CLASS[0]


def _hex(data: bytes) -> str:
    return uid_hex(data) if data else "nothing"


def _describe(exc: BaseException) -> str:
    text = " ".join(str(a) for a in exc.args).strip()
    return type(exc).__name__ + (": " + text if text else "")
