"""A table that says nothing for 3 keepalives is a critical floor alert, on a real Mosquitto, in the
case its Last Will never comes: the publisher stops publishing while its network loop still
answers the broker's keepalive, so the broker sees a live connection and the table's retained
status still says online. The floor raises ``table-silent``; the alert is cleared when the table
speaks again (its state, sent at least once a keepalive: the heartbeat) (docs/floor.md)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from floor_help import ROOM
from waiting import wait_for

from shoe_ctl.events import DisplayUpdate
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import SILENT_KEEPALIVES, FloorConsumer
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.floor.room import tile_status
from shoe_ctl.service.journal import Journal

KEEPALIVE = 2
"""The table's keepalive (s), its heartbeat: 2, not 1, so a busy machine's pause of a second or two
in the publisher's steps is not a silence of 3 keepalives."""


def row(floor: FloorConsumer, table: str) -> dict[str, Any]:
    return next(r for r in floor.snapshot()["tables"] if r["table"] == table)


def silent(floor: FloorConsumer) -> list[dict[str, Any]]:
    return [a for a in row(floor, "t1")["alerts"] if a["code"] == "table-silent"]


def test_a_table_whose_will_never_comes_is_silent_until_it_speaks(mosquitto: Mosquitto, tmp_path: Path) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER]).start()
    journal = Journal(tmp_path / "t1.sqlite3", table="t1", profile="tda", retention_days=0)
    pub = FloorPublisher(journal, table="t1", room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"], keepalive=KEEPALIVE, outbox=tmp_path / "t1.floor")
    pub.handle(DisplayUpdate({"state": "idle", "hand": 3, "seats": []}))
    step = pub._step
    # the silence counts from the table's last message, which may precede the hang by up to a
    # heartbeat: note when each publish is handed to paho (the floor hears it no earlier)
    sent: list[float] = []
    publish = pub.client.publish

    def noted(*args: Any, **kwargs: Any) -> Any:
        sent.append(time.time())
        return publish(*args, **kwargs)

    pub.client.publish = noted  # type: ignore[method-assign]
    try:
        pub.start()
        assert wait_for(lambda: "t1" in floor.tables and floor.tables["t1"].online
                        and floor.tables["t1"].keepalive == KEEPALIVE, 20)
        # between hands the table has nothing to say, yet the floor hears it: its heartbeat
        time.sleep(SILENT_KEEPALIVES * KEEPALIVE + 1.5)
        assert silent(floor) == [], "an idle table that sends its heartbeat is not silent"

        def mute() -> int:  # the publisher says nothing; its network loop goes on pinging
            return 0

        pub._step = mute  # type: ignore[method-assign]
        pub._poke()
        assert wait_for(lambda: bool(silent(floor)), 60), row(floor, "t1")
        (alert,) = silent(floor)
        assert alert["time_us"] / 1e6 - sent[-1] > SILENT_KEEPALIVES * KEEPALIVE, (alert, sent[-3:])
        assert alert["severity"] == "critical" and alert["hand"] == 3
        assert floor.tables["t1"].online, "no Will came: the broker still sees the connection"
        assert tile_status(row(floor, "t1")) == "silent"
        assert floor.snapshot()["alerts"]["critical"] == 1

        pub._step = step  # type: ignore[method-assign]
        pub._poke()  # the table speaks again
        assert wait_for(lambda: silent(floor) == [], 10), row(floor, "t1")
        cleared = [a for a in row(floor, "t1")["acknowledged"] if a["code"] == "table-silent"]
        assert len(cleared) == 1 and cleared[0]["acked"]["by"] is None and cleared[0]["acked"]["cleared"]
        assert floor.snapshot()["alerts"]["critical"] == 0 and tile_status(row(floor, "t1")) == "idle"
    finally:
        pub.close()
        journal.close()
        floor.close()
