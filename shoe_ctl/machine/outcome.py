"""What a dealer input or an irregularity ruling asks of the dealing machine (:class:`Outcome`):
the handlers change the hand's progress (:class:`~shoe_ctl.machine.progress.Progress`) and say
here, in order, what :class:`~shoe_ctl.machine.dealing.Dealing` then does — alerts, triggers of
the chart, a re-plan, a counter reset. Described in ``docs/state-machine.md`` (*The hand's
progress*).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from shoe_ctl.events import DealerInput
from shoe_ctl.machine.wording import state_words

if TYPE_CHECKING:
    from shoe_ctl.machine.link import LinkState
    from shoe_ctl.machine.progress import Progress
    from shoe_ctl.rules.profiles import RuleProfile

__all__ = ["REFUSALS", "Outcome"]

REFUSALS = frozenset({"input-wrong-time", "input-invalid"})
"""The alert codes of an input refused: an input that raised one is not the undo's last input."""


class Outcome:
    """The effects one handler asks for, in the order asked (``ops``), with what the handler may
    read besides the hand's progress: ``state`` (the machine state when the input came),
    ``link`` (the shoe link's state), ``profiles`` (the rule profiles by name) and ``refusal``
    (the input table's reason for refusing the input in this state)."""

    __slots__ = ("link", "ops", "profiles", "refusal", "refused", "state")

    def __init__(self, state: str, link: LinkState, profiles: Mapping[str, RuleProfile] | None = None,
                 refusal: str = "") -> None:
        self.state = state
        self.link = link
        self.profiles = profiles or {}
        self.refusal = refusal
        self.refused = False
        self.ops: list[tuple[str, Any]] = []

    def alert(self, code: str, message: str, *, latched: bool = False, seat: int | None = None,
              street: str | None = None, moves: tuple[str, ...] = ()) -> None:
        """Raise an alert (``Dealing.alert``; ``street`` ``None``: the street in progress then)."""
        if code in REFUSALS:
            self.refused = True
        self.ops.append(("alert", (code, message, latched, seat, street, moves)))

    def refuse(self, ev: DealerInput, why: str | None = None) -> None:
        """Refuse ``ev`` (``input-wrong-time``, nothing changed) because ``why`` (``None``: the
        input table's reason); the state named in the dealer's words."""
        why = self.refusal if why is None else why
        self.alert("input-wrong-time", f"'{ev.action.value}'{f' seat {ev.seat}' if ev.seat else ''} "
                   f"refused now ({state_words(self.state)}): {why}; nothing changed", seat=ev.seat)

    def invalid(self, message: str, seat: int | None = None, *, latched: bool = False) -> None:
        """Refuse an input whose arguments are wrong (``input-invalid``), saying what and where."""
        self.alert("input-invalid", message, seat=seat, latched=latched)

    def trigger(self, name: str) -> None:
        """Fire the chart's trigger ``name`` (``layout.transitions``)."""
        self.ops.append(("trigger", name))

    def replan(self) -> None:
        """The hand record changed outside the plan: re-plan the street, or end the hand
        (``Dealing`` decides in the state it is in by then)."""
        self.ops.append(("replan", None))

    def then(self, fn: Callable[[Progress, str], None]) -> None:
        """Call ``fn(progress, state)`` once the effects asked before it are done."""
        self.ops.append(("then", fn))

    def do(self, op: str, *args: Any) -> None:
        """A machine operation by name: ``"begin"`` (profile, game, hand, all-in seats), ``"counter"``
        (wait), ``"resume"``, ``"close-gap"`` (cards, burned), ``"step"`` (kind)."""
        self.ops.append((op, args))
