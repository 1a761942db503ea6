"""The dealer's instruction for the state the dealing machine is in, in the dealer's words.

Functions of the hand's progress, the shoe's state and the machine state; they change nothing. The states' instructions and the
overlays that stop the dealer are described in ``docs/state-machine.md`` (*States*, *Design rules*).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from shoe_ctl.events import FaultKind, Instruction, Signal
from shoe_ctl.machine import layout
from shoe_ctl.machine.layout import ATTENTION, BETTING, DEAL, IDLE, SHOWDOWN, UNCONTESTED
from shoe_ctl.machine.link import FAULT_TEXT, RETRY_TEXT, LinkState
from shoe_ctl.machine.views import masked_upcards
from shoe_ctl.rules.games import Game, open_pair
from shoe_ctl.rules.hand import HandState, SeatState
from shoe_ctl.rules.irregular import open_pair_fourth
from shoe_ctl.rules.stub import Step

if TYPE_CHECKING:
    from shoe_ctl.machine.progress import Progress

__all__ = ["doing", "instruction", "state_words", "step_instruction"]

_DOING = {"betting": "the betting{street} was open", "scramble": "a scramble{street} was asked for",
          "cut": "a cut{street} was asked for", "reload": "the new stub{street} was to be loaded",
          "reshuffle": "the premature cards{street} were to go back into the stub",
          "showdown": "the showdown was on", "uncontested": "the hand was already won",
          "idle": "no hand was running", "deal": "dealing{street}"}


# looked up once (a member looked up on its enum class costs a call each time)
_BETTING, _RAZZ = Signal.BETTING, Game.RAZZ

_OVERLAID = frozenset({"disconnected", "degraded"})
"""The link statuses that stop a hand (the shoe-fault and degraded overlays)."""

_SUB = {state: layout.sub_of(state) for state in layout.leaves()}
"""The innermost name of every state of the chart (:func:`~shoe_ctl.machine.layout.sub_of`)."""

_STREET_NAMES = {"third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th", "seventh": "7th"}
_SUB_WORDS = {"deal": "dealing", "betting": "betting round", "scramble": "scramble", "cut": "cut",
              "reload": "loading the new stub", "aside": "setting cards aside", "reshuffle": "reshuffle",
              "redeal": "dealing"}
_WHOLE_WORDS = {"idle": "no hand running", "attention": "stopped on an alert", "hand_showdown": "at the showdown",
                "hand_uncontested": "hand won", "hand_misdeal": "misdeal"}


def state_words(name: str) -> str:
    """A machine state name in the dealer's words: ``hand_fourth_betting`` -> ``4th street,
    betting round``; ``hand_showdown`` -> ``at the showdown``; an unknown name unchanged."""
    if name in _WHOLE_WORDS:
        return _WHOLE_WORDS[name]
    parts = name.split("_")
    if len(parts) == 3 and parts[0] == "hand" and parts[1] in _STREET_NAMES:
        return f"{_STREET_NAMES[parts[1]]} street, {_SUB_WORDS.get(parts[2], parts[2])}"
    return name


def doing(p: Progress, state: str) -> str:
    """What the table is doing, in the dealer's words (for alert texts)."""
    street = f" on {p.street} street" if p.street else ""
    words = _DOING.get(layout.sub_of(state))
    return words.format(street=street) if words is not None else state.replace("_", " ")


def instruction(p: Progress, link: LinkState, state: str) -> Instruction:
    """What the dealer must do now (overlays first: shoe fault, a latched alert, a fault).
    Inside a hand every instruction carries the number of the next card to leave the shoe."""
    hand = p.hand
    # the overlays' conditions, asked at once first: inside a hand none holds at nearly every event
    overlaid = hand is not None and (link.status in _OVERLAID or link.fault is not None or link.gap is not None
                                     or link.wait or p.alerts != [] or link.unread is not None)
    if not overlaid and state in DEAL:  # a card step of a street's deal: most events, worded at once
        plan = p.plan
        if hand is not None and plan is not None and p.step_i < len(plan.steps):
            ins = step_instruction(hand, plan.steps[p.step_i], p.street, hand.pulled + 1)
            if ins is not None:
                return ins
    ins = _instruction(p, link, state, overlaid)
    if ins.card_no is None and hand is not None and state != IDLE and state != ATTENTION:
        ins = Instruction(ins.signal, ins.text, ins.seat, ins.face, ins.street, ins.cards, hand.pulled + 1, ins.ref)
    return ins


