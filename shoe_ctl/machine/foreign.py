"""A card that is not the stub's deck's (``ForeignCard``, docs/protocol.md section 16): the
latched STOP that names it, the card taken off the place it was booked to, and the unreadable
card's notice held back until the shoe's next event says whether it was such a card. Described
in docs/state-machine.md, *Card checks* (a card from another deck).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from shoe_ctl.events import CounterReset, ForeignCard, ForeignWhat, LinkChanged, StubDeck, TimerFired
from shoe_ctl.machine.link import AlertFn, LinkState
from shoe_ctl.machine.progress import Progress

__all__ = ["FOREIGN_CODES", "UNREAD_TIMER", "UNREAD_WAIT_S", "settle", "take", "unreadable"]

FOREIGN_CODES: Mapping[ForeignWhat, str] = {
    ForeignWhat.UNKNOWN: "foreign-card-floor",
    ForeignWhat.OTHER_DECK: "foreign-card-other-deck-floor",
    ForeignWhat.RETIRED: "foreign-card-retired-deck-floor",
}
"""The latched alert by what the card is; ``-floor``: neither rule text has a clause for a card
from another deck (TDA RP-10 and house 16.1-16.27 say nothing of it), so the floor rules."""
_NOT_THE_PASS = (LinkChanged, StubDeck, CounterReset, TimerFired)
"""Events that are not the shoe's next word on a card: an unreadable card's notice waits past them."""
UNREAD_TIMER = "unread-card"
"""The ``TimerFired`` name of the end of the wait for the shoe's next word on an unreadable card:
the shoe said nothing more on it, so it is an unreadable card (its notice, and the deal goes on)."""
UNREAD_WAIT_S = 0.5
"""Seconds the controller waits for that word before it posts :data:`UNREAD_TIMER`. The shoe sends
it in the same pass, one frame after the CARD (at 115200 baud under 10 ms); the wait also covers a
resend of one lost frame (the shoe resends after 0.3 s without progress)."""


def take(p: Progress, ev: object, dealing: bool, alert: AlertFn) -> bool:
    """Take ``ev`` when it is a :class:`~shoe_ctl.events.ForeignCard` (True), else False.

    The card read unreadable just before ``ev`` (read ``ev.seq - 1``) is not the stub's deck's:
    a latched STOP naming it, under both rule profiles. While its street is still being dealt
    (``dealing``: the machine is in a deal state) and the card filled the step just before, it is
    taken off that seat (or burn) onto the set-aside pile and the step is dealt again, so the
    record stays what the table has once the dealer holds the card aside."""
    if not isinstance(ev, ForeignCard):
        return False
    hand = p.hand
    moved = ""
    last = p.reads[-1] if p.reads else None
    if (hand is not None and last is not None and last.seq == ev.seq - 1 and last.card is None and dealing
            and p.plan is not None and p.step_i > 0):
        step = p.plan.steps[p.step_i - 1]
        i = step.seat_index
        if step.kind == "deal" and i is not None and last.seat == hand.seats[i].seat and last.role in ("up", "down"):
            hand.withdraw_to_aside(i, last.role)
            moved = f"it is off seat {last.seat}'s {last.role}cards; the next card goes there. "
        elif step.kind == "burn" and last.role == "burn" and last.street is not None:
            hand.withdraw_to_aside(None, burn_street=last.street)
            moved = "it is not the burn; the next card is. "
        if moved:
            p.step_i -= 1
            p.reads[-1] = replace(last, role="stray", seat=None)
    alert(FOREIGN_CODES[ev.what], f"read {ev.seq - 1}: {ev.describe()}. STOP: hold the card aside, face down; "
          f"{moved}Call the floor: no rule text covers a card from another deck (TDA RP-10 and house "
          "16.1-16.27 say nothing of it); the floor rules (a misdeal, or the deck changed) and acknowledges",
          latched=True)
    return True


def unreadable(link: LinkState, seq: int, alert: AlertFn) -> None:
    """The notice of read ``seq``, a card that left the shoe unreadable (``unreadable-card``).

    A shoe that names foreign cards (``link.names_foreign``) sends a card of no live deck or of
    another deck as an unreadable card followed by its FOREIGN (docs/protocol.md section 16), in
    the same pass: the notice then waits for the shoe's next event (:func:`settle`), so that the
    dealer sees one STOP naming such a card and no notice before it, and the signal holds
    (``shoe-fault``, :func:`~shoe_ctl.machine.wording.instruction`) so that no "go on" is shown
    for a card that turns out foreign. Any other shoe: at once."""
    if link.names_foreign:
        link.unread = seq
        return
    _notice(seq, alert)


def settle(link: LinkState, ev: object, alert: AlertFn) -> None:
    """The event after an unreadable card whose notice waits (``link.unread``): no notice when it
    is that card's :class:`~shoe_ctl.events.ForeignCard` (its STOP names the card), else the
    notice now, before ``ev`` is handled. The link's own news (a status change, such as the
    reconnection after a restart of the service, the stub's deck, a counter reset) and a timer
    say nothing about the card: the notice waits on; but for the end of the wait
    (:data:`UNREAD_TIMER`): the shoe said nothing more, the notice now."""
    if isinstance(ev, _NOT_THE_PASS) and not (isinstance(ev, TimerFired) and ev.name == UNREAD_TIMER):
        return
    seq, link.unread = link.unread, None
    if seq is None or (isinstance(ev, ForeignCard) and ev.seq == seq + 1):
        return
    _notice(seq, alert)


def _notice(seq: int, alert: AlertFn) -> None:
    alert("unreadable-card", f"read {seq}: a card left the shoe unreadable; it is counted, its identity unknown")
