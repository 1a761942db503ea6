"""The irregularities of the rule texts as the dealing machine meets them: the rulings on the
dealer's reports (``exposed-card``, ``card-off-table``, ``absent-player``, ``premature-done``,
``burn-error``, ``wrong-bring-in``, ``card-count``, ``misdeal``), premature cards read during a
betting round and the cards taken aside under house 16.16.

:class:`Irregularities` is a collaborator of :class:`~shoe_ctl.machine.dealing.Dealing`: it
holds what the irregularities of the hand in progress left behind, asks the rules core
(:mod:`shoe_ctl.rules.irregular`) for each ruling and applies it to the machine. The behaviour is
described in ``docs/irregularities.md``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.machine import layout
from shoe_ctl.machine.inputs import ROWS
from shoe_ctl.machine.layout import SHOWDOWN, UNCONTESTED
from shoe_ctl.machine.reads import Read
from shoe_ctl.rules import irregular as rul
from shoe_ctl.rules.hand import STREETS, HandError, HandState
from shoe_ctl.rules.stub import Step, StubError, plan_street

if TYPE_CHECKING:
    from shoe_ctl.machine.dealing import Dealing

__all__ = ["Irregularities"]


def _refuse(m: Dealing, ev: DealerInput) -> None:
    """``input-wrong-time`` with the input's reason from the input table."""
    m.wrong_time(ev, ROWS[ev.action].refused)


def _take_from_set_aside(hand: HandState, card: Any) -> None:
    """Remove the last copy of ``card`` from the cards held aside (a read booked elsewhere now)."""
    for k in range(len(hand.set_aside) - 1, -1, -1):
        if hand.set_aside[k] == card:
            del hand.set_aside[k]
            return


def _book_stray(hand: HandState, read: Read, step: Step, street: str) -> None:
    """A read counted and held aside as a stray is ``step``'s card of ``street`` instead: taken
    from the set-aside cards and booked where the step puts it (one pull, not two)."""
    _take_from_set_aside(hand, read.card)
    hand.pulled -= 1
    hand.dealt_since_load -= 1
    hand.record(step, read.card)
    read.role = step.face if step.kind == "deal" and step.face else step.kind
    read.street = street
    read.seat = hand.seats[step.seat_index].seat if step.seat_index is not None else None


