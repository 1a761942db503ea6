"""The dealing machine: the card path of one hand of stud and the state chart's callbacks
(:class:`Dealing`), with its collaborators: the dealer inputs (:mod:`~shoe_ctl.machine.inputs`),
the irregularity rulings (:mod:`~shoe_ctl.machine.irregular`), the instruction wording
(:mod:`~shoe_ctl.machine.wording`) and the public views (:mod:`~shoe_ctl.machine.views`).
The structure and the behaviour are described in ``docs/state-machine.md``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from shoe_ctl.events import (
    Alert,
    CardRead,
    Command,
    CounterReset,
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
    TimerFired,
)
from shoe_ctl.machine import layout
from shoe_ctl.machine.hsm import LeanHierarchicalMachine
from shoe_ctl.machine.inputs import DealerInputs
from shoe_ctl.machine.irregular import Irregularities
from shoe_ctl.machine.layout import ATTENTION, IDLE
from shoe_ctl.machine.reads import Read
from shoe_ctl.machine.views import Views
from shoe_ctl.machine.wording import FAULT_TEXT, Wording, state_words
from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.games import Game, bring_in, first_to_act, first_to_act_third
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.rules.stub import Step, StreetPlan, forecast_short, plan_street

log = logging.getLogger(__name__)

_READ_PREFIX = re.compile(r"read \d+: ")


def _words(message: str) -> str:
    """An alert's words without the read they start with (``read 12: ...``)."""
    return _READ_PREFIX.sub("", message, count=1) if message.startswith("read ") else message

__all__ = ["Dealing", "MachineFault", "PlanMismatch", "Read"]

_CARD_STEPS = frozenset({"burn", "deal", "community"})


class MachineFault(RuntimeError):
    """An internal error met while handling an event (the machine went to ``attention``)."""


class PlanMismatch(MachineFault):
    """The plan and the machine disagree (a dealer step of the wrong kind)."""


def _is_card_step(step: Step) -> bool:
    return step.kind in _CARD_STEPS


