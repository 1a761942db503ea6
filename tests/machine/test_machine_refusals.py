"""Dealer inputs the machine must refuse with an alert that changes nothing: acknowledging an
alert that does not exist, an all-in reported twice, a fold of an all-in player in a betting
round."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rule_profiles import PROFILES

from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.deck_order import RANKS_CODE
from shoe_ctl.machine.layout import SHOWDOWN
from shoe_ctl.rules.cards import full_deck


def betting_on_third(seats: tuple[int, ...] = (1, 2, 3, 4)) -> Dealing:
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": list(seats)}))
    deck = full_deck()
    for seq in range(1, 3 * len(seats) + 1):
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    assert m.state == "hand_third_betting"
    if len(seats) >= 3:  # As Ah Ad Ac Ks ...: a deck sorted by rank, told by its 9th card; taken off the list
        assert [a["code"] for a in m.alerts] == [RANKS_CODE]
        m.handle(DealerInput(DealerAction.ACK_ALERT, args={"code": RANKS_CODE}))
    return m


def table(m: Dealing) -> str:
    """Everything public except the alert list: seats, stub, instruction, state."""
    st = m.public_state()
    st.pop("alerts")
    return json.dumps(st, sort_keys=True)


def alerts(out: list[Any]) -> list[Alert]:
    return [c for c in out if isinstance(c, Alert)]


@pytest.mark.parametrize("args, named", [
    ({"id": 17}, "no alert 17 to acknowledge"),
    ({"code": "duplicate-card"}, "no alert 'duplicate-card' to acknowledge"),
    ({"id": 17, "code": "duplicate-card"}, "no alert 17"),
    ({"id": "x"}, "no alert 'x' to acknowledge"),
])
def test_acknowledging_an_alert_that_does_not_exist_is_refused(args: dict[str, Any], named: str) -> None:
    m = betting_on_third()
    m.handle(DealerInput(DealerAction.FOLD, seat=2))  # an undoable input before the bad ack
    pending = [a["id"] for a in m.alerts]
    before = table(m)
    out = alerts(m.handle(DealerInput(DealerAction.ACK_ALERT, args=args)))
    assert [a.code for a in out] == ["input-wrong-time"]
    assert named in out[0].message and "nothing changed" in out[0].message
    assert table(m) == before
    assert [a["id"] for a in m.alerts][:-1] == pending  # no alert was taken away
    # the refused ack did not replace the undo point: the fold can still be undone
    undo = alerts(m.handle(DealerInput(DealerAction.UNDO)))
    assert [a.code for a in undo] == ["undo"]
    assert m.hand is not None and m.hand.seats[1].status == "live"


def test_acknowledging_an_existing_alert_by_id_or_code_still_works() -> None:
    m = betting_on_third()
    m.handle(DealerInput(DealerAction.FOLD, seat=9))  # input-invalid: an alert to acknowledge
    m.handle(DealerInput(DealerAction.FOLD))
    first, second = m.alerts[-2]["id"], m.alerts[-1]["id"]
    assert alerts(m.handle(DealerInput(DealerAction.ACK_ALERT, args={"id": first}))) == []
    assert [a["id"] for a in m.alerts] == [second]
    assert alerts(m.handle(DealerInput(DealerAction.ACK_ALERT, args={"code": "input-invalid"}))) == []
    assert m.alerts == []
    assert alerts(m.handle(DealerInput(DealerAction.ACK_ALERT))) == []  # a bare ack with none: nothing


def test_all_in_twice_is_refused_and_changes_nothing() -> None:
    m = betting_on_third()
    assert alerts(m.handle(DealerInput(DealerAction.ALL_IN, seat=3))) == []
    assert m.hand is not None and m.hand.seats[2].status == "all-in"
    before = table(m)
    out = alerts(m.handle(DealerInput(DealerAction.ALL_IN, seat=3)))
    assert [a.code for a in out] == ["input-invalid"]
    assert "seat 3" in out[0].message and "already all-in" in out[0].message
    assert table(m) == before
    # refused: the undo point is still the first all-in
    assert [a.code for a in alerts(m.handle(DealerInput(DealerAction.UNDO)))] == ["undo"]
    assert m.hand.seats[2].status == "live"


def test_fold_of_an_all_in_player_in_betting_is_refused_but_a_muck_at_showdown_is_not() -> None:
    m = betting_on_third((1, 2))
    m.handle(DealerInput(DealerAction.ALL_IN, seat=1))
    before = table(m)
    out = alerts(m.handle(DealerInput(DealerAction.FOLD, seat=1)))
    assert [a.code for a in out] == ["input-invalid"]
    assert "all-in" in out[0].message and "no action to fold" in out[0].message
    assert table(m) == before
    assert m.state == "hand_third_betting" and m.hand is not None and m.hand.seats[0].status == "all-in"
    # the all-in player's hand plays to the showdown, where it may be mucked
    deck = [c for c in full_deck() if all(c not in s.down + s.up for s in m.hand.seats)]
    seq = 100
    while m.state != SHOWDOWN:
        if m.state.endswith("_betting"):
            m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
        else:
            seq += 1
            m.handle(CardRead(seq, deck.pop(), "rfid", seq - 94))
    assert alerts(m.handle(DealerInput(DealerAction.FOLD, seat=1))) == []
    assert 0 in m.p.mucked
