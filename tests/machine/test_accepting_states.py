"""Where the machine takes each dealer input (``shoe_ctl.machine.inputs.accepting_states``, read
by the dealer display to disable a button it would refuse): outside those states the machine
refuses the input as wrong at that moment (``input-wrong-time``) and changes nothing, in every
state a whole hand passes through."""

from __future__ import annotations

import json

import pytest
from rule_profiles import PROFILES

from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.inputs import accepting_states
from shoe_ctl.machine.layout import ATTENTION, IDLE, leaves
from shoe_ctl.rules.cards import full_deck


def _public(m: Dealing) -> str:
    st = m.public_state()
    st.pop("alerts")
    return json.dumps(st, sort_keys=True)


def _script() -> list[object]:
    """A three-seat hand to its end: cards while a street is dealt, betting complete after each."""
    deck = full_deck()
    seq = 0
    out: list[object] = [DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]})]
    for street_cards in (9, 4, 4, 4, 4):  # 3rd: 3 each; 4th-7th: a burn and one each
        for _ in range(street_cards):
            seq += 1
            out.append(CardRead(seq, deck.pop(), "rfid", seq))
        out.append(DealerInput(DealerAction.BETTING_COMPLETE))
    return out


def _states_of_a_hand() -> list[int]:
    """The number of script events after which the machine stands in a state not seen before."""
    m = Dealing(PROFILES)
    m.start()
    seen, at = {m.state}, [0]
    for n, ev in enumerate(_script(), 1):
        m.handle(ev)
        if m.state not in seen:
            seen.add(m.state)
            at.append(n)
    assert len(at) >= 10, seen
    return at


def _machine_after(n: int) -> Dealing:
    m = Dealing(PROFILES)
    m.start()
    for ev in _script()[:n]:
        m.handle(ev)
    return m


def test_every_input_is_taken_somewhere_and_ack_everywhere() -> None:
    every = set(leaves())
    assert accepting_states(DealerAction.ACK_ALERT) == every
    for action in DealerAction:
        states = accepting_states(action)
        assert states and states <= every, action
        if action is not DealerAction.ACK_ALERT:
            assert ATTENTION not in states, action
    assert IDLE not in accepting_states(DealerAction.BURN_ERROR)
    assert "hand_third_betting" not in accepting_states(DealerAction.BURN_ERROR)
    assert "hand_fourth_deal" in accepting_states(DealerAction.BURN_ERROR)


@pytest.mark.parametrize("n", _states_of_a_hand())
def test_outside_its_states_an_input_is_refused_as_wrong_now_and_changes_nothing(n: int) -> None:
    state = _machine_after(n).state
    for action in DealerAction:
        if state in accepting_states(action):
            continue
        m = _machine_after(n)
        before = _public(m)
        out = m.handle(DealerInput(action, 1))
        wrong = "undo-refused" if action is DealerAction.UNDO else "input-wrong-time"  # undo: nothing to undo
        assert [c.code for c in out if isinstance(c, Alert)] == [wrong], (state, action)
        assert m.state == state and _public(m) == before, (state, action)
