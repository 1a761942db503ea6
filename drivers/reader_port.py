"""Open an RFID reader module on the Pi from a reader spec: the serial port and, for the PN532,
the GPIO wired to its reset line.

A spec is ``FAMILY:PORT[?reset=GPIO]``: ``pn532:/dev/serial0?reset=25`` (a PN532 breakout in HSU
mode on the Pi's UART, RSTPDN on BCM 25), ``pn532:/dev/ttyUSB0`` (through a USB-serial adapter,
no reset line), ``pepper:/dev/ttyACM0`` (an Eccel Pepper C1 on USB). The reader modules
themselves are in :mod:`drivers.shoe_fw.readers` (they run on the RP2040 board too); this module
is their Pi side: pyserial and gpiozero. Used by ``shoe-ctl deck enrol`` and the bridge;
docs/build-a-shoe.md, "Wiring".
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs

from drivers.gpio_env import GpioSetupError, claiming
from drivers.shoe_fw.readers.pepper_c1 import PepperC1Reader
from drivers.shoe_fw.readers.pins import OutputPin
from drivers.shoe_fw.readers.pn532 import PN532Reader

if TYPE_CHECKING:
    from gpiozero import Factory  # a gpiozero pin factory (MockFactory in tests)

FAMILIES = ("pn532", "pepper")
BAUDRATE = 115200
"""Both families' UART speed (the PN532's HSU default; the Pepper C1's factory setting)."""
READ_TIMEOUT_S = 0.03
"""The port's read timeout: the PN532 driver reads more bytes than a short answer has, so each
such read waits this long (seconds)."""


class ReaderSpecError(ValueError):
    """A reader spec that cannot be used; the message quotes it and says what is expected."""


PN532_LIBRARY = ("adafruit_pn532.uart", "adafruit-circuitpython-pn532")
PEPPER_LIBRARY = ("pepper_c1", "pepper-c1")
GPIO_LIBRARY = ("gpiozero", "gpiozero")
"""The reader and pin libraries as (module imported, package installed): pyproject.toml's ``pi``
extra, which ``bash scripts/setup.sh pi`` (a table's Pi) and ``test`` (a development checkout)
install and the plain ``bash scripts/setup.sh`` does not."""


class ReaderLibraryError(OSError):
    """A Python package that a reader, its reset line or the card-out beam needs is not installed;
    the message names the packages and the command that installs them."""


def require_libraries(what: str, libraries: Iterable[tuple[str, str]]) -> None:
    """Import each library's module, before any port is opened.

    :param what: what needs them, for the message (``reader pn532:/dev/serial0``).
    :param libraries: (module, package) pairs, e.g. :data:`PN532_LIBRARY`.
    :raises ReaderLibraryError: one or more cannot be imported; all of those are named.
    """
    missing = []
    for module, package in libraries:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(package)
    if missing:
        them = "it" if len(missing) == 1 else "them"
        raise ReaderLibraryError(f"{what}: the Python package{'s' if len(missing) > 1 else ''} "
                                 f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed: "
                                 f"bash scripts/setup.sh pi (or test, in a development checkout) installs {them}")


def spec_libraries(spec: ReaderSpec, *, reset_pin: bool = False) -> list[tuple[str, str]]:
    """The libraries the reader of ``spec`` needs: its family's driver, and gpiozero for a
    ``reset`` GPIO unless a reset pin is passed in (``reset_pin``)."""
    needs = [PN532_LIBRARY if spec.family == "pn532" else PEPPER_LIBRARY]
    if spec.reset is not None and not reset_pin:
        needs.append(GPIO_LIBRARY)
    return needs


@dataclass(frozen=True)
class ReaderSpec:
    """A parsed reader spec: ``family`` (``pn532`` or ``pepper``), the serial ``port``, the
    ``reset`` GPIO (BCM number) or None."""

    family: str
    port: str
    reset: int | None = None

    def __str__(self) -> str:
        return f"{self.family}:{self.port}" + (f"?reset={self.reset}" if self.reset is not None else "")


