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
    DisplayUpdate,
    FaultKind,
    ForeignCard,
    ForeignWhat,
    LinkChanged,
    LinkStatus,
    ShoeFault,
    ShoeInfo,
    Signal,
    StubDeck,
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


def _names_foreign(rules: str = "tda") -> tuple[Dealing, list[Card]]:
    """A table on a shoe whose hello offered names-foreign (docs/protocol.md section 16)."""
    m = Dealing(PROFILES, await_counter_reset=True)
    m.start()
    m.handle(LinkChanged(LinkStatus.CONNECTED, "shoe S1", ShoeInfo(2, "fw", "S1", ("rfid",), 7, names_foreign=True)))
    m.handle(DealerInput(A.NEW_HAND, args={"seats": [1, 2, 3, 4], "rules": rules, "game": "stud"}))
    m.handle(CounterReset(1))
    return m, full_deck()


def _shown(cmds: list[object]) -> list[str]:
    """The codes of the alerts raised and of those the display lists after ``cmds``."""
    raised = [c.code for c in cmds if isinstance(c, Alert)]
    listed = [a["code"] for c in cmds if isinstance(c, DisplayUpdate) for a in c.state.get("alerts", ())]
    return raised + listed


@pytest.mark.parametrize("rules", ["tda", "house"])
@pytest.mark.parametrize("what", list(CASES))
def test_a_foreign_card_from_a_shoe_that_names_it_is_one_stop_with_no_notice_before_it(rules: str,
                                                                                        what: ForeignWhat) -> None:
    m, deck = _names_foreign(rules)
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    before = m.handle(CardRead(2, None, "none", 2, 1))  # the foreign card, unreadable as a card of the stub
    assert "unreadable-card" not in _shown(before)
    ev = CASES[what]
    cmds = m.handle(ForeignCard(3, ev.what, ev.tag, ev.card, ev.deck, ev.stub))
    assert [(c.code, c.latched) for c in cmds if isinstance(c, Alert)] == [(FOREIGN_CODES[what], True)]
    assert [a["code"] for a in m.alerts] == [FOREIGN_CODES[what]] and m.instruction().signal is Signal.STOP
    cmds = m.handle(ShoeFault(4, FaultKind.MISREAD, True))  # the misread's end that follows it
    assert "unreadable-card" not in _shown(cmds)


def test_an_unreadable_card_from_a_shoe_that_names_foreign_cards_is_told_at_its_next_event() -> None:
    m, deck = _names_foreign()
    assert not [c for c in m.handle(CardRead(1, None, "none", 1, 1)) if isinstance(c, Alert)]
    cmds = m.handle(ShoeFault(2, FaultKind.MISREAD, False, "no tag read"))  # what the shoe sends next
    codes = [c.code for c in cmds if isinstance(c, Alert)]
    assert codes == ["unreadable-card", "shoe-misread"]
    assert next(c.message for c in cmds if isinstance(c, Alert)).startswith("read 1: a card left the shoe unreadable")
    assert m.hand is not None and m.hand.seats[0].down == [None]  # booked as before: counted, identity unknown
    m.handle(CardRead(3, None, "none", 2, 1))
    cmds = m.handle(CardRead(4, deck.pop(), "rfid", 3, 1))  # another card next: the notice comes first
    assert [c.code for c in cmds if isinstance(c, Alert)] == ["unreadable-card"]


def test_a_shoe_that_does_not_name_foreign_cards_tells_an_unreadable_card_at_once() -> None:
    m, _deck = table("tda")
    cmds = m.handle(CardRead(1, None, "none", 1, 1))
    assert [c.code for c in cmds if isinstance(c, Alert)] == ["unreadable-card"]


def test_the_links_own_news_between_the_card_and_its_foreign_event_keeps_the_notice_waiting() -> None:
    """A restart of the service between the unreadable card and its FOREIGN (resent by the shoe):
    the link's reconnection and the stub's deck come first, and still no notice precedes the STOP."""
    m, deck = _names_foreign()
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    m.handle(CardRead(2, None, "none", 2, 1))
    info = ShoeInfo(2, "fw", "S1", ("rfid",), 7, names_foreign=True)
    for ev in (LinkChanged(LinkStatus.DISCONNECTED, "port closed"), LinkChanged(LinkStatus.CONNECTED, "back", info),
               StubDeck(1, "D17")):
        assert "unreadable-card" not in _shown(m.handle(ev))
    ev = CASES[ForeignWhat.OTHER_DECK]
    cmds = m.handle(ForeignCard(3, ev.what, ev.tag, ev.card, ev.deck, ev.stub))
    assert [c.code for c in cmds if isinstance(c, Alert)] == [FOREIGN_CODES[ForeignWhat.OTHER_DECK]]
