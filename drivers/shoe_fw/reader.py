"""The reader seam: what the firmware asks of an RFID reader module (``name``, ``start()``,
``scan()``, ``check()``, ``reset()``, each raising :class:`ReaderError` when the chip does not
answer or answers wrongly; duck-typed, as CircuitPython has no ``typing`` at run time), and a
scripted fake. The seam and the firmware's handling of a failing reader: docs/build-a-shoe.md,
"Reader modules" and "Firmware"."""


class ReaderError(Exception):
    """The reader does not work: no answer, a wrong or stale answer, a failed reset. The message
    names the reader and what failed (``"pn532: no ACK to GetFirmwareVersion"``)."""


class ScriptedReader:
    """A reader module for tests: what each call does is set by the test.

    :param scans: what the next calls of :meth:`scan` return, in order: a list of UIDs, or a
        :class:`ReaderError` (raised). When it runs out, :meth:`scan` returns :attr:`present`.
    :param name: the module's name.

    Faults: :attr:`dead` (every call raises until cleared), :attr:`failures` (the next that many
    calls of :meth:`scan` or :meth:`check` raise), :attr:`reset_failures` (the next that many
    calls of :meth:`reset` raise). Counts of every call: :attr:`starts`, :attr:`scans`,
    :attr:`checks`, :attr:`resets`.
    """

    def __init__(self, scans: "list[list[bytes] | ReaderError] | tuple[()]" = (), name: str = "scripted") -> None:
        self.name = name
        self._scans = list(scans)  # type: list[list[bytes] | ReaderError]
        self.present = []  # type: list[bytes]
        self.dead = False
        self.failures = 0
        self.reset_failures = 0
        self.starts = 0
        self.scans = 0
        self.checks = 0
        self.resets = 0

    def feed(self, *steps: "list[bytes] | ReaderError") -> None:
        """Append steps to the script (each a list of UIDs or a :class:`ReaderError`)."""
        self._scans.extend(steps)

    def _fail(self, what: str) -> None:
        if self.dead:
            raise ReaderError(self.name + ": no answer to " + what)
        if self.failures > 0:
            self.failures -= 1
            raise ReaderError(self.name + ": wrong answer to " + what)

    def start(self) -> None:
        """Count the start; raises :class:`ReaderError` while :attr:`dead`."""
        self.starts += 1
        if self.dead:
            raise ReaderError(self.name + ": no answer to SAMConfiguration")

    def scan(self) -> list[bytes]:
        """The next scripted step, or :attr:`present` (a copy) when the script is empty."""
        self.scans += 1
        self._fail("InListPassiveTarget")
        if self._scans:
            step = self._scans.pop(0)
            if isinstance(step, ReaderError):
                raise step
            return list(step)
        return list(self.present)

    def check(self) -> None:
        """Pass unless :attr:`dead` or a failure is due."""
        self.checks += 1
        self._fail("GetFirmwareVersion")

    def reset(self) -> None:
        """Count the reset; it fails while :attr:`reset_failures` last, and while :attr:`dead`."""
        self.resets += 1
        if self.reset_failures > 0:
            self.reset_failures -= 1
            raise ReaderError(self.name + ": no answer after reset")
        if self.dead:
            raise ReaderError(self.name + ": no answer after reset")
