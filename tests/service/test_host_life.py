"""The host's own life in the record (shoe_ctl/service/host.py, docs/compliance.md "The host's
life"): power-on, a clean stop, an unclean stop found at the next start, the clock's
synchronisation (a seam stands for timedatectl), and the floor's clock compared with the table's;
a clock not synchronised is a warning on the display, and hands still start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rule_profiles import PROFILES
from waiting import wait_for

from shoe_ctl.config import LedConfig, TableConfig
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.service.host import HostLife, clock_sync
from shoe_ctl.service.journal import Journal
from shoe_ctl.table import Table


def host_records(path: Path) -> list[dict[str, Any]]:
    with Journal(path, table=None, profile=None, readonly=True) as j:
        return [r.data for r in j.records() if r.kind == "host"]


def test_power_on_clean_and_unclean_stops(tmp_path: Path) -> None:
    boot = tmp_path / "boot_id"
    boot.write_text("aaaa\n")
    path = tmp_path / "j.sqlite3"
    synced: list[tuple[bool | None, str]] = [(True, "seam: yes")]
    life = HostLife(boot, clock=lambda: synced[0])
    with Journal(path, table="t", profile="tda") as j:
        assert life.start(j) == []  # first start: a power-on, nothing to warn about
        life.stop()
        life.stop()  # once per start
        assert life.start(j) == []  # same boot, clean stop before: a service start
        # killed: no stop record; the next start finds it, with the clock not synchronised now
        synced[0] = (False, "seam: no")
        warnings = dict(life.start(j))
        assert set(warnings) == {"host-unclean-stop", "clock-unsynced"}
        assert "did not stop cleanly" in warnings["host-unclean-stop"] and "seam: no" in warnings["clock-unsynced"]
        boot.write_text("bbbb\n")  # rebooted
        synced[0] = (None, "seam: unknown")
        assert [c for c, _ in life.start(j)] == ["host-unclean-stop"]  # unknown sync is no warning
    events = [(r["event"], r["boot"], r.get("clock_synced")) for r in host_records(path)]
    assert events == [("power-on", "aaaa", True), ("clean-stop", "aaaa", None), ("start", "aaaa", True),
                      ("start", "aaaa", False), ("power-on", "bbbb", None)]
    assert [r.get("unclean_before") for r in host_records(path) if r["event"] != "clean-stop"] == \
        [False, False, True, True]


def test_clock_sync_reads_timedatectl(monkeypatch: Any) -> None:
    monkeypatch.setattr("shutil.which", lambda _name: "/usr/bin/timedatectl")

    class Out:
        def __init__(self, stdout: str, rc: int = 0) -> None:
            self.stdout, self.stderr, self.returncode = stdout, "", rc

    assert clock_sync(lambda *a, **k: Out("yes\n")) == (True, "timedatectl NTPSynchronized=yes")
    assert clock_sync(lambda *a, **k: Out("no\n"))[0] is False
    assert clock_sync(lambda *a, **k: Out("", 1))[0] is None
    monkeypatch.setattr("shutil.which", lambda _name: None)
    assert clock_sync() == (None, "timedatectl not found")


def test_an_unsynchronised_clock_warns_and_hands_still_start(tmp_path: Path) -> None:
    boot = tmp_path / "boot_id"
    boot.write_text("cccc\n")
    path = tmp_path / "j.sqlite3"
    table = Table.from_config(TableConfig(leds=LedConfig(backend="mock")), profiles=PROFILES, shoe_url="sim",
                              journal=str(path), display=None, say=lambda _line: None,
                              host=HostLife(boot, clock=lambda: (False, "seam: no")), wait_connected=10.0)
    with table:
        c = table.controller
        assert c.wait_idle(10)
        assert any(a["code"] == "clock-unsynced" and not a["latched"] for a in c.machine.alerts)
        # the shoe heard (a loaded machine can find it not yet, or not just now): only the clock warns
        assert wait_for(lambda: c.machine.link.status == "connected" and not c.machine.link.pending, 10)
        c.post(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
        assert c.wait_idle(10)
        assert c.machine.hand is not None, c.machine.alerts  # a warning, not a stop
    records = host_records(path)
    assert [r["event"] for r in records] == ["power-on", "clean-stop"] and records[0]["clock_synced"] is False
    with Journal(path, table=None, profile=None, readonly=True) as j:
        alerts = [json.loads(r.body) for r in j.records() if r.kind == "Alert"]
    assert any(a["code"] == "clock-unsynced" for a in alerts)


def test_the_floors_clock_against_the_tables() -> None:
    said: list[tuple[str, str]] = []
    pub = FloorPublisher(journal=None, table="t1", room="r", host="127.0.0.1", port=1,
                         report=lambda code, message: said.append((code, message)))
    now = 1_000_000.0
    pub._compare_clock(now, json.dumps({"time_us": int((now - 0.4) * 1e6)}).encode())
    assert said == []  # within 1 s
    pub._compare_clock(now, json.dumps({"time_us": int((now - 2.5) * 1e6)}).encode())
    pub._compare_clock(now, json.dumps({"time_us": int((now - 2.6) * 1e6)}).encode())
    assert [c for c, _ in said] == ["clock-skew"] and "+2.5 s" in said[0][1]
    pub._compare_clock(now, b"not json")
    pub._compare_clock(now, json.dumps({"time_us": int(now * 1e6)}).encode())
    assert [c for c, _ in said] == ["clock-skew", "clock-agrees"]


def test_the_start_reads_the_last_host_record_among_many(tmp_path: Path) -> None:
    """The start finds the newest host record from the journal's end (``Journal.newest``), past
    hundreds of later records and more than one batch of host records: an unclean stop before
    them is still told, and a clean one is not."""
    boot = tmp_path / "boot_id"
    boot.write_text("bbbb\n")
    life = HostLife(boot, clock=lambda: (True, "seam: yes"))
    with Journal(tmp_path / "j.sqlite3", table="t", profile="tda") as j:
        for k in range(150):  # more host records than one read of newest() takes
            j.append_record("host", {"event": "clean-stop", "boot": "bbbb", "k": k}, sync=False)
        assert life.start(j) == []  # the newest is a clean stop
        for k in range(700):
            j.append_record("note", {"k": k}, sync=False)
        warnings = dict(life.start(j))  # the newest host record is the start just made: unclean
        assert "host-unclean-stop" in warnings
        kinds = [r.kind for r in j.newest("host")]
        assert len(kinds) == 152 and set(kinds) == {"host"}
        seqs = [r.seq for r in j.newest("host")]
        assert seqs == sorted(seqs, reverse=True)
        assert [r.data.get("k") for r in j.newest("host")][-3:] == [2, 1, 0]
