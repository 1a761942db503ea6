"""The dealing state machine: one hand of stud, card by card, from the shoe's reads and the
dealer's inputs to the dealer's instructions.

:class:`Dealing` is the model of a ``transitions`` ``HierarchicalMachine`` (``send_event=True``,
``queued=True``, ``auto_transitions=False``, one ``on_exception`` handler; its state lookups
memoised: :class:`~shoe_ctl.machine.hsm.LeanHierarchicalMachine`). Its states are the
structure of the hand (see :mod:`shoe_ctl.machine.layout` and ``docs/state-machine.md``); its
one entry point is :meth:`Dealing.handle`, which takes one event and returns the commands it
causes (``Instruction``, ``Alert``, ``DisplayUpdate``, ``ShoeCommand``). It does no I/O, starts
no thread and calls no sink: the service hands the commands on.

Every decision is the rules core's: the cards of a street and their order
(:func:`~shoe_ctl.rules.stub.plan_street`), the stub count, the required number and the
forecast (:mod:`shoe_ctl.rules.stub`, :class:`~shoe_ctl.rules.hand.HandState`), the bring-in and
the first to act (:mod:`shoe_ctl.rules.games`). The machine walks ``StreetPlan.steps``: each card
read fills the current step, inside the ``deal`` state's handler (no trigger per card); triggers
fire only when the structure of the hand changes.

Checks on every card read (alert codes in brackets): a card already out of the shoe this hand
(``duplicate-card``; the earlier read is marked suspect too), a card that is not among the
identities of a scrambled stub (``card-not-in-stub``), a card while no card is expected (``card-not-expected``), a jump in
the shoe's dispense counter (``dispense-gap``), events lost by the shoe (``sequence-gap``), a shoe
whose sequence numbers went back (``shoe-sequence-reset``), the
shoe disconnected in a hand (``shoe-disconnected``), an unreadable card (``unreadable-card``).
A dealer input at the wrong time gives ``input-wrong-time`` and changes nothing.

Irregularities (exposed cards, absent players, premature cards, burn errors, a wrong bring-in,
card counts, a misdeal) and the undo of the dealer's last input are handled by
:class:`~shoe_ctl.machine.irregular.IrregularMixin` (``docs/irregularities.md``): the rules core
rules, the machine applies the ruling and re-plans the street. Every instruction inside a hand
carries ``card_no`` (the next card to leave the shoe) and answers a dealer input's ``ref``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from shoe_ctl.events import (
    Alert,
    CardRead,
    Command,
    CounterReset,
    DealerAction,
    DealerInput,
    DisplayUpdate,
    FaultKind,
    Instruction,
    LinkChanged,
    LinkStatus,
    SequenceGap,
    ShoeButton,
    ShoeCommand,
    ShoeFault,
    ShoeRestarted,
    Signal,
    TimerFired,
)
from shoe_ctl.machine import layout
from shoe_ctl.machine.hsm import LeanHierarchicalMachine
from shoe_ctl.machine.irregular import IrregularMixin
from shoe_ctl.machine.layout import ATTENTION, IDLE, SHOWDOWN, UNCONTESTED
from shoe_ctl.rules.cards import Card, card_text
from shoe_ctl.rules.games import Game, bring_in, first_to_act, first_to_act_third, open_pair
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.rules.stub import Step, StreetPlan, forecast_short, plan_street, required_number

log = logging.getLogger(__name__)

__all__ = ["Dealing", "MachineFault", "PlanMismatch", "Read"]

_CARD_STEPS = frozenset({"burn", "deal", "community"})

_FAULT_TEXT: dict[FaultKind, str] = {
    FaultKind.JAM: "clear the jam without pulling a card by hand; go on when the shoe reports it cleared "
                   "(a card that comes out is read and counted)",
    FaultKind.MISREAD: "a read failed: put the card where the display says; it is counted, its identity unknown",
    FaultKind.COVER_OPEN: "close the shoe's cover; pull no card until it is closed",
    FaultKind.READER_ERROR: "the card reader failed: pull no card until it clears or the floor decides",
}


class MachineFault(RuntimeError):
    """An internal error met while handling an event (the machine went to ``attention``)."""


class PlanMismatch(MachineFault):
    """The plan and the machine disagree (a dealer step of the wrong kind)."""


@dataclass(slots=True)
class Read:
    """One card read of the hand and where it went.

    :param seq: the shoe's sequence number.
    :param card: the card, ``None`` when unreadable.
    :param role: ``"burn"``, ``"down"``, ``"up"``, ``"community"`` or ``"stray"`` (not expected).
    :param street: the street it was dealt on.
    :param seat: the table seat it went to (deal steps), else ``None``.
    :param suspect: True once a later read of the same card (or a foreign read) casts doubt on it.
    """

    seq: int
    card: Card | None
    role: str
    street: str | None
    seat: int | None
    suspect: bool = False

    def where(self) -> str:
        """The read's place, e.g. ``"seat 1 down on 3rd"``. Private when the read is not face up
        (:attr:`public`): for the journal and DEBUG logs only, never for an alert text."""
        if self.role in ("down", "up"):
            return f"seat {self.seat} {self.role} on {self.street}"
        if self.role == "stray":
            return "a card not expected"
        return f"{self.role} on {self.street}"

    @property
    def public(self) -> bool:
        """The card lies face up for everyone to see (an upcard or the community card)."""
        return self.role in ("up", "community")

    def public_where(self) -> str:
        """Public description of a face-up read's place: ``"seat 2's upcard on 3rd"``,
        ``"the community card"``."""
        if self.role == "community":
            return "the community card"
        return f"seat {self.seat}'s upcard on {self.street}"


def _seat_number(value: Any, what: str) -> int:
    """A table seat number from a dealer input: an int 1..8 (not a bool, a float or a text).

    :raises ValueError: naming ``what`` and the value."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 8:
        raise ValueError(f"{what}: {value!r} is not a seat number 1..8")
    return value


