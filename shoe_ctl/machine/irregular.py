"""The irregularities of the rule texts, as the dealing machine meets them: the dealer's reports
(``exposed-card``, ``card-off-table``, ``absent-player``, ``premature-done``, ``burn-error``,
``wrong-bring-in``, ``card-count``, ``misdeal``, ``undo``), premature cards read during a betting
round, the cards taken aside under house 16.16, and the undo of the dealer's last input.

Every decision is the rules core's (:mod:`shoe_ctl.rules.irregular`): the machine asks for a
:class:`~shoe_ctl.rules.irregular.Ruling`, raises an alert named by the ruling's clause
(``RP-10-A``, ``house-16.16`` ...) whose message is the ruling's instruction, applies the ruling
to the hand record (:meth:`Ruling.apply`) and asks :func:`~shoe_ctl.rules.stub.plan_street`
again for what is left of the street. Where the dealer must move cards that are already on the
table, the alert lists the moves (:attr:`shoe_ctl.events.Alert.moves`).

:class:`IrregularMixin` is part of :class:`~shoe_ctl.machine.dealing.Dealing`; it keeps the
machine deterministic: its state is rebuilt exactly by replaying the same events.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
from typing import TYPE_CHECKING, Any

from shoe_ctl.events import Alert, DealerAction, DealerInput
from shoe_ctl.machine import layout
from shoe_ctl.machine.layout import SHOWDOWN, UNCONTESTED
from shoe_ctl.rules import irregular as rul
from shoe_ctl.rules.hand import STREETS, HandError, HandState
from shoe_ctl.rules.stub import Step, StubError, plan_street

_GETTERS: dict[type, Any] = {}


def _read_fields(read: Any) -> tuple[Any, ...]:
    """Every field of a :class:`~shoe_ctl.machine.dealing.Read`, in ``__slots__`` order."""
    get = _GETTERS.get(type(read))
    if get is None:
        get = _GETTERS[type(read)] = operator.attrgetter(*type(read).__slots__)
    return tuple(get(read))


if TYPE_CHECKING:
    from shoe_ctl.machine.dealing import Read

__all__ = ["NOT_UNDOABLE", "IrregularMixin"]

NOT_UNDOABLE: dict[DealerAction, str] = {
    DealerAction.NEW_HAND: "a new hand is not undone (declare a misdeal instead)",
    DealerAction.HAND_COMPLETE: "the hand is over",
    DealerAction.MISDEAL: "the hand is over",
    DealerAction.SCRAMBLE_DONE: "the stub was rebuilt and the shoe's counter reset",
    DealerAction.CUT_DONE: "the stub was reloaded and the shoe's counter reset",
    DealerAction.STUB_RELOADED: "the stub was reloaded",
    DealerAction.ACK_ALERT: "an acknowledged alert stays acknowledged",
}
"""Dealer inputs an undo refuses, and why."""

_REFUSED = ("input-wrong-time", "input-invalid")


class IrregularMixin:
    """Irregularity handling of :class:`~shoe_ctl.machine.dealing.Dealing` (see the module)."""

    if TYPE_CHECKING:  # attributes and methods of Dealing
        state: str
        hand: HandState | None
        street: str | None
        plan: Any
        step_i: int
        profile: Any
        bring_in_idx: int | None
        first_idx: int | None
        reads: list[Read]
        _where: dict[Any, Read]
        _out: list[Any]
        alerts: list[dict[str, Any]]
        _forecast_dirty: bool
        last_dispense: int

        def trigger(self, name: str) -> bool: ...
        def _alert(self, code: str, message: str, *, latched: bool = False, seat: int | None = None,
                   street: str | None = None, moves: tuple[str, ...] = ()) -> None: ...
        def _wrong_time(self, ev: DealerInput, why: str) -> None: ...
        def _index(self, seat: int) -> int: ...
        def _check_identity(self, read: Read) -> None: ...
        def two_can_act(self, _event: Any) -> bool: ...
        def _new_read(self, seq: int, card: Any, role: str, street: str | None, seat: int | None) -> Read: ...
        def _ask_counter_reset(self, *, wait: bool) -> None: ...

    # state of the irregularities in the current hand (reset by _reset_irregular)
    premature: dict[str, Any] | None
    betting_strays: list[Read]
    absent: set[int]
    aside_due: bool
    aside_left: int
    aside_total: int
    misdeal: str | None
    first_deal_idx: int | None
    _undo: tuple[DealerAction, dict[str, Any] | None] | None
    _undo_why: str

    def _reset_irregular(self) -> None:
        self.premature = None
        self.betting_strays = []
        self.absent = set()
        self.aside_due = False
        self.aside_left = 0
        self.aside_total = 0
        self.misdeal = None
        self.first_deal_idx = None
        self._undo = None
        self._undo_why = "no dealer input to undo"

    # ================================================================== dispatch

    def _irregular_input(self, ev: DealerInput) -> bool:
        """Handle the irregularity inputs; False for any other action."""
        a = ev.action
        if a is DealerAction.EXPOSED_CARD or a is DealerAction.LAST_CARD_EXPOSED:
            self._exposed(ev, off_table=False)
        elif a is DealerAction.CARD_OFF_TABLE:
            self._exposed(ev, off_table=True)
        elif a is DealerAction.ABSENT_PLAYER:
            self._absent(ev)
        elif a is DealerAction.PREMATURE_DONE:
            self._premature_done(ev)
        elif a is DealerAction.BURN_ERROR:
            self._burn_error(ev)
        elif a is DealerAction.WRONG_BRING_IN:
            self._wrong_bring_in(ev)
        elif a is DealerAction.CARD_COUNT:
            self._card_count(ev)
        elif a is DealerAction.MISDEAL:
            self._end_in_misdeal("misdeal", "the dealer declared a misdeal: collect every card; the hand is "
                                 "dealt again with a new shuffle")
        else:
            return False
        return True

    def _seat_index(self, ev: DealerInput) -> int | None:
        if ev.seat is None:
            self._alert("input-invalid", f"'{ev.action.value}' needs a seat")
            return None
        try:
            return self._index(ev.seat)
        except ValueError as exc:
            self._alert("input-invalid", f"'{ev.action.value}': {exc}", seat=ev.seat)
            return None

    # ================================================================== applying a ruling

    def _rule(self, ruling: rul.Ruling, *, seat: int | None, street: str | None,
              moves: tuple[str, ...] = ()) -> None:
        """Alert with the ruling's clause and instruction, apply it, re-plan what is left."""
        hand = self.hand
        assert hand is not None
        try:
            ruling.apply(hand.copy())  # a ruling the record cannot take changes nothing
        except HandError as exc:
            self._alert("input-invalid", f"{ruling.code}: the ruling cannot be applied to the hand: {exc}; "
                        "nothing changed; call the floor", seat=seat, latched=True)
            return
        extra = ""
        if ruling.refund_ante:
            extra += "; return the ante"
        if ruling.posts_bring_in and "bring-in" not in ruling.instruction:
            extra += "; the bring-in is posted"
        if ruling.floor:
            extra += "; call the floor"
        clauses = ", ".join(ruling.clauses)
        self._alert(ruling.code, f"{ruling.instruction}{extra} ({clauses})", latched=ruling.floor, seat=seat,
                    street=street, moves=moves)
        ruling.apply(hand)
        if ruling.action is rul.Action.MISDEAL:
            self._end_in_misdeal(ruling.code, ruling.instruction)
            return
        self._after_change()

    def _after_change(self) -> None:
        """The hand record changed outside the plan: re-plan the street, or end the hand."""
        hand = self.hand
        assert hand is not None
        self._forecast_dirty = True
        state = self.state
        if state in (SHOWDOWN, UNCONTESTED) or not state.startswith("hand"):
            return
        if hand.live_count() <= 1:
            self.trigger("allfolded")
            return
        sub = layout.sub_of(state)
        if sub == "deal":
            self._replan(None)
        elif sub in ("scramble", "cut", "reload") and self.plan is not None:
            # The street's plan is past its decision (a scramble is under way): keep its order,
            # drop what is left for seats no longer in the hand (killed, dead).
            seats = hand.seats
            left = tuple(s for s in self.plan.steps[self.step_i:]
                         if not (s.kind == "deal" and s.seat_index is not None and not seats[s.seat_index].in_hand))
            self.plan = dataclasses.replace(self.plan, steps=self.plan.steps[:self.step_i] + left)
        elif sub == "betting" and self.street is not None and not hand.street_complete(self.street):
            self.trigger("redeal")

    def _replan(self, _event: Any) -> None:
        """Plan what is left of the street in progress (after a ruling changed the record)."""
        assert self.hand is not None and self.street is not None
        self.plan = plan_street(self.profile, self.hand, self.street)
        self.step_i = 0

    def _end_in_misdeal(self, code: str, why: str) -> None:
        if self.hand is None or not self.state.startswith("hand"):
            self._alert("input-wrong-time", "'misdeal' refused: no hand is running; nothing changed")
            return
        self.misdeal = code
        if code == "misdeal":
            self._alert("misdeal", f"misdeal in hand: {why}", street=self.street)
        self.trigger("misdeal")

    # ================================================================== exposed cards, RP-10-A/B, 16.1-16.2, 16.13, 16.21-16.24

    def _exposed(self, ev: DealerInput, *, off_table: bool) -> None:
        hand = self.hand
        assert hand is not None
        street = str(ev.args.get("street") or self.street or "")
        if ev.action is DealerAction.LAST_CARD_EXPOSED:
            street = "7th"
        if not self.state.startswith("hand") or self.street is None or street != self.street:
            self._wrong_time(ev, "an exposed card is reported on the street in progress, naming the seat")
            return
        i = self._seat_index(ev)
        if i is None:
            return
        s = hand.seats[i]
        if not s.in_hand:
            self._wrong_time(ev, f"seat {ev.seat} is not in the hand ({s.status})")
            return
        try:
            if street == "7th":
                if hand.needs_card(i, "7th") or not s.down:
                    self._wrong_time(ev, f"seat {ev.seat} has not had its 7th-street card")
                    return
                remains = self.two_can_act(None) and self.state != SHOWDOWN
                if off_table:
                    ruling = rul.card_off_table(self.profile, hand, i, street, action_remains=remains)
                else:
                    ruling = rul.exposed_seventh(self.profile, hand, i, action_remains=remains)
            elif street == "3rd":
                if s.card_count == 0:
                    self._wrong_time(ev, f"seat {ev.seat} has no card yet")
                    return
                both = bool(ev.args.get("both", False))
                which = ev.args.get("which")
                if off_table:
                    face = ev.args.get("face")
                    ruling = rul.card_off_table(self.profile, hand, i, street, face=None if face is None else str(face))
                else:
                    if both and len(s.down) < 2:
                        self._wrong_time(ev, f"seat {ev.seat} has not had both hole cards")
                        return
                    ruling = rul.exposed_downcard(self.profile, hand, i, both=both,
                                                  which=None if which is None else int(which))
            elif off_table:
                ruling = rul.card_off_table(self.profile, hand, i, street)
            else:
                self._wrong_time(ev, f"{street} cards are dealt face up: an exposed card changes nothing")
                return
        except (HandError, ValueError, TypeError) as exc:
            self._alert("input-invalid", f"'{ev.action.value}' seat {ev.seat}: {exc}", seat=ev.seat)
            return
        moves: tuple[str, ...] = ()
        if ruling.action is rul.Action.REPLACE:
            moves = (f"seat {s.seat} up -> out",)
        elif ruling.action is rul.Action.DEAD_HAND and ruling.code == "house-16.2":
            # Both hole cards lie face up: record them as upcards (public), then the hand is dead.
            s.up[:0] = s.down
            s.down.clear()
        self._rule(ruling, seat=ev.seat, street=street, moves=moves)

    # ================================================================== absent players, RP-10-C / Rule 30, 16.9-16.11

    def _absent(self, ev: DealerInput) -> None:
        hand = self.hand
        assert hand is not None
        if not self.state.startswith("hand") or self.state in (SHOWDOWN, UNCONTESTED):
            self._wrong_time(ev, "an absent player is reported while the hand is dealt or bet")
            return
        i = self._seat_index(ev)
        if i is None:
            return
        if not hand.seats[i].in_hand:
            self._wrong_time(ev, f"seat {ev.seat} is not in the hand ({hand.seats[i].status})")
            return
        sub = layout.sub_of(self.state)
        reached = bool(ev.args.get("action_reached", sub == "betting"))
        if self.street == "3rd" and sub == "deal" and not reached:
            # Rule 30 / house 16.10, 16.11 judge the seat when the initial deal is complete.
            self.absent.add(i)
            self._alert("absent-player", f"seat {ev.seat}: player absent; go on dealing to the seat; the ruling "
                        "comes when the initial deal is complete", seat=ev.seat)
            return
        self._absent_ruling(i, reached)

    def _absent_ruling(self, i: int, reached: bool) -> None:
        hand = self.hand
        assert hand is not None
        ruling = rul.absent_player(self.profile, hand, i, action_reached=reached, bring_in=i == self.bring_in_idx)
        if ruling.action is rul.Action.DEAL_TO_EMPTY_SEAT:
            self.absent.add(i)
        else:
            self.absent.discard(i)
        self._rule(ruling, seat=hand.seats[i].seat, street=self.street)

    def _absent_at_deal_end(self) -> None:
        """The initial deal is complete: judge the seats reported absent during it."""
        hand = self.hand
        assert hand is not None
        for i in sorted(self.absent):
            if hand.seats[i].in_hand:
                ruling = rul.absent_player(self.profile, hand, i, action_reached=False,
                                           bring_in=i == self.bring_in_idx)
                seat = hand.seats[i].seat
                clauses = ", ".join(ruling.clauses)
                self._alert(ruling.code, f"{ruling.instruction} ({clauses})", seat=seat, street="3rd")
                ruling.apply(hand)
                if ruling.action is not rul.Action.DEAL_TO_EMPTY_SEAT:
                    self.absent.discard(i)
        self._forecast_dirty = True

    # ================================================================== premature cards, RP-5-D, 16.16, 16.17

    def _premature_done(self, ev: DealerInput) -> None:
        """The cards read during this betting round (each stopped the dealer as not expected) were
        premature cards of the next street: assign them where the next street's plan puts them
        (its burn, then one per player in order) and rule (RP-5-D / house 16.16, 16.17)."""
        hand = self.hand
        strays = [r for r in self.betting_strays if r.role == "stray"]
        if hand is None or not self.state.endswith("_betting") or self.street in (None, "7th") or not strays:
            self._wrong_time(ev, "premature cards are reported in a betting round on 3rd to 6th street, "
                             "after cards were read during it")
            return
        assert self.street is not None
        try:
            merged = [self._index(int(s)) for s in ev.args.get("merged", ())]
        except (ValueError, TypeError) as exc:
            self._alert("input-invalid", f"'premature-done' merged: {exc}")
            return
        street = STREETS[STREETS.index(self.street) + 1]
        try:
            plan = plan_street(self.profile, hand, street)
        except StubError as exc:
            self._alert("input-invalid", f"'premature-done': {exc}")
            return
        steps: list[Step] = []
        for st in plan.steps:
            if st.kind not in ("burn", "deal"):
                break
            steps.append(st)
        cards: list[tuple[int, str]] = []
        burned = False
        reads: list[Read] = []
        for read, step in zip(strays, steps, strict=False):
            # The read was counted and held aside as a stray: it is the step's card instead.
            for k in range(len(hand.set_aside) - 1, -1, -1):
                if hand.set_aside[k] == read.card:
                    del hand.set_aside[k]
                    break
            hand.pulled -= 1
            hand.dealt_since_load -= 1
            hand.record(step, read.card)
            read.role = step.face if step.kind == "deal" and step.face else step.kind
            read.street = street
            read.seat = hand.seats[step.seat_index].seat if step.seat_index is not None else None
            if step.kind == "burn":
                burned = True
            else:
                assert step.seat_index is not None and step.face is not None
                cards.append((step.seat_index, step.face))
            reads.append(read)
        hand.street = self.street  # the street in progress is still the betting one
        self.betting_strays = [r for r in strays if r not in reads]
        self.alerts = [a for a in self.alerts if a["code"] != "card-not-expected"]
        ruling = rul.premature_cards(self.profile, hand, street, cards, burned=burned, merged=merged)
        moves: list[str] = []
        returned = ruling.action is rul.Action.RESHUFFLE
        for r in reads:
            if r.role == "burn":
                if not returned:
                    moves.append(f"burn {street} -> set-aside")
                    r.role = "aside"
                continue
            idx = self._index(r.seat) if r.seat is not None else None
            if idx is not None and idx in merged and street == "7th" and not returned:
                continue  # house 16.17: the merged card stands
            if returned:
                r.role = "stub"
                if r.card is not None and self._where.get(r.card) is r:
                    del self._where[r.card]
            else:
                moves.append(f"seat {r.seat} {r.role} -> set-aside")
                r.role = "aside"
        self._alert(ruling.code, f"{ruling.instruction} ({', '.join(ruling.clauses)})", latched=ruling.floor,
                    street=street, moves=tuple(moves))
        ruling.apply(hand)
        hand.street = self.street
        self._forecast_dirty = True
        if returned and any(e.op == "return" for e in ruling.effects):
            self.premature = {"street": street}
            self.trigger("reshuffle")
        else:
            self.aside_due = self.aside_due or ruling.aside_per_active

    def _reshuffle_done(self) -> None:
        """SCRAMBLE_DONE in ``reshuffle``: the premature cards are back in the stub, reshuffled and
        reloaded (RP-5-D); the shoe's counter restarts."""
        self.premature = None
        self._ask_counter_reset(wait=False)  # the reshuffled stub is loaded first: no race
        self.trigger("reshuffled")

    def _aside_card(self, card: Any, seq: int) -> None:
        """house 16.16: one of the cards taken aside after the betting round."""
        hand = self.hand
        assert hand is not None
        read = self._new_read(seq, card, "aside", self.street, None)
        self._check_identity(read)
        self.reads.append(read)
        if card is not None and card not in self._where:
            self._where[card] = read
        hand.put_aside(card)
        self.aside_left -= 1
        if self.aside_left <= 0:
            self.trigger("asidedone")

    def _start_aside(self) -> bool:
        """At a street's start: take the house 16.16 cards aside first (True when it does)."""
        if not self.aside_due:
            return False
        self.aside_due = False
        hand = self.hand
        assert hand is not None
        n = rul.aside_after_betting(hand)
        if n <= 0:
            return False
        self.aside_left = self.aside_total = n
        self.plan = None
        self.trigger("setaside")
        return True

    # ================================================================== 16.15 burns, 16.6 bring-in, 16.25/16.26 counts

    def _burn_error(self, ev: DealerInput) -> None:
        hand = self.hand
        assert hand is not None
        street = self.street
        sub = layout.sub_of(self.state)
        if street in (None, "3rd") or sub not in ("deal", "betting") or self.plan is None:
            self._wrong_time(ev, "a burn error is reported on 4th to 7th street while it is dealt or bet")
            return
        assert street is not None
        try:
            burns = int(ev.args.get("burns", -1))
            stands = bool(ev.args.get("stands", False))
            first = self.first_deal_idx
            if first is None:
                raise ValueError("the street has no card for a player")
            ruling = rul.burn_error(self.profile, hand, street, burns=burns, first=first, final_card_stands=stands)
        except (HandError, ValueError, TypeError) as exc:
            self._alert("input-invalid", f"'burn-error': {exc}")
            return
        moves: list[str] = []
        if ruling.action is rul.Action.MOVE_CARDS:
            face = "down" if street == "7th" else "up"
            done = [st for st in self.plan.steps[: self.step_i] if st.kind in ("burn", "deal")]
            deals = [st.seat_index for st in done if st.kind == "deal"]
            if burns == 2:
                if deals:
                    moves.append(f"burn {street} -> seat {hand.seats[first].seat} {face}")
            else:
                nxt = self.plan.steps[self.step_i] if self.step_i < len(self.plan.steps) else None
                held = [*deals]
                if nxt is not None and nxt.kind == "deal":
                    held.append(nxt.seat_index)
                places = [f"seat {hand.seats[k].seat} {face}" for k in held if k is not None]
                if places:
                    moves.append(f"{places[0]} -> burn {street}")
                    moves.extend(f"{places[n + 1]} -> {places[n]}" for n in range(len(places) - 1))
        self._rule(ruling, seat=hand.seats[first].seat if first is not None else None, street=street,
                   moves=tuple(moves))

    def _wrong_bring_in(self, ev: DealerInput) -> None:
        hand = self.hand
        assert hand is not None
        if self.state != layout.betting_state("3rd") or self.first_idx is None:
            self._wrong_time(ev, "a wrong bring-in is reported in the 3rd-street betting")
            return
        i = self._seat_index(ev)
        if i is None:
            return
        ruling = rul.wrong_bring_in(self.profile, hand, i, self.first_idx, next_acted=bool(ev.args.get("next_acted")))
        self._rule(ruling, seat=ev.seat, street="3rd")

    def _card_count(self, ev: DealerInput) -> None:
        hand = self.hand
        assert hand is not None
        i = self._seat_index(ev)
        if i is None:
            return
        try:
            n = int(ev.args["cards"])
            if n < 0:
                raise ValueError("a negative count")
        except (KeyError, ValueError, TypeError) as exc:
            self._alert("input-invalid", f"'card-count' needs cards (an int >= 0): {exc}", seat=ev.seat)
            return
        shadow = hand.copy()
        s = shadow.seats[i]
        held = s.card_count
        if n > held:
            s.down.extend([None] * (n - held))
        else:
            for _ in range(held - n):
                (s.down if s.down else s.up).pop()
        ruling = rul.card_count(self.profile, shadow, i, showdown=self.state == SHOWDOWN)
        if n != held:
            self._alert("card-count-mismatch", f"seat {ev.seat}: the dealer counts {n} cards, the shoe dealt the "
                        f"seat {held}", seat=ev.seat, latched=False)
        if ruling.action is rul.Action.CONTINUE and not ruling.floor:
            return
        self._rule(ruling, seat=ev.seat, street=self.street)

    def _count_at_showdown(self) -> None:
        """house 16.25, 16.26 on every hand still in at the showdown, from the record."""
        hand = self.hand
        assert hand is not None
        for i in hand.in_hand():
            ruling = rul.card_count(self.profile, hand, i, showdown=True)
            if ruling.action is not rul.Action.CONTINUE or ruling.floor:
                seat = hand.seats[i].seat
                self._alert(ruling.code, f"{ruling.instruction} ({', '.join(ruling.clauses)})",
                            latched=ruling.floor, seat=seat)
                ruling.apply(hand)

    # ================================================================== undo

    _UNDO_ATTRS = ("street", "plan", "step_i", "bring_in_idx", "first_idx", "first_by_street", "seventh",
                   "procedures", "mucked", "shown", "alerts", "_where", "reads", "premature", "absent", "betting_strays",
                   "aside_due", "aside_left", "aside_total", "misdeal", "first_deal_idx", "_forecast",
                   "_forecast_dirty", "hand_no")

    # The attributes of _UNDO_ATTRS that are containers changed in place; the others are
    # immutable values (or, like ``plan`` and ``seventh``, only ever replaced whole).
    _UNDO_CONTAINERS = ("first_by_street", "procedures", "mucked", "shown", "alerts", "_where", "reads",
                        "absent", "betting_strays")

    def _snapshot(self) -> dict[str, Any]:
        """The undo point, taken before every undoable dealer input: only what an input can
        change, copied as shallowly as is safe (this runs at every fold, all-in and betting round
        complete: docs/performance.md)."""
        snap = {name: getattr(self, name) for name in self._UNDO_ATTRS}
        for name in self._UNDO_CONTAINERS:
            snap[name] = snap[name].copy()
        # A read object changes in place during a dealer input only when it was held as a card
        # read in the betting round (a premature card's role, street and seat): keep those
        # reads' fields (undo puts them back). Alert entries are never changed in place.
        snap["read_fields"] = [(r, _read_fields(r)) for r in self.betting_strays]
        snap["premature"] = copy.deepcopy(self.premature) if self.premature is not None else None
        snap["hand"] = self.hand.copy() if self.hand is not None else None
        snap["state"] = self.state
        return snap

    def _undo_input(self, ev: DealerInput) -> None:
        undo = self._undo
        if undo is None:
            self._alert("undo-refused", f"'undo' refused: {self._undo_why}; nothing changed", latched=False)
            return
        action, snap = undo
        if snap is None:
            self._alert("undo-refused", f"'undo' refused: the last input '{action.value}' cannot be undone "
                        f"({NOT_UNDOABLE.get(action, 'not undoable')}); nothing changed")
            return
        for name in self._UNDO_ATTRS:
            setattr(self, name, snap[name])
        for read, values in snap["read_fields"]:
            for name, value in zip(read.__slots__, values, strict=True):
                setattr(read, name, value)
        self.hand = snap["hand"]
        self.machine.set_state(snap["state"], model=self)  # type: ignore[attr-defined]
        self._forecast_dirty = True
        self._undo = None
        self._undo_why = f"'{action.value}' was undone already"
        self._alert("undo", f"undone: '{action.value}'; the state before it is back")

    def _input_with_undo(self, ev: DealerInput, handle: Any) -> None:
        """Run ``handle(ev)`` keeping the undo point: the state before an accepted, undoable input."""
        if ev.action is DealerAction.UNDO:
            self._undo_input(ev)
            return
        n = len(self._out)
        snap = self._snapshot() if ev.action not in NOT_UNDOABLE and self.hand is not None else None
        handle(ev)
        refused = any(isinstance(c, Alert) and c.code in _REFUSED for c in self._out[n:])
        if not refused:
            self._undo = (ev.action, snap)
