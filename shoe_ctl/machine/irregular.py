"""The irregularities of the rule texts as the dealing machine meets them: the rulings on the
dealer's reports (``exposed-card``, ``card-off-table``, ``absent-player``, ``premature-done``,
``burn-error``, ``wrong-bring-in``, ``card-count``, ``misdeal``), premature cards read during a
betting round and the cards taken aside under house 16.16.

Each handler takes the hand's progress (:class:`~shoe_ctl.machine.progress.Progress`, whose
irregularity fields hold what the irregularities of the hand left behind) and an
:class:`~shoe_ctl.machine.outcome.Outcome`; it asks the rules core
(:mod:`shoe_ctl.rules.irregular`) for the ruling, applies it to the record and says what the
machine does then. The behaviour is described in ``docs/irregularities.md``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.machine import layout
from shoe_ctl.machine.layout import BETTING, IN_HAND, OVER
from shoe_ctl.machine.outcome import Outcome
from shoe_ctl.machine.progress import Progress
from shoe_ctl.machine.reads import Read
from shoe_ctl.rules import irregular as rul
from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.hand import STREETS, HandError, HandState, SeatState
from shoe_ctl.rules.stub import Step, StubError, plan_street

__all__ = ["absent_at_deal_end", "aside_card", "count_at_showdown", "drop_out_of_hand", "start_aside"]


def _take_from_set_aside(hand: HandState, card: Card | None) -> None:
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


def seat_index(p: Progress, out: Outcome, ev: DealerInput) -> int | None:
    """The seat index ``ev`` names; ``None`` (and ``input-invalid``) when it names none."""
    if ev.seat is None:
        out.alert("input-invalid", f"'{ev.action.value}' needs a seat")
        return None
    try:
        return p.index(ev.seat)
    except ValueError as exc:
        out.alert("input-invalid", f"'{ev.action.value}': {exc}", seat=ev.seat)
        return None


# ================================================================== applying a ruling

def rule(p: Progress, out: Outcome, ruling: rul.Ruling, *, seat: int | None, street: str | None,
         moves: tuple[str, ...] = ()) -> None:
    """Alert with the ruling's clause and instruction, apply it, re-plan what is left."""
    hand = p.hand
    assert hand is not None
    try:
        ruling.apply(hand.copy())  # a ruling the record cannot take changes nothing
    except HandError as exc:
        out.alert("input-invalid", f"{ruling.code}: the ruling cannot be applied to the hand: {exc}; "
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
    out.alert(ruling.code, f"{ruling.instruction}{extra} ({clauses})", latched=ruling.floor, seat=seat,
            street=street, moves=moves)
    ruling.apply(hand)
    if ruling.action is rul.Action.MISDEAL:
        end_in_misdeal(p, out, ruling.code, ruling.instruction)
        return
    p.forecast_dirty = True
    out.replan()


def drop_out_of_hand(p: Progress) -> None:
    """While a short stub's new stub is made (the street's plan past its decision): keep the
    plan's order, drop what is left of it for seats no longer in the hand (killed, dead)."""
    assert p.plan is not None and p.hand is not None
    seats = p.hand.seats
    left = tuple(s for s in p.plan.steps[p.step_i:]
                 if not (s.kind == "deal" and s.seat_index is not None and not seats[s.seat_index].in_hand))
    p.plan = dataclasses.replace(p.plan, steps=p.plan.steps[:p.step_i] + left)


def stub_mixed(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``stub-mixed`` (``piles``, ``cards``): the stub was mixed with the muck, the burns or the
    set-aside cards (TDA RP-4: a disordered stub; the floor decides how play goes on). Those
    cards may come out of the stub from now on: they join the identities the stub may hold
    (no ``card-not-in-stub``, no ``duplicate-card`` when one is read again), and the stub
    count grows by the cards that went into it. Journaled like every input."""
    hand = p.hand
    if hand is None or out.state not in IN_HAND or out.state in OVER:
        out.refuse(ev, "a mixed stub is declared while the hand is dealt or bet")
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
        # a card declared mixed before is in the stub's count already (a report repeated)
        cards = [c for c in cards if c is None or c not in p.mixed]
        if not cards:
            out.refuse(ev, f"the {' and the '.join(piles)} was declared mixed into the stub already: its cards are "
                       "in the stub's count")
            return
        n = ev.args.get("cards", len(cards))
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= len(cards):
            raise ValueError(f"cards {n!r}: 0..{len(cards)} (the cards of the piles named)")
    except ValueError as exc:
        out.alert("input-invalid", f"'stub-mixed': {exc}")
        return
    known = frozenset(c for c in cards if c is not None)
    for c in known:
        if c in p.where:
            del p.where[c]  # a read of it from now on is no duplicate
    if hand.new_stub is not None:
        hand.new_stub = hand.new_stub | known
    hand.returned += n
    p.mixed |= known
    p.forecast_dirty = True
    out.alert("RP-4", f"The stub was mixed with the {' and the '.join(piles)} ({n} card{'' if n == 1 else 's'} "
            "into the stub): those cards may come out of the stub from now on; call the floor (RP-4)",
            latched=True, street=p.street)


def declared_misdeal(p: Progress, out: Outcome, _ev: DealerInput) -> None:
    """``misdeal``: the dealer declares one."""
    end_in_misdeal(p, out, "misdeal", "the dealer declared a misdeal: collect every card; the hand is "
                        "dealt again with a new shuffle")


def end_in_misdeal(p: Progress, out: Outcome, code: str, why: str) -> None:
    """End the hand in a misdeal (``code``: the input, or the ruling's clause)."""
    if p.hand is None or out.state not in IN_HAND:
        out.alert("input-wrong-time", "'misdeal' refused: no hand is running; nothing changed")
        return
    p.misdeal = code
    if code == "misdeal":
        out.alert("misdeal", f"misdeal in hand: {why}", street=p.street)
    out.trigger("misdeal")


# ================================================================== exposed cards, RP-10-A/B, 16.1-16.2, 16.13, 16.21-16.24

def exposed(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``exposed-card``, ``last-card-exposed``, ``card-off-table``: rule on the card."""
    off_table = ev.action is DealerAction.CARD_OFF_TABLE
    hand = p.hand
    assert hand is not None
    street = str(ev.args.get("street") or p.street or "")
    if ev.action is DealerAction.LAST_CARD_EXPOSED:
        street = "7th"
    if out.state not in IN_HAND or p.street is None or street != p.street:
        out.refuse(ev, "an exposed card is reported on the street in progress, naming the seat")
        return
    i = seat_index(p, out, ev)
    if i is None:
        return
    s = hand.seats[i]
    if not s.in_hand:
        out.refuse(ev, f"seat {ev.seat} is not in the hand ({s.status})")
        return
    try:
        if street == "7th":
            if hand.community_street == "7th":
                # RP-10-B / house 16.21-16.24 rule on the seat's own 7th-street card; with a
                # community card (RP-10-H, house 16.20) no seat was dealt one
                out.refuse(ev, f"the 7th-street card is the community card: no 7th-street card was dealt to seat "
                           f"{ev.seat} to replace; a hole card flashed stays in play")
                return
            if hand.needs_card(i, "7th") or not s.down:
                out.refuse(ev, f"seat {ev.seat} has not had its 7th-street card")
                return
            if not _seventh_face_down(p, s):  # reported already, or dealt up (house 16.24): the rest are hole cards
                out.refuse(ev, f"seat {ev.seat}'s 7th-street card is face up already; its downcards are hole cards")
                return
            remains = p.two_can_act() and out.state != layout.SHOWDOWN
            if off_table:
                ruling = rul.card_off_table(p.profile, hand, i, street, action_remains=remains)
            else:
                ruling = rul.exposed_seventh(p.profile, hand, i, action_remains=remains)
        elif street == "3rd":
            if s.card_count == 0:
                out.refuse(ev, f"seat {ev.seat} has no card yet")
                return
            both = bool(ev.args.get("both", False))
            which = ev.args.get("which")
            face = ev.args.get("face")
            # a hole card off the table is an exposed one (house 16.13); no face: the rules' default
            hole = not off_table or (face == "down" if face is not None else not (s.up and not s.exposed_hole))
            if not off_table and both and len(s.down) + s.exposed_hole < 2:
                out.refuse(ev, f"seat {ev.seat} has not had both hole cards")
                return
            if hole and not both and not s.down:  # its one exposed hole card is its upcard already: a report again
                out.refuse(ev, f"seat {ev.seat} holds no hole card now: the exposed card is its upcard already")
                return
            if off_table:
                ruling = rul.card_off_table(p.profile, hand, i, street, face=None if face is None else str(face))
            else:
                ruling = rul.exposed_downcard(p.profile, hand, i, both=both,
                                              which=None if which is None else int(which))
        elif off_table:
            ruling = rul.card_off_table(p.profile, hand, i, street)
        else:
            out.refuse(ev, f"{street} cards are dealt face up: an exposed card changes nothing")
            return
    except (HandError, ValueError, TypeError) as exc:
        out.alert("input-invalid", f"'{ev.action.value}' seat {ev.seat}: {exc}", seat=ev.seat)
        return
    moves: tuple[str, ...] = ()
    if ruling.action is rul.Action.REPLACE:
        moves = (f"seat {s.seat} up -> out",)
    elif ruling.action is rul.Action.DEAD_HAND and ruling.code == "house-16.2":
        # Both hole cards lie face up: record them as upcards (public), then the hand is dead
        # (reported one at a time, the first is already the seat's first upcard).
        k = 1 if s.exposed_hole and s.up else 0
        s.up[k:k] = s.down
        s.down.clear()
    rule(p, out, ruling, seat=ev.seat, street=street, moves=moves)


def _seventh_face_down(p: Progress, s: SeatState) -> bool:
    """Whether seat ``s``'s 7th-street card still lies face down among its downcards: the last
    card the seat was dealt on 7th (its replacement after RP-10-B) was read as a downcard and is
    still one. False once a ruling turned it up, or when it was dealt face up; True when the reads
    say nothing of it (a ruling then takes the seat's last downcard, as before)."""
    dealt = [r for r in p.reads if r.street == "7th" and r.seat == s.seat and r.role in ("up", "down")]
    if not dealt:
        return True
    last = dealt[-1]
    return last.role == "down" and (last.card is None or last.card in s.down)


# ================================================================== absent players, RP-10-C / Rule 30, 16.9-16.11

def absent_player(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``absent-player`` while the hand is dealt or bet: rule now, or (on the initial deal
    before the action reached the seat) when the initial deal is complete."""
    hand = p.hand
    assert hand is not None
    i = seat_index(p, out, ev)
    if i is None:
        return
    if not hand.seats[i].in_hand:
        out.refuse(ev, f"seat {ev.seat} is not in the hand ({hand.seats[i].status})")
        return
    reached = bool(ev.args.get("action_reached", out.state in BETTING))
    if p.street == "3rd" and out.state in layout.DEAL and not reached:
        # Rule 30 / house 16.10, 16.11 judge the seat when the initial deal is complete.
        p.absent.add(i)
        out.alert("absent-player", f"seat {ev.seat}: player absent; go on dealing to the seat; the ruling "
                "comes when the initial deal is complete", seat=ev.seat)
        return
    absent_ruling(p, out, i, reached)


def absent_ruling(p: Progress, out: Outcome, i: int, reached: bool) -> None:
    """Rule on the absent player at seat index ``i`` (RP-10-C / Rule 30, house 16.9-16.11)."""
    hand = p.hand
    assert hand is not None
    ruling = rul.absent_player(p.profile, hand, i, action_reached=reached, bring_in=i == p.bring_in_idx)
    if ruling.action is rul.Action.DEAL_TO_EMPTY_SEAT:
        p.absent.add(i)
    else:
        p.absent.discard(i)
    rule(p, out, ruling, seat=hand.seats[i].seat, street=p.street)
    out.then(lambda q, state: pass_the_action(q, state, i))


def pass_the_action(p: Progress, state: str, i: int) -> None:
    """In a betting round, the seat to act first (seat index ``i``) was taken out of the hand
    by a ruling (an absent player killed when the action reached the seat, house 16.9, or a
    TDA absence first reported in the betting, RP-10-C): the action moves to the next seat
    clockwise that can still act; the hand's summary keeps that seat as first to act. A
    bring-in seat killed so keeps its bring-in (posted, Rule 30; lost, house 16.9)."""
    hand = p.hand
    if hand is None or p.first_idx != i or state not in BETTING or hand.seats[i].in_hand:
        return
    can = hand.can_act()
    n = len(can)
    nxt = next((k % n for k in range(i + 1, i + n) if can[k % n]), None)
    p.first_idx = nxt
    if p.street is not None:
        p.first_by_street[p.street] = nxt


def absent_at_deal_end(p: Progress, out: Outcome) -> None:
    """The initial deal is complete: judge the seats reported absent during it."""
    hand = p.hand
    assert hand is not None
    for i in sorted(p.absent):
        if hand.seats[i].in_hand:
            ruling = rul.absent_player(p.profile, hand, i, action_reached=False,
                                       bring_in=i == p.bring_in_idx)
            seat = hand.seats[i].seat
            clauses = ", ".join(ruling.clauses)
            out.alert(ruling.code, f"{ruling.instruction} ({clauses})", seat=seat, street="3rd")
            ruling.apply(hand)
            if ruling.action is not rul.Action.DEAL_TO_EMPTY_SEAT:
                p.absent.discard(i)
    p.forecast_dirty = True


# ================================================================== premature cards, RP-5-D, 16.16, 16.17

def premature_done(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """The cards read during this betting round (each stopped the dealer as not expected) were
    premature cards of the next street: assign them where the next street's plan puts them
    (its burn, then one per player in order) and rule (RP-5-D / house 16.16, 16.17)."""
    hand = p.hand
    strays = [r for r in p.betting_strays if r.role == "stray"]
    if not strays:
        out.refuse(ev)  # no card was read during the betting round
        return
    assert hand is not None and p.street is not None
    if p.confirming and p.street != "7th":
        next_street_begun(p, out, strays)
        return
    try:
        merged = [p.index(int(s)) for s in ev.args.get("merged", ())]
    except (ValueError, TypeError) as exc:
        out.alert("input-invalid", f"'premature-done' merged: {exc}")
        return
    street = STREETS[STREETS.index(p.street) + 1]
    try:
        plan = plan_street(p.profile, hand, street)
    except StubError as exc:
        out.alert("input-invalid", f"'premature-done': {exc}")
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
    hand.street = p.street  # the street in progress is still the betting one
    p.betting_strays = [r for r in strays if r not in reads]
    p.alerts = [a for a in p.alerts if a["code"] != "card-not-expected"]
    ruling = rul.premature_cards(p.profile, hand, street, cards, burned=burned, merged=merged)
    moves: list[str] = []
    returned = ruling.action is rul.Action.RESHUFFLE
    for r in reads:
        if r.role == "burn":
            if not returned:
                moves.append(f"burn {street} -> set-aside")
                r.role = "aside"
            continue
        idx = p.index(r.seat) if r.seat is not None else None
        if idx is not None and idx in merged and street == "7th" and r.role == "down":
            continue  # house 16.17 / RP-5-D (interpretation): the merged card stands, counted once
        if returned:
            r.role = "stub"
            if r.card is not None and p.where.get(r.card) is r:
                del p.where[r.card]
        else:
            moves.append(f"seat {r.seat} {r.role} -> set-aside")
            r.role = "aside"
    out.alert(ruling.code, f"{ruling.instruction} ({', '.join(ruling.clauses)})", latched=ruling.floor,
            street=street, moves=tuple(moves))
    ruling.apply(hand)
    hand.street = p.street
    p.forecast_dirty = True
    if returned and any(e.op == "return" for e in ruling.effects):
        p.premature = {"street": street}
        out.trigger("premature_done")
    else:
        p.aside_due = p.aside_due or ruling.aside_per_active


def next_street_begun(p: Progress, out: Outcome, strays: list[Read]) -> None:
    """``premature-done`` while a street with no betting waits for its confirmation: the
    cards read since were the next street's first cards (its burn, then the players in
    order), dealt early but with no betting to protect: no irregularity. They are booked
    where the next street's plan puts them; the street counts as confirmed."""
    hand = p.hand
    assert hand is not None and p.street is not None
    street = STREETS[STREETS.index(p.street) + 1]
    plan = plan_street(p.profile, hand, street)
    steps = [st for st in plan.steps if st.kind in ("burn", "deal")][: len(strays)]
    for read, step in zip(strays, steps, strict=False):
        _book_stray(hand, read, step, street)
    hand.street = p.street
    seqs = tuple(f"read {r.seq}:" for r in strays)
    p.alerts = [a for a in p.alerts if not (a["code"] == "card-not-expected" and a["message"].startswith(seqs))]
    p.betting_strays = [r for r in p.betting_strays if r not in strays]
    out.alert("street-confirmed", f"{p.street} street confirmed complete; the card(s) read before the "
            f"confirmation are {street} street's, where its plan puts them (no betting was due)", street=street)
    out.trigger("betting_complete")


def extra_card(p: Progress, out: Outcome, i: int) -> bool:
    """``card-count`` found seat index ``i`` one card over what the record gives it while a
    card read in this betting round (or before a street was confirmed) is held aside: that
    card is the seat's, a card too many (house 16.25 counts it). True when so booked."""
    hand = p.hand
    assert hand is not None
    read = next((r for r in p.betting_strays if r.role == "stray"), None)
    if read is None:
        return False
    _take_from_set_aside(hand, read.card)
    s = hand.seats[i]
    s.extra.append(read.card)
    read.role, read.seat = "extra", s.seat
    p.betting_strays.remove(read)
    p.alerts = [a for a in p.alerts if not (a["code"] == "card-not-expected"
                                            and a["message"].startswith(f"read {read.seq}:"))
                and a["code"] != "card-in-doubt"]
    out.alert("extra-card", f"seat {s.seat}: read {read.seq} is a card too many to the seat (the dealer's count); "
            "it stays with the seat and counts in the hand (house 16.25: eight or more cards is a dead hand)",
            seat=s.seat)
    return True


def reads_after(p: Progress, out: Outcome, i: int) -> list[Read]:
    """The reads of the street in progress booked to a seat after seat index ``i``'s card."""
    hand = p.hand
    assert hand is not None
    seat = hand.seats[i].seat
    on_street = [r for r in p.reads if r.street == p.street and r.role in ("up", "down") and r.seat is not None]
    k = next((n for n in range(len(on_street) - 1, -1, -1) if on_street[n].seat == seat), None)
    return on_street[k + 1:] if k is not None else on_street


def stray_in_betting(p: Progress, out: Outcome, read: Read) -> bool:
    """A card read in a betting round while none is expected is held aside for the round
    (``p.betting_strays``). When a dealer's count did not add up before it (the count came while
    this card was still on its way), the street is tried again from the counts
    (:func:`rederive`); True when that booked the street (the count's stop is lifted, nothing more
    to ask). docs/irregularities.md, *A count that disagrees with the record*."""
    p.betting_strays.append(read)
    return bool(p.counted) and rederive(p, out)


def in_doubt(p: Progress, out: Outcome, i: int) -> bool:
    """``card-count`` found seat index ``i`` one card short of the record in a betting round
    (or a street's confirmation): the card the record booked to it on this street is not there.
    That read is taken off the seat — given to the seat counted one over before
    (``card-count-over``, as a card too many: house 16.25 counts it), else held aside, booked to
    no seat, until another seat's count claims it — and seat ``i`` is owed its card again (the
    street is re-planned). True when so done."""
    hand = p.hand
    assert hand is not None
    s = hand.seats[i]
    read = next((r for r in reversed(p.reads) if r.street == p.street and r.seat == s.seat
                 and r.role in ("up", "down")), None)
    pile = None if read is None else (s.up if read.role == "up" else s.down)
    if read is None or pile is None or not pile or pile[-1] != read.card:
        return False
    pile.pop()
    over = p.over
    p.over = None
    p.alerts = [a for a in p.alerts if a["code"] != "card-count-over"]
    if over is not None and over != i:
        hand.seats[over].extra.append(read.card)
        read.role, read.seat = "extra", hand.seats[over].seat
        out.alert("extra-card", f"seat {s.seat}: read {read.seq}, booked to the seat, went to seat "
                f"{hand.seats[over].seat}: a card too many there (house 16.25 counts it); seat {s.seat} is owed "
                f"its {p.street} card", seat=s.seat)
        ruling = rul.card_count(p.profile, hand, over, showdown=False)
        if ruling.action is not rul.Action.CONTINUE or ruling.floor:
            rule(p, out, ruling, seat=hand.seats[over].seat, street=p.street)
    else:
        hand.set_aside.append(read.card)  # out of the stub, on no seat (the pull is counted)
        read.role, read.seat = "stray", None
        p.betting_strays.append(read)
        out.alert("card-in-doubt", f"seat {s.seat}: the dealer counts one card fewer than the record: read "
                f"{read.seq}, booked to the seat, is in doubt, held aside and booked to no seat; if another "
                f"seat got it, count that seat (card-count); seat {s.seat} is owed its {p.street} card",
                seat=s.seat, latched=True)
    p.forecast_dirty = True
    out.replan()
    return True


def reshuffle_done(p: Progress, out: Outcome, _ev: DealerInput | None = None) -> None:
    """SCRAMBLE_DONE in ``reshuffle``: the premature cards are back in the stub, reshuffled and
    reloaded (RP-5-D); the shoe's counter restarts."""
    p.premature = None
    out.do("counter", False)  # the reshuffled stub is loaded first: no race
    out.trigger("reshuffle_done")


def aside_card(p: Progress, read: Read) -> None:
    """house 16.16: ``read`` is one of the cards taken aside after the betting round (its
    identity checked by the caller); ``p.aside_left`` is 0 once the last is aside."""
    hand = p.hand
    assert hand is not None
    card = read.card
    p.reads.append(read)
    if card is not None and card not in p.where:
        p.where[card] = read
    hand.put_aside(card)
    p.aside_left -= 1


def start_aside(p: Progress) -> bool:
    """At a street's start: take the house 16.16 cards aside first (True when it does: the
    caller moves to ``aside``)."""
    if not p.aside_due:
        return False
    p.aside_due = False
    hand = p.hand
    assert hand is not None
    n = rul.aside_after_betting(hand)
    if n <= 0:
        return False
    p.aside_left = p.aside_total = n
    p.plan = None
    return True


# ================================================================== 16.15 burns, 16.6 bring-in, 16.25/16.26 counts

def burn_error(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``burn-error`` (``burns`` 0 or 2, ``stands``) on 4th to 7th street, house 16.15."""
    hand = p.hand
    assert hand is not None
    street = p.street
    if street is None or p.plan is None:
        out.refuse(ev)
        return
    try:
        burns = int(ev.args.get("burns", -1))
        stands = bool(ev.args.get("stands", False))
        first = p.first_deal_idx
        if first is None:
            raise ValueError("the street has no card for a player")
        late = extra_after_street(p, out, street) if burns == 2 and stands else None
        ruling = rul.burn_error(p.profile, hand, street, burns=burns, first=first, final_card_stands=stands,
                                late_card=late is not None)
    except (HandError, ValueError, TypeError) as exc:
        out.alert("input-invalid", f"'burn-error': {exc}")
        return
    if late is not None and ruling.action is rul.Action.CARD_STANDS:
        rule(p, out, ruling, seat=hand.seats[first].seat, street=street)
        _book_late_card(p, late, street)
        return
    moves: list[str] = []
    if ruling.action is rul.Action.MOVE_CARDS:
        face = "down" if street == "7th" else "up"
        done = [st for st in p.plan.steps[: p.step_i] if st.kind in ("burn", "deal")]
        deals = [st.seat_index for st in done if st.kind == "deal"]
        if burns == 2:
            extra = extra_after_street(p, out, street)
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
                p.betting_strays.remove(extra)
                p.alerts = [a for a in p.alerts if not (a["code"] == "card-not-expected"
                                                        and a["message"].startswith(f"read {extra.seq}:"))]
            elif deals:
                moves.append(f"burn {street} -> seat {hand.seats[first].seat} {face}")
        else:
            nxt = p.plan.steps[p.step_i] if p.step_i < len(p.plan.steps) else None
            held = [*deals]
            if nxt is not None and nxt.kind == "deal":
                held.append(nxt.seat_index)
            places = [f"seat {hand.seats[k].seat} {face}" for k in held if k is not None]
            if places:
                moves.append(f"{places[0]} -> burn {street}")
                moves.extend(f"{places[n + 1]} -> {places[n]}" for n in range(len(places) - 1))
    rule(p, out, ruling, seat=hand.seats[first].seat if first is not None else None, street=street,
              moves=tuple(moves))


def _book_late_card(p: Progress, read: Read, street: str) -> None:
    """Two burns found after the street, the cards standing: the card read after the street's
    last (held aside) is the card of the player the ruling left owed one (house 16.15)."""
    hand = p.hand
    assert hand is not None
    owed = next((k for k in hand.in_hand() if hand.needs_card(k, street)), None)
    if owed is None:
        return
    face = "down" if street == "7th" else "up"
    _take_from_set_aside(hand, read.card)
    seat = hand.seats[owed]
    getattr(seat, face).append(read.card)
    read.role, read.seat = face, seat.seat
    if read in p.betting_strays:
        p.betting_strays.remove(read)
    p.drop_alerts("card-not-expected", prefix=f"read {read.seq}:")


def extra_after_street(p: Progress, out: Outcome, street: str) -> Read | None:
    """The first card read in the betting round of ``street`` (held aside as not expected),
    when the street's cards are all out: the card a dealer who burned two and dealt every seat
    in order gave the last seat (house 16.15 reported after the street)."""
    if p.street != street or out.state not in BETTING:
        return None
    return next((r for r in p.betting_strays if r.role == "stray" and r.street == street), None)


def wrong_bring_in(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``wrong-bring-in`` (``next_acted``) in the 3rd-street betting, house 16.6."""
    hand = p.hand
    assert hand is not None
    if p.first_idx is None:
        out.refuse(ev)
        return
    i = seat_index(p, out, ev)
    if i is None:
        return
    ruling = rul.wrong_bring_in(p.profile, hand, i, p.first_idx, next_acted=bool(ev.args.get("next_acted")))
    rule(p, out, ruling, seat=ev.seat, street="3rd")


def card_count(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``card-count`` (``cards``): the dealer counted the seat's cards, house 16.25, 16.26."""
    hand = p.hand
    assert hand is not None
    i = seat_index(p, out, ev)
    if i is None:
        return
    try:
        n = int(ev.args["cards"])
        if n < 0:
            raise ValueError("a negative count")
    except (KeyError, ValueError, TypeError) as exc:
        out.alert("input-invalid", f"'card-count' needs cards (an int >= 0): {exc}", seat=ev.seat)
        return
    if p.street is not None and (out.state in BETTING or out.state in layout.DEAL) and n != hand.seats[i].card_count:
        p.counted[i] = n
        if rederive(p, out):
            return
    if out.state in layout.DEAL and p.street is not None and p.street != "3rd" and i in p.counted:
        held = hand.seats[i].card_count
        out.alert("card-count-street", f"seat {ev.seat}: the dealer counts {n} cards, the record {held}: the "
                  f"{p.street} street's cards do not add up yet; count every seat dealt on {p.street} (card-count)",
                  seat=ev.seat, latched=True)
        return
    if out.state in BETTING and p.street is not None:
        held = hand.seats[i].card_count
        if n == held + 1 and not extra_card(p, out, i):
            p.over = i  # a card booked to another seat may be this seat's: wait for their count
            later = reads_after(p, out, i)
            where = ", ".join(f"read {r.seq} (seat {r.seat})" for r in later) or "none"
            out.alert("card-count-over", f"seat {ev.seat}: the dealer counts {n} cards, the record {held}: a card "
                    f"read after the seat's {p.street} card may be the seat's — {where}; count those seats "
                    "(card-count)", seat=ev.seat, latched=True)
            return
        if n == held - 1 and in_doubt(p, out, i):
            return
    shadow = hand.copy()
    s = shadow.seats[i]
    held = s.card_count
    if n > held:
        s.down.extend([None] * (n - held))
    else:
        for _ in range(held - n):
            (s.down if s.down else s.up).pop()
    ruling = rul.card_count(p.profile, shadow, i, showdown=out.state == layout.SHOWDOWN)
    if n != held:
        out.alert("card-count-mismatch", f"seat {ev.seat}: the dealer counts {n} cards, the shoe dealt the "
                f"seat {held}", seat=ev.seat, latched=False)
    if ruling.action is rul.Action.CONTINUE and not ruling.floor:
        return
    rule(p, out, ruling, seat=ev.seat, street=p.street)


def _street_pulls(p: Progress, street: str) -> list[Read]:
    """The cards pulled for the players on ``street``, in the order of the pulls: the reads booked
    to a seat on it (a card too many included) and the cards held aside since its deal."""
    strays = {id(r) for r in p.betting_strays}
    return [r for r in p.reads if r.street == street and ((r.seat is not None and r.role in ("up", "down", "extra"))
                                                          or (r.role == "stray" and id(r) in strays))]


def _deal_order(p: Progress, pulls: list[Read]) -> list[int]:
    """The seat indexes dealt on the street in progress, in the order of the deal (from the
    street's first seat round the table): the seats in the hand and those holding its cards."""
    hand = p.hand
    assert hand is not None
    n = len(hand.seats)
    first = p.first_deal_idx or 0
    booked = {r.seat for r in pulls if r.seat is not None}
    return [k % n for k in range(first, first + n)
            if hand.seats[k % n].in_hand or hand.seats[k % n].seat in booked]


def unbook(hand: HandState, read: Read) -> None:
    """Take ``read``'s card off the place the record gives it (the last copy there)."""
    if read.role == "stray":
        _take_from_set_aside(hand, read.card)
        return
    seat = next(s for s in hand.seats if s.seat == read.seat)
    pile = seat.extra if read.role == "extra" else seat.up if read.role == "up" else seat.down
    for k in range(len(pile) - 1, -1, -1):
        if pile[k] == read.card:
            del pile[k]
            return


def rederive(p: Progress, out: Outcome) -> bool:
    """docs/irregularities.md, *A count that disagrees with the record*: the cards of the street in
    progress (4th to 7th, one card a seat) are booked again from the dealer's counts
    (``p.counted``) and the order of the pulls, the dealer going round the table: each seat in
    the order of the deal takes as many of the pulls, in turn, as its count leaves for this street
    (a seat not counted: what the record gives it). Done (True) only when the counts account for
    every pull; a seat left with none is owed its card, a second card to a seat is a card too
    many (house 16.25 counts it). Nothing changes (False) while they do not add up."""
    hand, street = p.hand, p.street
    if hand is None or street is None or street == "3rd" or hand.community_street == street:
        return False
    pulls = _street_pulls(p, street)
    order = _deal_order(p, pulls)
    index = {s.seat: k for k, s in enumerate(hand.seats)}
    booked = [index.get(r.seat) if r.seat is not None and r.role != "stray" else None for r in pulls]
    want: dict[int, int] = {}
    for i in order:
        now = booked.count(i)
        want[i] = p.counted[i] - (hand.seats[i].card_count - now) if i in p.counted else now
    if any(v < 0 for v in want.values()) or sum(want.values()) != len(pulls):
        return False
    derived: list[int] = [i for i in order for _ in range(want[i])]
    p.counted = {}
    if derived == booked:
        return True
    face = "down" if street == "7th" else "up"
    moves: list[str] = []
    extras: list[tuple[int, int]] = []
    for read in pulls:
        unbook(hand, read)
    held: set[int] = set()
    for read, was, i in zip(pulls, booked, derived, strict=True):
        seat = hand.seats[i]
        role = "extra" if i in held else face
        (seat.extra if role == "extra" else getattr(seat, face)).append(read.card)
        held.add(i)
        if read in p.betting_strays:
            p.betting_strays.remove(read)
        if role == "extra":
            extras.append((read.seq, seat.seat))
        elif was != i:
            moves.append(f"read {read.seq} to seat {seat.seat}")
        read.role, read.seat = role, seat.seat
    seqs = tuple(f"read {r.seq}:" for r in pulls)
    p.alerts = [a for a in p.alerts if not ((a["code"] == "card-not-expected" and a["message"].startswith(seqs))
                                            or a["code"] in ("card-count-over", "card-in-doubt", "card-count-street"))]
    p.over = None
    owed = [hand.seats[i].seat for i in order if want[i] == 0 and hand.seats[i].in_hand]
    for seq, seat_no in extras:
        out.alert("extra-card", f"seat {seat_no}: read {seq} is a card too many to the seat (the dealer's count); "
                  "it stays with the seat and counts in the hand (house 16.25: eight or more cards is a dead hand)",
                  seat=seat_no)
    if moves or owed:
        more = f"seat {', '.join(map(str, owed))} is owed its {street} card" if owed else ""
        out.alert("street-rederived", f"{street} street booked again from the dealer's counts and the order of the "
                  f"pulls: {', '.join([*moves, more] if more else moves)}; the cards stay where they are", street=street)
    for i in sorted(held):
        if hand.seats[i].extra:
            ruling = rul.card_count(p.profile, hand, i, showdown=False)
            if ruling.action is not rul.Action.CONTINUE or ruling.floor:
                rule(p, out, ruling, seat=hand.seats[i].seat, street=street)
    if out.state in BETTING and not owed and not p.confirming:
        p.first_to_act()
    p.forecast_dirty = True
    out.replan()
    return True


def count_at_showdown(p: Progress, out: Outcome) -> None:
    """house 16.25, 16.26 on every hand still in at the showdown, from the record."""
    hand = p.hand
    assert hand is not None
    for i in hand.in_hand():
        ruling = rul.card_count(p.profile, hand, i, showdown=True)
        if ruling.action is not rul.Action.CONTINUE or ruling.floor:
            seat = hand.seats[i].seat
            out.alert(ruling.code, f"{ruling.instruction} ({', '.join(ruling.clauses)})",
                    latched=ruling.floor, seat=seat)
            ruling.apply(hand)