def _instruction(p: Progress, link: LinkState, state: str, overlaid: bool) -> Instruction:
    """:func:`instruction` before its card number; ``overlaid``: a hand runs and one of the
    overlays' conditions holds."""
    street = p.street
    if state == ATTENTION:
        return Instruction(Signal.STOP, "Stop: internal fault — read the alert and acknowledge it")
    if overlaid and state != IDLE:
        if link.status == "disconnected":
            return Instruction(Signal.SHOE_FAULT, "Shoe disconnected: stop pulling cards", street=street)
        if link.status == "degraded":
            return Instruction(Signal.DEGRADED, "Shoe not heard (link degraded): pull no card until the "
                               "signal comes back", street=street)
        if link.fault is not None:
            what = (RETRY_TEXT if link.retry is not None
                    else FAULT_TEXT.get(FaultKind(link.fault), "pull no card until it clears"))
            return Instruction(Signal.SHOE_FAULT, f"Shoe fault: {link.fault}: {what}", street=street)
        if link.gap is not None:
            places = p.gap_places(state in DEAL)
            return Instruction(Signal.STOP, f"Sequence gap: cards may have left unread (card #{link.gap['card_no']} "
                               "was next). Count the cards on the felt and report the cards found, or the "
                               "floor declares them burned or the hand dead", street=street, cards=places,
                               card_no=link.gap["card_no"])
        open_stops = [a for a in p.alerts if a["latched"]]
        if open_stops and any(a["code"] == "card-placement" for a in open_stops):
            # irregular_place.CODE: the placement answers it and the cards it names (a card not
            # expected among them): the one action asked for
            return Instruction(Signal.STOP, "Stop: card-placement — count every seat that looks wrong, then "
                               "place each card of the street (Place cards…)", street=street)
        if open_stops:
            return Instruction(Signal.STOP, f"Stop: {open_stops[0]['code']} — check and acknowledge", street=street)
        if link.unread is not None:
            # an unreadable card from a shoe that names foreign cards: no "go on" before the
            # shoe's next word on it, which may be its FOREIGN (foreign.unreadable)
            return Instruction(Signal.SHOE_FAULT, "Card unreadable: the shoe is checking it; pull no card yet",
                               street=street)
        if link.wait:
            # One round trip to the shoe; the signal stays idle, so the LEDs do not change.
            return Instruction(Signal.IDLE, f"Hand {p.hand_no}: waiting for the shoe to confirm its "
                               "card counter reset; pull no card yet", street=street)
    if state == IDLE:
        stray = next((a for a in p.alerts if a["id"] in p.idle_strays), None)
        if stray is not None:  # a card pulled with no hand running: stop until acknowledged
            return Instruction(Signal.STOP, f"Stop: {stray['code']} — check and acknowledge")
        latched = next((a for a in p.alerts if a["latched"]), None)
        if latched is not None:  # no new hand under a STOP (docs/service.md, *The signals*)
            return Instruction(Signal.STOP, f"Stop: {latched['code']} — check and acknowledge before the "
                               "next hand")
        if link.required and link.status == "degraded":
            return Instruction(Signal.DEGRADED, "Shoe not heard (link degraded): no new hand until it is "
                               "back")
        if link.required and link.status == "disconnected":
            return Instruction(Signal.SHOE_FAULT, "Shoe not connected — check the cable; no new hand "
                               "until it is back")
        if link.required and link.status == "unknown":
            # the link's first word is a few milliseconds away (or, with nothing on the
            # port, "disconnected" after its silence limit): LEDs off, nothing to deal yet
            return Instruction(Signal.IDLE, "Connecting to the shoe… no new hand until it answers")
        if p.misdeal is not None and p.hand is not None:
            return Instruction(Signal.IDLE, f"Misdeal ({p.misdeal}): collect every card; new hand")
        return Instruction(Signal.IDLE, "Waiting for a new hand")
    sub = _SUB.get(state) or layout.sub_of(state)
    hand = p.hand
    assert hand is not None
    nxt = hand.pulled + 1
    plan = p.plan
    if sub == "deal" and plan is not None and p.step_i < len(plan.steps):  # the common case first
        ins = step_instruction(hand, plan.steps[p.step_i], street, nxt)
        if ins is not None:
            return ins
    if sub == "reshuffle":
        st = (p.premature or {}).get("street")
        return Instruction(Signal.SCRAMBLE, f"Put the premature {st} cards back into the stub, reshuffle it "
                           "face down and load it into the shoe; no burn when the street is dealt (RP-5-D)",
                           street=street, cards=("stub", f"premature {st}"), card_no=nxt)
    if sub == "aside":
        k = p.aside_total - p.aside_left + 1
        return Instruction(Signal.BURN, f"Take one card aside face down (house 16.16): {k} of "
                           f"{p.aside_total}", street=street, cards=("set-aside",), card_no=nxt)
    if sub == "reload" and plan is not None and p.step_i < len(plan.steps):
        ins = step_instruction(hand, plan.steps[p.step_i], street, nxt)
        if ins is not None:
            return replace(ins, text=f"Load the new stub into the shoe, then: {ins.text[0].lower()}{ins.text[1:]}")
    if sub == "scramble" and plan is not None:
        step = plan.steps[p.step_i]
        return Instruction(Signal.SCRAMBLE, f"Scramble: {', '.join(step.gather)} into a new stub "
                           f"({plan.clause})", street=street, cards=tuple(step.gather), card_no=nxt)
    if sub == "cut":
        return Instruction(Signal.CUT, "Cut the new stub", street=street, card_no=nxt)
    if sub == "betting":
        return _betting(p, hand, street, state)
    if state == SHOWDOWN:
        if p.profile.exposed_seventh.value == "rp-10-b" and any(s.all_in for s in hand.seats if s.in_hand):
            risk = [s.seat for s in hand.seats if s.in_hand and not s.all_in]
            who = f"seat{'s' if len(risk) > 1 else ''} {', '.join(map(str, risk))} first — " if risk else ""
            return Instruction(Signal.SHOWDOWN, f"Showdown (all-in): {who}the players not at risk expose "
                               "first (RP-10-B)")
        return Instruction(Signal.SHOWDOWN, "Showdown")
    if state == UNCONTESTED:
        winner = next((s.seat for s in hand.seats if s.in_hand), None)
        return Instruction(Signal.SHOWDOWN, f"Seat {winner} wins without showdown", seat=winner)
    return Instruction(Signal.STOP, f"Stop: nothing to do in state {state}")


