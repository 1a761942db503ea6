"""The undo of the dealer's last input: the undo point taken before an undoable input, and its
restoring. Described in ``docs/irregularities.md`` (section *Undo*) and ``docs/state-machine.md``.
"""

from __future__ import annotations

import copy
import operator
from typing import TYPE_CHECKING, Any

from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.input_spec import SPECS

if TYPE_CHECKING:
    from shoe_ctl.machine.dealing import Dealing
    from shoe_ctl.rules.hand import HandState, SeatState

__all__ = ["NOT_UNDOABLE", "Undo"]

NOT_UNDOABLE: dict[DealerAction, str] = {a: s.undo for a, s in SPECS.items() if s.undo is not None}
"""Dealer inputs an undo refuses, and why."""

# What a dealer input can change: on the machine, then on its irregularity rulings. The
# containers among them are changed in place (copied at the undo point); the others are
# immutable values or, like ``plan`` and ``seventh``, only ever replaced whole.
_MACHINE_ATTRS = ("street", "plan", "step_i", "bring_in_idx", "first_idx", "first_by_street", "seventh",
                  "procedures", "mucked", "shown", "alerts", "where", "reads", "_forecast", "_forecast_dirty",
                  "hand_no", "confirming")
_MACHINE_CONTAINERS = ("first_by_street", "procedures", "mucked", "shown", "alerts", "where", "reads")
_IRREGULAR_ATTRS = ("premature", "absent", "betting_strays", "aside_due", "aside_left", "aside_total", "misdeal",
                    "first_deal_idx", "mixed", "over")
_IRREGULAR_CONTAINERS = ("absent", "betting_strays")
# each group of attributes read in one call (two or more names each, so each getter gives a
# tuple): the values kept as they are, the containers copied
_MACHINE_VALUES = tuple(n for n in _MACHINE_ATTRS if n not in _MACHINE_CONTAINERS)
_IRREGULAR_VALUES = tuple(n for n in _IRREGULAR_ATTRS if n not in _IRREGULAR_CONTAINERS)
_GET_MACHINE_VALUES = operator.attrgetter(*_MACHINE_VALUES)
_GET_MACHINE_CONTAINERS = operator.attrgetter(*_MACHINE_CONTAINERS)
_GET_IRREGULAR_VALUES = operator.attrgetter(*_IRREGULAR_VALUES)
_GET_IRREGULAR_CONTAINERS = operator.attrgetter(*_IRREGULAR_CONTAINERS)

_GETTERS: dict[type, Any] = {}


def _read_fields(read: Any) -> tuple[Any, ...]:
    """Every field of a :class:`~shoe_ctl.machine.dealing.Read`, in ``__slots__`` order."""
    get = _GETTERS.get(type(read))
    if get is None:
        get = _GETTERS[type(read)] = operator.attrgetter(*type(read).__slots__)
    return tuple(get(read))


class Undo:
    """The undo point of one :class:`~shoe_ctl.machine.dealing.Dealing`.

    ``last`` is the last accepted input and the state before it (``None`` for an input an undo
    refuses), or ``None`` when there is nothing to undo, ``why`` saying why."""

    def __init__(self, machine: Dealing) -> None:
        self.m = machine
        self.last: tuple[DealerAction, dict[str, Any] | None] | None = None
        self.why = "no dealer input to undo"
        # the hand of the last undo point and its seat copies (never changed while kept here):
        # a seat equal to its copy then is not copied again
        self._kept: tuple[HandState, list[SeatState]] | None = None

    def forget(self, why: str) -> None:
        """Nothing can be undone any more, because ``why``."""
        self.last = None
        self.why = why

    def snapshot(self) -> dict[str, Any]:
        """The undo point, taken before every undoable dealer input: only what an input can
        change, copied as shallowly as is safe (this runs at every fold, all-in and betting round
        complete: docs/performance.md). The attributes are kept by group, in the order of their
        names (``_MACHINE_VALUES``, ``_MACHINE_CONTAINERS``, ``_IRREGULAR_VALUES``,
        ``_IRREGULAR_CONTAINERS``), the containers copied; :meth:`undo` sets them back by name."""
        m = self.m
        irr = m.irregular
        premature = irr.premature
        hand = m.hand
        return {
            "values": _GET_MACHINE_VALUES(m),
            "containers": [c.copy() for c in _GET_MACHINE_CONTAINERS(m)],
            "irregular_values": _GET_IRREGULAR_VALUES(irr),
            "irregular_containers": [c.copy() for c in _GET_IRREGULAR_CONTAINERS(irr)],
            "premature": copy.deepcopy(premature) if premature is not None else None,
            # A read object changes in place during a dealer input only when it was held as a
            # card read in the betting round (a premature card's role, street and seat): keep
            # those reads' fields (undo puts them back). Alert entries are never changed in place.
            "read_fields": [(r, _read_fields(r)) for r in irr.betting_strays] if irr.betting_strays else [],
            "hand": self._hand_copy(hand) if hand is not None else None,
            "state": m.state,
        }

    def _hand_copy(self, hand: HandState) -> HandState:
        """A copy of ``hand`` for the undo point whose seats are shared with the last undo point's
        copy where the seat has not changed since (equal instance dictionaries: the same flags
        and the same cards, compared by identity first). Between two dealer inputs most seats
        do not change (the other players' seats at a fold; every folded seat), and an undo
        point's copies are never changed unless an undo puts them back, which drops them here."""
        kept = self._kept
        live = hand.seats
        if kept is not None and kept[0] is hand and len(kept[1]) == len(live):
            seats = [c if s.__dict__ == c.__dict__ else s.copy() for s, c in zip(live, kept[1], strict=True)]
        else:
            seats = [s.copy() for s in live]
        self._kept = (hand, seats)
        return hand.copy(seats)

    def undo(self, ev: DealerInput) -> None:
        """The ``undo`` input: put the state before the last input back, or refuse
        (``undo-refused``) saying why."""
        m = self.m
        last = self.last
        if last is None:
            m.alert("undo-refused", f"'undo' refused: {self.why}; nothing changed", latched=False)
            return
        action, snap = last
        if snap is None:
            m.alert("undo-refused", f"'undo' refused: the last input '{action.value}' cannot be undone "
                    f"({NOT_UNDOABLE.get(action, 'not undoable')}); nothing changed")
            return
        for name, value in zip(_MACHINE_VALUES, snap["values"], strict=True):
            setattr(m, name, value)
        for name, value in zip(_MACHINE_CONTAINERS, snap["containers"], strict=True):
            setattr(m, name, value)
        irr = m.irregular
        for name, value in zip(_IRREGULAR_VALUES, snap["irregular_values"], strict=True):
            setattr(irr, name, value)
        for name, value in zip(_IRREGULAR_CONTAINERS, snap["irregular_containers"], strict=True):
            setattr(irr, name, value)
        irr.premature = snap["premature"]
        for read, values in snap["read_fields"]:
            for name, value in zip(read.__slots__, values, strict=True):
                setattr(read, name, value)
        m.hand = snap["hand"]
        self._kept = None  # those seat copies are the hand's own seats now (not compared again)
        m.machine.set_state(snap["state"], model=m)
        m.entries += 1  # entered again: a timer armed before the undo is stale
        m._forecast_dirty = True
        self.forget(f"'{action.value}' was undone already")
        m.alert("undo", f"undone: '{action.value}'; the state before it is back")
