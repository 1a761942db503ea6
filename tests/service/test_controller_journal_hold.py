"""The controller holds the journal's writer around each event it handles (docs/journal.md, "The
writer"): a shoe event's record lingers for company while the event is handled, and is committed,
then acked, as soon as the controller is done with it, not after the writer's linger timer."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from shoe_ctl import events as E
from shoe_ctl.config import load_profile
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.journal import writer as W


class _Link:
    def __init__(self) -> None:
        self.acked: list[int] = []
        self.event = threading.Event()

    def ack(self, seq: int) -> None:
        self.acked.append(seq)
        self.event.set()


def test_a_card_is_committed_and_acked_when_its_event_ends_not_after_the_linger(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "LINGER_S", 30.0)  # were the timer what ends the linger, no ack for 30 s
    link = _Link()
    machine = Dealing({"tda": load_profile("tda"), "house": load_profile("house")}, default_rules="tda")
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as journal:
        ctl = Controller(machine, journal=journal, link=link)
        writer = journal._writer
        assert writer is not None
        during: list[tuple[bool, int]] = []
        ctl.add_hook(lambda _ev, _cmds: during.append((link.event.is_set(), len(list(journal.records())))))
        ctl.step(E.CardRead(1, Card(0), "rfid", 1))
        assert during == [(False, 0)]  # while the event is handled: queued, not committed, not acked
        assert link.event.wait(5.0)
        assert link.acked == [1]
        assert [r.shoe_seq for r in journal.records() if r.kind == "CardRead"] == [1]
