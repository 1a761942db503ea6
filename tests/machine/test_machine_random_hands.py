"""Random hands against what the machine's cuts must keep (stud, stud/8 and razz, under both rule
profiles, heads-up to five seats; folds, all-ins, shows, rulings, undos, STOPs acknowledged and
cards, as a dealer and a floor might send them):

- a betting round's instruction, looked up by the values its words are made of
  (``shoe_ctl.machine.wording._betting``), equals the one worded afresh with nothing kept: no two
  rounds worded differently share a key;
- an undo puts back the whole hand as it was before the input it undoes (``shoe_ctl.machine.undo``:
  across a fold, an all-in, a show, a betting round or a hand complete the undo point holds the
  live hand itself), and the machine's state."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rule_profiles import PROFILES

from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput
from shoe_ctl.machine import Dealing, wording
from shoe_ctl.rules.cards import full_deck

A = DealerAction
_INPUTS = [(A.FOLD, True), (A.ALL_IN, True), (A.BETTING_COMPLETE, False), (A.SHOW, True),
           (A.ABSENT_PLAYER, True), (A.CARD_COUNT, True), (A.EXPOSED_CARD, True), (A.UNDO, False),
           (A.HAND_COMPLETE, False), (A.NEW_HAND, False)]
_BETTING_WEIGHTS = [8, 5, 40, 2, 3, 3, 3, 10, 1, 1]
"""In a betting round: mostly the round complete, some folds and all-ins, rulings and undos now and then."""

_HANDS = {"seed": st.integers(0, 2**32 - 1), "game": st.sampled_from(["stud", "stud8", "razz"]),
          "rules": st.sampled_from(sorted(PROFILES)), "seats": st.integers(2, 5)}


def _play(seed: int, game: str, rules: str, seats: int,
          dealer_input: Callable[[Dealing, DealerInput], Any] | None = None, steps: int = 150) -> Dealing:
    """Deal random hands on a machine; each dealer input through ``dealer_input(machine, input)``
    (default: ``machine.handle``)."""
    rnd = random.Random(seed)
    table = list(range(1, seats + 1))
    hand_args = {"seats": table, "game": game, "rules": rules}
    m = Dealing(PROFILES)
    m.start()
    send = dealer_input or (lambda machine, ev: machine.handle(ev))
    send(m, DealerInput(A.NEW_HAND, args=hand_args))
    deck = full_deck()
    rnd.shuffle(deck)
    seq = 0
    for _ in range(steps):
        state = m.state
        latched = [a["code"] for a in m.public_state()["alerts"] if a.get("latched")]
        if latched and rnd.random() < 0.7:  # the floor acknowledges a STOP
            send(m, DealerInput(A.ACK_ALERT, args={"code": latched[0]}))
            continue
        if "betting" in state:
            action, seated = rnd.choices(_INPUTS, weights=_BETTING_WEIGHTS)[0]
        elif not state.startswith("hand_") or "uncontested" in state or "showdown" in state:
            action, seated = (A.NEW_HAND, False) if state == "idle" else (A.HAND_COMPLETE, False)
        elif rnd.random() < 0.9:
            if not deck:
                deck = full_deck()
                rnd.shuffle(deck)
            seq += 1
            m.handle(CardRead(seq, deck.pop(), "rfid", m.link.last_dispense + 1))  # no dispense gap
            continue
        else:
            action, seated = rnd.choice(_INPUTS)
        args: dict[str, Any] = {}
        if action is A.CARD_COUNT:
            args = {"cards": rnd.randint(1, 8)}
        elif action is A.NEW_HAND:
            args = dict(hand_args)
            deck = full_deck()
            rnd.shuffle(deck)
        send(m, DealerInput(action, seat=rnd.choice(table) if seated else None, args=args))
    return m


@settings(max_examples=40, deadline=None)
@given(**_HANDS)
def test_every_betting_instruction_is_the_one_worded_afresh(seed: int, game: str, rules: str, seats: int) -> None:
    betting = wording._betting

    def worded_afresh_too(*args: Any) -> Any:
        kept = betting(*args)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(wording, "_BETTING_INSTRUCTIONS", {})
            fresh = betting(*args)
        assert kept == fresh, "a betting round's key does not hold everything its words are made of"
        return kept

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wording, "_betting", worded_afresh_too)
        _play(seed, game, rules, seats)


@settings(max_examples=40, deadline=None)
@given(**_HANDS)
def test_an_undo_puts_back_the_whole_hand_and_state_before_the_input_it_undoes(
        seed: int, game: str, rules: str, seats: int) -> None:
    before: list[Any] = [None]  # (hand copied whole, state) before the input the undo point is for
    undone = [0]

    def handle(m: Dealing, ev: DealerInput) -> Any:
        if ev.action is A.UNDO:
            out = m.handle(ev)
            if "undo" in [c.code for c in out if isinstance(c, Alert)]:
                assert before[0] is not None
                hand, state = before[0]
                assert m.hand == hand, "the undo did not put the hand back as it was"
                assert m.state == state
                undone[0] += 1
            before[0] = None
            return out
        was = m.undo.last
        taken = (m.hand.copy() if m.hand is not None else None, m.state)
        out = m.handle(ev)
        last = m.undo.last
        if last is not was:
            before[0] = taken if last is not None and last[1] is not None else None
        return out

    m = _play(seed, game, rules, seats, handle)
    assert m.undo.last is None or m.undo.last[0] is not A.UNDO  # (an undo is never the last input)