def parse_spec(text: str) -> ReaderSpec:
    """Read ``FAMILY:PORT[?reset=GPIO]``.

    :raises ReaderSpecError: an unknown family, no port, an unknown option or a reset GPIO that
        is not 0..27 (the Pi's header), a reset line on a family that has none.
    """
    family, sep, rest = text.partition(":")
    if not sep or family not in FAMILIES:
        raise ReaderSpecError(f"reader {text!r}: expected FAMILY:PORT with FAMILY one of {', '.join(FAMILIES)} "
                              f"(e.g. pn532:/dev/serial0?reset=25)")
    port, _, query = rest.partition("?")
    if not port:
        raise ReaderSpecError(f"reader {text!r}: no serial port after {family}:")
    options = parse_qs(query, keep_blank_values=True) if query else {}
    unknown = sorted(set(options) - {"reset"})
    if unknown:
        raise ReaderSpecError(f"reader {text!r}: unknown option {unknown[0]!r} (only reset=GPIO)")
    reset = None
    if "reset" in options:
        if family != "pn532":
            raise ReaderSpecError(f"reader {text!r}: a {family} reader has no reset line here")
        value = options["reset"][-1]
        if not value.isdigit() or not 0 <= int(value) <= 27:
            raise ReaderSpecError(f"reader {text!r}: reset={value!r} is not a BCM GPIO 0..27")
        reset = int(value)
    return ReaderSpec(family, port, reset)


class ReaderModule(Protocol):
    """A reader module as the firmware's reader seam (:mod:`drivers.shoe_fw.reader`, duck-typed
    there for CircuitPython) defines it: each call raises ``ReaderError`` when the chip does not
    answer or answers wrongly."""

    name: str

    def start(self) -> None: ...

    def scan(self) -> list[bytes]: ...

    def check(self) -> None: ...

    def reset(self) -> None: ...


class _Closes(Protocol):
    def close(self) -> None: ...


class OpenReader:
    """A reader module with its port and pins, closed together.

    :attr:`reader` implements the reader seam (:mod:`drivers.shoe_fw.reader`); :attr:`where`
    names the spec for messages.
    """

    def __init__(self, reader: ReaderModule, where: str, closers: list[_Closes]) -> None:
        self.reader = reader
        self.where = where
        self._closers = closers

    def close(self) -> None:
        """Close the port and release the pins (idempotent)."""
        while self._closers:
            try:
                self._closers.pop().close()
            except Exception:  # noqa: BLE001 - closing a port that is gone already
                pass

    def __enter__(self) -> OpenReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_reader(spec: ReaderSpec | str, *, reset_pin: Any = None, pin_factory: Factory | None = None,
                timeout: float | None = None) -> OpenReader:
    """Open the port (and the reset GPIO) of ``spec``; the reader is not started.

    :param reset_pin: a ``digitalio``-shaped pin to use as the reset line instead of the spec's
        GPIO (the virtual PN532's :class:`hil.virtual_pn532.ResetLine` in tests).
    :param pin_factory: gpiozero's pin factory for the spec's GPIO (``MockFactory`` in tests).
    :param timeout: seconds the module waits for each answer (None: the module's default, short
        enough for the firmware's loop; a tool that is not in a hurry may wait longer).
    :raises ReaderSpecError: a bad spec.
    :raises ReaderLibraryError: the reader's driver (or gpiozero for its reset GPIO) is not
        installed; checked before the port is opened.
    :raises OSError: the port cannot be opened (``serial.SerialException`` is one), or the reset
        GPIO cannot be had (no pin library, no access: the cause and the fix named,
        :func:`drivers.gpio_env.claiming`); the message names it.
    """
    import serial

    if isinstance(spec, str):
        spec = parse_spec(spec)
    require_libraries(f"reader {spec}", spec_libraries(spec, reset_pin=reset_pin is not None))
    closers: list[_Closes] = []
    if spec.family == "pepper":
        pepper = PepperC1Reader(spec.port) if timeout is None else PepperC1Reader(spec.port, timeout=timeout)
        return OpenReader(pepper, str(spec), closers)
    try:
        port = serial.Serial(spec.port, BAUDRATE, timeout=READ_TIMEOUT_S, exclusive=True)
    except (serial.SerialException, OSError, ValueError) as exc:
        raise OSError(f"reader {spec}: cannot open {spec.port} ({exc})") from None
    closers.append(port)
    if reset_pin is None and spec.reset is not None:
        from gpiozero import DigitalOutputDevice

        try:
            with claiming(f"reader {spec}: reset line GPIO {spec.reset}", pin_factory):
                reset_pin = OutputPin(DigitalOutputDevice(spec.reset, initial_value=True, pin_factory=pin_factory))
        except GpioSetupError as exc:
            port.close()
            raise OSError(str(exc)) from exc.__cause__
        closers.append(reset_pin)

    pn532 = PN532Reader(port, reset_pin=reset_pin) if timeout is None else PN532Reader(port, reset_pin=reset_pin,
                                                                                        timeout=timeout)
    return OpenReader(pn532, str(spec), closers)
