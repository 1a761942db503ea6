"""The undo of the dealer's last input: the undo point taken before an undoable input (a copy of
the hand's whole progress, :class:`~shoe_ctl.machine.progress.Progress`), and its restoring.
Described in ``docs/irregularities.md`` (section *Undo*) and ``docs/state-machine.md``; how the
point shares the live hand, in ``docs/state-machine.md`` (*The hand's progress*).
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

from shoe_ctl.events import CardRead, DealerAction, DealerInput
from shoe_ctl.input_spec import SPECS
from shoe_ctl.machine.progress import Progress
from shoe_ctl.machine.reads import Read
from shoe_ctl.rules.hand import HandState, KeptSeats, SeatState

__all__ = ["NOT_UNDOABLE", "SHARING", "Point", "Undo"]

NOT_UNDOABLE: dict[DealerAction, str] = {a: s.undo for a, s in SPECS.items() if s.undo is not None}
"""Dealer inputs an undo refuses, and why."""

A = DealerAction
SHARING = frozenset({A.FOLD, A.ALL_IN, A.SHOW, A.BETTING_COMPLETE, A.HAND_COMPLETE, A.NEW_HAND})
"""The dealer inputs whose handling changes the hand only in a seat through the rules core's
:meth:`~shoe_ctl.rules.hand.HandState.change_seat` (a fold, a muck, an all-in) or through a
ruling's effects (which keep the whole hand first): an undo point may hold the live hand itself
across them. Before any other event but a card read (which forgets the point) the hand is kept
whole for the point."""


_READ_FIELDS = operator.attrgetter(*Read.__slots__)


class Point(NamedTuple):
    """An undo point: the progress copied whole, the machine state, and the fields of the reads
    a dealer input may change in place (those held in the betting round: a premature card's
    role, street and seat; every other read and every alert entry is never changed in place).
    With ``kept`` (an input of :data:`SHARING`) the copied progress holds the live hand itself:
    ``kept`` holds the copy of each seat that has changed since, and the hand as it was once
    anything but a seat is to change (:class:`~shoe_ctl.rules.hand.KeptSeats`); :meth:`hand`
    is the hand as the point had it."""

    progress: Progress
    state: str
    read_fields: list[tuple[Read, Any]]
    kept: KeptSeats | None

    def seats(self) -> list[SeatState] | None:
        """The point's seats as they were when it was taken (``None``: no hand)."""
        hand = self.progress.hand
        if hand is None:
            return None
        kept = self.kept
        if kept is None:
            return hand.seats
        return kept.hand.seats if kept.hand is not None else [kept.get(id(s), s) for s in hand.seats]

    def hand(self) -> HandState | None:
        """The hand as it was when the point was taken, as an undo puts it back (``None``: no
        hand): the point's own copy, or, while it shares the live hand, a copy of it with the
        point's seats (the live hand has changed only in its seats since)."""
        hand = self.progress.hand
        kept = self.kept
        if hand is None or kept is None:
            return hand
        return kept.hand if kept.hand is not None else hand.copy([kept.get(id(s), s) for s in hand.seats])


class Undo:
    """The undo point of one dealing machine.

    ``last`` is the last accepted input and the point before it (``None`` for an input an undo
    refuses), or ``None`` when there is nothing to undo, ``why`` saying why."""

    def __init__(self) -> None:
        self.last: tuple[DealerAction, Point | None] | None = None
        self.why = "no dealer input to undo"
        self._hand: HandState | None = None  # the live hand whose seats the last point shares

    def ended_by(self, action: DealerAction) -> None:
        """The hand was ended by the accepted input ``action`` before this machine was built (a
        recovery replays only what follows the hand's end): the last input is ``action``, with no
        point to undo to, as it was for the machine that took it."""
        self._release()
        self.last = (action, None)

    def forget(self, why: str) -> None:
        """Nothing can be undone any more, because ``why``."""
        self.last = None
        self.why = why
        self._release()

    def _release(self) -> None:
        if self._hand is not None:
            self._hand.kept_seats = None
            self._hand = None

    @property
    def sharing(self) -> bool:
        """The last point shares seats of the live hand (each kept at its first change)."""
        return self._hand is not None

    def before(self, event: object) -> None:
        """Before the machine handles ``event``: a card read forgets the point (a card has left
        the shoe); any other event but a dealer input of :data:`SHARING` finds the seats the
        point shares kept (:meth:`keep_all`)."""
        if isinstance(event, CardRead):
            if self.last is not None:
                self.forget("a card has left the shoe since the last input")
        elif self._hand is not None and not (isinstance(event, DealerInput) and event.action in SHARING):
            self.keep_all()

    def keep_all(self) -> None:
        """Before an event whose handling may change the hand other than in a seat through the
        rules core (:data:`SHARING`): the hand the last point still shares is kept whole as it
        is now (:meth:`~shoe_ctl.rules.hand.HandState.keep_all_seats`)."""
        if self._hand is not None:
            self._hand.keep_all_seats()
            self._hand = None

    def take(self, p: Progress, state: str, action: DealerAction) -> Point:
        """The undo point, taken before every undoable dealer input ``action``: the whole
        progress, copied as shallowly as is safe (this runs at every fold, all-in and betting
        round complete: docs/performance.md). Before an input of :data:`SHARING` the point holds
        the live hand itself, each seat kept as it is at its first change since and the whole
        hand before any other change (:meth:`~shoe_ctl.rules.hand.HandState.keep_seats`);
        before any other input, the hand is copied."""
        hand = p.hand
        copied = None
        kept = None
        if hand is not None and action in SHARING:
            copied = hand
            kept = hand.keep_seats()  # (the last point's record stays as it is: see refused)
            self._hand = hand
        elif hand is not None:
            self.keep_all()  # the last point's seats kept whole, whatever the input changes
            copied = hand.copy()
        strays = p.betting_strays
        fields = [(r, _READ_FIELDS(r)) for r in strays] if strays else []
        return Point(p.copy(copied), state, fields, kept)

    def refused(self, point: Point) -> None:
        """The input ``point`` was taken for was refused: the last point stays the one to undo
        to. When both share the seats, the seats kept for ``point`` join the last point's (a
        seat the last point had not kept was unchanged since it was taken: ``point``'s copy is
        the seat as the last point saw it) and the last point's record is kept up again."""
        last = self.last[1] if self.last is not None else None
        hand = self._hand
        if hand is None or point.kept is None or hand.kept_seats is not point.kept:
            return
        if last is None or last.kept is None:
            self._release()
            return
        for key, seat in point.kept.items():
            last.kept.setdefault(key, seat)
        hand.kept_seats = last.kept

    def restore(self) -> tuple[Point, str] | str:
        """The ``undo`` input: the point before the last input and that input's name (the reads'
        fields and the hand's seats as they were are put back here), or why nothing can be
        undone. Nothing can be undone after."""
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
        point.progress.hand = point.hand()
        self.forget(f"'{action.value}' was undone already")
        return point, action.value