def _betting(p: Progress, hand: HandState, street: str | None, state: str) -> Instruction:
    nxt = hand.pulled + 1  # in a betting state a hand runs: the card number, set here at once
    if p.confirming:
        return Instruction(_BETTING, f"{street} street dealt, no betting (fewer than two players can "
                           f"bet): check every seat has its {street} card, then confirm the street complete",
                           street=street, card_no=nxt)
    seats = hand.seats
    first = seats[p.first_idx].seat if p.first_idx is not None else None  # p.seat_of, written out
    unknown = first is None and p.first_unknown(state in BETTING)
    bi: int | None = None
    out = False
    if street == "3rd" and p.bring_in_idx is not None:
        ruled = seats[p.bring_in_idx]
        bi, out = ruled.seat, ruled.killed or ruled.dead  # ruled out, not a fold
    # as analyze: no open-pair rule in razz. An upcard masked (hole-card embargo) counts as
    # unknown: masking only takes pairs away, so the masked upcards are asked for only when a
    # pair shows among the cards themselves
    pair = street == "4th" and p.game is not _RAZZ and _pair_showing(seats)
    if pair:
        masked = masked_upcards(hand, p.where)
        pair = any(s.in_hand and open_pair([None if c in masked else c for c in s.up[:2]]) for s in seats)
    ruling = open_pair_fourth(p.profile, hand) if pair else None  # RP-10-F / house 16.8, in the hand's game
    quiet: tuple[int, ...] = ()  # the seats in the hand that may not bet (a loop: most rounds have none)
    for s in seats:
        if s.no_bet and not (s.folded or s.killed or s.dead):  # and s.in_hand
            quiet += (s.seat,)
    key = (street, nxt, first, unknown, bi, out, quiet, None if ruling is None else ruling.instruction,
           None if ruling is None else ruling.clauses[0])
    ins = _BETTING_INSTRUCTIONS.get(key)
    if ins is None:
        if first is not None:
            who = f"seat {first} acts first"
        elif unknown:
            who = "first to act unknown (the community card was not read, house 16.20): floor decides"
        else:
            who = "first to act unknown: dealer decides"
        if bi is not None:
            who = f"bring-in seat {bi}{' (out of the hand)' if out else ''}; " + who
        if ruling is not None:
            who += (f"; {ruling.instruction[0].lower()}{ruling.instruction[1:]} "
                    f"({ruling.clauses[0].replace('house-', 'house ')})")
        if quiet:
            who += f"; seat {', '.join(map(str, quiet))} may not bet or raise (house 16.17)"
        ins = Instruction(_BETTING, f"Betting on {street}: {who}", seat=first, street=street, card_no=nxt)
        if len(_BETTING_INSTRUCTIONS) < _STEP_INSTRUCTIONS_MAX:
            _BETTING_INSTRUCTIONS[key] = ins
    return ins


