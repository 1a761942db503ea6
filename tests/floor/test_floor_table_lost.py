"""A table that ends without a clean stop is a critical alert on the floor until someone
acknowledges it, on a real Mosquitto: its publisher killed mid-hand, the broker sends its Last
Will, the floor raises ``table-lost`` (the header's critical count goes up, the row no longer
says its shoe is connected), the alert stays open when the table comes back, and goes only when
acknowledged; a clean stop raises nothing (docs/floor.md)."""

from __future__ import annotations

from pathlib import Path

from floor_help import ROOM
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer


def row(floor: FloorConsumer, table: str) -> dict:
    return next(r for r in floor.snapshot()["tables"] if r["table"] == table)


def lost(floor: FloorConsumer, table: str) -> list[dict]:
    return [a for a in row(floor, table)["alerts"] if a["code"] == "table-lost"]


def test_a_killed_table_is_critical_until_acknowledged(mosquitto: Mosquitto, tmp_path: Path) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER]).start()
    table = VirtualTable("t1", tmp_path / "tables", random_hands(3, count=40), room=ROOM, host=mosquitto.host,
                         port=mosquitto.port, credentials=mosquitto.users["t1"], pace=0.05)
    try:
        table.start()
        assert wait_for(lambda: "t1" in floor.tables and floor.tables["t1"].online
                        and row(floor, "t1")["hand"] is not None, 20)
        assert floor.snapshot()["alerts"]["critical"] == 0
        table.kill_publisher()  # killed mid-hand: the broker sends its Will
        assert wait_for(lambda: bool(lost(floor, "t1")), 15), row(floor, "t1")
        (alert,) = lost(floor, "t1")
        assert alert["severity"] == "critical" and alert["latched"] and "without a clean stop" in alert["message"]
        assert floor.snapshot()["alerts"]["critical"] >= 1
        # the table comes back (a new session): the alert stays until the floor acknowledges it
        assert wait_for(lambda: floor.tables["t1"].online, 15)
        assert [a["id"] for a in lost(floor, "t1")] == [alert["id"]]
        assert floor.acknowledge("t1", alert["id"], "floor supervisor") is not None
        assert lost(floor, "t1") == []
        assert [a["code"] for a in row(floor, "t1")["acknowledged"]].count("table-lost") == 1
    finally:
        table.close()
    # a clean stop: offline, nothing raised, and the row does not claim a connected shoe
    assert wait_for(lambda: not floor.tables["t1"].online, 10)
    try:
        assert lost(floor, "t1") == []
        assert row(floor, "t1")["shoe"]["status"] == "unknown"
    finally:
        floor.close()
