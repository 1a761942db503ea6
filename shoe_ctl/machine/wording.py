"""The dealer's instruction for the state the dealing machine is in, in the dealer's words.

:class:`Wording` reads the machine and never changes it. The states' instructions and the
overlays that stop the dealer are described in ``docs/state-machine.md`` (*States*, *Design rules*).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from shoe_ctl.events import FaultKind, Instruction, Signal
from shoe_ctl.machine import layout
from shoe_ctl.machine.layout import ATTENTION, IDLE, SHOWDOWN, UNCONTESTED
from shoe_ctl.rules.games import Game, open_pair
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.irregular import open_pair_fourth
from shoe_ctl.rules.stub import Step

if TYPE_CHECKING:
    from shoe_ctl.machine.dealing import Dealing

__all__ = ["FAULT_TEXT", "Wording", "state_words"]

FAULT_TEXT: dict[FaultKind, str] = {
    FaultKind.JAM: "clear the jam without pulling a card by hand; go on when the shoe reports it cleared "
                   "(a card that comes out is read and counted)",
    FaultKind.MISREAD: "a read failed: put the card where the display says; it is counted, its identity unknown",
    FaultKind.COVER_OPEN: "close the shoe's cover; pull no card until it is closed",
    FaultKind.READER_ERROR: "the card reader failed: pull no card until it clears or the floor decides",
}
"""What the dealer does about a shoe fault, by kind."""

_DOING = {"betting": "the betting{street} was open", "scramble": "a scramble{street} was asked for",
          "cut": "a cut{street} was asked for", "reload": "the new stub{street} was to be loaded",
          "reshuffle": "the premature cards{street} were to go back into the stub",
          "showdown": "the showdown was on", "uncontested": "the hand was already won",
          "idle": "no hand was running", "deal": "dealing{street}"}


# looked up once (a member looked up on its enum class costs a call each time)
_BETTING, _RAZZ = Signal.BETTING, Game.RAZZ

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


class Wording:
    """The instruction wording of one :class:`~shoe_ctl.machine.dealing.Dealing` (reads it only)."""

    def __init__(self, machine: Dealing) -> None:
        self.m = machine

    def doing(self) -> str:
        """What the table is doing, in the dealer's words (for alert texts)."""
        m = self.m
        street = f" on {m.street} street" if m.street else ""
        words = _DOING.get(layout.sub_of(m.state))
        return words.format(street=street) if words is not None else m.state.replace("_", " ")

    def instruction(self) -> Instruction:
        """What the dealer must do now (overlays first: shoe fault, a latched alert, a fault).
        Inside a hand every instruction carries the number of the next card to leave the shoe."""
        m = self.m
        ins = self._instruction()
        if ins.card_no is None and m.hand is not None and m.state != IDLE and m.state != ATTENTION:
            ins = Instruction(ins.signal, ins.text, ins.seat, ins.face, ins.street, ins.cards, m.hand.pulled + 1, ins.ref)
        return ins

    def _instruction(self) -> Instruction:
        m = self.m
        irr = m.irregular
        state = m.state
        street = m.street
        if state == ATTENTION:
            return Instruction(Signal.STOP, "Stop: internal fault — read the alert and acknowledge it")
        if m.hand is not None and state != IDLE:
            if m.shoe_status == "disconnected":
                return Instruction(Signal.SHOE_FAULT, "Shoe disconnected: stop pulling cards", street=street)
            if m.shoe_status == "degraded":
                return Instruction(Signal.DEGRADED, "Shoe not heard (link degraded): pull no card until the "
                                   "signal comes back", street=street)
            if m.shoe_fault is not None:
                what = FAULT_TEXT.get(FaultKind(m.shoe_fault), "pull no card until it clears")
                return Instruction(Signal.SHOE_FAULT, f"Shoe fault: {m.shoe_fault}: {what}", street=street)
            if m.gap is not None:
                places = m.gap_places()
                return Instruction(Signal.STOP, f"Sequence gap: cards may have left unread (card #{m.gap['card_no']} "
                                   "was next). Count the cards on the felt and report the cards found, or the "
                                   "floor declares them burned or the hand dead", street=street, cards=places,
                                   card_no=m.gap["card_no"])
            for a in m.alerts:
                if a["latched"]:
                    return Instruction(Signal.STOP, f"Stop: {a['code']} — check and acknowledge", street=street)
            if m.counter_wait:
                # One round trip to the shoe; the signal stays idle, so the LEDs do not change.
                return Instruction(Signal.IDLE, f"Hand {m.hand_no}: waiting for the shoe to confirm its "
                                   "card counter reset; pull no card yet", street=street)
        if state == IDLE:
            stray = next((a for a in m.alerts if a["id"] in m.idle_strays), None)
            if stray is not None:  # a card pulled with no hand running: stop until acknowledged
                return Instruction(Signal.STOP, f"Stop: {stray['code']} — check and acknowledge")
            latched = next((a for a in m.alerts if a["latched"]), None)
            if latched is not None:  # no new hand under a STOP (docs/service.md, *The signals*)
                return Instruction(Signal.STOP, f"Stop: {latched['code']} — check and acknowledge before the "
                                   "next hand")
            if m.shoe_required and m.shoe_status == "degraded":
                return Instruction(Signal.DEGRADED, "Shoe not heard (link degraded): no new hand until it is "
                                   "back")
            if m.shoe_required and m.shoe_status == "disconnected":
                return Instruction(Signal.SHOE_FAULT, "Shoe not connected — check the cable; no new hand "
                                   "until it is back")
            if m.shoe_required and m.shoe_status == "unknown":
                # the link's first word is a few milliseconds away (or, with nothing on the
                # port, "disconnected" after its silence limit): LEDs off, nothing to deal yet
                return Instruction(Signal.IDLE, "Connecting to the shoe… no new hand until it answers")
            if irr.misdeal is not None and m.hand is not None:
                return Instruction(Signal.IDLE, f"Misdeal ({irr.misdeal}): collect every card; new hand")
            return Instruction(Signal.IDLE, "Waiting for a new hand")
        sub = layout.sub_of(state)
        hand = m.hand
        assert hand is not None
        nxt = hand.pulled + 1
        if sub == "reshuffle":
            p = irr.premature or {}
            st = p.get("street")
            return Instruction(Signal.SCRAMBLE, f"Put the premature {st} cards back into the stub, reshuffle it "
                               "face down and load it into the shoe; no burn when the street is dealt (RP-5-D)",
                               street=street, cards=("stub", f"premature {st}"), card_no=nxt)
        if sub == "aside":
            k = irr.aside_total - irr.aside_left + 1
            return Instruction(Signal.BURN, f"Take one card aside face down (house 16.16): {k} of "
                               f"{irr.aside_total}", street=street, cards=("set-aside",), card_no=nxt)
        plan = m.plan
        if sub == "reload" and plan is not None and m.step_i < len(plan.steps):
            ins = step_instruction(hand, plan.steps[m.step_i], street, nxt)
            if ins is not None:
                return replace(ins, text=f"Load the new stub into the shoe, then: {ins.text[0].lower()}{ins.text[1:]}")
        if sub == "deal" and plan is not None and m.step_i < len(plan.steps):
            ins = step_instruction(hand, plan.steps[m.step_i], street, nxt)
            if ins is not None:
                return ins
        if sub == "scramble" and plan is not None:
            step = plan.steps[m.step_i]
            return Instruction(Signal.SCRAMBLE, f"Scramble: {', '.join(step.gather)} into a new stub "
                               f"({plan.clause})", street=street, cards=tuple(step.gather), card_no=nxt)
        if sub == "cut":
            return Instruction(Signal.CUT, "Cut the new stub", street=street, card_no=nxt)
        if sub == "betting":
            return self._betting(hand, street)
        if state == SHOWDOWN:
            if m.profile.exposed_seventh.value == "rp-10-b" and any(s.all_in for s in hand.seats if s.in_hand):
                risk = [s.seat for s in hand.seats if s.in_hand and not s.all_in]
                who = f"seat{'s' if len(risk) > 1 else ''} {', '.join(map(str, risk))} first — " if risk else ""
                return Instruction(Signal.SHOWDOWN, f"Showdown (all-in): {who}the players not at risk expose "
                                   "first (RP-10-B)")
            return Instruction(Signal.SHOWDOWN, "Showdown")
        if state == UNCONTESTED:
            winner = next((s.seat for s in hand.seats if s.in_hand), None)
            return Instruction(Signal.SHOWDOWN, f"Seat {winner} wins without showdown", seat=winner)
        return Instruction(Signal.STOP, f"Stop: nothing to do in state {state}")

    def _betting(self, hand: HandState, street: str | None) -> Instruction:
        m = self.m
        nxt = hand.pulled + 1  # in a betting state a hand runs: the card number, set here at once
        if m.confirming:
            return Instruction(_BETTING, f"{street} street dealt, no betting (fewer than two players can "
                               f"bet): check every seat has its {street} card, then confirm the street complete",
                               street=street, card_no=nxt)
        first = m.seat_of(m.first_idx)
        who = f"seat {first} acts first" if first is not None else "first to act unknown: dealer decides"
        if first is None and m.first_unknown():
            who = "first to act unknown (the community card was not read, house 16.20): floor decides"
        if street == "3rd":
            bi = m.seat_of(m.bring_in_idx)
            ruled = hand.seats[m.bring_in_idx] if m.bring_in_idx is not None else None
            out = ruled is not None and (ruled.killed or ruled.dead)  # ruled out, not a fold
            who = (f"bring-in seat {bi}{' (out of the hand)' if out else ''}; " if bi is not None else "") + who
        fourth = street == "4th" and m.game is not _RAZZ  # as analyze: no open-pair rule in razz
        masked = m.views.masked_upcards(hand) if fourth else frozenset()
        if fourth and any(s.in_hand and open_pair([None if c in masked else c for c in s.up[:2]])
                                   for s in hand.seats):
            ruling = open_pair_fourth(m.profile, hand)  # RP-10-F / house 16.8, in the hand's game
            who += f"; {ruling.instruction[0].lower()}{ruling.instruction[1:]} ({ruling.clauses[0].replace('house-', 'house ')})"
        quiet = [s.seat for s in hand.seats if s.no_bet and s.in_hand]
        if quiet:
            who += f"; seat {', '.join(map(str, quiet))} may not bet or raise (house 16.17)"
        return Instruction(_BETTING, f"Betting on {street}: {who}", seat=first, street=street, card_no=nxt)


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
