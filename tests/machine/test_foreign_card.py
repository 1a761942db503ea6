"""A card that is not the stub's deck's (``ForeignCard``, docs/protocol.md section 16) is a
latched STOP at its first read under both rule profiles: the card taken off the place it was
booked to and held aside, the floor called, the hand still until the STOP is acknowledged."""

from __future__ import annotations

import pytest

from shoe_ctl.config import load_profile
from shoe_ctl.events import (
    Alert,
    CardRead,
    CounterReset,
    DealerAction,
    DealerInput,
    ForeignCard,
    ForeignWhat,
    LinkChanged,
    LinkStatus,
    ShoeInfo,
    Signal,
)
from shoe_ctl.input_spec import STOP_REFUSAL
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.foreign import FOREIGN_CODES
from shoe_ctl.rules.cards import Card, full_deck

PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}
A = DealerAction
CASES = {
    ForeignWhat.UNKNOWN: ForeignCard(0, ForeignWhat.UNKNOWN, "04ffee0001", None, "", "D17"),
    ForeignWhat.OTHER_DECK: ForeignCard(0, ForeignWhat.OTHER_DECK, "04b20001", Card.parse("9c"), "D12", "D17"),
    ForeignWhat.RETIRED: ForeignCard(0, ForeignWhat.RETIRED, "04c30002", Card.parse("Kh"), "D09", "D17"),
}


def table(rules: str) -> tuple[Dealing, list[Card]]:
    m = Dealing(PROFILES, await_counter_reset=True)
    m.start()
    m.handle(LinkChanged(LinkStatus.CONNECTED, "shoe S1", ShoeInfo(2, "fw", "S1", ("rfid",))))
    m.handle(DealerInput(A.NEW_HAND, args={"seats": [1, 2, 3, 4], "rules": rules, "game": "stud"}))
    m.handle(CounterReset(1))
    return m, full_deck()


@pytest.mark.parametrize("rules", ["tda", "house"])
@pytest.mark.parametrize("what", list(CASES))
def test_a_foreign_card_is_a_latched_stop_held_aside_and_the_next_card_takes_its_place(rules: str,
                                                                                      what: ForeignWhat) -> None:
    m, deck = table(rules)
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))  # seat 1's first downcard
    m.handle(CardRead(2, None, "none", 2, 1))  # the foreign card, to seat 2 by the plan
    ev = CASES[what]
    cmds = m.handle(ForeignCard(3, ev.what, ev.tag, ev.card, ev.deck, ev.stub))
    [alert] = [c for c in cmds if isinstance(c, Alert)]
    assert alert.code == FOREIGN_CODES[what] and alert.latched
    assert alert.message.startswith(f"read 2: {ev.describe()}. STOP: hold the card aside")
    assert "off seat 2's downcards" in alert.message and "floor" in alert.message
    hand = m.hand
    assert hand is not None and hand.set_aside == [None] and hand.seats[1].down == []
    assert m.instruction().signal is Signal.STOP
    refused = m.handle(DealerInput(A.BETTING_COMPLETE))
    assert any(isinstance(c, Alert) and STOP_REFUSAL in c.message for c in refused)
    m.handle(DealerInput(A.ACK_ALERT))
    assert m.instruction().signal is Signal.DEAL
    nxt = deck.pop()
    m.handle(CardRead(4, nxt, "rfid", 3, 1))
    assert hand.seats[1].down == [nxt] and hand.pulled == 3  # the place the foreign card was booked to


def test_a_foreign_card_with_no_hand_running_is_still_a_stop() -> None:
    m = Dealing(PROFILES, await_counter_reset=True)
    m.start()
    m.handle(LinkChanged(LinkStatus.CONNECTED, "shoe S1", ShoeInfo(2, "fw", "S1", ("rfid",))))
    cmds = m.handle(CASES[ForeignWhat.UNKNOWN])
    assert [(c.code, c.latched) for c in cmds if isinstance(c, Alert)] == [("foreign-card-floor", True)]
