"""What one dealing machine has shown the dealer (:class:`Shown`), and the commands an event adds
to it: the instruction, sent again only when it, the state or the card step changed (or a dealer
input asks for an answer), and the display state whenever anything shown changed. A value kept
beside the hand's progress; it reads the progress and the shoe's state and changes neither.
Described in ``docs/state-machine.md`` (*Design rules*, "Outputs are values").
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from shoe_ctl.events import Command, DisplayUpdate, Instruction
from shoe_ctl.machine import views, wording
from shoe_ctl.machine.link import LinkState

if TYPE_CHECKING:
    from shoe_ctl.machine.progress import Progress

__all__ = ["Shown"]


class Shown:
    """What the dealer was last shown, and the counts that say a shown thing changed.

    ``display``: display updates are sent (``False``: instructions and alerts only, for bulk
    replays nobody watches); ``last``: the last instruction sent; ``ref``: the reference of the
    dealer input the next instruction answers (``None``: none); ``alert_id``: the id of the last
    alert entry shown; ``rev``: a count raised by every change of the public state that the
    fields of :meth:`key` do not see (a dealer input, a merged alert); ``seats``: the display's
    per-seat entries reused while a seat is unchanged (:class:`~shoe_ctl.machine.views.SeatCache`).
    """

    __slots__ = ("alert_id", "display", "last", "ref", "rev", "seats")

    def __init__(self, display: bool) -> None:
        self.display = display
        self.last: Instruction | None = None
        self.ref: int | None = None
        self.alert_id = 0
        self.rev = 0
        self.seats = views.SeatCache()

    def key(self, p: Progress, link: LinkState, state: str) -> tuple[Any, ...]:
        """What the dealer sees, as a key to compare before and after an event: the state, the
        card step, the counts of reads and alerts, the link's status, fault and unread card."""
        return (state, p.step_i, len(p.reads), len(p.alerts), self.alert_id, link.status, link.fault,
                link.unread, self.rev)

    def publish(self, out: list[Command], p: Progress, link: LinkState, state: str,
                before: tuple[Any, ...] | None) -> None:
        """Append to ``out`` what an event changed of what is shown. ``before``: the
        :meth:`key` taken before the event, or only its state and card step (a machine without
        a display, for an event other than a dealer input), or ``None`` (show everything: the
        machine's start)."""
        ins = wording.instruction(p, link, state)
        ref = self.ref
        if ref is not None:
            self.ref = None
            ins = replace(ins, ref=ref)
        last = self.last
        # ins != last, the common answers first: another card number (every card read) makes
        # them differ without the dataclass's field-by-field comparison
        new = ins is not last and (last is None or ins.card_no != last.card_no or ins != last)
        if new or before is None:
            changed = changed_step = True
        else:
            after = self.key(p, link, state) if len(before) > 2 else (state, p.step_i)
            changed = after != before
            changed_step = before[0] != after[0] or before[1] != after[1]
        if changed:
            if new or changed_step or ref is not None:
                out.append(ins)
                self.last = ins
            if self.display:
                out.append(DisplayUpdate(views.public_state(p, link, state, ins, self.seats)))
