"""The dealing machine: the card path of one hand of stud and the state chart's callbacks
(:class:`Dealing`). It owns the hand's progress (:mod:`~shoe_ctl.machine.progress`) and the
shoe's state (:mod:`~shoe_ctl.machine.link`); the dealer inputs (:mod:`~shoe_ctl.machine.inputs`)
and the irregularity rulings (:mod:`~shoe_ctl.machine.irregular`) change the progress and return
an :class:`~shoe_ctl.machine.outcome.Outcome` it applies; the wording and the public views are
functions of that state. Described in ``docs/state-machine.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from transitions.core import EventData

from shoe_ctl.events import (
    Alert,
    CardRead,
    Command,
    CounterReset,
    DealerInput,
    DisplayUpdate,
    Instruction,
    ShoeButton,
    ShoeCommand,
    TimerFired,
)
from shoe_ctl.machine import deck_order, foreign, inputs, irregular, layout, views, wording
from shoe_ctl.machine.hsm import LeanHierarchicalMachine
from shoe_ctl.machine.layout import ASIDE, ATTENTION, BETTING, DEAL, IDLE, IN_HAND, OVER, RELOAD
from shoe_ctl.machine.link import LinkState
from shoe_ctl.machine.outcome import Outcome
from shoe_ctl.machine.progress import MachineFault, PlanMismatch, Progress
from shoe_ctl.machine.reads import Read
from shoe_ctl.machine.shown import Shown
from shoe_ctl.machine.undo import Undo
from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.games import Game, bring_in
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.profiles import RuleProfile

log = logging.getLogger(__name__)

__all__ = ["Dealing", "MachineFault", "PlanMismatch", "Read"]

_CARD_STEPS = frozenset({"burn", "deal", "community"})
_REBUILDING = layout.TAGS["scramble"] | layout.TAGS["cut"] | RELOAD  # a short stub's new stub is made


_Chart = layout.tagged(LeanHierarchicalMachine)


class _Field:
    """A field of the hand's progress (``holder`` ``"p"``) or of what is shown (``"shown"``)
    read (and written) on the machine, for its callers."""

    def __init__(self, holder: str = "p") -> None:
        self.holder = holder

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Dealing | None, owner: type) -> Any:
        return self if obj is None else getattr(getattr(obj, self.holder), self.name)

    def __set__(self, obj: Dealing, value: object) -> None:
        setattr(getattr(obj, self.holder), self.name, value)


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
    (``"idle"``, ``"hand_fourth_deal"``, ...); ``p`` the hand's progress
    (:class:`~shoe_ctl.machine.progress.Progress`; ``hand``, ``hand_no``, ``reads`` and
    ``alerts`` are its fields, read here too);
    ``link`` the shoe's (:class:`~shoe_ctl.machine.link.LinkState`); ``undo`` the undo point;
    ``quiet`` (set while a journal is replayed into it) keeps its alerts out of the log.
    :meth:`public_state` is the display state (no downcard before showdown); :meth:`summary` the
    decisions of the current or last hand in the shape of ``shoe-ctl analyze``.
    """

    state: str
    trigger: Callable[..., bool]
    hand = _Field()
    hand_no = _Field()
    reads = _Field()
    alerts = _Field()
    display = _Field("shown")

    def __init__(
        self,
        profiles: Mapping[str, RuleProfile],
        *,
        default_rules: str = "tda",
        default_game: Game = Game.STUD,
        display: bool = True,
        await_counter_reset: bool = False,
    ) -> None:
        self.profiles = dict(profiles)
        self.p = Progress(self.profiles[default_rules], default_game)
        self.link = LinkState(await_counter_reset)
        self.undo = Undo()
        self.shown = Shown(display)
        self.out: list[Command] = []
        self.fault: str | None = None
        self._fault_from: str | None = None
        self._pending_fault: BaseException | None = None
        self.entries = 0  # state entries so far: tags a timer with the entry it was armed in
        self.quiet = False  # replaying a journal (recovery, export): its alerts are not logged again
        self.machine = _Chart(model=self, states=layout.states(), transitions=layout.transitions(), initial=IDLE,
                              send_event=True, queued=True, auto_transitions=False, on_exception="_on_exception",
                              model_override=False, after_state_change="_entered")

    # ================================================================== entry point

    def handle(self, event: object) -> list[Command]:
        """Apply one event; return the commands it causes, in order.

        Never raises for a bad event: what is wrong becomes an ``Alert``; an internal error
        moves the machine to ``attention`` with a ``machine-fault`` alert.
        """
        self.out = []
        link = self.link
        card = event.__class__ is CardRead or isinstance(event, CardRead)  # the common event: one test
        if not card and isinstance(event, CounterReset) and not link.wait:
            link.counter_reset(event)  # nothing the dealer sees changes: nothing to publish
            return self.out
        shown = self.shown
        # without a display only a new state or step re-sends an unchanged instruction (Shown.publish)
        if shown.display or (not card and isinstance(event, DealerInput)):
            before = shown.key(self.p, link, self.state)
        else:
            before = (self.state, self.p.step_i)
        if not card or self.undo.last is not None:  # (a card read only forgets the point there is)
            self.undo.before(event)
        if not card and isinstance(event, DealerInput) and isinstance(event.args.get("ref"), int):
            shown.ref = event.args["ref"]
        try:
            if link.unread is not None:  # an unreadable card's notice waits for the shoe's next event
                foreign.settle(link, event, self.alert)
            if card:  # the common event, without the dispatch's call
                done = self._on_card(event)  # type: ignore[arg-type]  # (card: a CardRead)
                deck_order.take(self.p.reads, event.seq, self.alert)  # type: ignore[attr-defined]
                if not done:
                    self._settle()
            else:
                self._dispatch(event)
                self._settle()
        except Exception as exc:  # noqa: BLE001 - any fault becomes the attention state
            self._pending_fault = exc
        if self._pending_fault is not None:
            self._enter_attention(self._pending_fault)
        shown.publish(self.out, self.p, self.link, self.state, before)
        return self.out

    def start(self) -> list[Command]:
        """The commands that show the initial state (instruction and display); a machine
        recovered while its new hand waits for the shoe's counter reset asks for it again (the
        request may have been lost with the stopped service)."""
        self.out = []
        self.link.live = True  # from now on a link state not yet reported is a shoe not yet answered
        if self.link.wait:
            self.out.append(ShoeCommand("reset-counter"))
        self.shown.publish(self.out, self.p, self.link, self.state, None)
        return self.out

    def service_alert(self, code: str, message: str, *, latched: bool = False) -> list[Command]:
        """An alert about the service around the machine (e.g. ``journal-write-failed``), shown
        and acknowledged like the machine's own; changes nothing else. Its ``Alert`` is marked
        ``service``: recovery does not expect it from a replay (docs/journal.md, "Recovery").
        Returns its commands. Call it from the thread that owns the machine (the controller's)."""
        self.out = []
        before = self.shown.key(self.p, self.link, self.state)
        self.alert(code, message, latched=latched, service=True)
        self.shown.publish(self.out, self.p, self.link, self.state, before)
        return self.out

    def _dispatch(self, event: object) -> None:
        link = self.link
        in_hand = self.p.hand is not None and self.state != IDLE
        out = Outcome(self.state, self.link, self.profiles)
        if isinstance(event, DealerInput):
            self.shown.rev += 1  # any dealer input may change the public state
            self.apply(inputs.handle(self.p, self.undo, event, out))
            return
        # a card of another deck than the stub's (its STOP), or the link's own event
        elif (foreign.take(self.p, event, self.state in DEAL, self.alert)
              or link.handle(event, out.alert, self.p.hand if in_hand else None, self.p.hand_no,
                             self.p.reads[-1] if self.p.reads else None)):
            if link.heard:  # the shoe is back: its disconnection's information alerts go
                self.p.drop_alerts("shoe-disconnected", "shoe-link-degraded")
        elif isinstance(event, TimerFired):
            # the end of the wait for the shoe's word on an unreadable card is foreign.settle's, no alert
            if event.name != foreign.UNREAD_TIMER and event.state == self.state and event.entry in (None, self.entries):
                out.alert(f"timer-{event.name}", f"no progress in state {self.state} ({event.name})")
        elif isinstance(event, ShoeButton):
            log.info("shoe button %d pressed", event.button)
        elif not isinstance(event, (Alert, Instruction, DisplayUpdate, ShoeCommand)):
            # (a command read back from the journal is an output, not an input)
            out.alert("unknown-event", f"an event of type {type(event).__name__} was ignored")
        self.apply(out)

    # ================================================================== cards

    def _on_card(self, ev: CardRead) -> bool:
        """Book a card read (a dispense gap first); True when it filled a step of the street's
        deal and the plan's next step is a card's or a cut (:meth:`_settle` has nothing to do)."""
        link, p = self.link, self.p
        epoch = ev.epoch
        if (epoch is None or epoch == link.epoch) and ev.dispense == link.last_dispense + 1:
            link.last_dispense = ev.dispense  # the next card of the same count: dispense_gap's answer
            gap = 0
        else:
            gap = link.dispense_gap(ev)
        link.wait = False  # a card left the shoe: the dealer is dealing
        state = self.state
        hand = p.hand
        if state in RELOAD:
            self.trigger("stub_reloaded")  # the first card out of the new stub: it is in the shoe
            state = self.state
        plan = p.plan
        dealing = hand is not None and state in DEAL and plan is not None
        if hand is not None and state in ASIDE:
            self._irregular_card(ev, gap)
            return False
        if link.gap is not None and hand is not None and state != IDLE:
            # a sequence gap is open: where this card belongs is not known until the dealer's
            # count closes it; it is held aside (counted) and the dealer stopped
            for _ in range(gap):
                hand.put_aside(None)
            self._stray(ev.card, ev.seq)
            return False
        if gap:
            self._gap_alert(gap, ev.seq)
            for _ in range(gap):
                if dealing and p.card_step() is not None:
                    self._fill(None, ev.seq, check=False)
                elif hand is not None and hand.stub_count() > 0:
                    hand.put_aside(None)
        if ev.card is None:
            foreign.unreadable(self.link, ev.seq, self.alert)
        if dealing:
            steps = plan.steps  # type: ignore[union-attr]  # dealing: a plan is set
            if p.step_i < len(steps) and steps[p.step_i].kind in _CARD_STEPS:  # p.card_step(), written out
                return self._fill(ev.card, ev.seq, check=True)
        self._stray(ev.card, ev.seq)
        return False

    def _gap_alert(self, gap: int, seq: int) -> None:
        self.alert("dispense-gap", f"{gap} card(s) left the shoe unreported before read {seq} "
                   "(dispense counter jumped); they are counted as unreadable cards in order; "
                   "check the deal", latched=True)

    def _stray(self, card: Card | None, seq: int) -> None:
        """A card while no card is expected: counted, held aside, the dealer stopped."""
        p, state = self.p, self.state
        read = Read(seq, card, "stray", p.street, None)
        if state in OVER and p.hand is not None:  # after the hand's last card: the next deck's
            self.alert("card-not-expected", p.carry(read), latched=True)
            return
        self._check_identity(read)
        p.reads.append(read)
        if card is not None:
            p.where.setdefault(card, read)
        if p.hand is not None and p.hand.stub_count() <= 0:
            # More cards than the count leaves in the shoe: a new stub loaded before it was
            # reported, or a card from outside the deck. The read is kept; the count is not
            # driven below zero.
            self.alert("card-beyond-stub", f"read {seq}: a card left the shoe after the last card of the "
                       f"stub by the count, while {wording.doing(p, state)} (a new stub loaded before it was "
                       "reported, or a card from outside the deck); hold it aside, stop and check", latched=True,
                       repeat=True)
            return
        if p.hand is not None:
            p.hand.put_aside(card)
            if state in BETTING and self._do(lambda p, out: irregular.stray_in_betting(p, out, read)):
                return
        if state == IDLE:
            self.alert("card-not-expected", f"read {seq}: a card left the shoe with no hand running: put it "
                       "back with the deck before the next hand, then start a new hand", latched=True, repeat=True)
            p.idle_strays.add(self.shown.alert_id)
            return
        if p.confirming and state in BETTING:
            burn = "" if p.street == "7th" else "If it is the next street's burn, report premature-done; "
            self.alert("card-not-expected", f"read {seq}: a card left the shoe before {p.street} street was "
                       f"confirmed complete; it is held aside, booked to no seat. {burn}If a seat got a card too "
                       "many, count that seat's cards (card-count)", latched=True)
            return
        self.alert("card-not-expected", f"read {seq}: a card left the shoe while {wording.doing(p, state)}; "
                   "hold it aside and read the display", latched=True)

    def _irregular_card(self, ev: CardRead, gap: int) -> None:
        """A card read while cards are taken aside (house 16.16); cards lost to a dispense gap
        first, as unreadable."""
        if gap:
            self._gap_alert(gap, ev.seq)
        if ev.card is None:
            foreign.unreadable(self.link, ev.seq, self.alert)
        for card in [None] * gap + [ev.card]:
            if self.state in ASIDE:
                read = Read(ev.seq, card, "aside", self.p.street, None)
                self._check_identity(read)
                irregular.aside_card(self.p, read)
                if self.p.aside_left <= 0:
                    self.trigger("aside_done")
            else:
                self._stray(card, ev.seq)

    def _fill(self, card: Card | None, seq: int, *, check: bool) -> bool:
        """The card read fills the current step of the street's plan (a card beyond the stub's
        count, e.g. after cards not expected were pulled from a new stub, fills nothing); True
        when the plan's next step is a card's or a cut (no scramble, the street not dealt)."""
        p = self.p
        hand, plan = p.hand, p.plan
        assert plan is not None and hand is not None
        if hand.deck_size - hand.pulled + hand.returned <= 0:  # hand.stub_count(), written out
            self._stray(card, seq)
            return False
        steps, i = plan.steps, p.step_i
        step = steps[i]
        seat = hand.seats[step.seat_index].seat if step.seat_index is not None else None
        role = step.face if step.kind == "deal" and step.face else step.kind
        read = Read(seq, card, role or "down", step.street or p.street, seat)
        if card is not None:
            where = p.where
            # the identity check finds nothing to say unless the card lies outside a scrambled stub
            # or was read before: the common case is decided here without the call, the card
            # hashed once (a card's hash is a Python call)
            if check and hand.new_stub is not None and card not in where and card not in hand.new_stub:
                self._check_identity(read)  # (before it is the first read of its identity)
            if where.setdefault(card, read) is not read and check:  # the first read of an identity stays
                self._check_identity(read)
        p.reads.append(read)
        hand.record(step, card)
        p.step_i = i = i + 1
        return i < len(steps) and steps[i].kind != "scramble"

    def _check_identity(self, read: Read) -> None:
        found = self.p.identity_alert(read)
        if found is not None:
            code, message, seat = found
            self.alert(code, message, latched=True, seat=seat)

    # ================================================================== applying an outcome

    def _do(self, handler: Callable[[Progress, Outcome], object]) -> bool:
        """Run a handler of the hand's progress and apply its outcome; what it returned, as a bool."""
        out = Outcome(self.state, self.link, self.profiles)
        done = handler(self.p, out)
        self.apply(out)
        return bool(done)

    def apply(self, out: Outcome) -> None:
        """Do what a handler asked for, in its order (:class:`~shoe_ctl.machine.outcome.Outcome`)."""
        for op, arg in out.ops:
            if op == "alert":
                code, message, latched, seat, street, moves = arg
                self.alert(code, message, latched=latched, seat=seat, street=street, moves=moves)
            elif op == "trigger":
                self.trigger(arg)
            elif op == "replan":
                self._after_change()
            elif op == "then":
                arg(self.p, self.state)
            elif op == "counter":
                self.out.append(ShoeCommand("reset-counter"))
                self.link.ask_reset(wait=arg[0])
            elif op == "begin":
                self._begin_hand(*arg)
            elif op == "resume":
                self._resume()
            elif op == "close-gap":
                self._close_gap(*arg)
            elif op == "undo":
                self._restore(*arg)
            else:
                raise MachineFault(f"unknown operation {op!r}")

    def _begin_hand(self, profile: RuleProfile, game: Game, hand: HandState, all_in: list[int]) -> None:
        """Start a new hand (``new-hand`` accepted): ``all_in`` seats are all in from the start."""
        self.p.begin(profile, game, hand)
        self.link.gap = None  # (the undo point is the new-hand input's: nothing to undo)
        for s in dict.fromkeys(all_in):
            hand.all_in(self.p.index(s))
        self.out.append(ShoeCommand("reset-counter"))
        self.link.ask_reset(wait=True)
        self.trigger("new_hand")

    def _after_change(self) -> None:
        """The hand record changed outside the plan: re-plan the street, or end the hand."""
        p, state = self.p, self.state
        hand = p.hand
        assert hand is not None
        p.forecast_dirty = True
        if state in OVER or state not in IN_HAND:
            return
        if hand.live_count() <= 1:
            self.trigger("all_folded")
            return
        if state in DEAL:
            self._replan(None)
        elif state in BETTING:
            if p.street is not None and not hand.street_complete(p.street):
                self.trigger("redeal")
        elif state in _REBUILDING and p.plan is not None:
            irregular.drop_out_of_hand(p)  # a scramble is under way: keep the plan's order

    def _resume(self) -> None:
        """Leave ``attention`` (the machine fault acknowledged) for the state the fault stopped."""
        back = self._fault_from or IDLE
        self.fault = None
        self.machine.set_state(back, model=self)
        self.entries += 1
        if back in DEAL and (self.p.plan is None or self.p.plan.street != layout.street_of(back)):
            self._begin_street(None)  # the street's plan was never made: make it now

    def _restore(self, progress: Progress, state: str, action: str) -> None:
        """The undo: the progress and state before the last input are back."""
        self.p = progress
        progress.forecast_dirty = True
        self.machine.set_state(state, model=self)
        self.entries += 1  # entered again: a timer armed before the undo is stale
        self.alert("undo", f"undone: '{action}'; the state before it is back")

    def _close_gap(self, cards: int, burned: bool) -> None:
        """Close the open sequence gap: ``cards`` cards left the shoe unread, at the next places of
        the plan (unknown cards, in order) or, with ``burned``, out of play (``gap-cards``)."""
        p, link = self.p, self.link
        assert p.hand is not None
        for _ in range(cards):
            if not burned and p.card_step() is not None:
                self._fill(None, 0, check=False)
            else:
                p.reads.append(Read(0, None, "aside", p.street, None))
                p.hand.put_aside(None)
        link.gap = None
        if link.last_dispense >= 0:
            # the shoe's dispense counter counted them: its next read is no jump (a shoe that keeps
            # its counter across a restart, docs/protocol.md section 12; one that restarted at 0
            # starts a new count under its new epoch anyway)
            link.last_dispense += cards
        p.drop_alerts("sequence-gap")
        where = "out of play (burned)" if burned else "where the screen had them, identity unknown"
        self.alert("sequence-gap-closed", f"sequence gap closed: {cards} card(s) that left unread are counted "
                   f"{where}; the hand goes on")

    def _entered(self, _event: EventData) -> None:
        """``after_state_change``: one more state entry (a timer armed before it is stale)."""
        self.entries += 1

    # ================================================================== structure (callbacks)

    def two_can_act(self, _event: EventData) -> bool:
        """Condition of ``street_dealt``: two or more players in the hand can still bet."""
        return self.p.two_can_act()

    def _begin_street(self, _event: EventData | None) -> None:
        """``after`` callback of the transitions into a street's ``deal``: ask the rules core for
        the street's plan (house 16.16: the cards taken aside first)."""
        p = self.p
        street = layout.street_of(self.state)
        assert street is not None and p.hand is not None
        p.street, p.first_idx, p.confirming = street, None, False
        if irregular.start_aside(p):
            self.trigger("set_aside")
            return
        self._plan_now(None)

    def _plan_now(self, _event: EventData | None) -> None:
        """Plan the street in progress (at its start, or once the house 16.16 cards are aside)."""
        short = self.p.plan_street()
        if short is not None:
            self.alert(*short, street=self.p.street)

    def _replan(self, _event: EventData | None) -> None:
        """``after`` callback of ``redeal`` (and a ruling in ``deal``): plan what is left of the
        street in progress after a ruling changed the record."""
        self.p.replan()

    def _begin_betting(self, _event: EventData) -> None:
        """``after`` callback of ``deal -> betting``: who brings in / acts first (rules core)."""
        self.p.begin_betting()

    def _begin_confirm(self, _event: EventData) -> None:
        """``after`` callback of ``deal -> betting`` when no betting round can follow."""
        self.p.begin_confirm()

    def _begin_showdown(self, _event: EventData) -> None:
        self.p.street = self.p.plan = None
        self._do(irregular.count_at_showdown)

    def _end_hand(self, _event: EventData) -> None:
        self.p.street = self.p.plan = None

    def _settle(self) -> None:
        """After an event: fire the structure changes the plan calls for (scramble and cut steps,
        a street fully dealt)."""
        p = self.p
        for _ in range(8):
            if self._pending_fault is not None:
                return  # a callback failed: go to attention, change nothing more
            plan = p.plan
            if plan is None or self.state not in DEAL or p.hand is None:
                return
            if p.step_i >= len(plan.steps):
                if p.street == "3rd":
                    p.bring_in_idx = bring_in(p.game, p.hand.upcards("3rd"), p.hand.bring_in_counts())
                    if p.absent:
                        self._do(irregular.absent_at_deal_end)
                        if p.hand.live_count() <= 1:
                            self.trigger("all_folded")
                            return
                self.trigger("street_dealt")
                continue
            if plan.steps[p.step_i].kind == "scramble":
                self.trigger("scramble")
            return

    # ================================================================== faults

    def _on_exception(self, event: EventData) -> None:
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

    def alert(self, code: str, message: str, *, latched: bool = False, seat: int | None = None,
              street: str | None = None, moves: tuple[str, ...] = (), repeat: bool = False,
              service: bool = False) -> None:
        """Raise an alert: an ``Alert`` command (journaled, each one) and an entry in the shown
        alerts until acknowledged (:meth:`~shoe_ctl.machine.progress.Progress.show_alert`: a repeat
        of an alert still shown is merged into it, with ``repeat`` also one naming another read;
        docs/display.md, *Alerts*). ``service``: an alert of the service around the machine
        (:meth:`service_alert`), marked so in its command and the journal."""
        p = self.p
        st = street or p.street
        self.out.append(Alert(code, message, st, seat, latched, moves, service))
        if not self.quiet:
            (log.warning if latched else log.info)("alert %s: %s", code, message)
        shown = self.shown
        if p.show_alert(shown.alert_id + 1, code, message, st, seat, latched, moves, repeat=repeat):
            shown.alert_id += 1
        else:
            shown.rev += 1

    def instruction(self) -> Instruction:
        """What the dealer must do now (overlays first: shoe fault, a latched alert, a fault).
        Inside a hand every instruction carries the number of the next card to leave the shoe
        (:func:`~shoe_ctl.machine.wording.instruction`)."""
        return wording.instruction(self.p, self.link, self.state)

    # ================================================================== public views

    def public_state(self, ins: Instruction | None = None) -> dict[str, Any]:
        """The public table state (schema in docs/display.md; :func:`~shoe_ctl.machine.views.public_state`):
        JSON-safe; downcards only at showdown, for the hands the dealer reported shown. Seat
        entries are shared between successive states while the seat is unchanged: read-only."""
        return views.public_state(self.p, self.link, self.state, ins or self.instruction(), self.shown.seats)

    def open_stops(self) -> list[dict[str, Any]]:
        """The STOPs up now (:meth:`~shoe_ctl.machine.progress.Progress.open_stops`): a hand's end
        keeps them, and a recovery after it shows them again (:meth:`show_again`)."""
        return self.p.open_stops()

    def show_again(self, shown: list[Any], *, latched: bool) -> int:
        """Show again alerts shown before a restart, in the shape of :meth:`open_stops` (a
        recovery's machine, before its replay; no ``Alert`` command: each was journaled when
        raised); how many."""
        kept = self.p.show_again(shown, self.shown.alert_id, latched=latched)
        self.shown.alert_id += kept
        return kept

    def summary(self) -> dict[str, Any]:
        """The decisions of the current (or last) hand, in the keys of ``shoe-ctl analyze``
        (:func:`~shoe_ctl.machine.views.summary`)."""
        return views.summary(self.p)
