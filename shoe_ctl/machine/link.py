"""The shoe as the dealing machine sees it (:class:`LinkState`): the link's status, a shoe fault,
the dispense counter and its epochs, an open sequence gap; and the alerts the link's events
raise. Not part of a hand's progress (an undo never puts it back). Described in
``docs/state-machine.md`` and ``docs/protocol.md`` (sections 6 and 12).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from shoe_ctl.events import (
    CardRead,
    CounterReset,
    FaultKind,
    LinkChanged,
    LinkStatus,
    SequenceGap,
    ShoeFault,
    ShoeRestarted,
    StubDeck,
)

if TYPE_CHECKING:
    from shoe_ctl.machine.reads import Read
    from shoe_ctl.rules.hand import HandState

__all__ = ["FAULT_TEXT", "RETRY_CODE", "RETRY_TEXT", "AlertFn", "LinkState"]

FAULT_TEXT: dict[FaultKind, str] = {
    FaultKind.JAM: "clear the jam without pulling a card by hand; go on when the shoe reports it cleared "
                   "(a card that comes out is read and counted)",
    FaultKind.MISREAD: "a read failed: put the card where the display says; it is counted, its identity unknown",
    FaultKind.COVER_OPEN: "close the shoe's cover; pull no card until it is closed",
    FaultKind.READER_ERROR: "the card reader failed: pull no card until it clears or the floor decides",
}
"""What the dealer does about a shoe fault, by kind."""

RETRY_TEXT = ("the reader's check failed and the shoe identified the card on another read (a retry): it is "
              "counted with that identity; deal on when the shoe reports the misread's end")
"""What the dealer is told of a misread after a card the shoe read with its identity
(docs/protocol.md, FAULT *misread*), in place of ``FAULT_TEXT[FaultKind.MISREAD]``."""

RETRY_CODE = "shoe-misread-retry"
"""The alert of a misread the shoe retried (its card booked with the identity the shoe trusted):
routine on the floor, a notice (docs/floor.md, "Alerts by severity"); a misread that left its card
unknown is ``shoe-misread``."""

class AlertFn(Protocol):
    """Raises an alert, as :meth:`~shoe_ctl.machine.outcome.Outcome.alert`."""

    def __call__(self, code: str, message: str, *, latched: bool = False) -> None: ...


class LinkState:
    """The shoe link and its dispense counter.

    ``status`` (``"unknown"``, ``"connected"``, ``"degraded"``, ``"disconnected"``), ``detail``,
    ``auth`` (``"hmac"`` or ``"off"``), ``fault`` (a shoe fault's kind, until cleared);
    ``last_dispense`` and ``epoch`` (the counter's last count and the epoch it belongs to, ``None``
    not known yet), ``prev`` (the epoch and last count before the last confirmed reset),
    ``pending`` (a reset asked, not yet confirmed), ``wait`` (the hand's first card waits for that
    confirmation); ``gap`` (an open sequence gap inside a hand: ``{"lost", "card_no"}``, else
    ``None``); ``required`` (a machine on a shoe link: no hand starts while it is not heard);
    ``live`` (the machine has started: inputs come from the table now, not from a journal's
    replay, and no hand starts before the shoe has answered); ``deck`` (the enrolled deck the
    shoe said the stub is, ``StubDeck``; "" when none said); ``names_foreign`` (the shoe's hello
    offered *names-foreign*, ``ShoeInfo``) and ``unread`` (the read number of an unreadable card
    from such a shoe whose notice waits for the shoe's next event, else ``None``:
    :func:`shoe_ctl.machine.foreign.unreadable`)."""

    __slots__ = ("auth", "deck", "detail", "epoch", "fault", "gap", "last_dispense", "live", "names_foreign",
                 "pending", "prev", "required", "retry", "status", "unread", "wait")

    def __init__(self, required: bool) -> None:
        self.required = required
        self.status = "unknown"
        self.detail = ""
        self.auth = ""
        self.fault: str | None = None
        self.last_dispense = 0
        self.epoch: int | None = None
        self.prev: tuple[int | None, int] = (None, 0)
        self.pending = False
        self.wait = False
        self.gap: dict[str, int] | None = None
        self.live = False
        self.deck = ""
        self.names_foreign = False
        self.unread: int | None = None
        self.retry: int | None = None

    @property
    def heard(self) -> bool:
        """False while the host cannot hear the shoe (``disconnected`` or ``degraded``; on a shoe
        link also before its first ``connected``): no output then says *deal*."""
        if self.status in ("disconnected", "degraded"):
            return False
        return not (self.required and self.status == "unknown")

    # ================================================================== the dispense counter

    def dispense_gap(self, ev: CardRead) -> int:
        """How many cards left the shoe unreported before ``ev``, from its dispense counter and
        the counter's epoch: a read counted under the epoch before the last confirmed reset (made
        before the reset, delivered after its confirmation) continues that epoch's count; a read
        under an epoch never confirmed here (the shoe restarted: epoch 0) starts a count from 0."""
        epoch = ev.epoch
        if epoch is not None and self.epoch is not None and epoch != self.epoch:
            prev_epoch, prev_last = self.prev
            if epoch == prev_epoch:
                self.prev = (prev_epoch, max(prev_last, ev.dispense))
                return max(0, ev.dispense - prev_last - 1)
            self.prev = (self.epoch, self.last_dispense)
            self.epoch, self.last_dispense = epoch, 0
        elif epoch is not None and self.epoch is None:
            self.epoch = epoch
        gap = 0
        if ev.dispense > self.last_dispense + 1 and self.last_dispense >= 0:
            gap = ev.dispense - self.last_dispense - 1
        self.last_dispense = ev.dispense
        return gap

    def ask_reset(self, *, wait: bool) -> None:
        """A reset of the dispense counter was asked for (a new deck or stub). With a shoe link
        (``required``, or a counter epoch seen) the count restarts when the shoe confirms it
        (:meth:`counter_reset`); reads before that continue the old count. ``wait``: the first
        card of a new hand is not instructed until then."""
        if self.epoch is None and not self.required:
            self.last_dispense = 0  # nothing will confirm: counted from 0 from now on
            return
        self.pending = True
        self.wait = wait and self.required

    def counter_reset(self, ev: CounterReset) -> None:
        """The shoe counts from 0 under ``ev.epoch`` now; the first card of a waiting hand may go."""
        self.prev = (self.epoch, self.last_dispense)
        self.epoch, self.last_dispense = ev.epoch, 0
        self.pending = self.wait = False

    # ================================================================== the link's events

    def handle(self, ev: object, alert: AlertFn, hand: HandState | None, hand_no: int,
               last: Read | None = None) -> bool:
        """Take ``ev`` if it is the link's own event (``hand``: the hand in progress, else
        ``None``; ``last``: the hand's last card read, ``None`` for none); False for any other
        event."""
        if isinstance(ev, LinkChanged):
            self.changed(ev, alert, hand_no if hand is not None else None)
        elif isinstance(ev, ShoeFault):
            identified = last.seq if last is not None and last.seq == ev.seq - 1 and last.card is not None else None
            self.shoe_fault(ev, alert, identified)
        elif isinstance(ev, CounterReset):
            self.counter_reset(ev)
        elif isinstance(ev, StubDeck):  # docs/protocol.md section 16: the deck id, journaled and published
            self.deck = ev.deck
        elif isinstance(ev, SequenceGap):
            self.sequence_gap(ev, alert, hand.pulled + 1 if hand is not None else None)
        elif isinstance(ev, ShoeRestarted):  # docs/protocol.md section 12: a stop and the procedure
            if hand is not None:
                self.restarted(ev, alert)
        else:
            return False
        return True

    def changed(self, ev: LinkChanged, alert: AlertFn, hand_no: int | None) -> None:
        """The link's status changed (``hand_no``: the hand in progress, ``None`` for none)."""
        was = self.status
        self.status = ev.status.value
        self.detail = ev.detail
        self.auth = ev.auth or self.auth
        if ev.info is not None:
            self.names_foreign = ev.info.names_foreign
        if ev.refused:  # docs/security.md, "The shoe link": nothing of it was delivered
            alert(f"shoe-{ev.refused}", f"shoe link refused: {ev.detail}; stop dealing and call the floor",
                  latched=True)
        if ev.status is LinkStatus.DISCONNECTED and was != "disconnected" and hand_no is not None:
            alert("shoe-disconnected", f"the shoe disconnected in hand {hand_no} ({ev.detail}); "
                  "stop pulling cards until it is back", latched=False)
        if ev.status is LinkStatus.DEGRADED and was != "degraded" and hand_no is not None:
            alert("shoe-link-degraded", f"the host cannot hear the shoe reliably in hand {hand_no} "
                  f"({ev.detail}): pull no card until the signal comes back; a card already pulled "
                  "stays where the screen said (the shoe keeps its read and sends it once the link "
                  "recovers); if it does not recover within a minute, call the floor")
        if ev.sequence_reset:
            # docs/protocol.md section 6: the shoe's sequence numbers went back (it lost its
            # stored counter); events it held may be lost and cannot be told from old ones.
            alert("shoe-sequence-reset", f"the shoe's sequence numbers went back ({ev.detail}): it lost "
                  "its stored counter, so card reads may be lost; check the deal and the stub, and "
                  "have the shoe serviced", latched=True)

    def shoe_fault(self, ev: ShoeFault, alert: AlertFn, identified: int | None = None) -> None:
        """A fault the shoe reports (or its clearing). ``identified``: the read number of the card
        the shoe reported with its identity just before ``ev`` (its previous event), else ``None``.

        A misread follows its card's CARD (docs/protocol.md, FAULT *misread*): after a CARD with
        an identity it is a retry, the card booked with that identity and the dealer told so;
        after an unreadable one, the card's identity is unknown."""
        if ev.cleared:
            self.fault = None
            self.retry = None
            return
        detail = f" ({ev.detail})" if ev.detail else ""
        if ev.kind is FaultKind.DOUBLE_PULL:
            # Not blocking: both cards are read and counted; each goes where the plan puts it.
            alert("shoe-double-pull", f"two cards left the shoe together{detail}: both are counted; put the "
                  "first where the display said and the second where the next instruction says")
            return
        self.fault = ev.kind.value
        self.retry = identified if ev.kind is FaultKind.MISREAD else None
        if self.retry is not None:
            alert(RETRY_CODE, f"the shoe reports misread{detail} on read {self.retry}: {RETRY_TEXT}")
            return
        alert(f"shoe-{ev.kind.value}", f"the shoe reports {ev.kind.value}{detail}: "
                  f"{FAULT_TEXT.get(ev.kind, 'pull no card until it clears')}")

    def fault_code(self) -> str | None:
        """The code of the alert the open fault raised (:data:`RETRY_CODE` for a retry), ``None``
        without one."""
        if self.fault is None:
            return None
        return RETRY_CODE if self.retry is not None else f"shoe-{self.fault}"

    def restarted(self, ev: ShoeRestarted, alert: AlertFn) -> None:
        """The shoe restarted inside a hand (docs/protocol.md section 12): a latched stop with the
        count procedure. When the same restart lost events, the sequence gap it posted first is
        already open and its count (``gap-cards``) is the stop: the restart is then information
        only, the shoe's own count for the dealer and the floor (docs/state-machine.md)."""
        if self.gap is None:
            alert("shoe-restarted", ev.procedure(), latched=True)
            return
        lost = ev.unreported
        own = ("it cannot count cards pulled while it was off" if lost is None
               else f"by its own count {lost} card(s) left with no read" + (", also while it was off"
                                                                         if ev.certain else ""))
        alert("shoe-restarted", f"the shoe {ev.serial} restarted during the hand: {own}; count them "
                  "with the sequence gap (Cards found…)")

    def sequence_gap(self, ev: SequenceGap, alert: AlertFn, next_card: int | None) -> None:
        """The shoe lost events ``ev.expected .. ev.got - 1`` (e.g. a reboot that dropped its
        unacked buffer): cards may have left unread. Inside a hand (``next_card``: the number of
        the next card by the record) the gap stays open, and the dealer stopped, until the dealer
        reports the cards found on the felt (``gap-cards``) or the floor declares the hand dead
        (``misdeal``); docs/irregularities.md, *Sequence gap*."""
        lost = ev.got - ev.expected
        if next_card is None:
            alert("sequence-gap", f"the shoe lost events {ev.expected}..{ev.got - 1}: cards may have "
                  "left unreported; check the deal and the stub", latched=True)
            return
        if self.gap is not None:
            lost += self.gap["lost"]
            next_card = self.gap["card_no"]
        self.gap = {"lost": lost, "card_no": next_card}
        alert("sequence-gap", f"the shoe lost {lost} event(s) ({ev.expected}..{ev.got - 1}): cards may "
                  f"have left unread. Stop; the screen showed card #{next_card} next. Count the cards on the felt "
                  "against the screen (every seat, the burns, the centre) and report how many cards are "
                  "out that the screen does not show (Cards found…); or the floor declares them burned, or "
                  "the hand dead (Misdeal)", latched=True)
