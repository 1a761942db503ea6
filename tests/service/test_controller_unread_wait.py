"""The controller's one wait (docs/service.md, "How an event flows"): after an unreadable card
from a shoe that names foreign cards the signal holds for the shoe's next word on it; when the
shoe says nothing more, the controller ends the wait itself with a journaled ``TimerFired``, so
the notice and the next instruction reach the dealer and the record replays to the same table."""

from __future__ import annotations

import time
from pathlib import Path

from rule_profiles import PROFILES
from sinks import Collect
from waiting import wait_for

from shoe_ctl.events import (
    Alert,
    CardRead,
    CounterReset,
    DealerAction,
    DealerInput,
    ForeignCard,
    ForeignWhat,
    Instruction,
    LinkChanged,
    LinkStatus,
    ShoeInfo,
    Signal,
    TimerFired,
)
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.foreign import UNREAD_TIMER
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal import Journal

INFO = ShoeInfo(2, "fw", "S1", ("rfid",), 7, names_foreign=True)


def _table(tmp_path: Path) -> tuple[Controller, Collect, Journal]:
    journal = Journal(tmp_path / "t.sqlite3", table="t", profile="tda")
    tape = Collect()
    ctl = Controller(Dealing(PROFILES, await_counter_reset=True), journal=journal)
    ctl.add_sink(tape)
    return ctl, tape, journal


def _deal_to_the_unreadable_card(ctl: Controller) -> None:
    for ev in (LinkChanged(LinkStatus.CONNECTED, "shoe S1", INFO),
               DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3]}), CounterReset(1),
               CardRead(1, Card.parse("As"), "rfid", 1, 1), CardRead(2, None, "none", 2, 1)):
        assert ctl.post(ev)


def test_a_shoe_silent_after_an_unreadable_card_is_told_when_the_wait_ends(tmp_path: Path) -> None:
    ctl, tape, journal = _table(tmp_path)
    try:
        with ctl:
            _deal_to_the_unreadable_card(ctl)
            told = wait_for(lambda: any(isinstance(c, Alert) and c.code == "unreadable-card" for c in tape.commands), 20)
            assert told, "the unreadable card's notice never came"
            assert ctl.wait_idle(10)
            shown = [c for c in tape.commands if isinstance(c, Instruction)]
            after = shown[[i for i, c in enumerate(shown) if c.signal is Signal.SHOE_FAULT][0]:]
            assert [c.signal for c in after] == [Signal.SHOE_FAULT, Signal.DEAL] and after[-1].seat == 3
        timers = [r.item for r in journal.records() if r.kind == "TimerFired"]
        assert [t.name for t in timers] == [UNREAD_TIMER]  # journaled: a replay reaches the same table
        assert isinstance(timers[0], TimerFired)
    finally:
        journal.close()


def test_a_foreign_event_in_time_ends_the_wait_without_a_timer(tmp_path: Path) -> None:
    ctl, tape, journal = _table(tmp_path)
    try:
        with ctl:
            _deal_to_the_unreadable_card(ctl)
            assert ctl.post(ForeignCard(3, ForeignWhat.UNKNOWN, "04ffee0001", None, "", "D17"))
            assert ctl.wait_idle(10)
            time.sleep(1.0)  # past the wait: nothing more comes
            assert ctl.wait_idle(10)
        signals = [c.signal for c in tape.commands if isinstance(c, Instruction)]
        assert signals[-2:] == [Signal.SHOE_FAULT, Signal.STOP]
        assert not [c for c in tape.commands if isinstance(c, Alert) and c.code == "unreadable-card"]
        assert [r.kind for r in journal.records()].count("TimerFired") == 0
    finally:
        journal.close()