class Irregularities:
    """The irregularity rulings of one :class:`~shoe_ctl.machine.dealing.Dealing`.

    State of the hand in progress (reset by :meth:`reset` at a new hand; kept by the undo point):
    ``premature`` (the premature cards going back into the stub, RP-5-D), ``betting_strays``
    (cards read during the betting round), ``absent`` (seat indexes reported absent, not yet ruled
    on or dealt to as empty seats), ``aside_due``/``aside_left``/``aside_total`` (house 16.16),
    ``misdeal`` (the code that ended the hand in a misdeal), ``first_deal_idx`` (the seat index of
    the street's first card to a player).
    """

    def __init__(self, machine: Dealing) -> None:
        self.m = machine
        self.reset()

    def reset(self) -> None:
        """A new hand: no irregularity yet."""
        self.premature: dict[str, Any] | None = None
        self.betting_strays: list[Read] = []
        self.absent: set[int] = set()
        self.aside_due = False
        self.aside_left = 0
        self.aside_total = 0
        self.misdeal: str | None = None
        self.first_deal_idx: int | None = None
        self.mixed: frozenset[Any] = frozenset()  # cards declared mixed into the stub (RP-4)
        self.over: int | None = None  # a seat counted one card over the record, its card not yet found

    def seat_index(self, ev: DealerInput) -> int | None:
        """The seat index ``ev`` names; ``None`` (and ``input-invalid``) when it names none."""
        m = self.m
        if ev.seat is None:
            m.alert("input-invalid", f"'{ev.action.value}' needs a seat")
            return None
        try:
            return m.index(ev.seat)
        except ValueError as exc:
            m.alert("input-invalid", f"'{ev.action.value}': {exc}", seat=ev.seat)
            return None

    # ================================================================== applying a ruling

    def rule(self, ruling: rul.Ruling, *, seat: int | None, street: str | None,
             moves: tuple[str, ...] = ()) -> None:
        """Alert with the ruling's clause and instruction, apply it, re-plan what is left."""
        m = self.m
        hand = m.hand
        assert hand is not None
        try:
            ruling.apply(hand.copy())  # a ruling the record cannot take changes nothing
        except HandError as exc:
            m.alert("input-invalid", f"{ruling.code}: the ruling cannot be applied to the hand: {exc}; "
                    "nothing changed; call the floor", seat=seat, latched=True)
            return
        extra = ""
        if ruling.refund_ante:
            extra += "; return the ante"
        if ruling.posts_bring_in and "bring-in" not in ruling.instruction:
            extra += "; the bring-in is posted"
        if ruling.floor and "call the floor" not in ruling.instruction.lower():
            extra += "; call the floor"
        clauses = ", ".join(ruling.clauses)
        m.alert(ruling.code, f"{ruling.instruction}{extra} ({clauses})", latched=ruling.floor, seat=seat,
                street=street, moves=moves)
        ruling.apply(hand)
        if ruling.action is rul.Action.MISDEAL:
            self.end_in_misdeal(ruling.code, ruling.instruction)
            return
        self.after_change()

    def after_change(self) -> None:
        """The hand record changed outside the plan: re-plan the street, or end the hand."""
        m = self.m
        hand = m.hand
        assert hand is not None
        m._forecast_dirty = True
        state = m.state
        if state in (SHOWDOWN, UNCONTESTED) or not state.startswith("hand"):
            return
        if hand.live_count() <= 1:
            m.trigger("allfolded")
            return
        sub = layout.sub_of(state)
        if sub == "deal":
            m._replan(None)
        elif sub in ("scramble", "cut", "reload") and m.plan is not None:
            # The street's plan is past its decision (a scramble is under way): keep its order,
            # drop what is left for seats no longer in the hand (killed, dead).
            seats = hand.seats
            left = tuple(s for s in m.plan.steps[m.step_i:]
                         if not (s.kind == "deal" and s.seat_index is not None and not seats[s.seat_index].in_hand))
            m.plan = dataclasses.replace(m.plan, steps=m.plan.steps[:m.step_i] + left)
        elif sub == "betting" and m.street is not None and not hand.street_complete(m.street):
            m.trigger("redeal")

    def stub_mixed(self, ev: DealerInput) -> None:
        """``stub-mixed`` (``piles``, ``cards``): the stub was mixed with the muck, the burns or the
        set-aside cards (TDA RP-4: a disordered stub; the floor decides how play goes on). Those
        cards may come out of the stub from now on: they join the identities the stub may hold
        (no ``card-not-in-stub``, no ``duplicate-card`` when one is read again), and the stub
        count grows by the cards that went into it. Journaled like every input."""
        m = self.m
        hand = m.hand
        if hand is None or not m.state.startswith("hand") or m.state in (SHOWDOWN, UNCONTESTED):
            m.wrong_time(ev, "a mixed stub is declared while the hand is dealt or bet")
            return
        piles = ev.args.get("piles", ["muck", "burns"])
        try:
            if isinstance(piles, str) or not isinstance(piles, (list, tuple)) or not piles \
                    or any(p not in ("muck", "burns", "set-aside") for p in piles):
                raise ValueError(f"piles {piles!r}: a list of muck, burns, set-aside")
            cards: list[Any] = []
            if "muck" in piles:
                for s in hand.seats:
                    if not s.in_hand:
                        cards.extend(s.down + s.up)
                cards.extend(hand.dead_cards)
            if "burns" in piles:
                cards.extend(c for _st, c in hand.burn_pile)
            if "set-aside" in piles:
                cards.extend(hand.set_aside)
            n = ev.args.get("cards", len(cards))
            if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= len(cards):
                raise ValueError(f"cards {n!r}: 0..{len(cards)} (the cards of the piles named)")
        except ValueError as exc:
            m.alert("input-invalid", f"'stub-mixed': {exc}")
            return
        known = frozenset(c for c in cards if c is not None)
        for c in known:
            if c in m.where:
                del m.where[c]  # a read of it from now on is no duplicate
        if hand.new_stub is not None:
            hand.new_stub = hand.new_stub | known
        hand.returned += n
        self.mixed |= known
        m._forecast_dirty = True
        m.alert("RP-4", f"The stub was mixed with the {' and the '.join(piles)} ({n} card{'' if n == 1 else 's'} "
                "into the stub): those cards may come out of the stub from now on; call the floor (RP-4)",
                latched=True, street=m.street)

    def declared_misdeal(self, _ev: DealerInput) -> None:
        """``misdeal``: the dealer declares one."""
        self.end_in_misdeal("misdeal", "the dealer declared a misdeal: collect every card; the hand is "
                            "dealt again with a new shuffle")

    def end_in_misdeal(self, code: str, why: str) -> None:
        """End the hand in a misdeal (``code``: the input, or the ruling's clause)."""
        m = self.m
        if m.hand is None or not m.state.startswith("hand"):
            m.alert("input-wrong-time", "'misdeal' refused: no hand is running; nothing changed")
            return
        self.misdeal = code
        if code == "misdeal":
            m.alert("misdeal", f"misdeal in hand: {why}", street=m.street)
        m.trigger("misdeal")

    # ================================================================== exposed cards, RP-10-A/B, 16.1-16.2, 16.13, 16.21-16.24

    def exposed(self, ev: DealerInput) -> None:
        """``exposed-card``, ``last-card-exposed``, ``card-off-table``: rule on the card."""
        m = self.m
        off_table = ev.action is DealerAction.CARD_OFF_TABLE
        hand = m.hand
        assert hand is not None
        street = str(ev.args.get("street") or m.street or "")
        if ev.action is DealerAction.LAST_CARD_EXPOSED:
            street = "7th"
        if not m.state.startswith("hand") or m.street is None or street != m.street:
            m.wrong_time(ev, "an exposed card is reported on the street in progress, naming the seat")
            return
        i = self.seat_index(ev)
        if i is None:
            return
        s = hand.seats[i]
        if not s.in_hand:
            m.wrong_time(ev, f"seat {ev.seat} is not in the hand ({s.status})")
            return
        try:
            if street == "7th":
                if hand.needs_card(i, "7th") or not s.down:
                    m.wrong_time(ev, f"seat {ev.seat} has not had its 7th-street card")
                    return
                remains = m.two_can_act(None) and m.state != SHOWDOWN
                if off_table:
                    ruling = rul.card_off_table(m.profile, hand, i, street, action_remains=remains)
                else:
                    ruling = rul.exposed_seventh(m.profile, hand, i, action_remains=remains)
            elif street == "3rd":
                if s.card_count == 0:
                    m.wrong_time(ev, f"seat {ev.seat} has no card yet")
                    return
                both = bool(ev.args.get("both", False))
                which = ev.args.get("which")
                if off_table:
                    face = ev.args.get("face")
                    ruling = rul.card_off_table(m.profile, hand, i, street, face=None if face is None else str(face))
                else:
                    if both and len(s.down) < 2:
                        m.wrong_time(ev, f"seat {ev.seat} has not had both hole cards")
                        return
                    ruling = rul.exposed_downcard(m.profile, hand, i, both=both,
                                                  which=None if which is None else int(which))
            elif off_table:
                ruling = rul.card_off_table(m.profile, hand, i, street)
            else:
                m.wrong_time(ev, f"{street} cards are dealt face up: an exposed card changes nothing")
                return
        except (HandError, ValueError, TypeError) as exc:
            m.alert("input-invalid", f"'{ev.action.value}' seat {ev.seat}: {exc}", seat=ev.seat)
            return
        moves: tuple[str, ...] = ()
        if ruling.action is rul.Action.REPLACE:
            moves = (f"seat {s.seat} up -> out",)
        elif ruling.action is rul.Action.DEAD_HAND and ruling.code == "house-16.2":
            # Both hole cards lie face up: record them as upcards (public), then the hand is dead.
            s.up[:0] = s.down
            s.down.clear()
        self.rule(ruling, seat=ev.seat, street=street, moves=moves)

    # ================================================================== absent players, RP-10-C / Rule 30, 16.9-16.11

    def absent_player(self, ev: DealerInput) -> None:
        """``absent-player`` while the hand is dealt or bet: rule now, or (on the initial deal
        before the action reached the seat) when the initial deal is complete."""
        m = self.m
        hand = m.hand
        assert hand is not None
        i = self.seat_index(ev)
        if i is None:
            return
        if not hand.seats[i].in_hand:
            m.wrong_time(ev, f"seat {ev.seat} is not in the hand ({hand.seats[i].status})")
            return
        sub = layout.sub_of(m.state)
        reached = bool(ev.args.get("action_reached", sub == "betting"))
        if m.street == "3rd" and sub == "deal" and not reached:
            # Rule 30 / house 16.10, 16.11 judge the seat when the initial deal is complete.
            self.absent.add(i)
            m.alert("absent-player", f"seat {ev.seat}: player absent; go on dealing to the seat; the ruling "
                    "comes when the initial deal is complete", seat=ev.seat)
            return
        self.absent_ruling(i, reached)

    def absent_ruling(self, i: int, reached: bool) -> None:
        """Rule on the absent player at seat index ``i`` (RP-10-C / Rule 30, house 16.9-16.11)."""
        m = self.m
        hand = m.hand
        assert hand is not None
        ruling = rul.absent_player(m.profile, hand, i, action_reached=reached, bring_in=i == m.bring_in_idx)
        if ruling.action is rul.Action.DEAL_TO_EMPTY_SEAT:
            self.absent.add(i)
        else:
            self.absent.discard(i)
        self.rule(ruling, seat=hand.seats[i].seat, street=m.street)
        self.pass_the_action(i)

    def pass_the_action(self, i: int) -> None:
        """In a betting round, the seat to act first (seat index ``i``) was taken out of the hand
        by a ruling (an absent player killed when the action reached the seat, house 16.9, or a
        TDA absence first reported in the betting, RP-10-C): the action moves to the next seat
        clockwise that can still act; the hand's summary keeps that seat as first to act. A
        bring-in seat killed so keeps its bring-in (posted, Rule 30; lost, house 16.9)."""
        m = self.m
        hand = m.hand
        if hand is None or m.first_idx != i or layout.sub_of(m.state) != "betting" or hand.seats[i].in_hand:
            return
        can = hand.can_act()
        n = len(can)
        nxt = next((k % n for k in range(i + 1, i + n) if can[k % n]), None)
        m.first_idx = nxt
        if m.street is not None:
            m.first_by_street[m.street] = nxt

    def absent_at_deal_end(self) -> None:
        """The initial deal is complete: judge the seats reported absent during it."""
        m = self.m
        hand = m.hand
        assert hand is not None
        for i in sorted(self.absent):
            if hand.seats[i].in_hand:
                ruling = rul.absent_player(m.profile, hand, i, action_reached=False,
                                           bring_in=i == m.bring_in_idx)
                seat = hand.seats[i].seat
                clauses = ", ".join(ruling.clauses)
                m.alert(ruling.code, f"{ruling.instruction} ({clauses})", seat=seat, street="3rd")
                ruling.apply(hand)
                if ruling.action is not rul.Action.DEAL_TO_EMPTY_SEAT:
                    self.absent.discard(i)
        m._forecast_dirty = True

    # ================================================================== premature cards, RP-5-D, 16.16, 16.17

    def premature_done(self, ev: DealerInput) -> None:
        """The cards read during this betting round (each stopped the dealer as not expected) were
        premature cards of the next street: assign them where the next street's plan puts them
        (its burn, then one per player in order) and rule (RP-5-D / house 16.16, 16.17)."""
        m = self.m
        hand = m.hand
        strays = [r for r in self.betting_strays if r.role == "stray"]
        if not strays:
            _refuse(m, ev)  # no card was read during the betting round
            return
        assert hand is not None and m.street is not None
        if m.confirming and m.street != "7th":
            self.next_street_begun(strays)
            return
        try:
            merged = [m.index(int(s)) for s in ev.args.get("merged", ())]
        except (ValueError, TypeError) as exc:
            m.alert("input-invalid", f"'premature-done' merged: {exc}")
            return
        street = STREETS[STREETS.index(m.street) + 1]
        try:
            plan = plan_street(m.profile, hand, street)
        except StubError as exc:
            m.alert("input-invalid", f"'premature-done': {exc}")
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
            _book_stray(hand, read, step, street)
            if step.kind == "burn":
                burned = True
            else:
                assert step.seat_index is not None and step.face is not None
                cards.append((step.seat_index, step.face))
            reads.append(read)
        hand.street = m.street  # the street in progress is still the betting one
        self.betting_strays = [r for r in strays if r not in reads]
        m.alerts = [a for a in m.alerts if a["code"] != "card-not-expected"]
        ruling = rul.premature_cards(m.profile, hand, street, cards, burned=burned, merged=merged)
        moves: list[str] = []
        returned = ruling.action is rul.Action.RESHUFFLE
        for r in reads:
            if r.role == "burn":
                if not returned:
                    moves.append(f"burn {street} -> set-aside")
                    r.role = "aside"
                continue
            idx = m.index(r.seat) if r.seat is not None else None
            if idx is not None and idx in merged and street == "7th" and r.role == "down":
                continue  # house 16.17 / RP-5-D (interpretation): the merged card stands, counted once
            if returned:
                r.role = "stub"
                if r.card is not None and m.where.get(r.card) is r:
                    del m.where[r.card]
            else:
                moves.append(f"seat {r.seat} {r.role} -> set-aside")
                r.role = "aside"
        m.alert(ruling.code, f"{ruling.instruction} ({', '.join(ruling.clauses)})", latched=ruling.floor,
                street=street, moves=tuple(moves))
        ruling.apply(hand)
        hand.street = m.street
        m._forecast_dirty = True
        if returned and any(e.op == "return" for e in ruling.effects):
            self.premature = {"street": street}
            m.trigger("reshuffle")
        else:
            self.aside_due = self.aside_due or ruling.aside_per_active

    def next_street_begun(self, strays: list[Read]) -> None:
        """``premature-done`` while a street with no betting waits for its confirmation: the
        cards read since were the next street's first cards (its burn, then the players in
        order), dealt early but with no betting to protect: no irregularity. They are booked
        where the next street's plan puts them; the street counts as confirmed."""
        m = self.m
        hand = m.hand
        assert hand is not None and m.street is not None
        street = STREETS[STREETS.index(m.street) + 1]
        plan = plan_street(m.profile, hand, street)
        steps = [st for st in plan.steps if st.kind in ("burn", "deal")][: len(strays)]
        for read, step in zip(strays, steps, strict=False):
            _book_stray(hand, read, step, street)
        hand.street = m.street
        seqs = tuple(f"read {r.seq}:" for r in strays)
        m.alerts = [a for a in m.alerts if not (a["code"] == "card-not-expected" and a["message"].startswith(seqs))]
        self.betting_strays = [r for r in self.betting_strays if r not in strays]
        m.alert("street-confirmed", f"{m.street} street confirmed complete; the card(s) read before the "
                f"confirmation are {street} street's, where its plan puts them (no betting was due)", street=street)
        m.trigger("bettingdone")

    def extra_card(self, i: int) -> bool:
        """``card-count`` found seat index ``i`` one card over what the record gives it while a
        card read in this betting round (or before a street was confirmed) is held aside: that
        card is the seat's, a card too many (house 16.25 counts it). True when so booked."""
        m = self.m
        hand = m.hand
        assert hand is not None
        read = next((r for r in self.betting_strays if r.role == "stray"), None)
        if read is None:
            return False
        _take_from_set_aside(hand, read.card)
        s = hand.seats[i]
        s.extra.append(read.card)
        read.role, read.seat = "extra", s.seat
        self.betting_strays.remove(read)
        m.alerts = [a for a in m.alerts if not (a["code"] == "card-not-expected"
                                                and a["message"].startswith(f"read {read.seq}:"))
                    and a["code"] != "card-in-doubt"]
        m.alert("extra-card", f"seat {s.seat}: read {read.seq} is a card too many to the seat (the dealer's count); "
                "it stays with the seat and counts in the hand (house 16.25: eight or more cards is a dead hand)",
                seat=s.seat)
        return True

    def reads_after(self, i: int) -> list[Read]:
        """The reads of the street in progress booked to a seat after seat index ``i``'s card."""
        m = self.m
        hand = m.hand
        assert hand is not None
        seat = hand.seats[i].seat
        on_street = [r for r in m.reads if r.street == m.street and r.role in ("up", "down") and r.seat is not None]
        k = next((n for n in range(len(on_street) - 1, -1, -1) if on_street[n].seat == seat), None)
        return on_street[k + 1:] if k is not None else on_street

    def in_doubt(self, i: int) -> bool:
        """``card-count`` found seat index ``i`` one card short of the record in a betting round
        (or a street's confirmation): the card the record booked to it on this street is not there.
        That read is taken off the seat — given to the seat counted one over before
        (``card-count-over``, as a card too many: house 16.25 counts it), else held aside, booked to
        no seat, until another seat's count claims it — and seat ``i`` is owed its card again (the
        street is re-planned). True when so done."""
        m = self.m
        hand = m.hand
        assert hand is not None
        s = hand.seats[i]
        read = next((r for r in reversed(m.reads) if r.street == m.street and r.seat == s.seat
                     and r.role in ("up", "down")), None)
        pile = None if read is None else (s.up if read.role == "up" else s.down)
        if read is None or pile is None or not pile or pile[-1] != read.card:
            return False
        pile.pop()
        over = self.over
        self.over = None
        m.alerts = [a for a in m.alerts if a["code"] != "card-count-over"]
        if over is not None and over != i:
            hand.seats[over].extra.append(read.card)
            read.role, read.seat = "extra", hand.seats[over].seat
            m.alert("extra-card", f"seat {s.seat}: read {read.seq}, booked to the seat, went to seat "
                    f"{hand.seats[over].seat}: a card too many there (house 16.25 counts it); seat {s.seat} is owed "
                    f"its {m.street} card", seat=s.seat)
            ruling = rul.card_count(m.profile, hand, over, showdown=False)
            if ruling.action is not rul.Action.CONTINUE or ruling.floor:
                self.rule(ruling, seat=hand.seats[over].seat, street=m.street)
        else:
            hand.set_aside.append(read.card)  # out of the stub, on no seat (the pull is counted)
            read.role, read.seat = "stray", None
            self.betting_strays.append(read)
            m.alert("card-in-doubt", f"seat {s.seat}: the dealer counts one card fewer than the record: read "
                    f"{read.seq}, booked to the seat, is in doubt, held aside and booked to no seat; if another "
                    f"seat got it, count that seat (card-count); seat {s.seat} is owed its {m.street} card",
                    seat=s.seat, latched=True)
        self.after_change()
        return True

    def reshuffle_done(self, _ev: DealerInput | None = None) -> None:
        """SCRAMBLE_DONE in ``reshuffle``: the premature cards are back in the stub, reshuffled and
        reloaded (RP-5-D); the shoe's counter restarts."""
        m = self.m
        self.premature = None
        m.ask_counter_reset(wait=False)  # the reshuffled stub is loaded first: no race
        m.trigger("reshuffled")

    def aside_card(self, card: Any, seq: int) -> None:
        """house 16.16: one of the cards taken aside after the betting round."""
        m = self.m
        hand = m.hand
        assert hand is not None
        read = Read(seq, card, "aside", m.street, None)
        m.check_identity(read)
        m.reads.append(read)
        if card is not None and card not in m.where:
            m.where[card] = read
        hand.put_aside(card)
        self.aside_left -= 1
        if self.aside_left <= 0:
            m.trigger("asidedone")

    def start_aside(self) -> bool:
        """At a street's start: take the house 16.16 cards aside first (True when it does)."""
        m = self.m
        if not self.aside_due:
            return False
        self.aside_due = False
        hand = m.hand
        assert hand is not None
        n = rul.aside_after_betting(hand)
        if n <= 0:
            return False
        self.aside_left = self.aside_total = n
        m.plan = None
        m.trigger("setaside")
        return True

    # ================================================================== 16.15 burns, 16.6 bring-in, 16.25/16.26 counts

    def burn_error(self, ev: DealerInput) -> None:
        """``burn-error`` (``burns`` 0 or 2, ``stands``) on 4th to 7th street, house 16.15."""
        m = self.m
        hand = m.hand
        assert hand is not None
        street = m.street
        if street is None or m.plan is None:
            _refuse(m, ev)
            return
        try:
            burns = int(ev.args.get("burns", -1))
            stands = bool(ev.args.get("stands", False))
            first = self.first_deal_idx
            if first is None:
                raise ValueError("the street has no card for a player")
            ruling = rul.burn_error(m.profile, hand, street, burns=burns, first=first, final_card_stands=stands)
        except (HandError, ValueError, TypeError) as exc:
            m.alert("input-invalid", f"'burn-error': {exc}")
            return
        moves: list[str] = []
        if ruling.action is rul.Action.MOVE_CARDS:
            face = "down" if street == "7th" else "up"
            done = [st for st in m.plan.steps[: m.step_i] if st.kind in ("burn", "deal")]
            deals = [st.seat_index for st in done if st.kind == "deal"]
            if burns == 2:
                extra = self.extra_after_street(street)
                if extra is not None and deals:
                    # The dealer dealt the whole street in order after the two burns: one card more
                    # than the plan was read (held aside, card-not-expected). Every seat holds the
                    # card the record gives the next seat: the last seat's goes aside, each card
                    # moves one seat on, the top burn goes to the first seat (house 16.15).
                    places = [f"seat {hand.seats[k].seat} {face}" for k in deals if k is not None]
                    moves.append(f"{places[-1]} -> set-aside")
                    moves.extend(f"{places[n - 1]} -> {places[n]}" for n in range(len(places) - 1, 0, -1))
                    moves.append(f"burn {street} -> {places[0]}")
                    extra.role = "aside"
                    self.betting_strays.remove(extra)
                    m.alerts = [a for a in m.alerts if not (a["code"] == "card-not-expected"
                                                            and a["message"].startswith(f"read {extra.seq}:"))]
                elif deals:
                    moves.append(f"burn {street} -> seat {hand.seats[first].seat} {face}")
            else:
                nxt = m.plan.steps[m.step_i] if m.step_i < len(m.plan.steps) else None
                held = [*deals]
                if nxt is not None and nxt.kind == "deal":
                    held.append(nxt.seat_index)
                places = [f"seat {hand.seats[k].seat} {face}" for k in held if k is not None]
                if places:
                    moves.append(f"{places[0]} -> burn {street}")
                    moves.extend(f"{places[n + 1]} -> {places[n]}" for n in range(len(places) - 1))
        self.rule(ruling, seat=hand.seats[first].seat if first is not None else None, street=street,
                  moves=tuple(moves))

    def extra_after_street(self, street: str) -> Read | None:
        """The first card read in the betting round of ``street`` (held aside as not expected),
        when the street's cards are all out: the card a dealer who burned two and dealt every seat
        in order gave the last seat (house 16.15 reported after the street)."""
        m = self.m
        if m.street != street or layout.sub_of(m.state) != "betting":
            return None
        return next((r for r in self.betting_strays if r.role == "stray" and r.street == street), None)

    def wrong_bring_in(self, ev: DealerInput) -> None:
        """``wrong-bring-in`` (``next_acted``) in the 3rd-street betting, house 16.6."""
        m = self.m
        hand = m.hand
        assert hand is not None
        if m.first_idx is None:
            _refuse(m, ev)
            return
        i = self.seat_index(ev)
        if i is None:
            return
        ruling = rul.wrong_bring_in(m.profile, hand, i, m.first_idx, next_acted=bool(ev.args.get("next_acted")))
        self.rule(ruling, seat=ev.seat, street="3rd")

    def card_count(self, ev: DealerInput) -> None:
        """``card-count`` (``cards``): the dealer counted the seat's cards, house 16.25, 16.26."""
        m = self.m
        hand = m.hand
        assert hand is not None
        i = self.seat_index(ev)
        if i is None:
            return
        try:
            n = int(ev.args["cards"])
            if n < 0:
                raise ValueError("a negative count")
        except (KeyError, ValueError, TypeError) as exc:
            m.alert("input-invalid", f"'card-count' needs cards (an int >= 0): {exc}", seat=ev.seat)
            return
        if layout.sub_of(m.state) == "betting" and m.street is not None:
            held = hand.seats[i].card_count
            if n == held + 1 and not self.extra_card(i):
                self.over = i  # a card booked to another seat may be this seat's: wait for their count
                later = self.reads_after(i)
                where = ", ".join(f"read {r.seq} (seat {r.seat})" for r in later) or "none"
                m.alert("card-count-over", f"seat {ev.seat}: the dealer counts {n} cards, the record {held}: a card "
                        f"read after the seat's {m.street} card may be the seat's — {where}; count those seats "
                        "(card-count)", seat=ev.seat, latched=True)
                return
            if n == held - 1 and self.in_doubt(i):
                return
        shadow = hand.copy()
        s = shadow.seats[i]
        held = s.card_count
        if n > held:
            s.down.extend([None] * (n - held))
        else:
            for _ in range(held - n):
                (s.down if s.down else s.up).pop()
        ruling = rul.card_count(m.profile, shadow, i, showdown=m.state == SHOWDOWN)
        if n != held:
            m.alert("card-count-mismatch", f"seat {ev.seat}: the dealer counts {n} cards, the shoe dealt the "
                    f"seat {held}", seat=ev.seat, latched=False)
        if ruling.action is rul.Action.CONTINUE and not ruling.floor:
            return
        self.rule(ruling, seat=ev.seat, street=m.street)

    def count_at_showdown(self) -> None:
        """house 16.25, 16.26 on every hand still in at the showdown, from the record."""
        m = self.m
        hand = m.hand
        assert hand is not None
        for i in hand.in_hand():
            ruling = rul.card_count(m.profile, hand, i, showdown=True)
            if ruling.action is not rul.Action.CONTINUE or ruling.floor:
                seat = hand.seats[i].seat
                m.alert(ruling.code, f"{ruling.instruction} ({', '.join(ruling.clauses)})",
                        latched=ruling.floor, seat=seat)
                ruling.apply(hand)
