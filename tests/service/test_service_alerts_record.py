"""Service alerts in the record (docs/journal.md, "Records" and "Recovery"): an alert the service
raises around the dealing machine (a tilt, a refused PIN, a start warning) is journaled marked as
the service's, so a restart's recovery, which compares the machine's replayed alerts with the
journaled ones, does not take it for a mismatch; the export and the recall still list it."""

from __future__ import annotations

import os
from pathlib import Path

from rule_profiles import PROFILES

from shoe_ctl.config import LedConfig, ShoeConfig, TableConfig
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput
from shoe_ctl.export import default_machine_factory, replay_hands
from shoe_ctl.machine import Dealing
from shoe_ctl.recall import recall_hands
from shoe_ctl.rules.cards import Card
from shoe_ctl.service import codec
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import recover
from shoe_ctl.table import Table


def _table(path: Path, shoe: str, said: list[str]) -> Table:
    """A table on a shoe line nobody answers (a pty: not simulated, so the start recovers)."""
    cfg = TableConfig(leds=LedConfig(backend="mock"), shoe=ShoeConfig(url=shoe, auth="off"))
    return Table.from_config(cfg, profiles=PROFILES,
                             journal=str(path), display=None, say=said.append)


def test_a_service_alert_is_no_mismatch_after_a_restart_and_stays_in_the_record(tmp_path: Path) -> None:
    master, slave = os.openpty()
    try:
        shoe = os.ttyname(slave)
        path = tmp_path / "j.sqlite3"
        said: list[str] = []
        with _table(path, shoe, said) as table:
            c = table.controller
            c.call_soon(lambda: c.raise_alert("auth-refused", "PIN refused for sam (display:1)"))
            c.call_soon(lambda: c.tilt("software-mismatch", "software mismatch: shoe_ctl/x.py differs"))
            assert c.wait_idle(10)
        assert not [line for line in said if "mismatch:" in line]
        for _ in range(2):  # every restart, not only the first
            said.clear()
            with _table(path, shoe, said) as table:
                assert table.controller.wait_idle(10)
            assert any(line.startswith("recovery: replayed") for line in said), said
            assert not [line for line in said if "recovery: mismatch" in line], said
        with Journal(path, table=None, profile=None, readonly=True) as j:
            alerts = [r.item for r in j.records() if r.kind == "Alert"]
            bodies = [r.body for r in j.records() if r.kind == "Alert"]
        assert [(a.code, a.service) for a in alerts] == [("auth-refused", True), ("software-mismatch", True)]
        assert all('"service":true' in b for b in bodies)
    finally:
        os.close(master)
        os.close(slave)


def _journal_with_hand(path: Path) -> Journal:
    """A journal of one hand begun, with a machine alert (a fold refused while dealing) and a
    service alert (a refused PIN) after the same input, as the controller writes them."""
    j = Journal(path, table="t", profile="tda")
    m = Dealing(PROFILES)
    for ev in (DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}), CardRead(1, Card.parse("As"), "rfid", 1),
               DealerInput(DealerAction.FOLD, 2)):
        j.append_many([ev, *[c for c in m.handle(ev) if isinstance(c, Alert)]])
    j.append_many([c for c in m.service_alert("auth-refused", "PIN refused for sam") if isinstance(c, Alert)])
    return j


def test_recovery_compares_only_the_machines_alerts(tmp_path: Path) -> None:
    with _journal_with_hand(tmp_path / "j.sqlite3") as j:
        _m, _seq, report = recover(j, lambda: Dealing(PROFILES))
        assert report.replayed == 3 and report.mismatches == [] and report.completed_alerts == 0
        # a machine alert the replay does not raise is still a mismatch
        j.append(Alert("input-wrong-time", "not raised by any replay"))
        _m, _seq, report = recover(j, lambda: Dealing(PROFILES))
        assert len(report.mismatches) == 1 and "input-wrong-time" in report.mismatches[0]


def test_an_old_record_without_the_marker_reads_as_the_machines(tmp_path: Path) -> None:
    old = codec.loads('{"code":"auth-refused","latched":false,"message":"m","moves":[],"seat":null,'
                      '"street":null,"type":"Alert","v":1}')
    assert isinstance(old, Alert) and old.service is False
    assert codec.dumps(Alert("x", "m")) == ('{"code":"x","latched":false,"message":"m","moves":[],"seat":null,'
                                            '"street":null,"type":"Alert","v":1}')  # the machine's: as before


def test_export_and_recall_keep_the_service_alerts(tmp_path: Path) -> None:
    with _journal_with_hand(tmp_path / "j.sqlite3") as j:
        hands = list(replay_hands(j, default_machine_factory))
        recalled = recall_hands(j.records, default_machine_factory, "tda")
    assert len(hands) == 1
    codes = [a.split(":")[0] for a in hands[0].alerts]
    assert "auth-refused" in codes and "input-wrong-time" in codes
    assert codes.index("input-wrong-time") < codes.index("auth-refused")  # in the order raised
    assert [e["code"] for e in recalled[0]["entries"] if e["kind"] == "alert"] == ["input-wrong-time", "auth-refused"]
