"""A shoe restart inside a hand, through the whole table (virtual shoe on a pty, ShoeLink, the
controller and the machine): the dealer sees a stop with the restart procedure,
acknowledges it after the count, the hand goes on, nothing read is lost and the record equals the
table (every seat holds exactly the cards the dealer put there)."""

from __future__ import annotations

import pytest

from hil.dealer import HandScript
from hil.deck import Deck
from hil.replay import run_full
from shoe_ctl.config import load_profile
from shoe_ctl.rules.cards import card_text

pytestmark = pytest.mark.faults


def test_a_restart_mid_hand_stops_the_dealer_with_the_procedure_and_loses_nothing() -> None:
    profiles = {"tda": load_profile("tda"), "house": load_profile("house")}
    seats = [1, 2, 3, 4, 5, 6]
    scripts = [HandScript(seats, "stud", "tda", Deck.seeded(71).cards(), {"3rd": [("fold", 6)]},
                          name="restart mid-hand", acks=("shoe-restarted",))]
    recorder, dealer = run_full(scripts, profiles, seed=5, timeout=60, auto_ack=True, faults="reboot-keep-at=14,unplug-ms=2000")
    assert dealer.stalled is None
    (hand,) = recorder.hands
    (picture,) = dealer.history
    assert hand.alerts.count("shoe-restarted") == 1
    assert "stop" in hand.signals()
    assert not {"duplicate-card", "dispense-gap", "card-not-expected", "sequence-gap"} & set(hand.alerts)
    for seat in seats:
        physical = picture.seats[seat]
        assert hand.cards[seat]["down"] == [card_text(c) for f, c in physical if f == "down"]
        assert hand.cards[seat]["up"] == [card_text(c) for f, c in physical if f == "up"]
    assert hand.stub == len(picture.stub())