class Dealing:
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
    shape of ``shoe-ctl analyze``. Its collaborators: ``inputs``
    (:class:`~shoe_ctl.machine.inputs.DealerInputs`, with the undo point ``inputs.undo``),
    ``irregular`` (:class:`~shoe_ctl.machine.irregular.Irregularities`), ``wording``
    (:class:`~shoe_ctl.machine.wording.Wording`) and ``views`` (:class:`~shoe_ctl.machine.views.Views`).
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
        self.where: dict[Card, Read] = {}
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
        self.shoe_auth = ""  # "hmac" or "off" (an unauthenticated bench link), from LinkChanged
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
        self.out: list[Command] = []
        self._rev = 0
        self._last_instruction: Instruction | None = None
        self._reply_ref: int | None = None
        self.confirming = False  # in a betting state with no betting: the street is to be confirmed
        self.entries = 0  # state entries so far: tags a timer with the entry it was armed in
        self.idle_strays: set[int] = set()  # ids of the alerts for cards pulled with no hand running
        # an open sequence gap inside a hand (docs/irregularities.md, *Sequence gap*): the events
        # lost, the card number the screen showed; None when no gap is open
        self.gap: dict[str, int] | None = None
        self.irregular = Irregularities(self)
        self.inputs = DealerInputs(self)
        self.wording = Wording(self)
        self.views = Views(self)
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
            after_state_change="_entered",
        )

    # ================================================================== entry point

    def handle(self, event: object) -> list[Command]:
        """Apply one event; return the commands it causes, in order.

        Never raises for a bad event: what is wrong becomes an ``Alert``; an internal error
        moves the machine to ``attention`` with a ``machine-fault`` alert.
        """
        self.out = []
        if isinstance(event, CounterReset) and not self.counter_wait:
            self._on_counter_reset(event)  # nothing the dealer sees changes: nothing to publish
            return self.out
        before = self._snapshot_key()
        if isinstance(event, DealerInput) and isinstance(event.args.get("ref"), int):
            self._reply_ref = event.args["ref"]
        try:
            if isinstance(event, CardRead):  # the common event, without the dispatch's call
                self._on_card(event)
            else:
                self._dispatch(event)
            self._settle()
        except Exception as exc:  # noqa: BLE001 - any fault becomes the attention state
            self._pending_fault = exc
        if self._pending_fault is not None:
            self._enter_attention(self._pending_fault)
        self._publish(before)
        return self.out

    def start(self) -> list[Command]:
        """The commands that show the initial state (instruction and display); a machine
        recovered while its new hand waits for the shoe's counter reset asks for it again (the
        request may have been lost with the stopped service)."""
        self.out = []
        self.inputs.live = True  # from now on a link state not yet reported is a shoe not yet answered
        if self.counter_wait:
            self.out.append(ShoeCommand("reset-counter"))
        self._publish(None)
        return self.out

    def service_alert(self, code: str, message: str, *, latched: bool = False) -> list[Command]:
        """An alert about the service around the machine (e.g. ``journal-write-failed``), shown
        and acknowledged like the machine's own; changes nothing else. Returns its commands. Call
        it from the thread that owns the machine (the controller's)."""
        self.out = []
        before = self._snapshot_key()
        self.alert(code, message, latched=latched)
        self._publish(before)
        return self.out

    # ================================================================== dispatch

    def _dispatch(self, event: object) -> None:
        if isinstance(event, CardRead):
            self._on_card(event)
        elif isinstance(event, DealerInput):
            self.inputs.handle(event)
        elif isinstance(event, LinkChanged):
            self._on_link(event)
        elif isinstance(event, ShoeFault):
            self._on_shoe_fault(event)
        elif isinstance(event, CounterReset):
            self._on_counter_reset(event)
        elif isinstance(event, SequenceGap):
            self._on_sequence_gap(event)
        elif isinstance(event, ShoeRestarted):  # docs/protocol.md section 12: a stop and the procedure
            self._on_shoe_restarted(event)
        elif isinstance(event, TimerFired):
            self._on_timer(event)
        elif isinstance(event, ShoeButton):
            log.info("shoe button %d pressed", event.button)
        elif isinstance(event, (Alert, Instruction, DisplayUpdate, ShoeCommand)):
            return  # a command read back from the journal: an output, not an input
        else:
            self.alert("unknown-event", f"an event of type {type(event).__name__} was ignored")

    # ================================================================== cards

    def _on_card(self, ev: CardRead) -> None:
        if self.inputs.undo.last is not None:
            self.inputs.undo.forget("a card has left the shoe since the last input")
        epoch = ev.epoch
        if (epoch is None or epoch == self.counter_epoch) and ev.dispense == self.last_dispense + 1:
            self.last_dispense = ev.dispense  # the next card of the same count: _dispense_gap's answer
            gap = 0
        else:
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
        if self.gap is not None and hand is not None and state != IDLE:
            # a sequence gap is open: where this card belongs is not known until the dealer's
            # count closes it; it is held aside (counted) and the dealer stopped
            for _ in range(gap):
                hand.put_aside(None)
            self._stray(ev.card, ev.seq)
            return
        if gap:
            self.alert("dispense-gap", f"{gap} card(s) left the shoe unreported before read {ev.seq} "
                       "(dispense counter jumped); they are counted as unreadable cards in order; "
                       "check the deal", latched=True)
            for _ in range(gap):
                if dealing and self._current_card_step() is not None:
                    self._fill(None, ev.seq, check=False)
                elif hand is not None and hand.stub_count() > 0:
                    hand.put_aside(None)
        if ev.card is None:
            self.alert("unreadable-card", f"read {ev.seq}: a card left the shoe unreadable; it is counted, "
                       "its identity unknown")
        if dealing:
            steps = self.plan.steps  # type: ignore[union-attr]  # dealing: a plan is set
            if self.step_i < len(steps) and steps[self.step_i].kind in _CARD_STEPS:  # _current_card_step
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

    def ask_counter_reset(self, *, wait: bool) -> None:
        """A new deck or stub: ask the shoe to reset its dispense counter. With a shoe link
        (``await_counter_reset``, or a counter epoch seen) the count restarts when the shoe
        confirms it (:meth:`_on_counter_reset`); reads before that continue the old count.
        ``wait``: the first card of a new hand is not instructed until then."""
        self.out.append(ShoeCommand("reset-counter"))
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
        self.check_identity(read)
        self.reads.append(read)
        if card is not None:
            self.where.setdefault(card, read)
        if self.hand is not None and self.hand.stub_count() <= 0:
            # More cards than the count leaves in the shoe: a new stub loaded before it was
            # reported, or a card from outside the deck. The read is kept; the count is not
            # driven below zero.
            self.alert("card-beyond-stub", f"read {seq}: a card left the shoe after the last card of the "
                       f"stub by the count, while {self.wording.doing()} (a new stub loaded before it was reported, "
                       "or a card from outside the deck); hold it aside, stop and check", latched=True, repeat=True)
            return
        if self.hand is not None:
            self.hand.put_aside(card)
            if self.state.endswith("_betting"):
                self.irregular.betting_strays.append(read)
        if self.state == IDLE:
            self.alert("card-not-expected", f"read {seq}: a card left the shoe with no hand running: put it "
                       "back with the deck before the next hand, then start a new hand", latched=True, repeat=True)
            self.idle_strays.add(self._alert_id)
            return
        if self.confirming and self.state.endswith("_betting"):
            burn = "" if self.street == "7th" else "If it is the next street's burn, report premature-done; "
            self.alert("card-not-expected", f"read {seq}: a card left the shoe before {self.street} street was "
                       f"confirmed complete; it is held aside, booked to no seat. {burn}If a seat got a card too "
                       "many, count that seat's cards (card-count)", latched=True)
            return
        self.alert("card-not-expected", f"read {seq}: a card left the shoe while {self.wording.doing()}; "
                   "hold it aside and read the display", latched=True)

    def _irregular_card(self, ev: CardRead, gap: int) -> None:
        """A card read while cards are taken aside (house 16.16); cards lost to a dispense gap
        first, as unreadable."""
        if gap:
            self.alert("dispense-gap", f"{gap} card(s) left the shoe unreported before read {ev.seq} "
                       "(dispense counter jumped); they are counted as unreadable cards in order; "
                       "check the deal", latched=True)
        if ev.card is None:
            self.alert("unreadable-card", f"read {ev.seq}: a card left the shoe unreadable; it is counted, "
                       "its identity unknown")
        for card in [None] * gap + [ev.card]:
            if self.state.endswith("_aside"):
                self.irregular.aside_card(card, ev.seq)
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
        hand = self.hand
        assert self.plan is not None and hand is not None
        if hand.deck_size - hand.pulled + hand.returned <= 0:  # hand.stub_count(), written out
            self._stray(card, seq)
            return
        step = self.plan.steps[self.step_i]
        seat = hand.seats[step.seat_index].seat if step.seat_index is not None else None
        role = step.face if step.kind == "deal" and step.face else step.kind
        read = Read(seq, card, role or "down", step.street or self.street, seat)
        if card is not None:
            where = self.where
            # check_identity finds nothing to say unless the card was read before or lies
            # outside a scrambled stub: the common case is decided here without the call
            if check and (card in where or (hand.new_stub is not None and card not in hand.new_stub)):
                self.check_identity(read)
            where.setdefault(card, read)  # the first read of an identity stays
        self.reads.append(read)
        hand.record(step, card)
        self.step_i += 1

    def check_identity(self, read: Read) -> None:
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
        earlier = self.where.get(card)
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
            self.alert("card-not-in-stub", f"read {read.seq}: card not in the scrambled stub: {here} is not "
                       f"one of the new stub's cards{what} — stop, call the floor", latched=True, seat=read.seat)
        else:
            self.alert("duplicate-card", f"read {read.seq}: duplicate card: {here} was already read in this "
                       f"hand{match}; both reads are suspect — stop, call the floor", latched=True, seat=read.seat)

    # ================================================================== for the dealer inputs

    def begin_hand(self, profile: RuleProfile, game: Game, hand: HandState, all_in: list[int]) -> None:
        """Start a new hand (``new-hand`` accepted): ``all_in`` seats are all in from the start."""
        self.profile, self.game, self.hand = profile, game, hand
        self.hand_no += 1
        self.reads, self.where = [], {}
        self.bring_in_idx = self.first_idx = None
        self.first_by_street, self.procedures, self.mucked, self.shown = {}, {}, set(), set()
        self.seventh = None
        self.confirming = False
        self.irregular.reset()
        self.gap = None
        self.inputs.undo.forget("no dealer input to undo")
        self.alerts = [a for a in self.alerts if a["latched"]]
        for s in dict.fromkeys(all_in):
            hand.all_in(self.index(s))
        self.ask_counter_reset(wait=True)
        self.trigger("newhand")

    def index(self, seat: int) -> int:
        """The index in the hand of table seat ``seat``.

        :raises ValueError: the seat is not dealt in."""
        assert self.hand is not None
        for i, s in enumerate(self.hand.seats):
            if s.seat == seat:
                return i
        raise ValueError(f"seat {seat} is not dealt in")

    def step_done(self, kind: str) -> None:
        """The dealer did the plan's current ``kind`` step (``"scramble"`` or ``"cut"``).

        :raises PlanMismatch: the plan's current step is of another kind."""
        assert self.plan is not None and self.hand is not None
        step = self.plan.steps[self.step_i]
        if step.kind != kind:
            raise PlanMismatch(f"expected a {kind} step, the plan has {step.kind}")
        self.hand.record(step, None)
        if kind == "scramble":
            gathered = {g.removeprefix("burn ") for g in step.gather if g.startswith("burn ")}
            back = [c for c, r in self.where.items()
                    if (r.role == "burn" and r.street in gathered)
                    or (r.role in ("stray", "aside") and "set-aside" in step.gather)]
            for c in back:
                del self.where[c]
            if self.irregular.mixed:  # RP-4: cards declared mixed into the stub are in the new one
                self.hand.new_stub = (self.hand.new_stub or frozenset()) | self.irregular.mixed
        self.step_i += 1

    def wrong_time(self, ev: DealerInput, why: str) -> None:
        """Refuse ``ev`` (``input-wrong-time``, nothing changed) because ``why``; the state is
        named in the dealer's words (:func:`~shoe_ctl.machine.wording.state_words`)."""
        self.alert("input-wrong-time", f"'{ev.action.value}'{f' seat {ev.seat}' if ev.seat else ''} "
                   f"refused now ({state_words(self.state)}): {why}; nothing changed", seat=ev.seat)

    def resume(self) -> None:
        """Leave ``attention`` (the machine fault acknowledged) for the state the fault stopped."""
        back = self._fault_from or IDLE
        self.fault = None
        self.machine.set_state(back, model=self)
        self.entries += 1
        street = layout.street_of(back)
        if back.endswith("_deal") and (self.plan is None or self.plan.street != street):
            self._begin_street(None)  # the street's plan was never made: make it now

    # ================================================================== link, faults, timers

    @property
    def shoe_required(self) -> bool:
        """True for a machine on a shoe link (``await_counter_reset``): no hand starts while the
        link is ``disconnected`` or ``degraded``, and ``idle`` says "shoe not connected" until the
        first ``connected`` (docs/service.md, *No shoe*). A link state not yet reported (a
        journal replay) does not refuse a hand: the replay must reach the state it recorded."""
        return self.await_counter_reset

    @property
    def shoe_heard(self) -> bool:
        """False while the host cannot hear the shoe (link ``disconnected`` or ``degraded``; on a
        shoe link also before its first ``connected``): no output then says *deal*."""
        if self.shoe_status in ("disconnected", "degraded"):
            return False
        return not (self.shoe_required and self.shoe_status == "unknown")

    def _on_link(self, ev: LinkChanged) -> None:
        was = self.shoe_status
        self.shoe_status = ev.status.value
        self.shoe_detail = ev.detail
        self.shoe_auth = ev.auth or self.shoe_auth
        if ev.refused:  # docs/security.md, "The shoe link": nothing of it was delivered
            self.alert(f"shoe-{ev.refused}", f"shoe link refused: {ev.detail}; stop dealing and call the floor",
                       latched=True)
        in_hand = self.hand is not None and self.state not in (IDLE,)
        if ev.status is LinkStatus.DISCONNECTED and was != "disconnected" and in_hand:
            assert self.hand is not None
            self.alert("shoe-disconnected", f"the shoe disconnected in hand {self.hand_no} ({ev.detail}); "
                       "stop pulling cards until it is back", latched=False)
        if ev.status is LinkStatus.DEGRADED and was != "degraded" and in_hand:
            assert self.hand is not None
            self.alert("shoe-link-degraded", f"the host cannot hear the shoe reliably in hand {self.hand_no} "
                       f"({ev.detail}): pull no card until the signal comes back; a card already pulled "
                       "stays where the screen said (the shoe keeps its read and sends it once the link "
                       "recovers); if it does not recover within a minute, call the floor")
        if ev.sequence_reset:
            # docs/protocol.md section 6: the shoe's sequence numbers went back (it lost its
            # stored counter); events it held may be lost and cannot be told from old ones.
            self.alert("shoe-sequence-reset", f"the shoe's sequence numbers went back ({ev.detail}): it lost "
                       "its stored counter, so card reads may be lost; check the deal and the stub, and "
                       "have the shoe serviced", latched=True)

    def _on_shoe_restarted(self, ev: ShoeRestarted) -> None:
        """The shoe restarted inside a hand (docs/protocol.md section 12): a latched stop with the
        count procedure. When the same restart lost events, the sequence gap it posted first is
        already open and its count (``gap-cards``) is the stop: the restart is then information
        only, the shoe's own count for the dealer and the floor (docs/state-machine.md)."""
        if self.hand is None or self.state == IDLE:
            return
        if self.gap is None:
            self.alert("shoe-restarted", ev.procedure(), latched=True)
            return
        lost = ev.unreported
        own = ("it cannot count cards pulled while it was off" if lost is None
               else f"by its own count {lost} card(s) left with no read" + (", also while it was off"
                                                                             if ev.certain else ""))
        self.alert("shoe-restarted", f"the shoe {ev.serial} restarted during the hand: {own}; count them "
                   "with the sequence gap (Cards found…)")

    def _on_sequence_gap(self, ev: SequenceGap) -> None:
        """The shoe lost events ``ev.expected .. ev.got - 1`` (e.g. a reboot that dropped its
        unacked buffer): cards may have left unread. Inside a hand the gap stays open, and the
        dealer stopped, until the dealer reports the cards found on the felt (``gap-cards``) or
        the floor declares the hand dead (``misdeal``); docs/irregularities.md, *Sequence gap*."""
        lost = ev.got - ev.expected
        if self.hand is None or self.state == IDLE:
            self.alert("sequence-gap", f"the shoe lost events {ev.expected}..{ev.got - 1}: cards may have "
                       "left unreported; check the deal and the stub", latched=True)
            return
        nxt = self.hand.pulled + 1
        if self.gap is not None:
            lost += self.gap["lost"]
            nxt = self.gap["card_no"]
        self.gap = {"lost": lost, "card_no": nxt}
        self.alert("sequence-gap", f"the shoe lost {lost} event(s) ({ev.expected}..{ev.got - 1}): cards may "
                   f"have left unread. Stop; the screen showed card #{nxt} next. Count the cards on the felt "
                   "against the screen (every seat, the burns, the centre) and report how many cards are "
                   "out that the screen does not show (Cards found…); or the floor declares them burned, or "
                   "the hand dead (Misdeal)", latched=True)

    def gap_places(self, limit: int = 8) -> tuple[str, ...]:
        """The places of the next card steps of the street's plan (``"seat 3 down"``,
        ``"burn 4th"``, ``"centre"``), at most ``limit``: where cards pulled during a sequence
        gap lie when the dealer followed the screen. Empty outside a street's deal."""
        plan, hand = self.plan, self.hand
        if plan is None or hand is None or not self.state.endswith("_deal"):
            return ()
        out: list[str] = []
        for step in plan.steps[self.step_i:]:
            if step.kind == "deal" and step.seat_index is not None:
                out.append(f"seat {hand.seats[step.seat_index].seat} {step.face or 'down'}")
            elif step.kind == "burn":
                out.append(f"burn {step.street or self.street}")
            elif step.kind == "community":
                out.append("centre")
            else:
                break  # a scramble or a cut: no card is pulled past it
            if len(out) >= limit:
                break
        return tuple(out)

    def close_gap(self, cards: int, *, burned: bool) -> None:
        """Close the open sequence gap: ``cards`` cards left the shoe unread. They lie at the next
        places of the plan (:meth:`gap_places`, recorded as unknown cards, in order) or, with
        ``burned`` (the floor's decision), they are out of play (the stub gives them, no seat
        gets them). The gap's ``sequence-gap`` alerts are cleared; the hand goes on.

        :raises ValueError: ``cards`` below 0, or more cards at the places than the plan has
            (the floor then declares them burned or the hand dead)."""
        assert self.hand is not None and self.gap is not None
        if cards < 0:
            raise ValueError(f"cards: {cards} is below 0")
        if not burned and cards > len(self.gap_places(limit=cards + 1)) and cards > 0:
            raise ValueError(f"{cards} card(s) found, but the screen's next {len(self.gap_places())} place(s) "
                             "cannot hold them: the floor decides (burned, or Misdeal)")
        if cards > self.hand.stub_count():
            raise ValueError(f"{cards} card(s) found, but the stub has only {self.hand.stub_count()}")
        for _ in range(cards):
            if not burned and self._current_card_step() is not None:
                self._fill(None, 0, check=False)
            else:
                read = Read(0, None, "aside", self.street, None)
                self.reads.append(read)
                self.hand.put_aside(None)
        self.gap = None
        if self.last_dispense >= 0:
            # the shoe's dispense counter counted them: its next read is no jump (a shoe that keeps
            # its counter across a restart, docs/protocol.md section 12; one that restarted at 0
            # starts a new count under its new epoch anyway)
            self.last_dispense += cards
        self.alerts = [a for a in self.alerts if a["code"] != "sequence-gap"]
        where = "out of play (burned)" if burned else "where the screen had them, identity unknown"
        self.alert("sequence-gap-closed", f"sequence gap closed: {cards} card(s) that left unread are counted "
                   f"{where}; the hand goes on")

    def _on_shoe_fault(self, ev: ShoeFault) -> None:
        if ev.cleared:
            self.shoe_fault = None
            return
        detail = f" ({ev.detail})" if ev.detail else ""
        if ev.kind is FaultKind.DOUBLE_PULL:
            # Not blocking: both cards are read and counted; each goes where the plan puts it.
            self.alert("shoe-double-pull", f"two cards left the shoe together{detail}: both are counted; put the "
                       "first where the display said and the second where the next instruction says")
            return
        self.shoe_fault = ev.kind.value
        self.alert(f"shoe-{ev.kind.value}", f"the shoe reports {ev.kind.value}{detail}: "
                   f"{FAULT_TEXT.get(ev.kind, 'pull no card until it clears')}")

    def _entered(self, _event: Any) -> None:
        """``after_state_change``: one more state entry (a timer armed before it is stale)."""
        self.entries += 1

    def _on_timer(self, ev: TimerFired) -> None:
        if ev.state != self.state or (ev.entry is not None and ev.entry != self.entries):
            return  # armed in a state the machine has left (perhaps entered again since)
        self.alert(f"timer-{ev.name}", f"no progress in state {self.state} ({ev.name})")

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
        self.confirming = False
        if self.irregular.start_aside():
            return  # house 16.16: the cards taken aside come first; then _plan_now
        self._plan_now(None)

    def _plan_now(self, _event: Any) -> None:
        """Plan the street in progress (at its start, or once the house 16.16 cards are aside)."""
        street = self.street
        assert street is not None and self.hand is not None
        plan = self.plan = plan_street(self.profile, self.hand, street)
        self.step_i = 0
        self.irregular.first_deal_idx = next((st.seat_index for st in plan.steps if st.kind == "deal"), None)
        procedure = plan.procedure._value_  # the value, without the enum property's call
        self.procedures[street] = procedure
        if street == "7th":
            self.seventh = {"live": plan.live, "stub": plan.stub, "required": plan.required,
                            "procedure": procedure, "clause": plan.clause}
        if procedure != "normal":
            n = plan.stub
            self.alert(plan.clause, f"{street} street: short stub ({n} card{'' if n == 1 else 's'}, required "
                       f"{plan.required}): procedure {procedure} ({plan.clause})", street=street)
        self._forecast_dirty = True

    def _replan(self, _event: Any) -> None:
        """``after`` callback of ``redeal`` (and a ruling in ``deal``): plan what is left of the
        street in progress after a ruling changed the record."""
        assert self.hand is not None and self.street is not None
        self.plan = plan_street(self.profile, self.hand, self.street)
        self.step_i = 0

    def _begin_betting(self, _event: Any) -> None:
        """``after`` callback of ``deal -> betting``: who brings in / acts first (rules core)."""
        hand = self.hand
        # The street's cards are out: the forecast looks from the next street on (after 7th: none).
        self._forecast_dirty = True
        street = self.street
        assert hand is not None and street is not None and self.plan is not None
        can = hand.can_act()
        self.irregular.betting_strays = []
        self.confirming = False
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

    def _begin_confirm(self, _event: Any) -> None:
        """``after`` callback of ``deal -> betting`` when no betting round can follow (fewer than
        two players can act, e.g. all-in): no one acts first; the dealer confirms the street
        complete (``betting-complete``) before the next street's first card. A card read before
        that is held aside and booked to no seat until the dealer says what it was: the next
        street's burn (``premature-done``) or a card too many to a seat (``card-count``)."""
        self._forecast_dirty = True
        self.irregular.betting_strays = []
        self.first_idx = None
        self.confirming = True

    def _begin_showdown(self, _event: Any) -> None:
        self.street = None
        self.plan = None
        self.irregular.count_at_showdown()

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
                    if self.irregular.absent:
                        self.irregular.absent_at_deal_end()
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
        self.alert("machine-fault", f"internal fault in state {self._fault_from}: {self.fault}; "
                   "stop dealing; acknowledge to resume", latched=True)
        if self.state != ATTENTION:
            try:
                self.trigger("fault")
            except Exception:  # noqa: BLE001 - the transition itself failed: force the state
                self._pending_fault = None
            if self.state != ATTENTION or self._pending_fault is not None:
                self._pending_fault = None
                self.machine.set_state(ATTENTION, model=self)
                self.entries += 1

    # ================================================================== outputs

    MAX_INFO_ALERTS = 20
    """At most this many information (not latched) alerts are kept; older ones are dropped
    (latched ones stay until acknowledged). The journal keeps every one."""

    MAX_LATCHED_ALERTS = 32
    """At most this many latched entries are kept apart; beyond, a latched alert is merged into
    the newest open one of its code (a code never seen yet still gets its own entry: the codes
    are few), so a flood of latched alerts keeps the list, and each event's cost, bounded."""

    def alert(self, code: str, message: str, *, latched: bool = False, seat: int | None = None,
               street: str | None = None, moves: tuple[str, ...] = (), repeat: bool = False) -> None:
        """Raise an alert: an ``Alert`` command (journaled, each one) and an entry in
        :attr:`alerts` (shown until acknowledged). A repeat of an alert still shown (same code,
        words, seat, street, latch and moves) is merged into it: its ``count`` goes up and it
        keeps its id, so a flood of refused inputs keeps one entry (docs/display.md, *Alerts*);
        with ``repeat`` the words may differ in the read they name (``read N: ...``: a card read
        with no hand running, a bouncing sensor), and the entry takes the newest words. Beyond
        :attr:`MAX_INFO_ALERTS` information alerts the oldest is dropped; beyond
        :attr:`MAX_LATCHED_ALERTS` latched entries a latched alert joins the newest of its code."""
        st = street or self.street
        self.out.append(Alert(code, message, st, seat, latched, moves))
        (log.warning if latched else log.info)("alert %s: %s", code, message)
        words = _words(message) if repeat else message
        latched_n = 0
        newest_of_code: dict[str, Any] | None = None
        for a in self.alerts:
            if a["latched"]:
                latched_n += 1
                if a["code"] == code:
                    newest_of_code = a
            if (a["code"] == code and a["seat"] == seat and a["street"] == st and a["latched"] == latched
                    and a["moves"] == list(moves)
                    and (a["message"] == message or (repeat and _words(a["message"]) == words))):
                newest_of_code = a
                break
        else:
            if not (latched and latched_n >= self.MAX_LATCHED_ALERTS and newest_of_code is not None):
                newest_of_code = None
        if newest_of_code is not None:
            newest_of_code["count"] = newest_of_code.get("count", 1) + 1
            newest_of_code["message"] = message
            self._rev += 1
            return
        self._alert_id += 1
        self.alerts.append({"id": self._alert_id, "code": code, "message": message, "street": st,
                            "seat": seat, "latched": latched, "moves": list(moves), "count": 1})
        info = [a for a in self.alerts if not a["latched"]]
        if len(info) > self.MAX_INFO_ALERTS:
            drop = {id(a) for a in info[:len(info) - self.MAX_INFO_ALERTS]}
            self.alerts = [a for a in self.alerts if id(a) not in drop]

    def _snapshot_key(self) -> tuple[Any, ...]:
        return (self.state, self.step_i, len(self.reads), len(self.alerts), self._alert_id,
                self.shoe_status, self.shoe_fault, self._rev)

    def instruction(self) -> Instruction:
        """What the dealer must do now (overlays first: shoe fault, a latched alert, a fault).
        Inside a hand every instruction carries the number of the next card to leave the shoe
        (wording: :class:`~shoe_ctl.machine.wording.Wording`)."""
        return self.wording.instruction()

    @property
    def forecast(self) -> str | None:
        """The first street that will be short if every player now in the hand stays in
        (``forecast_short``), recomputed only after a street start, a street's deal or a fold;
        ``None`` once 7th street is dealt."""
        if self._forecast_dirty and self.hand is not None:
            self._forecast = forecast_short(self.profile, self.hand)
            self._forecast_dirty = False
        return self._forecast

    def first_unknown(self) -> bool:
        """In a 4th-7th street betting round, no first to act could be named because a card that
        decides it is unknown (an unread community card, house 16.20, or unread upcards)."""
        return (self.first_idx is None and self.hand is not None and self.street not in (None, "3rd")
                and layout.sub_of(self.state) == "betting")

    def seat_of(self, idx: int | None) -> int | None:
        """The table seat of seat index ``idx`` in the hand (``None`` for ``None`` or no hand)."""
        if idx is None or self.hand is None:
            return None
        return self.hand.seats[idx].seat

    def _publish(self, before: tuple[Any, ...] | None) -> None:
        ins = self.wording.instruction()
        ref, self._reply_ref = self._reply_ref, None
        if ref is not None:
            ins = replace(ins, ref=ref)
        last = self._last_instruction
        # ins != last, the common answers first: another card number (every card read) makes
        # them differ without the dataclass's field-by-field comparison
        new = ins is not last and (last is None or ins.card_no != last.card_no or ins != last)
        if new or before is None:
            changed = changed_step = True
        else:
            after = self._snapshot_key()
            changed = after != before
            changed_step = before[0] != after[0] or before[1] != after[1]
        if changed:
            if new or changed_step or ref is not None:
                self.out.append(ins)
                self._last_instruction = ins
            if self.display:
                self.out.append(DisplayUpdate(self.views.public_state(ins)))

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
        scrambled new stub). Built by :class:`~shoe_ctl.machine.views.Views`."""
        return self.views.public_state(ins or self.instruction())

    def summary(self) -> dict[str, Any]:
        """The decisions of the current (or last) hand, in the keys of ``shoe-ctl analyze``:
        ``game``, ``rules``, ``players``, ``bring_in`` and ``first_to_act`` (1-based player
        order), ``seventh``, ``community_card``, ``procedures``."""
        return self.views.summary()
