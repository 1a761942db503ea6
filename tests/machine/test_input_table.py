"""The dealer-input table (shoe_ctl.machine.inputs.ROWS) is the chart's: its states are the chart's
leaf states, the states of an input that fires a trigger are that trigger's sources, and an input
the table does not accept in a state is refused there with the table's reason, changing nothing."""

from __future__ import annotations

import json

import pytest
from rule_profiles import PROFILES

from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput
from shoe_ctl.input_spec import SPECS
from shoe_ctl.machine import Dealing, layout
from shoe_ctl.machine.inputs import ROWS
from shoe_ctl.machine.wording import state_words
from shoe_ctl.rules.cards import full_deck


def test_every_input_has_a_row_on_the_charts_states() -> None:
    leaves = set(layout.leaves())
    assert set(ROWS) == set(DealerAction) - {DealerAction.ACK_ALERT, DealerAction.UNDO}
    for row in ROWS.values():
        for states, _handler in row.accepted:
            assert states is None or (states and states <= leaves), row.action
    assert layout.sources("betting_complete") == {layout.betting_state(s) for s in layout.STREETS}
    assert layout.sources("hand_complete") == {layout.SHOWDOWN, layout.UNCONTESTED}
    assert layout.sources("misdeal") == {s for s in leaves if s.startswith("hand_")}
    assert ROWS[DealerAction.CUT_DONE].accepted[0][0] == layout.sources("cut_done")
    assert ROWS[DealerAction.NEW_HAND].accepted[0][0] == {layout.IDLE}


def _machine(cards: int) -> Dealing:
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
    deck = full_deck()
    for seq in range(1, cards + 1):
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    return m


def _public(m: Dealing) -> str:
    st = m.public_state()
    st.pop("alerts")
    return json.dumps(st, sort_keys=True)


@pytest.mark.parametrize("cards, state", [(0, "hand_third_deal"), (9, "hand_third_betting")])
def test_an_input_outside_its_states_is_refused_with_the_tables_reason(cards: int, state: str) -> None:
    refused = 0
    for action, row in ROWS.items():
        if any(states is None or state in states for states, _h in row.accepted):
            continue
        m = _machine(cards)
        assert m.state == state
        before = _public(m)
        out = m.handle(DealerInput(action, 1))
        got = [c for c in out if isinstance(c, Alert)]
        assert [(a.code, a.message) for a in got] == [
            ("input-wrong-time", f"'{action.value}' seat 1 refused now ({state_words(state)}): {row.refused}; nothing changed")]
        assert m.state == state and _public(m) == before
        refused += 1
    assert refused >= 5  # the table names a reason for most inputs in either state


def test_before_any_hand_every_input_but_new_hand_is_refused() -> None:
    for action in ROWS:
        if action is DealerAction.NEW_HAND:
            continue
        m = Dealing(PROFILES)
        out = m.handle(DealerInput(action))
        assert [(c.code, c.message) for c in out if isinstance(c, Alert)] == [
            ("input-wrong-time", f"'{action.value}' refused now (no hand running): no hand is running; nothing changed")]
        assert m.state == "idle" and m.hand is None


def test_between_hands_every_input_about_a_hand_is_refused() -> None:
    """After a hand ends (here in a misdeal) the machine keeps the last hand, yet an input whose
    specification needs a hand is refused as before the first hand, changing nothing."""
    for action in ROWS:
        if not SPECS[action].needs_hand:
            continue
        m = _machine(0)
        m.handle(DealerInput(DealerAction.MISDEAL, args={"confirm": True}))
        assert m.state == "idle" and m.hand is not None
        before = _public(m)
        out = m.handle(DealerInput(action))
        assert [(c.code, c.message) for c in out if isinstance(c, Alert)] == [
            ("input-wrong-time", f"'{action.value}' refused now (no hand running): no hand is running; nothing changed")]
        assert m.state == "idle" and _public(m) == before
    assert [a for a in DealerAction if not SPECS[a].needs_hand] == [DealerAction.NEW_HAND, DealerAction.ACK_ALERT]
