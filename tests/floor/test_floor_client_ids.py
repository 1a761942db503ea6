"""A client id belongs to its broker user (real Mosquitto, the configuration ``docs/floor.md``
gives): one table's user connecting with another table's or the floor's client id takes nobody's
connection or session, and the floor's own user never appears as a table."""

from __future__ import annotations

import json
import time

import paho.mqtt.client as mqtt
from floor_help import ROOM
from paho.mqtt.enums import CallbackAPIVersion
from waiting import wait_for

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer


class Victim:
    """A connection that counts its losses (each ``on_disconnect`` after it was up)."""

    def __init__(self, mosquitto: Mosquitto, user: str, client_id: str, *, clean: bool = True) -> None:
        self.up = 0
        self.lost = 0
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean,
                                  protocol=mqtt.MQTTv311)
        creds = mosquitto.users[user]
        self.client.username_pw_set(creds.username, creds.password)
        self.client.on_connect = self._connect
        self.client.on_disconnect = self._disconnect
        self.client.reconnect_delay_set(1, 1)
        self.client.connect(mosquitto.host, mosquitto.port)
        self.client.loop_start()

    def _connect(self, *_a: object) -> None:
        self.up += 1

    def _disconnect(self, *_a: object) -> None:
        self.lost += 1

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _attack(mosquitto: Mosquitto, user: str, client_id: str) -> list[object]:
    """Connect as ``user`` with ``client_id``, stay 0.3 s, leave; the CONNACK reasons."""
    reasons: list[object] = []
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311)
    c.username_pw_set(user, mosquitto.users[user].password)
    c.on_connect = lambda _c, _u, _f, reason, _p: reasons.append(reason)
    c.connect(mosquitto.host, mosquitto.port)
    c.loop_start()
    assert wait_for(lambda: bool(reasons), 5)
    time.sleep(0.3)
    c.disconnect()
    c.loop_stop()
    return reasons


def test_no_user_takes_another_users_client_id(mosquitto: Mosquitto) -> None:
    # the client ids the table's publisher and the floor consumer ask for, and the user names
    table = Victim(mosquitto, "t1", f"table-{ROOM}-t1")
    floor = Victim(mosquitto, FLOOR_USER, f"floor-{ROOM}", clean=False)
    try:
        assert wait_for(lambda: table.up == 1 and floor.up == 1, 5)
        for stolen in (f"table-{ROOM}-t1", f"floor-{ROOM}", "t1", FLOOR_USER):
            for _ in range(3):
                reasons = _attack(mosquitto, "t2", stolen)
                assert not reasons[0].is_failure  # type: ignore[attr-defined]
        time.sleep(0.5)
        assert (table.lost, floor.lost) == (0, 0), "a connection was taken over"
        assert (table.up, floor.up) == (1, 1)
    finally:
        table.close()
        floor.close()


def test_the_floors_user_is_no_table(mosquitto: Mosquitto) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER]).start()
    reasons: list[object] = []
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="probe", protocol=mqtt.MQTTv311)
    c.username_pw_set(FLOOR_USER, mosquitto.users[FLOOR_USER].password)
    c.on_connect = lambda _c, _u, _f, reason, _p: reasons.append(reason)
    try:
        assert floor.connected.wait(5)
        # the floor's own connection is the one the broker keeps for its user: publish through it
        base = f"{ROOM}/tables/{FLOOR_USER}"
        floor.client.publish(f"{base}/status", json.dumps({"online": True, "session": 1, "first": 1, "last": 1}),
                             qos=1, retain=True).wait_for_publish(5)
        floor.client.publish(f"{base}/events", json.dumps({"v": 1, "table": FLOOR_USER, "session": 1, "seq": 1,
                                                           "kind": "Alert", "code": "forged", "latched": True}),
                             qos=1).wait_for_publish(5)
        # a table's status after it, to know both were delivered
        c.username_pw_set("t3", mosquitto.users["t3"].password)
        c.connect(mosquitto.host, mosquitto.port)
        c.loop_start()
        assert wait_for(lambda: bool(reasons), 5)
        c.publish(f"{ROOM}/tables/t3/status", json.dumps({"online": True, "session": 1, "first": 1, "last": 0}),
                  qos=1).wait_for_publish(5)
        assert wait_for(lambda: any(r["table"] == "t3" for r in floor.snapshot()["tables"]), 5)
        assert [r["table"] for r in floor.snapshot()["tables"]] == ["t3"]
    finally:
        c.disconnect()
        c.loop_stop()
        floor.close()