def _seat_list(value: Any, what: str) -> list[Any]:
    """A list of seat numbers from a dealer input (a list or tuple, not a text).

    :raises ValueError: naming ``what`` and the value."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{what}: {value!r} is not a list of seat numbers")
    return list(value)


def _is_card_step(step: Step) -> bool:
    return step.kind in _CARD_STEPS


class Dealing(IrregularMixin):
    """The dealing state machine for one table.

    :param profiles: rule profiles by name (``"tda"``, ``"house"``), e.g. from
        :func:`shoe_ctl.config.load_profile`; a new hand names one (default ``default_rules``).
    :param default_rules: the profile used when a new hand names none.
    :param default_game: the game used when a new hand names none.
    :param display: emit ``DisplayUpdate`` commands (``False``: instructions and alerts only, for
        benchmarks and bulk replays nobody watches).
    :param await_counter_reset: a new hand asks the shoe to reset its dispense counter and
        instructs its first card only once the shoe confirmed it (a ``CounterReset`` event, one
        round trip: a few milliseconds, during which the signal stays ``idle``), so every card of
        the hand is counted from 1 and a card missing right after the start is a gap. For a
        service on a shoe link; without one (tests, direct replays) nothing would confirm.
    :raises KeyError: when ``default_rules`` is not among ``profiles``.

    ``handle(event) -> list[Command]`` is the only way in. ``state`` is the machine state
    (``"idle"``, ``"hand_fourth_deal"``, ...). :meth:`public_state` is the display state (no
    downcard before showdown); :meth:`summary` the decisions of the current or last hand in the
    shape of ``shoe-ctl analyze``.
    """

    state: str
    trigger: Callable[..., bool]

    def __init__(
        self,
        profiles: Mapping[str, RuleProfile],
        *,
        default_rules: str = "tda",
        default_game: Game = Game.STUD,
        display: bool = True,
        await_counter_reset: bool = False,
    ) -> None:
        self.display = display
        self.await_counter_reset = await_counter_reset
        self.profiles = dict(profiles)
        self.profile: RuleProfile = self.profiles[default_rules]
        self.game: Game = default_game
        self.hand_no = 0
        self.hand: HandState | None = None
        self.street: str | None = None
        self.plan: StreetPlan | None = None
        self.step_i = 0
        self.reads: list[Read] = []
        self._where: dict[Card, Read] = {}
        self.bring_in_idx: int | None = None
        self.first_idx: int | None = None
        self.first_by_street: dict[str, int | None] = {}
        self.seventh: dict[str, Any] | None = None
        self.procedures: dict[str, str] = {}
        self._forecast: str | None = None
        self._forecast_dirty = False
        self.mucked: set[int] = set()
        self.shown: set[int] = set()
        self.alerts: list[dict[str, Any]] = []
        self._alert_id = 0
        self.shoe_status = "unknown"
        self.shoe_detail = ""
        self.shoe_fault: str | None = None
        self.last_dispense = 0
        # the dispense counter: the epoch ``last_dispense`` belongs to (None: not known yet), the
        # epoch and last count before the last confirmed reset, a reset asked and not yet
        # confirmed, and whether the hand's first card waits for that confirmation
        self.counter_epoch: int | None = None
        self._prev_counter: tuple[int | None, int] = (None, 0)
        self.counter_pending = False
        self.counter_wait = False
        self.fault: str | None = None
        self._fault_from: str | None = None
        self._pending_fault: BaseException | None = None
        self._out: list[Command] = []
        self._rev = 0
        self._seat_cache: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._last_instruction: Instruction | None = None
        self._reply_ref: int | None = None
        self._idle_strays: set[int] = set()  # ids of the alerts for cards pulled with no hand running
        self._reset_irregular()
        self.machine = LeanHierarchicalMachine(
            model=self,
            states=layout.states(),
            transitions=layout.transitions(),
            initial=IDLE,
            send_event=True,
            queued=True,
            auto_transitions=False,
            on_exception="_on_exception",
            model_override=False,
        )

    # ================================================================== entry point

    def handle(self, event: object) -> list[Command]:
        """Apply one event; return the commands it causes, in order.

        Never raises for a bad event: what is wrong becomes an ``Alert``; an internal error
        moves the machine to ``attention`` with a ``machine-fault`` alert.
        """
        self._out = []
        if isinstance(event, CounterReset) and not self.counter_wait:
            self._on_counter_reset(event)  # nothing the dealer sees changes: nothing to publish
            return self._out
        before = self._snapshot_key()
        if isinstance(event, DealerInput) and isinstance(event.args.get("ref"), int):
            self._reply_ref = event.args["ref"]
        try:
            self._dispatch(event)
            self._settle()
        except Exception as exc:  # noqa: BLE001 - any fault becomes the attention state
            self._pending_fault = exc
        if self._pending_fault is not None:
            self._enter_attention(self._pending_fault)
        self._publish(before)
        return self._out

    def start(self) -> list[Command]:
        """The commands that show the initial state (instruction and display); a machine
        recovered while its new hand waits for the shoe's counter reset asks for it again (the
        request may have been lost with the stopped service)."""
        self._out = []
        if self.counter_wait:
            self._out.append(ShoeCommand("reset-counter"))
        self._publish(None)
        return self._out

    def service_alert(self, code: str, message: str, *, latched: bool = False) -> list[Command]:
        """An alert about the service around the machine (e.g. ``journal-write-failed``), shown
        and acknowledged like the machine's own; changes nothing else. Returns its commands. Call
        it from the thread that owns the machine (the controller's)."""
        self._out = []
        before = self._snapshot_key()
        self._alert(code, message, latched=latched)
        self._publish(before)
        return self._out

    # ================================================================== dispatch

    def _dispatch(self, event: object) -> None:
        if isinstance(event, CardRead):
            self._on_card(event)
        elif isinstance(event, DealerInput):
            self._on_input(event)
        elif isinstance(event, LinkChanged):
            self._on_link(event)
        elif isinstance(event, ShoeFault):
            self._on_shoe_fault(event)
        elif isinstance(event, CounterReset):
            self._on_counter_reset(event)
        elif isinstance(event, SequenceGap):
            self._alert("sequence-gap", f"the shoe lost events {event.expected}..{event.got - 1}: cards may have "
                        "left unreported; check the deal and the stub", latched=True)
        elif isinstance(event, ShoeRestarted):  # docs/protocol.md section 12: a stop and the procedure
            if self.hand is not None and self.state != IDLE:
                self._alert("shoe-restarted", event.procedure(), latched=True)
        elif isinstance(event, TimerFired):
            self._on_timer(event)
        elif isinstance(event, ShoeButton):
            log.info("shoe button %d pressed", event.button)
        elif isinstance(event, (Alert, Instruction, DisplayUpdate, ShoeCommand)):
            return  # a command read back from the journal: an output, not an input
        else:
            self._alert("unknown-event", f"an event of type {type(event).__name__} was ignored")

    # ================================================================== cards

    def _on_card(self, ev: CardRead) -> None:
        if self._undo is not None:
            self._undo = None
            self._undo_why = "a card has left the shoe since the last input"
        gap = self._dispense_gap(ev)
        self.counter_wait = False  # a card left the shoe: the dealer is dealing
        state = self.state
        hand = self.hand
        if state.endswith("_reload"):
            self.trigger("reloaded")  # the first card out of the new stub: it is in the shoe
            state = self.state
        dealing = hand is not None and state.endswith("_deal") and self.plan is not None
        if hand is not None and state.endswith("_aside"):
            self._irregular_card(ev, gap)
            return
        if gap:
            self._alert("dispense-gap", f"{gap} card(s) left the shoe unreported before read {ev.seq} "
                        "(dispense counter jumped); they are counted as unreadable cards in order; "
                        "check the deal", latched=True)
            for _ in range(gap):
                if dealing and self._current_card_step() is not None:
                    self._fill(None, ev.seq, check=False)
                elif hand is not None and hand.stub_count() > 0:
                    hand.put_aside(None)
        if ev.card is None:
            self._alert("unreadable-card", f"read {ev.seq}: a card left the shoe unreadable; it is counted, "
                        "its identity unknown")
        if dealing and self._current_card_step() is not None:
            self._fill(ev.card, ev.seq, check=True)
            return
        self._stray(ev.card, ev.seq)

    def _dispense_gap(self, ev: CardRead) -> int:
        """How many cards left the shoe unreported before ``ev``, from its dispense counter and
        the counter's epoch: a read counted under the epoch before the last confirmed reset (made
        before the reset, delivered after its confirmation) continues that epoch's count; a read
        under an epoch never confirmed here (the shoe restarted: epoch 0) starts a count from 0."""
        epoch = ev.epoch
        if epoch is not None and self.counter_epoch is not None and epoch != self.counter_epoch:
            prev_epoch, prev_last = self._prev_counter
            if epoch == prev_epoch:
                self._prev_counter = (prev_epoch, max(prev_last, ev.dispense))
                return max(0, ev.dispense - prev_last - 1)
            self._prev_counter = (self.counter_epoch, self.last_dispense)
            self.counter_epoch, self.last_dispense = epoch, 0
        elif epoch is not None and self.counter_epoch is None:
            self.counter_epoch = epoch
        gap = 0
        if ev.dispense > self.last_dispense + 1 and self.last_dispense >= 0:
            gap = ev.dispense - self.last_dispense - 1
        self.last_dispense = ev.dispense
        return gap

    def _ask_counter_reset(self, *, wait: bool) -> None:
        """A new deck or stub: ask the shoe to reset its dispense counter. With a shoe link
        (``await_counter_reset``, or a counter epoch seen) the count restarts when the shoe
        confirms it (:meth:`_on_counter_reset`); reads before that continue the old count.
        ``wait``: the first card of a new hand is not instructed until then."""
        self._out.append(ShoeCommand("reset-counter"))
        if self.counter_epoch is None and not self.await_counter_reset:
            self.last_dispense = 0  # nothing will confirm: counted from 0 from now on
            return
        self.counter_pending = True
        self.counter_wait = wait and self.await_counter_reset

    def _on_counter_reset(self, ev: CounterReset) -> None:
        """The shoe counts from 0 under ``ev.epoch`` now; the first card of a waiting hand may go."""
        self._prev_counter = (self.counter_epoch, self.last_dispense)
        self.counter_epoch, self.last_dispense = ev.epoch, 0
        self.counter_pending = self.counter_wait = False

    def _stray(self, card: Card | None, seq: int) -> None:
        """A card while no card is expected: counted, held aside, the dealer stopped."""
        read = Read(seq, card, "stray", self.street, None)
        self._check_identity(read)
        self.reads.append(read)
        if card is not None:
            self._where.setdefault(card, read)
        if self.hand is not None and self.hand.stub_count() <= 0:
            # More cards than the count leaves in the shoe: a new stub loaded before it was
            # reported, or a card from outside the deck. The read is kept; the count is not
            # driven below zero.
            self._alert("card-beyond-stub", f"read {seq}: a card left the shoe after the last card of the "
                        f"stub by the count, while {self._doing()} (a new stub loaded before it was reported, "
                        "or a card from outside the deck); hold it aside, stop and check", latched=True)
            return
        if self.hand is not None:
            self.hand.put_aside(card)
            if self.state.endswith("_betting"):
                self.betting_strays.append(read)
        if self.state == IDLE:
            self._alert("card-not-expected", f"read {seq}: a card left the shoe with no hand running: put it "
                        "back with the deck before the next hand, then start a new hand", latched=True)
            self._idle_strays.add(self._alert_id)
            return
        self._alert("card-not-expected", f"read {seq}: a card left the shoe while {self._doing()}; "
                    "hold it aside and read the display", latched=True)

    @staticmethod
    def _new_read(seq: int, card: Card | None, role: str, street: str | None, seat: int | None) -> Read:
        return Read(seq, card, role, street, seat)

    def _irregular_card(self, ev: CardRead, gap: int) -> None:
        """A card read while cards are taken aside (house 16.16); cards lost to a dispense gap
        first, as unreadable."""
        if gap:
            self._alert("dispense-gap", f"{gap} card(s) left the shoe unreported before read {ev.seq} "
                        "(dispense counter jumped); they are counted as unreadable cards in order; "
                        "check the deal", latched=True)
        if ev.card is None:
            self._alert("unreadable-card", f"read {ev.seq}: a card left the shoe unreadable; it is counted, "
                        "its identity unknown")
        for card in [None] * gap + [ev.card]:
            if self.state.endswith("_aside"):
                self._aside_card(card, ev.seq)
            else:
                self._stray(card, ev.seq)

    def _current_card_step(self) -> Step | None:
        plan = self.plan
        if plan is None or self.step_i >= len(plan.steps):
            return None
        step = plan.steps[self.step_i]
        return step if _is_card_step(step) else None

    def _fill(self, card: Card | None, seq: int, *, check: bool) -> None:
        """The card read fills the current step of the street's plan (a card beyond the stub's
        count, e.g. after cards not expected were pulled from a new stub, fills nothing)."""
        assert self.plan is not None and self.hand is not None
        if self.hand.stub_count() <= 0:
            self._stray(card, seq)
            return
        step = self.plan.steps[self.step_i]
        seat = self.hand.seats[step.seat_index].seat if step.seat_index is not None else None
        role = step.face if step.kind == "deal" and step.face else step.kind
        read = Read(seq, card, role or "down", step.street or self.street, seat)
        if check:
            self._check_identity(read)
        self.reads.append(read)
        if card is not None and card not in self._where:
            self._where[card] = read
        self.hand.record(step, card)
        self.step_i += 1

    def _check_identity(self, read: Read) -> None:
        """A card already read this hand (``duplicate-card``) or, after a scramble, not among the
        new stub's identities (``card-not-in-stub``): both reads are marked suspect (in
        :attr:`reads`, not on the display) and a latched alert stops the dealer.

        Hole-card embargo: the alert is public, so it names the earlier read's place only when
        both reads lie face up; otherwise it says only that the card was already read, since
        naming a downcard's or burn's place (or that it was face down) beside a card that lies
        face up, or beside the seat just dealt, would reveal a hidden card. The place goes to a
        DEBUG log line (and the journal holds every read: ``shoe-ctl export``)."""
        card = read.card
        if card is None or self.hand is None:
            return
        new_stub = self.hand.new_stub
        earlier = self._where.get(card)
        if earlier is None and (new_stub is None or card in new_stub):
            return
        read.suspect = True
        if earlier is not None:
            earlier.suspect = True
            log.debug("read %d (%s) has the identity of read %d (%s)", read.seq, read.where(), earlier.seq,
                      earlier.where())
        here = "the card just dealt" if read.role in ("down", "up", "community") else "this card"
        if read.role in ("down", "up") and read.seat is not None:
            here += f" to seat {read.seat}"
        match = ""
        if earlier is not None and read.public and earlier.public:
            match = f"; it matches {earlier.public_where()} (read {earlier.seq})"
        if new_stub is not None and card not in new_stub:
            # Not whether it was read before: a card out of the stub that was read already can
            # only be a dealt card, so saying so beside a face-up card would point at a hole card.
            what = f"; it was already read in this hand{match}; both reads are suspect" if match else ""
            self._alert("card-not-in-stub", f"read {read.seq}: card not in the scrambled stub: {here} is not "
                        f"one of the new stub's cards{what} — stop, call the floor", latched=True, seat=read.seat)
        else:
            self._alert("duplicate-card", f"read {read.seq}: duplicate card: {here} was already read in this "
                        f"hand{match}; both reads are suspect — stop, call the floor", latched=True, seat=read.seat)

    # ================================================================== dealer inputs

    def _on_input(self, ev: DealerInput) -> None:
        self._rev += 1  # any dealer input may change the public state
        if ev.action is DealerAction.ACK_ALERT:
            if self._ack(ev):
                self._undo = (ev.action, None)
            return
        if self.state == ATTENTION:
            self._wrong_time(ev, "the machine is stopped on a fault; acknowledge the alert first")
            return
        self._input_with_undo(ev, self._on_input_body)

    def _on_input_body(self, ev: DealerInput) -> None:
        action = ev.action
        state = self.state
        sub = layout.sub_of(state)
        if action is DealerAction.ACK_ALERT:
            self._ack(ev)
            return
        if state == ATTENTION:
            self._wrong_time(ev, "the machine is stopped on a fault; acknowledge the alert first")
            return
        if action is DealerAction.NEW_HAND:
            if state != IDLE:
                self._wrong_time(ev, "a hand is running")
                return
            self._new_hand(ev)
            return
        if self.hand is None:
            self._wrong_time(ev, "no hand is running")
            return
        if action is DealerAction.FOLD:
            if sub == "betting" or state == SHOWDOWN:
                hand = self.hand
                self._seat_action(ev, lambda i: hand.fold(i, betting=sub == "betting"))
                if state == SHOWDOWN and ev.seat is not None and any(s.seat == ev.seat for s in self.hand.seats):
                    self.mucked.add(self._index(ev.seat))
                    self.shown.discard(self._index(ev.seat))
                elif self.hand.live_count() == 1:
                    self.trigger("allfolded")
                else:
                    self._forecast_dirty = True
            else:
                self._wrong_time(ev, "a fold is reported during a betting round (or a muck at showdown)")
        elif action is DealerAction.SHOW:
            if state == SHOWDOWN and ev.seat is not None:
                try:
                    i = self._index(ev.seat)
                except ValueError as exc:
                    self._alert("input-invalid", str(exc), seat=ev.seat)
                    return
                if not self.hand.seats[i].in_hand or i in self.mucked:
                    self._wrong_time(ev, f"seat {ev.seat} has no hand to show")
                    return
                self.shown.add(i)
            else:
                self._wrong_time(ev, "a hand is shown at showdown, naming the seat")
        elif action is DealerAction.ALL_IN:
            if sub == "betting":
                hand = self.hand
                self._seat_action(ev, lambda i: hand.all_in(i, betting=True))
            else:
                self._wrong_time(ev, "an all-in is reported during a betting round")
        elif action is DealerAction.BETTING_COMPLETE:
            if sub == "betting":
                self.trigger("bettingdone")
            else:
                self._wrong_time(ev, "no betting round is open")
        elif self._irregular_input(ev):
            return
        elif action is DealerAction.SCRAMBLE_DONE:
            if sub == "reshuffle":
                self._reshuffle_done()
            elif sub == "scramble":
                self._step_done("scramble")
                self.trigger("scrambled")
            else:
                self._wrong_time(ev, "no scramble was asked for")
        elif action is DealerAction.CUT_DONE or (action is DealerAction.STUB_RELOADED and sub == "cut"):
            if sub == "cut":
                self._step_done("cut")
                self._ask_counter_reset(wait=False)  # the stub must be loaded first: no race
                self.trigger("cutdone")
                if action is DealerAction.STUB_RELOADED:  # cut and loaded in one report
                    self.trigger("reloaded")
            else:
                self._wrong_time(ev, "no cut was asked for")
        elif action is DealerAction.STUB_RELOADED:
            if sub == "reload":
                self.trigger("reloaded")
            else:
                self._wrong_time(ev, "no reload was asked for")
        elif action is DealerAction.HAND_COMPLETE:
            if state in (SHOWDOWN, UNCONTESTED):
                self.trigger("handdone")
            else:
                self._wrong_time(ev, "the hand is not over")
        else:
            self._wrong_time(ev, f"'{action.value}' is not handled in state {state}")

    def _new_hand(self, ev: DealerInput) -> None:
        args = ev.args
        try:
            seats = [_seat_number(s, "seats") for s in _seat_list(args.get("seats", ()), "seats")]
            if "button" in args:
                button = _seat_number(args["button"], "button")
                seats = sorted(seats, key=lambda s: (s - button - 1) % 8)
            all_in = [_seat_number(s, "all_in") for s in _seat_list(args.get("all_in", ()), "all_in")]
            if not set(all_in) <= set(seats):
                raise ValueError(f"all_in seat(s) {sorted(set(all_in) - set(seats))} not dealt in")
            game = Game(str(args.get("game", self.game.value)))
            rules = str(args.get("rules", self.profile.name))
            profile = self.profiles[rules]
            hand = HandState.new(game, seats)
        except (KeyError, ValueError, TypeError) as exc:
            self._alert("input-invalid", f"new hand refused: {exc} (args: seats, game "
                        f"{'|'.join(g.value for g in Game)}, rules {'|'.join(self.profiles)})")
            return
        self.profile, self.game, self.hand = profile, game, hand
        self.hand_no += 1
        self.reads, self._where = [], {}
        self.bring_in_idx = self.first_idx = None
        self.first_by_street, self.procedures, self.mucked, self.shown = {}, {}, set(), set()
        self.seventh = None
        self._reset_irregular()
        self.alerts = [a for a in self.alerts if a["latched"]]
        for s in dict.fromkeys(all_in):
            hand.all_in(self._index(s))
        self._ask_counter_reset(wait=True)
        self.trigger("newhand")

    def _seat_action(self, ev: DealerInput, apply: Callable[[int], None]) -> None:
        if ev.seat is None:
            self._alert("input-invalid", f"'{ev.action.value}' needs a seat")
            return
        try:
            apply(self._index(ev.seat))
        except ValueError as exc:
            self._alert("input-invalid", f"'{ev.action.value}' seat {ev.seat}: {exc}", seat=ev.seat)

    def _index(self, seat: int) -> int:
        assert self.hand is not None
        for i, s in enumerate(self.hand.seats):
            if s.seat == seat:
                return i
        raise ValueError(f"seat {seat} is not dealt in")

    def _step_done(self, kind: str) -> None:
        assert self.plan is not None and self.hand is not None
        step = self.plan.steps[self.step_i]
        if step.kind != kind:
            raise PlanMismatch(f"expected a {kind} step, the plan has {step.kind}")
        self.hand.record(step, None)
        if kind == "scramble":
            gathered = {g.removeprefix("burn ") for g in step.gather if g.startswith("burn ")}
            back = [c for c, r in self._where.items()
                    if (r.role == "burn" and r.street in gathered)
                    or (r.role in ("stray", "aside") and "set-aside" in step.gather)]
            for c in back:
                del self._where[c]
        self.step_i += 1

    def _wrong_time(self, ev: DealerInput, why: str) -> None:
        self._alert("input-wrong-time", f"'{ev.action.value}'{f' seat {ev.seat}' if ev.seat else ''} "
                    f"refused in state {self.state}: {why}; nothing changed", seat=ev.seat)

    def _ack(self, ev: DealerInput) -> bool:
        """Acknowledge the alert ``args["id"]`` and/or every alert of ``args["code"]`` (both absent:
        every alert). An id or code that matches no alert is refused with ``input-wrong-time``
        naming it, and changes nothing (False)."""
        aid = ev.args.get("id")
        code = ev.args.get("code")
        keep = []
        for a in self.alerts:
            if (aid is None and code is None) or a["id"] == aid or (code is not None and a["code"] == code):
                continue
            keep.append(a)
        if len(keep) == len(self.alerts) and (aid is not None or code is not None):
            named = f"{aid!r}{f' ({code})' if code is not None else ''}" if aid is not None else repr(code)
            self._wrong_time(ev, f"no alert {named} to acknowledge")
            return False
        self.alerts = keep
        if self.shoe_fault is not None and not any(a["code"] == f"shoe-{self.shoe_fault}" for a in keep):
            self.shoe_fault = None  # the dealer has dealt with a fault the shoe never cleared
        if self.state == ATTENTION and not any(a["code"] == "machine-fault" for a in self.alerts):
            back = self._fault_from or IDLE
            self.fault = None
            self.machine.set_state(back, model=self)
            street = layout.street_of(back)
            if back.endswith("_deal") and (self.plan is None or self.plan.street != street):
                self._begin_street(None)  # the street's plan was never made: make it now
        return True

    # ================================================================== link, faults, timers

    def _on_link(self, ev: LinkChanged) -> None:
        was = self.shoe_status
        self.shoe_status = ev.status.value
        self.shoe_detail = ev.detail
        if ev.status is LinkStatus.DISCONNECTED and was != "disconnected" and self.hand is not None \
                and self.state not in (IDLE,):
            self._alert("shoe-disconnected", f"the shoe disconnected in hand {self.hand_no} ({ev.detail}); "
                        "stop pulling cards until it is back", latched=False)
        if ev.sequence_reset:
            # docs/protocol.md section 6: the shoe's sequence numbers went back (it lost its
            # stored counter); events it held may be lost and cannot be told from old ones.
            self._alert("shoe-sequence-reset", f"the shoe's sequence numbers went back ({ev.detail}): it lost "
                        "its stored counter, so card reads may be lost; check the deal and the stub, and "
                        "have the shoe serviced", latched=True)

    def _on_shoe_fault(self, ev: ShoeFault) -> None:
        if ev.cleared:
            self.shoe_fault = None
            return
        detail = f" ({ev.detail})" if ev.detail else ""
        if ev.kind is FaultKind.DOUBLE_PULL:
            # Not blocking: both cards are read and counted; each goes where the plan puts it.
            self._alert("shoe-double-pull", f"two cards left the shoe together{detail}: both are counted; put the "
                        "first where the display said and the second where the next instruction says")
            return
        self.shoe_fault = ev.kind.value
        self._alert(f"shoe-{ev.kind.value}", f"the shoe reports {ev.kind.value}{detail}: "
                    f"{_FAULT_TEXT.get(ev.kind, 'pull no card until it clears')}")

    def _on_timer(self, ev: TimerFired) -> None:
        if ev.state != self.state:
            return  # armed in a state the machine has left
        self._alert(f"timer-{ev.name}", f"no progress in state {self.state} ({ev.name})")

    # ================================================================== structure (callbacks)

    def two_can_act(self, _event: Any) -> bool:
        """Condition of ``dealt``: two or more players in the hand can still bet (rules core
        ``HandState.can_act``); otherwise the street has no betting round."""
        assert self.hand is not None
        return sum(self.hand.can_act()) >= 2

    def _begin_street(self, _event: Any) -> None:
        """``after`` callback of the transitions into a street's ``deal``: ask the rules core for
        the street's plan."""
        street = layout.street_of(self.state)
        assert street is not None and self.hand is not None
        self.street = street
        self.first_idx = None
        if self._start_aside():
            return  # house 16.16: the cards taken aside come first; then _plan_now
        self._plan_now(None)

    def _plan_now(self, _event: Any) -> None:
        """Plan the street in progress (at its start, or once the house 16.16 cards are aside)."""
        street = self.street
        assert street is not None and self.hand is not None
        self.plan = plan_street(self.profile, self.hand, street)
        self.step_i = 0
        self.first_deal_idx = next((st.seat_index for st in self.plan.steps if st.kind == "deal"), None)
        self.procedures[street] = self.plan.procedure.value
        if street == "7th":
            self.seventh = {"live": self.plan.live, "stub": self.plan.stub,
                            "required": self.plan.required, "procedure": self.plan.procedure.value,
                            "clause": self.plan.clause}
        if self.plan.procedure.value != "normal":
            n = self.plan.stub
            self._alert(self.plan.clause, f"{street} street: short stub ({n} card{'' if n == 1 else 's'}, required "
                        f"{self.plan.required}): procedure {self.plan.procedure.value} ({self.plan.clause})",
                        street=street)
        self._forecast_dirty = True

    def _begin_betting(self, _event: Any) -> None:
        """``after`` callback of ``deal -> betting``: who brings in / acts first (rules core)."""
        hand = self.hand
        # The street's cards are out: the forecast looks from the next street on (after 7th: none).
        self._forecast_dirty = True
        street = self.street
        assert hand is not None and street is not None and self.plan is not None
        can = hand.can_act()
        self.betting_strays = []
        if street == "3rd":
            up = hand.upcards("3rd")
            self.first_idx = first_to_act_third(self.game, up, can, hand.bring_in_counts())
        else:
            in_hand = [s.in_hand for s in hand.seats]
            community = hand.community if hand.community_street is not None else None
            # house 16.20: a community card on the board that was not read counts as unknown.
            unknown = hand.community_street is not None and hand.community is None
            if self.plan.first_to_act_rule == "RP-10-H-D":
                # RP-10-H-D: the first who would act on 6th acts first on 7th (7th is dealt
                # down, so the boards showing are those of 6th; no community card counted).
                community = None
                unknown = False
            self.first_idx = first_to_act(self.game, hand.boards(), in_hand, can, self.profile.tie, community,
                                          community_unknown=unknown)
        self.first_by_street[street] = self.first_idx

    def _begin_showdown(self, _event: Any) -> None:
        self.street = None
        self.plan = None
        self._count_at_showdown()

    def _end_hand(self, _event: Any) -> None:
        self.street = None
        self.plan = None

    def _settle(self) -> None:
        """After an event: fire the structure changes the plan calls for (scramble and cut steps,
        a street fully dealt)."""
        for _ in range(8):
            if self._pending_fault is not None:
                return  # a callback failed: go to attention, change nothing more
            plan = self.plan
            if plan is None or not self.state.endswith("_deal") or self.hand is None:
                return
            if self.step_i >= len(plan.steps):
                if self.street == "3rd":
                    self.bring_in_idx = bring_in(self.game, self.hand.upcards("3rd"), self.hand.bring_in_counts())
                    if self.absent:
                        self._absent_at_deal_end()
                        if self.hand.live_count() <= 1:
                            self.trigger("allfolded")
                            return
                self.trigger("dealt")
                continue
            if plan.steps[self.step_i].kind == "scramble":
                self.trigger("scramble")
            return

    # ================================================================== faults

    def _on_exception(self, event: Any) -> None:
        """The one ``on_exception`` handler: record the fault; :meth:`handle` moves to
        ``attention`` once the trigger has returned (no transition from inside the handler)."""
        self._pending_fault = event.error

    def _enter_attention(self, exc: BaseException) -> None:
        self._pending_fault = None
        log.exception("machine fault in state %s", self.state, exc_info=exc)
        if self.state != ATTENTION:
            self._fault_from = self.state
        self.fault = f"{type(exc).__name__}: {exc}"
        self._alert("machine-fault", f"internal fault in state {self._fault_from}: {self.fault}; "
                    "stop dealing; acknowledge to resume", latched=True)
        if self.state != ATTENTION:
            try:
                self.trigger("fault")
            except Exception:  # noqa: BLE001 - the transition itself failed: force the state
                self._pending_fault = None
            if self.state != ATTENTION or self._pending_fault is not None:
                self._pending_fault = None
                self.machine.set_state(ATTENTION, model=self)

    # ================================================================== outputs

    def _alert(self, code: str, message: str, *, latched: bool = False, seat: int | None = None,
               street: str | None = None, moves: tuple[str, ...] = ()) -> None:
        self._alert_id += 1
        st = street or self.street
        self.alerts.append({"id": self._alert_id, "code": code, "message": message, "street": st,
                            "seat": seat, "latched": latched, "moves": list(moves)})
        self._out.append(Alert(code, message, st, seat, latched, moves))
        (log.warning if latched else log.info)("alert %s: %s", code, message)

    def _doing(self) -> str:
        """What the table is doing, in the dealer's words (for alert texts)."""
        street = f" on {self.street} street" if self.street else ""
        words = {"betting": f"the betting{street} was open", "scramble": f"a scramble{street} was asked for",
                 "cut": f"a cut{street} was asked for", "reload": f"the new stub{street} was to be loaded",
                 "reshuffle": f"the premature cards{street} were to go back into the stub",
                 "showdown": "the showdown was on", "uncontested": "the hand was already won",
                 "idle": "no hand was running", "deal": f"dealing{street}"}
        return words.get(layout.sub_of(self.state), self.state.replace("_", " "))

    def _snapshot_key(self) -> tuple[Any, ...]:
        return (self.state, self.step_i, len(self.reads), len(self.alerts), self._alert_id,
                self.shoe_status, self.shoe_fault, self._rev)

    def instruction(self) -> Instruction:
        """What the dealer must do now (overlays first: shoe fault, a latched alert, a fault).
        Inside a hand every instruction carries the number of the next card to leave the shoe."""
        ins = self._instruction()
        if ins.card_no is None and self.hand is not None and self.state != IDLE and self.state != ATTENTION:
            ins = replace(ins, card_no=self.hand.pulled + 1)
        return ins

    def _instruction(self) -> Instruction:
        state = self.state
        street = self.street
        if state == ATTENTION:
            return Instruction(Signal.STOP, "Stop: internal fault — read the alert and acknowledge it")
        if self.hand is not None and state != IDLE:
            if self.shoe_status == "disconnected":
                return Instruction(Signal.SHOE_FAULT, "Shoe disconnected: stop pulling cards", street=street)
            if self.shoe_fault is not None:
                what = _FAULT_TEXT.get(FaultKind(self.shoe_fault), "pull no card until it clears")
                return Instruction(Signal.SHOE_FAULT, f"Shoe fault: {self.shoe_fault}: {what}", street=street)
            for a in self.alerts:
                if a["latched"]:
                    return Instruction(Signal.STOP, f"Stop: {a['code']} — check and acknowledge", street=street)
            if self.counter_wait:
                # One round trip to the shoe; the signal stays idle, so the LEDs do not change.
                return Instruction(Signal.IDLE, f"Hand {self.hand_no}: waiting for the shoe to confirm its "
                                   "card counter reset; pull no card yet", street=street)
        if state == IDLE:
            stray = next((a for a in self.alerts if a["id"] in self._idle_strays), None)
            if stray is not None:  # a card pulled with no hand running: stop until acknowledged
                return Instruction(Signal.STOP, f"Stop: {stray['code']} — check and acknowledge")
            if self.misdeal is not None and self.hand is not None:
                return Instruction(Signal.IDLE, f"Misdeal ({self.misdeal}): collect every card; new hand")
            return Instruction(Signal.IDLE, "Waiting for a new hand")
        sub = layout.sub_of(state)
        hand = self.hand
        assert hand is not None
        nxt = hand.pulled + 1
        if sub == "reshuffle":
            p = self.premature or {}
            st = p.get("street")
            return Instruction(Signal.SCRAMBLE, f"Put the premature {st} cards back into the stub, reshuffle it "
                               "face down and load it into the shoe; no burn when the street is dealt (RP-5-D)",
                               street=street, cards=("stub", f"premature {st}"), card_no=nxt)
        if sub == "aside":
            k = self.aside_total - self.aside_left + 1
            return Instruction(Signal.BURN, f"Take one card aside face down (house 16.16): {k} of "
                               f"{self.aside_total}", street=street, cards=("set-aside",), card_no=nxt)
        if sub == "reload" and self.plan is not None and self.step_i < len(self.plan.steps):
            ins = self._step_instruction(hand, self.plan.steps[self.step_i], street, nxt)
            if ins is not None:
                return replace(ins, text=f"Load the new stub into the shoe, then: {ins.text[0].lower()}{ins.text[1:]}")
        if sub == "deal" and self.plan is not None and self.step_i < len(self.plan.steps):
            ins = self._step_instruction(hand, self.plan.steps[self.step_i], street, nxt)
            if ins is not None:
                return ins
        if sub == "scramble" and self.plan is not None:
            step = self.plan.steps[self.step_i]
            return Instruction(Signal.SCRAMBLE, f"Scramble: {', '.join(step.gather)} into a new stub "
                               f"({self.plan.clause})", street=street, cards=tuple(step.gather), card_no=nxt)
        if sub == "cut":
            return Instruction(Signal.CUT, "Cut the new stub", street=street, card_no=nxt)
        if sub == "betting":
            first = self._seat_of(self.first_idx)
            who = f"seat {first} acts first" if first is not None else "first to act unknown: dealer decides"
            if first is None and self._first_unknown():
                who = "first to act unknown (the community card was not read, house 16.20): floor decides"
            if street == "3rd":
                bi = self._seat_of(self.bring_in_idx)
                who = (f"bring-in seat {bi}; " if bi is not None else "") + who
            quiet = [s.seat for s in hand.seats if s.no_bet and s.in_hand]
            if quiet:
                who += f"; seat {', '.join(map(str, quiet))} may not bet or raise (house 16.17)"
            return Instruction(Signal.BETTING, f"Betting on {street}: {who}", seat=first, street=street)
        if state == SHOWDOWN:
            if self.profile.exposed_seventh.value == "rp-10-b" and any(s.all_in for s in hand.seats if s.in_hand):
                risk = [s.seat for s in hand.seats if s.in_hand and not s.all_in]
                who = f"seat{'s' if len(risk) > 1 else ''} {', '.join(map(str, risk))} first — " if risk else ""
                return Instruction(Signal.SHOWDOWN, f"Showdown (all-in): {who}the players not at risk expose "
                                   "first (RP-10-B)")
            return Instruction(Signal.SHOWDOWN, "Showdown")
        if state == UNCONTESTED:
            winner = next((s.seat for s in hand.seats if s.in_hand), None)
            return Instruction(Signal.SHOWDOWN, f"Seat {winner} wins without showdown", seat=winner)
        return Instruction(Signal.STOP, f"Stop: nothing to do in state {state}")

    @property
    def forecast(self) -> str | None:
        """The first street that will be short if every player now in the hand stays in
        (``forecast_short``), recomputed only after a street start, a street's deal or a fold;
        ``None`` once 7th street is dealt."""
        if self._forecast_dirty and self.hand is not None:
            self._forecast = forecast_short(self.profile, self.hand)
            self._forecast_dirty = False
        return self._forecast

    @staticmethod
    def _step_instruction(hand: HandState, step: Step, street: str | None, nxt: int) -> Instruction | None:
        if step.kind == "burn":
            return Instruction(Signal.BURN, f"Burn one card ({street})", street=street, card_no=nxt)
        if step.kind == "community":
            return Instruction(Signal.COMMUNITY, f"Community card face up to the centre ({street})",
                               face="up", street=street, card_no=nxt)
        if step.kind == "deal" and step.seat_index is not None:
            seat = hand.seats[step.seat_index].seat
            return Instruction(Signal.DEAL, f"Deal {step.face} to seat {seat} ({street})", seat=seat,
                               face=step.face, street=street, card_no=nxt)
        return None

    def _first_unknown(self) -> bool:
        """In a 4th-7th street betting round, no first to act could be named because a card that
        decides it is unknown (an unread community card, house 16.20, or unread upcards)."""
        return (self.first_idx is None and self.hand is not None and self.street not in (None, "3rd")
                and layout.sub_of(self.state) == "betting")

    def _seat_of(self, idx: int | None) -> int | None:
        if idx is None or self.hand is None:
            return None
        return self.hand.seats[idx].seat

    def _publish(self, before: tuple[Any, ...] | None) -> None:
        ins = self.instruction()
        ref, self._reply_ref = self._reply_ref, None
        if ref is not None:
            ins = replace(ins, ref=ref)
        if ins != self._last_instruction or before is None or self._snapshot_key() != before:
            changed_step = before is None or before[:2] != self._snapshot_key()[:2]
            if ins != self._last_instruction or changed_step or ref is not None:
                self._out.append(ins)
                self._last_instruction = ins
            if self.display:
                self._out.append(DisplayUpdate(self.public_state(ins)))

    # ================================================================== public views

    def public_state(self, ins: Instruction | None = None) -> dict[str, Any]:
        """The public table state (schema in docs/display.md): JSON-safe; downcards only at showdown, for the
        hands the dealer reported shown (``show``); a folded or mucked hand's never. Seat entries
        are shared between successive states while the seat is unchanged: treat them as read-only.

        Beyond the contract's keys: each seat's ``absent`` (reported absent and not yet ruled on,
        or dealt to as an empty seat, RP-10-C / house 16.9-16.11) and ``no_bet`` (may not bet or
        raise, house 16.17); each alert's ``moves`` (:attr:`shoe_ctl.events.Alert.moves`); and
        ``first_to_act_unknown`` (a 4th-7th betting round whose first to act cannot be named
        because a deciding card is unknown, e.g. an unread community card, house 16.20); the
        stub's ``drawn`` (cards pulled since the current stub was loaded: the hand's deck, or a
        scrambled new stub)."""
        ins = ins or self.instruction()
        hand = self.hand
        seats: list[dict[str, Any]] = []
        stub: dict[str, Any] = {"count": 52, "required": 0, "forecast": None, "drawn": 0}
        community = None
        if hand is not None:
            show = self.state == SHOWDOWN
            betting = layout.sub_of(self.state) == "betting"
            cache = self._seat_cache
            masked = self._masked_upcards(hand)
            for i, s in enumerate(hand.seats):
                shown = show and s.in_hand and i in self.shown
                key = (self.hand_no, len(s.up), len(s.down), s.status, i == self.bring_in_idx,
                       betting and i == self.first_idx, shown, s.up[-1] if s.up else None,
                       i in self.absent, s.no_bet, tuple(c for c in s.up if c in masked) if masked else ())
                hit = cache.get(i)
                if hit is not None and hit[0] == key:
                    seats.append(hit[1])
                    continue
                entry: dict[str, Any] = {
                    "seat": s.seat, "status": s.status,
                    "up": [card_text(None if c in masked else c) for c in s.up],
                    "down_count": len(s.down), "bring_in": key[4], "first_to_act": key[5],
                    "open_pair": open_pair([None if c in masked else c for c in s.up]), "absent": key[8],
                    "no_bet": s.no_bet,
                }
                if shown:
                    entry["down"] = [card_text(c) for c in s.down]
                cache[i] = (key, entry)
                seats.append(entry)
            stub = {"count": hand.stub_count(), "required": required_number(hand.live_count()),
                    "forecast": self.forecast, "drawn": hand.dealt_since_load}
            if hand.community_street is not None:
                community = card_text(None if hand.community in masked else hand.community)
        return {
            "hand": self.hand_no if hand is not None else None,
            "game": self.game.value,
            "rules": self.profile.name,
            "state": self.state,
            "street": self.street,
            "seats": seats,
            "community": community,
            "stub": stub,
            "instruction": {"signal": ins.signal.value, "text": ins.text, "seat": ins.seat, "face": ins.face},
            "alerts": [dict(a) for a in self.alerts],
            "shoe": {"status": self.shoe_status, "detail": self.shoe_detail},
            "first_to_act_unknown": self._first_unknown(),
        }

    def _masked_upcards(self, hand: HandState) -> frozenset[Card]:
        """Hole-card embargo: the upcards (and community card) read with the identity of a hole
        card read earlier this hand — a misread, or a second deck's card, alerted as
        ``duplicate-card`` — which the display shows as ``??`` (at showdown too: the hole card
        may be mucked), so it never names a hole card. A card read face up first keeps showing."""
        down = {c for s in hand.seats for c in s.down if c is not None}
        if not down:
            return frozenset()
        where = self._where
        up = {c for s in hand.seats for c in s.up if c is not None}
        if hand.community is not None:
            up.add(hand.community)
        return frozenset(c for c in down & up if (r := where.get(c)) is not None and r.role == "down")

    def summary(self) -> dict[str, Any]:
        """The decisions of the current (or last) hand, in the keys of ``shoe-ctl analyze``:
        ``game``, ``rules``, ``players``, ``bring_in`` and ``first_to_act`` (1-based player
        order), ``seventh``, ``community_card``, ``procedures``."""
        hand = self.hand
        players = len(hand.seats) if hand is not None else 0
        bi = None if self.bring_in_idx is None else self.bring_in_idx + 1
        first = {st: (None if v is None else v + 1) for st, v in self.first_by_street.items()}
        community = None
        if hand is not None and hand.community_street is not None:
            community = card_text(hand.community)
        return {"game": self.game.value, "rules": self.profile.name, "players": players, "bring_in": bi,
                "first_to_act": first, "seventh": self.seventh, "community_card": community,
                "procedures": dict(self.procedures)}


