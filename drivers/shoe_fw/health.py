"""The reader's health supervision: a periodic check, and resets with a bounded backoff.

:class:`ReaderHealth` polls the reader module's ``check()`` every ``check_s``; the first
:class:`~.reader.ReaderError` from any call is reported at once (``report(False, now)``: the
firmware sends FAULT reader-error), then ``reset()`` and ``check()`` are tried after
``backoff[0]`` seconds, the wait doubling up to ``backoff[1]``, until both pass; then
``report(True, now)`` (the FAULT's end). docs/build-a-shoe.md, "Reader health".
"""

from .reader import ReaderError

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class ReaderHealth:
    """The health of one reader module.

    :param reader: the module (:mod:`.reader`).
    :param report: called ``(cleared, now)`` when the reader fails (False) and when it is back
        (True).
    :param check_s: seconds between health polls.
    :param backoff: (first, longest) seconds between reset attempts.
    """

    def __init__(self, reader: "Any", report: "Callable[[bool, float], None]", check_s: float = 1.0,
                 backoff: tuple[float, float] = (0.1, 5.0), now: float = 0.0) -> None:
        self.reader = reader
        self.report = report
        self.check_s = check_s
        self.backoff = backoff
        self.ok = True
        self.error = ""
        self.resets = 0
        self._next_check = now + check_s
        self._next_reset = None  # type: float | None
        self._delay = backoff[0]

    def start(self, now: float) -> None:
        """Initialise the reader; one that does not answer is a failure at once."""
        try:
            self.reader.start()
        except ReaderError as exc:
            self.failed(str(exc), now)

    def failed(self, message: str, now: float) -> None:
        """A call of the reader raised ``message``: reported once, resets from now."""
        self.error = message
        if not self.ok:
            return
        self.ok = False
        self._next_reset = now
        self._delay = self.backoff[0]
        self.report(False, now)

    def check_due(self) -> "float | None":
        """When the next health poll is due (None while the reader is failed)."""
        return self._next_check if self.ok else None

    def check(self, now: float) -> None:
        """The health poll."""
        self._next_check = now + self.check_s
        try:
            self.reader.check()
        except ReaderError as exc:
            self.failed(str(exc), now)

    def reset_due(self) -> "float | None":
        """When the next reset attempt is due (None while the reader works)."""
        return self._next_reset

    def reset(self, now: float) -> bool:
        """One reset attempt (``reset()`` then ``check()``); True when the reader is back."""
        self.resets += 1
        try:
            self.reader.reset()
            self.reader.check()
        except ReaderError as exc:
            self.error = str(exc)
            self._next_reset = now + self._delay
            self._delay = min(self._delay * 2, self.backoff[1])
            return False
        self.ok = True
        self.error = ""
        self._next_reset = None
        self._delay = self.backoff[0]
        self._next_check = now + self.check_s
        self.report(True, now)
        return True
