"""The shoe's main loop without I/O (:class:`Firmware`): the card-out beam's passes, the reader and
its health, and the deck maps, joined to the link core (:class:`~.core.ShoeCore`); every time is
an argument and the timers are one table, :attr:`Firmware.TIMERS`. What a pass, a jam, a tag of
no live deck and a failing reader send: docs/build-a-shoe.md, "Firmware"."""

from . import codec as c
from .health import ReaderHealth
from .reader import ReaderError

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .core import ShoeCore


class Firmware:
    """One shoe's loop: ``core`` (a :class:`~.core.ShoeCore`), ``reader``, ``beam``, ``lookup``.

    :param scan_s: seconds between reader scans.
    :param check_s: seconds between health polls.
    :param jam_s: seconds a beam may stay broken before it is a jam.
    :param backoff: (first, longest) seconds between reset attempts of a failed reader.
    :param max_tags: distinct tags kept per pass (more are still a double pull).
    :param on_card: called with ``(uid, deck, code)`` for each card reported (a log; may be None).
    :param retired: ``lookup`` over the retired decks (a tag no live deck has named by the deck it
        was retired with), or None.
    """

    TIMERS = ("scan", "check", "reset", "jam")
    """The timers, in the order :meth:`step` runs them: ``_<name>_due()`` and ``_<name>(now)``."""
    READER_DETAIL = "rfid"

    def __init__(self, core: "ShoeCore", reader: "Any", beam: "Any",
                 lookup: "Callable[[bytes], tuple[str, int] | None]", scan_s: float = 0.02, check_s: float = 1.0,
                 jam_s: float = 2.0, backoff: tuple[float, float] = (0.1, 5.0), max_tags: int = 4,
                 on_card: "Callable[[bytes, str, int], None] | None" = None, now: float = 0.0,
                 retired: "Callable[[bytes], tuple[str, int] | None] | None" = None) -> None:
        self.core = core
        self.reader = reader
        self.beam = beam
        self.lookup = lookup
        self.retired = retired
        self.scan_s = scan_s
        self.jam_s = jam_s
        self.max_tags = max_tags
        self.on_card = on_card
        self.broken = False
        self.broken_at = 0.0
        self.jammed = False
        self.tags = []  # type: list[bytes]
        self.health = ReaderHealth(reader, self._reader_report, check_s, backoff, now)
        self._next_scan = now
        self.passes = 0
        self.refused = 0
        self.deck = ""
        """The deck id of the stub being dealt: the deck of its first known card since the last
        RESET_COUNTER (a new deck or stub), "" before it."""
        self._deck_epoch = core.epoch

    # ---------------------------------------------------------------- the loop

    def start(self, now: float) -> None:
        """Initialise the reader; a reader that does not answer is a reader error at once."""
        self.health.start(now)

    def step(self, now: float) -> None:
        """Read the beam, then run every timer due at ``now``, then the link core's."""
        broken = bool(self.beam.broken())
        if broken != self.broken:
            if broken:
                self._pass_begins(now)
            else:
                self._pass_ends(now)
        for name in self.TIMERS:
            due = getattr(self, "_" + name + "_due")()
            if due is not None and now >= due:
                getattr(self, "_" + name)(now)
        if now >= self.core.next_deadline():
            self.core.tick(now)

    def next_deadline(self) -> float:
        """The clock value at which :meth:`step` next has a timer to run (the beam itself is
        polled at the caller's pace)."""
        best = self.core.next_deadline()  # type: float
        for name in self.TIMERS:
            due = getattr(self, "_" + name + "_due")()
            if due is not None and due < best:
                best = due
        return best

    # ---------------------------------------------------------------- passes

    def _pass_begins(self, now: float) -> None:
        self.broken = True
        self.broken_at = now
        self.tags = []
        self._scan(now)  # what is in the field as the card breaks the beam

    def _pass_ends(self, now: float) -> None:
        self._scan(now)
        self.broken = False
        self.passes += 1
        if self.jammed:
            self.jammed = False
            self.core.fault(c.FAULT_JAM, True, "", now)
        tags, self.tags = self.tags, []
        if not tags:
            self.core.card(c.UNREADABLE, c.READER_NONE, now)
            detail = "no tag read" if self.health.ok else "reader error"
            self.core.fault(c.FAULT_MISREAD, False, detail, now)
            self.core.fault(c.FAULT_MISREAD, True, "", now)
            return
        if len(tags) > 1:
            self.core.fault(c.FAULT_DOUBLE_PULL, False, str(len(tags)) + " tags in one pass", now)
        for uid in tags:
            self._report(uid, now)

    def _report(self, uid: bytes, now: float) -> None:
        if self.core.epoch != self._deck_epoch:  # a new deck or stub was loaded (RESET_COUNTER)
            self._deck_epoch = self.core.epoch
            self.deck = ""
            self.core.naming.stub = None
        found = self.lookup(uid)
        if found is None:
            retired = self.retired(uid) if self.retired is not None else None
            if retired is None:
                self._refuse(c.FOREIGN_UNKNOWN, c.UNREADABLE, uid, "", now)
                deck, code = "", -1
            else:
                deck, code = retired
                self._refuse(c.FOREIGN_RETIRED, code, uid, deck, now)
        else:
            deck, code = found
            if not self.deck:
                self.deck = deck  # the first known card of a stub names its deck (STUB: section 16)
                self.core.naming.stub = (self.core.epoch, deck)
            if deck != self.deck:
                self._refuse(c.FOREIGN_OTHER_DECK, code, uid, deck, now)
            else:
                self.core.card(code, c.READER_RFID, now)
        if self.on_card is not None:
            self.on_card(uid, deck, code)

    def _refuse(self, what: int, code: int, uid: bytes, deck: str, now: float) -> None:
        """A card that is not one of the stub's: counted as unreadable, never as a card of the
        stub, and named by a FOREIGN event (docs/protocol.md section 16; a misread naming it to a
        host that does not take FOREIGN: docs/build-a-shoe.md, "Passes")."""
        self.refused += 1
        self.core.card(c.UNREADABLE, c.READER_NONE, now)  # counted as a card that left
        self.core.event(c.T_FOREIGN, c.foreign_payload(what, code, uid, deck, self.deck), now)
        self.core.fault(c.FAULT_MISREAD, True, "", now)  # the misread's end, as before

    # ---------------------------------------------------------------- timers

    def _scan_due(self) -> float | None:
        return self._next_scan if self.health.ok else None

    def _scan(self, now: float) -> None:
        self._next_scan = now + self.scan_s
        if not self.health.ok:
            return
        try:
            uids = self.reader.scan()
        except ReaderError as exc:
            self.health.failed(str(exc), now)
            return
        if not self.broken:
            return  # a tag near the mouth with no pass deals nothing
        for uid in uids:
            uid = bytes(uid)
            if uid not in self.tags and len(self.tags) < self.max_tags:
                self.tags.append(uid)

    def _check_due(self) -> float | None:
        return self.health.check_due()

    def _check(self, now: float) -> None:
        self.health.check(now)

    def _reset_due(self) -> float | None:
        return self.health.reset_due()

    def _reset(self, now: float) -> None:
        if self.health.reset(now):
            self._next_scan = now

    def _jam_due(self) -> float | None:
        if self.broken and not self.jammed:
            return self.broken_at + self.jam_s
        return None

    def _jam(self, now: float) -> None:
        self.jammed = True
        self.core.fault(c.FAULT_JAM, False, "card-out beam blocked", now)

    def _reader_report(self, cleared: bool, now: float) -> None:
        self.core.fault(c.FAULT_READER_ERROR, cleared, self.READER_DETAIL, now)
