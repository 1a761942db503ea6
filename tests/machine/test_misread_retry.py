"""A shoe's misread FAULT after its card's CARD (docs/protocol.md, FAULT *misread*): after a
CARD with an identity it is a retry, the card booked with the identity the shoe trusted and the
dealer told so; after an unreadable CARD the card is counted with its identity unknown. Either
way the shoe is faulty until the misread's end, and nothing is latched."""

from __future__ import annotations

import pytest

from shoe_ctl.config import load_profile
from shoe_ctl.events import (
    Alert,
    CardRead,
    CounterReset,
    DealerAction,
    DealerInput,
    FaultKind,
    LinkChanged,
    LinkStatus,
    ShoeFault,
    ShoeInfo,
    Signal,
    TimerFired,
)
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.link import FAULT_TEXT, RETRY_CODE, RETRY_TEXT
from shoe_ctl.rules.cards import Card, full_deck

PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}


def _table(rules: str, names_foreign: bool = False) -> tuple[Dealing, list[Card]]:
    m = Dealing(PROFILES, await_counter_reset=True)
    m.start()
    m.handle(LinkChanged(LinkStatus.CONNECTED, "shoe S1",
                         ShoeInfo(2, "fw", "S1", ("rfid",), names_foreign=names_foreign)))
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4], "rules": rules, "game": "stud"}))
    m.handle(CounterReset(1))
    return m, full_deck()


def _alerts(cmds: list[object]) -> list[Alert]:
    return [c for c in cmds if isinstance(c, Alert)]


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_a_misread_after_an_identified_card_is_a_retry_and_the_card_keeps_its_identity(rules: str) -> None:
    m, deck = _table(rules)
    card = deck.pop()
    m.handle(CardRead(1, card, "rfid", 1, 1))
    [alert] = _alerts(m.handle(ShoeFault(2, FaultKind.MISREAD, False, "crc")))
    assert alert.code == RETRY_CODE and not alert.latched  # a notice on the floor, not shoe-misread
    assert "read 1" in alert.message and RETRY_TEXT in alert.message and "unknown" not in alert.message
    assert str(card) not in alert.message  # a downcard: never named before the showdown
    ins = m.instruction()
    assert ins.signal is Signal.SHOE_FAULT and RETRY_TEXT in ins.text  # faulty until the end (protocol)
    m.handle(ShoeFault(3, FaultKind.MISREAD, True))
    assert m.instruction().signal is Signal.DEAL and m.link.retry is None
    assert m.hand is not None and m.hand.seats[0].down == [card]  # booked as the shoe read it
    assert not [a for a in m.alerts if a["latched"]]


@pytest.mark.parametrize("names_foreign", [False, True])
def test_a_misread_after_an_unreadable_card_says_its_identity_is_unknown(names_foreign: bool) -> None:
    m, _deck = _table("tda", names_foreign)
    m.handle(CardRead(1, None, "none", 1, 1))
    cmds = m.handle(ShoeFault(2, FaultKind.MISREAD, False, "no tag read"))
    misread = [a for a in _alerts(cmds) if a.code == "shoe-misread"]
    assert len(misread) == 1 and FAULT_TEXT[FaultKind.MISREAD] in misread[0].message
    assert RETRY_TEXT not in misread[0].message
    assert FAULT_TEXT[FaultKind.MISREAD] in m.instruction().text and m.link.retry is None
    assert any(a["code"] == "unreadable-card" for a in m.alerts)
    m.handle(ShoeFault(3, FaultKind.MISREAD, True))
    assert m.hand is not None and m.hand.seats[0].down == [None]


def test_a_misread_not_right_after_its_card_is_not_taken_for_a_retry() -> None:
    """Only the event just before the misread is its card: a button or another event between
    them (a sequence number skipped) leaves the card's identity to the unknown case."""
    m, deck = _table("tda")
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    [alert] = _alerts(m.handle(ShoeFault(3, FaultKind.MISREAD, False)))
    assert FAULT_TEXT[FaultKind.MISREAD] in alert.message and m.link.retry is None
    assert alert.code == "shoe-misread"


def test_a_retry_then_an_unknown_misread_each_get_their_own_words() -> None:
    m, deck = _table("tda")
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    assert [a.code for a in _alerts(m.handle(ShoeFault(2, FaultKind.MISREAD, False)))] == [RETRY_CODE]
    m.handle(ShoeFault(3, FaultKind.MISREAD, True))
    m.handle(CardRead(4, None, "none", 2, 1))
    cmds = m.handle(ShoeFault(5, FaultKind.MISREAD, False))
    [misread] = [a for a in _alerts(cmds) if a.code == "shoe-misread"]
    assert FAULT_TEXT[FaultKind.MISREAD] in misread.message and m.link.retry is None
    assert m.hand is not None and m.hand.seats[1].down == [None]


def test_acknowledging_another_alert_leaves_a_retry_the_shoe_has_not_ended() -> None:
    """The dealer's acknowledgement ends a fault only with the alert the fault raised: the retry's
    own code, not ``shoe-misread``."""
    m, deck = _table("tda")
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    m.handle(ShoeFault(2, FaultKind.MISREAD, False))
    m.handle(TimerFired("idle", m.state))  # another alert, acknowledged on its own
    m.handle(DealerInput(DealerAction.ACK_ALERT, args={"code": "timer-idle"}))
    assert m.link.fault == "misread" and m.instruction().signal is Signal.SHOE_FAULT
    m.handle(DealerInput(DealerAction.ACK_ALERT, args={"code": RETRY_CODE}))
    assert m.link.fault is None
