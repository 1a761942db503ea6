"""The machine's answer to a shoe restart inside a hand (docs/protocol.md
section 12): a latched ``shoe-restarted`` alert, the stop signal, and the dealer's procedure."""

from __future__ import annotations

from shoe_ctl.config import load_profile
from shoe_ctl.events import (
    Alert,
    CardRead,
    DealerAction,
    DealerInput,
    ShoeRestarted,
    Signal,
)
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card

PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}


def _alerts(cmds: list[object]) -> list[Alert]:
    return [c for c in cmds if isinstance(c, Alert)]


def test_a_restart_inside_a_hand_is_a_latched_stop_with_the_procedure() -> None:
    m = Dealing(PROFILES, default_rules="tda")
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4]}))
    m.handle(CardRead(1, Card.parse("As"), "rfid", 1))
    ev = ShoeRestarted("SH-1", 0x11, 0x22, 4, 5, cards_counted=3, cards_reported=1)
    (alert,) = _alerts(m.handle(ev))
    assert alert.code == "shoe-restarted" and alert.latched
    assert "2 card(s) left the shoe" in alert.message and "Count the cards" in alert.message
    assert m.instruction().signal == Signal.STOP
    m.handle(DealerInput(DealerAction.ACK_ALERT, args={"code": "shoe-restarted"}))
    assert m.instruction().signal != Signal.STOP


def test_a_restart_between_hands_raises_nothing() -> None:
    m = Dealing(PROFILES, default_rules="tda")
    m.start()
    assert _alerts(m.handle(ShoeRestarted("SH-1", 0x11, 0x22))) == []


def test_the_procedure_says_what_the_shoe_can_and_cannot_know() -> None:
    unknown = ShoeRestarted("SH-1", 1, 2)
    assert unknown.unreported is None and not unknown.certain
    assert "cannot be known" in unknown.procedure()
    counted = ShoeRestarted("SH-1", 1, 2, 1, 2, cards_counted=4, cards_reported=4, counts_unpowered=True)
    assert counted.unreported == 0 and counted.certain
    assert "no card leaving unreported" in counted.procedure()


def _restarted_after_one_card() -> tuple[Dealing, Alert]:
    m = Dealing(PROFILES, default_rules="tda")
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4]}))
    m.handle(CardRead(1, Card.parse("As"), "rfid", 1))  # seat 1's first downcard
    # a shoe without counts-unpowered: no event lost (no gap), but it cannot count the cards
    # pulled while it was off
    (alert,) = _alerts(m.handle(ShoeRestarted("SH-1", 0x11, 0x22, 2, 6, cards_counted=1, cards_reported=1)))
    return m, alert


def test_the_floors_ruling_on_a_card_pulled_while_the_shoe_was_off_is_entered_as_cards_found() -> None:
    m, alert = _restarted_after_one_card()
    assert alert.code == "shoe-restarted" and m.link.gap is None
    assert m.instruction().signal == Signal.STOP
    out = m.handle(DealerInput(DealerAction.GAP_CARDS, args={"cards": 1}))
    assert [a.code for a in _alerts(out)] == ["sequence-gap-closed"]
    assert m.hand is not None and m.hand.pulled == 2  # the card pulled while off is counted
    m.handle(DealerInput(DealerAction.ACK_ALERT, args={"code": "shoe-restarted"}))
    ins = m.instruction()
    assert ins.signal == Signal.DEAL and ins.seat == 3  # seat 2 got the card pulled while off
    out = m.handle(CardRead(2, Card.parse("Kd"), "rfid", 3))
    assert not [a for a in _alerts(out) if a.latched]


def test_the_ruling_may_burn_the_card_pulled_while_off() -> None:
    m, _ = _restarted_after_one_card()
    m.handle(DealerInput(DealerAction.GAP_CARDS, args={"cards": 1, "burned": True}))
    m.handle(DealerInput(DealerAction.ACK_ALERT, args={"code": "shoe-restarted"}))
    assert m.instruction().seat == 2  # seat 2 still waits for its first card


def test_cards_found_is_refused_with_no_restart_and_no_gap_open() -> None:
    m = Dealing(PROFILES, default_rules="tda")
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4]}))
    out = m.handle(DealerInput(DealerAction.GAP_CARDS, args={"cards": 1}))
    assert [a.code for a in _alerts(out)] == ["input-wrong-time"]
    assert "no sequence gap or shoe restart is open" in _alerts(out)[0].message
    assert m.hand is not None and m.hand.pulled == 0
