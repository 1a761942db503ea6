"""A replay of the journal is quiet: recovery at a restart and ``export`` replay the events into a
machine without logging the alerts they raise again (they were logged when raised), so a restart
does not look like new alerts; the machine logs its own alerts again once recovered."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from rule_profiles import PROFILES

from shoe_ctl.events import CardRead, DealerAction, DealerInput
from shoe_ctl.export import replay_hands
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import recover


def _journal(path: Path) -> Journal:
    j = Journal(path, table="t", profile="tda")
    m = Dealing(PROFILES)
    for ev in (DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}), CardRead(1, Card.parse("As"), "rfid", 1),
               DealerInput(DealerAction.FOLD, 2)):  # a fold refused while dealing: an alert
        j.append_many([ev, *[c for c in m.handle(ev) if type(c).__name__ == "Alert"]])
    return j


def _alert_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("alert ")]


def test_recovery_replays_without_logging_the_alerts_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with _journal(tmp_path / "j.sqlite3") as j:
        caplog.set_level(logging.INFO, logger="shoe_ctl.machine")
        machine, _seq, report = recover(j, lambda: Dealing(PROFILES))
    assert report.replayed == 3 and not report.mismatches
    assert _alert_lines(caplog) == []
    machine.handle(DealerInput(DealerAction.FOLD, 2))  # recovered: its own alerts are logged again
    assert any("input-wrong-time" in line for line in _alert_lines(caplog))


def test_export_replays_without_logging_the_alerts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from shoe_ctl.export import default_machine_factory

    with _journal(tmp_path / "j.sqlite3") as j:
        caplog.set_level(logging.INFO, logger="shoe_ctl.machine")
        hands = list(replay_hands(j, default_machine_factory))
    assert len(hands) == 1 and _alert_lines(caplog) == []
