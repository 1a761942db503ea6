"""HIL: a hand dealt through a shoe that is unplugged mid-hand and a noisy line.

The link resends what the host had not acked, the machine shows ``shoe-fault`` while the shoe is
away (alert ``shoe-disconnected``), and the simulated dealer, which acts on each instruction's
card number once, never pulls a card twice: every seat ends with exactly the cards the dealer put
there and the stub is what is physically left in the shoe.
"""

from __future__ import annotations

import pytest
from rule_profiles import PROFILES

from hil.dealer import HandScript
from hil.deck import Deck
from hil.replay import run_full
from shoe_ctl.rules.cards import card_text

pytestmark = pytest.mark.faults


def test_unplugged_mid_hand_and_noisy_line_lose_and_double_nothing() -> None:
    profiles = PROFILES
    seats = [1, 2, 3, 4, 5, 6, 7, 8]
    scripts = [HandScript(seats, "stud", "tda", Deck.seeded(40 + k).cards(),
                          {"3rd": [("fold", 8)], "5th": [("fold", 2)]}, name=f"faulty {k}") for k in range(2)]
    recorder, dealer = run_full(scripts, profiles, seed=3, timeout=60, auto_ack=False,
                                faults="unplug-at=10:41:70,unplug-ms=120,corrupt=0.001,garbage=0.001")
    assert dealer.stalled is None
    assert len(recorder.hands) == 2 == len(dealer.history)
    disconnects = 0
    for hand, picture in zip(recorder.hands, dealer.history, strict=True):
        disconnects += hand.alerts.count("shoe-disconnected")
        assert not {"duplicate-card", "dispense-gap", "card-not-expected", "sequence-gap"} & set(hand.alerts)
        for seat in seats:
            physical = picture.seats[seat]
            assert hand.cards[seat]["down"] == [card_text(c) for f, c in physical if f == "down"]
            assert hand.cards[seat]["up"] == [card_text(c) for f, c in physical if f == "up"]
        assert hand.stub == len(picture.stub())
        assert "shoe-fault" in hand.signals() or hand.alerts.count("shoe-disconnected") == 0
    assert disconnects >= 2


def test_replaying_the_journaled_events_rebuilds_the_machine_exactly() -> None:
    """Every event the controller journaled (before its ack), fed in order into a fresh machine,
    gives the same state, stub, alerts and instruction: the machine depends on its events only."""
    from shoe_ctl.events import Alert, DisplayUpdate, Instruction, ShoeCommand
    from shoe_ctl.machine import Dealing

    class ListJournal:
        def __init__(self) -> None:
            self.items: list[object] = []

        def append(self, item: object) -> int:
            self.items.append(item)
            return len(self.items)

    profiles = PROFILES
    journal = ListJournal()
    scripts = [HandScript([1, 2, 3, 4, 5, 6, 7], "razz", "house", Deck.seeded(9).cards(),
                          {"3rd": [("fold", 3)], "4th": [("all-in", 5)]}, name="journaled")]
    recorder, dealer = run_full(scripts, profiles, seed=4, timeout=60, auto_ack=False, journal=journal,
                                faults="unplug-at=20,unplug-ms=80")
    assert dealer.stalled is None
    live = recorder.machine
    fresh = Dealing(profiles)
    commands = [c for ev in journal.items if not isinstance(ev, (Alert, Instruction, DisplayUpdate, ShoeCommand))
                for c in fresh.handle(ev)]
    assert fresh.state == live.state == "idle"
    assert fresh.public_state() == live.public_state()
    assert fresh.summary() == live.summary()
    assert [c for c in commands if isinstance(c, Alert)] == [a for a in journal.items if isinstance(a, Alert)]
    assert fresh.hand is not None and live.hand is not None
    assert fresh.hand.stub_count() == live.hand.stub_count()


def test_duplicate_and_foreign_cards_from_the_shoe_stop_the_dealer() -> None:
    """A copy of a card already dealt (pull 5) raises ``duplicate-card``; after the RP-10-H-A
    scramble on 7th (7 seats, none fold: pulls 1-45 before it, the burn is pull 46) a card that is
    not in the new stub (pull 48) raises ``card-not-in-stub``. Both are latched: the dealer sees
    ``stop`` and goes on only after acknowledging; the hand still ends with every card counted."""
    profiles = PROFILES
    seats = [1, 2, 3, 4, 5, 6, 7]
    scripts = [HandScript(seats, "stud", "tda", Deck.seeded(77).cards(), {}, name="bad cards")]
    recorder, dealer = run_full(scripts, profiles, seed=5, timeout=60, auto_ack=True,
                                faults="duplicate-at=5,foreign-at=48")
    (hand,) = recorder.hands
    assert hand.alerts.count("duplicate-card") == 1
    assert hand.alerts.count("card-not-in-stub") == 1
    assert hand.signals().count("stop") == 2
    assert hand.summary["seventh"]["procedure"] == "A"
    picture = dealer.history[0]
    assert hand.stub == len(picture.stub())
    assert sum(len(c["down"]) + len(c["up"]) for c in hand.cards.values()) == 7 * 7