def _pair_showing(seats: list[SeatState]) -> bool:
    """A seat in the hand shows a pair in its first two upcards (the rules core's
    :func:`~shoe_ctl.rules.games.open_pair` of them, written out on the card codes: a card's rank
    is a property, a call, and this is asked at every event of a 4th street betting round)."""
    for s in seats:
        if not (s.folded or s.killed or s.dead):
            up = s.up
            if len(up) >= 2 and up[0] is not None and up[1] is not None and up[0].code // 4 == up[1].code // 4:
                return True
    return False


_BETTING_INSTRUCTIONS: dict[tuple[object, ...], Instruction] = {}
"""Betting-round instructions already worded, by what their words are made of (street, card
number, first seat, first to act unknown, the bring-in seat and whether it is ruled out, the
seats that may not bet, the open-pair ruling's words): the same value handed out again at every
event of the round (a fold, an all-in), found without wording it again, and unchanged to the
machine without comparing it field by field; at most :data:`_STEP_INSTRUCTIONS_MAX` kept."""


_STEP_INSTRUCTIONS: dict[tuple[str, str | None, int | None, str | None, int], Instruction] = {}
_STEP_INSTRUCTIONS_MAX = 4096
"""Card-step instructions already worded, by (kind, face, seat, street, card number): the same
value is handed out again (an instruction is immutable; a hand words some thirty of them and
a table repeats them hand after hand: burns, deals to eight seats on five streets, by card number,
a few thousand in all)."""


def step_instruction(hand: HandState, step: Step, street: str | None, nxt: int) -> Instruction | None:
    """The instruction for one card step of a street's plan (``None`` for a step that is not a
    card: a scramble or a cut)."""
    kind = step.kind
    seat = hand.seats[step.seat_index].seat if kind == "deal" and step.seat_index is not None else None
    key = (kind, step.face, seat, street, nxt)
    ins = _STEP_INSTRUCTIONS.get(key)
    if ins is not None:
        return ins
    if kind == "burn":
        ins = Instruction(Signal.BURN, f"Burn one card ({street})", street=street, card_no=nxt)
    elif kind == "community":
        ins = Instruction(Signal.COMMUNITY, f"Community card face up to the centre ({street})",
                          face="up", street=street, card_no=nxt)
    elif kind == "deal" and seat is not None:
        ins = Instruction(Signal.DEAL, f"Deal {step.face} to seat {seat} ({street})", seat=seat,
                          face=step.face, street=street, card_no=nxt)
    else:
        return None
    if len(_STEP_INSTRUCTIONS) < _STEP_INSTRUCTIONS_MAX:
        _STEP_INSTRUCTIONS[key] = ins
    return ins
