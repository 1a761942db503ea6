"""Cards read with no hand running (a bouncing card-out sensor, a dealer pulling cards between
hands): 5,000 of them keep one merged ``card-not-expected`` alert with a count, the machine's
alert list and the dealer display's state bounded, and each read's cost independent of how many
came before (asserted by sizes and counts, never by time)."""

from __future__ import annotations

import json
import logging
import random
import tracemalloc

import pytest
from rule_profiles import PROFILES

from shoe_ctl.display.model import DisplayModel
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.progress import MAX_INFO_ALERTS, MAX_LATCHED_ALERTS
from shoe_ctl.rules.cards import Card, full_deck

READS = 5000


def shuffled_deck() -> list[Card]:
    """The 52 cards in one fixed shuffled order (code order is sorted by rank: the deck-order check
    would add its information alert to the lists counted here)."""
    deck = full_deck()
    random.Random(5).shuffle(deck)
    return deck


def _feed(m: Dealing, display: DisplayModel, first: int, count: int, start_dispense: int = 0) -> int:
    """``count`` card reads from sequence ``first``; returns the ``Alert`` commands raised."""
    deck = shuffled_deck()
    raised = 0
    for i in range(count):
        out = m.handle(CardRead(first + i, deck[i % 52], "rfid", start_dispense + i + 1))
        raised += sum(isinstance(c, Alert) for c in out)
        display.apply_all(out)
    return raised


def test_five_thousand_reads_with_no_hand_are_one_alert_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="shoe_ctl.machine.dealing")  # the captured lines would be the heap
    m = Dealing(PROFILES)
    m.start()
    display = DisplayModel()
    tracemalloc.start()
    try:
        _feed(m, display, 1, 1000)
        state_1000 = len(json.dumps(m.public_state()))
        display_1000 = len(json.dumps(display.snapshot()))
        heap_1000 = tracemalloc.get_traced_memory()[0]
        raised = _feed(m, display, 1001, READS - 1000, 1000)
        heap_5000 = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert raised == READS - 1000  # every read is still an Alert command (the journal keeps each)
    assert len(m.alerts) == 1
    (alert,) = m.alerts
    assert alert["code"] == "card-not-expected" and alert["latched"] and alert["count"] == READS
    assert alert["message"].startswith(f"read {READS}: ")  # the newest read's words
    # the state the display and the floor are sent, and the display's own, do not grow
    assert len(json.dumps(m.public_state())) - state_1000 <= 4
    assert len(json.dumps(display.snapshot())) - display_1000 <= 4
    assert [a["count"] for a in display.snapshot()["alerts"]] == [READS]
    # what stays per read is the read itself (the hand's record), not an alert
    assert (heap_5000 - heap_1000) / (READS - 1000) < 400
    assert m.instruction().signal is Signal.STOP
    m.handle(DealerInput(DealerAction.ACK_ALERT, args={"code": "card-not-expected"}))
    assert m.alerts == [] and m.instruction().signal is not Signal.STOP


def test_strays_after_a_hand_keep_every_alert_list_bounded() -> None:
    """After a hand the same cards come again (``duplicate-card``) and the count runs below the
    stub (``card-beyond-stub``): the latched entries stop at the bound, merged by code."""
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    deck = shuffled_deck()
    seq = dispense = 0
    for _ in range(300):
        if m.state == "idle":
            break
        sig = m.instruction().signal
        if sig in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY):
            seq += 1
            dispense += 1
            m.handle(CardRead(seq, deck.pop(), "rfid", dispense))
        elif sig is Signal.BETTING:
            m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
        elif sig is Signal.SHOWDOWN:
            m.handle(DealerInput(DealerAction.HAND_COMPLETE))
    assert m.state == "idle"
    display = DisplayModel()
    raised = _feed(m, display, seq + 1, READS, dispense)
    latched = [a for a in m.alerts if a["latched"]]
    assert len(latched) <= MAX_LATCHED_ALERTS
    assert len(m.alerts) <= MAX_LATCHED_ALERTS + MAX_INFO_ALERTS
    assert sum(a["count"] for a in latched) == raised  # merged, none lost from the count
    assert len(json.dumps(display.snapshot())) < 20_000
