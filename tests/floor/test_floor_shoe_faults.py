"""A shoe's faults as the floor sees them (docs/floor.md, "Alerts by severity"): the machine's
own alerts, journaled and published, folded by the floor consumer. A misread the shoe retried at
once is a notice, a misread that left a card unknown a warning, a fault that stops the deal
critical until the shoe clears it and a warning to sign for after; nothing the table did not latch
is latched on the floor."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
)
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.topics import event_payload
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import full_deck
from shoe_ctl.service.journal import Journal

PROFILES = {"tda": load_profile("tda")}


class Table:
    """A dealing machine whose events and alerts are journaled as the controller does and
    published to a floor consumer as the publisher does."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.floor = FloorConsumer(host="127.0.0.1", port=1, room="r")
        self.m = Dealing(PROFILES, await_counter_reset=True)
        self.m.start()
        self.published = 0
        self.send(LinkChanged(LinkStatus.CONNECTED, "shoe S1", ShoeInfo(2, "fw", "S1", ("rfid",))))
        self.send(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4], "rules": "tda", "game": "stud"}))
        self.send(CounterReset(1))
        self.deck = full_deck()
        self.dispense = 0

    def send(self, ev: object) -> list[Alert]:
        alerts = [c for c in self.m.handle(ev) if isinstance(c, Alert)]
        self.journal.append(ev)
        for a in alerts:
            self.journal.append(a)
        for rec in self.journal.records(self.published):
            payload = event_payload(rec, table="t1", session=1)
            self.floor.receive("r/tables/t1/events", json.dumps(payload).encode())
            self.published = rec.seq
        return alerts

    def card(self, seq: int, readable: bool = True) -> None:
        self.dispense += 1
        card = self.deck.pop() if readable else None
        self.send(CardRead(seq, card, "rfid" if card else "none", self.dispense, 1))

    def open_alerts(self) -> list[dict[str, Any]]:
        [row] = self.floor.snapshot()["tables"]
        return [a for a in row["alerts"] if a["code"] and a["code"].startswith("shoe-")]

    def notices(self) -> list[dict[str, Any]]:
        [row] = self.floor.snapshot()["tables"]
        return [a for a in row["notices"] if a["code"] and a["code"].startswith("shoe-")]


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    j = Journal(tmp_path / "t.sqlite3", table="t1", profile="tda", retention_days=0)
    try:
        yield Table(j)
    finally:
        j.close()


def test_a_misread_the_shoe_retried_is_a_notice_not_a_critical_alert(table: Table) -> None:
    table.card(1)
    [alert] = table.send(ShoeFault(2, FaultKind.MISREAD, False, "crc"))
    assert not alert.latched
    table.send(ShoeFault(3, FaultKind.MISREAD, True))
    assert table.open_alerts() == []  # nothing queued for a supervisor, nothing red
    [notice] = table.notices()
    assert notice["severity"] == "info" and not notice["latched"] and "read 1" in notice["message"]


def test_a_misread_that_left_its_card_unknown_is_a_warning_that_does_not_latch(table: Table) -> None:
    table.card(1, readable=False)
    table.send(ShoeFault(2, FaultKind.MISREAD, False, "no tag read"))
    table.send(ShoeFault(3, FaultKind.MISREAD, True))
    [alert] = table.open_alerts()
    assert (alert["code"], alert["severity"], alert["latched"]) == ("shoe-misread", "warning", False)


@pytest.mark.parametrize("kind", [FaultKind.JAM, FaultKind.COVER_OPEN, FaultKind.READER_ERROR])
def test_a_fault_that_stops_the_deal_is_critical_until_the_shoe_clears_it(table: Table, kind: FaultKind) -> None:
    table.card(1)
    table.send(ShoeFault(2, kind, False))
    [alert] = table.open_alerts()
    assert (alert["code"], alert["severity"], alert["latched"]) == (f"shoe-{kind.value}", "critical", False)
    table.send(ShoeFault(3, kind, True))
    [alert] = table.open_alerts()  # still queued: a supervisor signs for a shoe that stopped the deal
    assert alert["severity"] == "warning" and "cleared" in alert["message"]
    table.send(ShoeFault(4, kind, False))  # again: critical again, its own entry
    assert sorted(a["severity"] for a in table.open_alerts()) == ["critical", "warning"]
    table.send(ShoeFault(5, kind, True))  # cleared again: one entry to sign for, counted twice
    assert [(a["severity"], a["count"]) for a in table.open_alerts()] == [("warning", 2)]


def test_a_double_pull_does_not_stop_the_deal_and_is_a_warning(table: Table) -> None:
    table.card(1)
    table.send(ShoeFault(2, FaultKind.DOUBLE_PULL, False))
    [alert] = table.open_alerts()
    assert (alert["severity"], alert["latched"]) == ("warning", False)


def test_a_shoe_disconnected_in_a_hand_is_critical_until_it_is_back(table: Table) -> None:
    table.card(1)
    table.send(LinkChanged(LinkStatus.DISCONNECTED, "unplugged"))
    [alert] = table.open_alerts()
    assert (alert["code"], alert["severity"], alert["latched"]) == ("shoe-disconnected", "critical", False)
    table.send(LinkChanged(LinkStatus.CONNECTED, "shoe S1", ShoeInfo(2, "fw", "S1", ("rfid",))))
    [alert] = table.open_alerts()
    assert alert["severity"] == "warning" and "back" in alert["message"]
