"""Per-table users and the ACL on a real Mosquitto (a table publishes only under its own topics,
the floor reads and asks for replays, a wrong password is refused), and the Last Will: a killed
publisher's table shows offline; its next connection's session is newer, and a Will of an older
session arriving after it is not believed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from floor_help import ROOM, Tap
from paho.mqtt.enums import CallbackAPIVersion
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, MONITOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer


def client(mosquitto: Mosquitto, user: str, password: str | None = None) -> tuple[mqtt.Client, list[object]]:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"probe-{user}-{time.monotonic_ns()}")
    c.username_pw_set(user, password if password is not None else mosquitto.users[user].password)
    reasons: list[object] = []
    c.on_connect = lambda _c, _u, _f, reason, _p: reasons.append(reason)
    c.connect(mosquitto.host, mosquitto.port)
    c.loop_start()
    assert wait_for(lambda: bool(reasons), 5)
    return c, reasons


def test_tables_publish_only_their_own_topics(mosquitto: Mosquitto) -> None:
    """Each publication on a connection of its own: Mosquitto 2.0 acknowledges a denied
    publication and then drops the connection."""
    mon = mosquitto.users[MONITOR_USER]
    tap = Tap(mosquitto.host, mosquitto.port, mon.username, mon.password, "#")
    assert tap.subscribed.wait(5)
    bad, rb = client(mosquitto, "t2", "not-the-password")
    bad.disconnect()
    bad.loop_stop()
    assert rb[0].is_failure  # type: ignore[attr-defined]
    base = f"{ROOM}/tables"
    sent = [
        ("t1", f"{base}/t1/state", True), ("t1", f"{base}/t1/events", True), ("t1", f"{base}/t2/state", False),
        ("t1", f"{base}/t2/events", False), ("t1", f"{base}/t1/replay", False), ("t1", "elsewhere/x", False),
        (FLOOR_USER, f"{base}/t1/replay", True), (FLOOR_USER, f"{base}/t1/state", False),
        (FLOOR_USER, f"{base}/t1/events", False),
    ]
    try:
        for i, (user, topic, _ok) in enumerate(sent):
            c, reasons = client(mosquitto, user)
            assert not reasons[0].is_failure  # type: ignore[attr-defined]
            try:
                c.publish(topic, json.dumps({"probe": i}), qos=1).wait_for_publish(5)
            except RuntimeError:
                pass  # dropped after a denied publication
            c.disconnect()
            c.loop_stop()
        c, _r = client(mosquitto, "t1")
        c.publish(f"{base}/t1/status", json.dumps({"probe": "end"}), qos=1).wait_for_publish(5)
        c.disconnect()
        c.loop_stop()
        assert wait_for(lambda: any(d == {"probe": "end"} for _t, _r, d in tap.snapshot()), 5)
        got = {d["probe"] for _t, _r, d in tap.snapshot() if isinstance(d, dict) and isinstance(d.get("probe"), int)}
        assert got == {i for i, (_u, _t, ok) in enumerate(sent) if ok}
    finally:
        tap.close()


def test_last_will_and_sessions(mosquitto: Mosquitto, tmp_path: Path) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER]).start()
    table = VirtualTable("t1", tmp_path / "tables", random_hands(3, count=2), room=ROOM, host=mosquitto.host,
                         port=mosquitto.port, credentials=mosquitto.users["t1"], pace=0.01)
    mon = mosquitto.users[MONITOR_USER]
    tap = Tap(mosquitto.host, mosquitto.port, mon.username, mon.password, f"{ROOM}/tables/t1/status")
    try:
        assert tap.subscribed.wait(5)
        table.start()
        assert wait_for(lambda: "t1" in floor.tables and floor.tables["t1"].online, 10)
        first = floor.tables["t1"].session
        table.kill_publisher()  # the broker sends the Will: offline, same session
        assert wait_for(lambda: {"v": 1, "table": "t1", "online": False, "session": first}
                        in [d for _t, _r, d in tap.snapshot()], 10), "the Will was sent"
        assert wait_for(lambda: floor.tables["t1"].session > first and floor.tables["t1"].online, 15)
        newer = floor.tables["t1"].session
        # the Will of the killed connection (older session) arriving late changes nothing (sent
        # on the table's own connection: the broker keeps one connection per user)
        table.publisher.client.publish(f"{ROOM}/tables/t1/status", json.dumps({"online": False, "session": first}),
                                       qos=1, retain=True).wait_for_publish(5)
        assert wait_for(lambda: floor.tables["t1"].stale_wills >= 1, 5)
        assert floor.tables["t1"].online and floor.tables["t1"].session == newer
        # a clean stop marks the table offline with its current session
        assert wait_for(lambda: table.done, 30)
        table.close()
        assert wait_for(lambda: not floor.tables["t1"].online, 10)
    finally:
        table.close()
        floor.close()
        tap.close()
