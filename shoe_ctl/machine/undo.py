"""The undo of the dealer's last input: the undo point taken before an undoable input (a copy of
the hand's whole progress, :class:`~shoe_ctl.machine.progress.Progress`), and its restoring.
Described in ``docs/irregularities.md`` (section *Undo*) and ``docs/state-machine.md``.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

from shoe_ctl.events import DealerAction
from shoe_ctl.input_spec import SPECS
from shoe_ctl.machine.progress import Progress, copy_seats
from shoe_ctl.machine.reads import Read
from shoe_ctl.rules.hand import HandState, SeatState

__all__ = ["NOT_UNDOABLE", "Point", "Undo"]

NOT_UNDOABLE: dict[DealerAction, str] = {a: s.undo for a, s in SPECS.items() if s.undo is not None}
"""Dealer inputs an undo refuses, and why."""

_READ_FIELDS = operator.attrgetter(*Read.__slots__)


class Point(NamedTuple):
    """An undo point: the progress copied whole, the machine state, and the fields of the reads
    a dealer input may change in place (those held in the betting round: a premature card's
    role, street and seat; every other read and every alert entry is never changed in place)."""

    progress: Progress
    state: str
    read_fields: list[tuple[Read, Any]]


class Undo:
    """The undo point of one dealing machine.

    ``last`` is the last accepted input and the point before it (``None`` for an input an undo
    refuses), or ``None`` when there is nothing to undo, ``why`` saying why."""

    def __init__(self) -> None:
        self.last: tuple[DealerAction, Point | None] | None = None
        self.why = "no dealer input to undo"
        # the hand of the last undo point and its seat copies (never changed while kept here):
        # a seat equal to its copy then is not copied again
        self._kept: tuple[HandState, list[SeatState]] | None = None

    def forget(self, why: str) -> None:
        """Nothing can be undone any more, because ``why``."""
        self.last = None
        self.why = why

    def take(self, p: Progress, state: str) -> Point:
        """The undo point, taken before every undoable dealer input: the whole progress, copied
        as shallowly as is safe (this runs at every fold, all-in and betting round complete:
        docs/performance.md), the hand's seats shared with the last point's copies where the
        seat has not changed since (:func:`~shoe_ctl.machine.progress.copy_seats`)."""
        hand = p.hand
        copied = None
        if hand is not None:
            kept = self._kept
            seats = copy_seats(hand, kept[1] if kept is not None and kept[0] is hand else None)
            self._kept = (hand, seats)
            copied = hand.copy(seats)
        strays = p.betting_strays
        fields = [(r, _READ_FIELDS(r)) for r in strays] if strays else []
        return Point(p.copy(copied), state, fields)

    def restore(self) -> tuple[Point, str] | str:
        """The ``undo`` input: the point before the last input and that input's name (the reads'
        fields are put back here), or why nothing can be undone. Nothing can be undone after."""
        last = self.last
        if last is None:
            return f"'undo' refused: {self.why}; nothing changed"
        action, point = last
        if point is None:
            return (f"'undo' refused: the last input '{action.value}' cannot be undone "
                    f"({NOT_UNDOABLE.get(action, 'not undoable')}); nothing changed")
        for read, values in point.read_fields:
            for name, value in zip(Read.__slots__, values, strict=True):
                setattr(read, name, value)
        self._kept = None  # those seat copies are the hand's own seats now (not compared again)
        self.forget(f"'{action.value}' was undone already")
        return point, action.value
