"""A record journaled while the service stops reaches the floor before it stops (real
Mosquitto): the publisher, closed with the controller's sinks, first waits for the journal to
commit what is queued, so a table that never comes back leaves the floor no record short."""

from __future__ import annotations

from pathlib import Path

import pytest
from floor_help import ROOM
from rule_profiles import PROFILES
from waiting import wait_for

from shoe_ctl.config import LedConfig, TableConfig
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.config import FloorConfig
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.service.journal import Journal, writer
from shoe_ctl.table import Table


def test_the_last_records_reach_the_floor_before_the_stop(mosquitto: Mosquitto, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # card reads are committed in groups that may wait for company: make the wait long enough
    # that the stop surely comes while the last reads wait, and let every event's end count as
    # coming fast (within BUSY_S of the last commit), so a group lingers rather than commit at once
    monkeypatch.setattr(writer, "LINGER_S", 0.5)
    monkeypatch.setattr(writer, "BUSY_S", 3600.0)
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    path = tmp_path / "t1.journal"
    cfg = FloorConfig(enabled=True, broker=mosquitto.url, room=ROOM, credentials=str(mosquitto.credentials_file("t1")))
    try:
        assert floor.connected.wait(10)
        for round_ in range(3):
            table = Table.from_config(TableConfig(table="t1", leds=LedConfig(backend="mock")), profiles=PROFILES,
                                      shoe_url="sim", journal=str(path), display=None, floor=cfg,
                                      wait_connected=10.0)
            with table:
                with Journal(path, table=None, profile=None, readonly=True) as j:
                    first = [r.seq for r in j.records()]
                assert wait_for(lambda: floor.seqs("t1")[-1:] == first[-1:], 20)  # noqa: B023
                # cards read as the service is told to stop: journaled while it stops
                for _ in range(3):
                    table.device.pull()
                assert wait_for(lambda: table.journal.pending > 0, 5)  # noqa: B023
            with Journal(path, table=None, profile=None, readonly=True) as j:
                seqs = [r.seq for r in j.records()]
            assert len(seqs) > len(first), round_
            # the table is gone for good: what the floor has is all it will get
            assert wait_for(lambda: floor.seqs("t1") == seqs, 5), (floor.seqs("t1")[-5:], seqs[-5:])  # noqa: B023
    finally:
        floor.close()
