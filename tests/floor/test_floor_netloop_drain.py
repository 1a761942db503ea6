"""The network loop's look for packets already received after a read (docs/floor.md, "The network
loop"): a client added with ``drain`` off (a table's publisher: about one PUBACK a turn) is read
without the ``FIONREAD`` look and still gets every packet of a burst, each in a later turn of the
selector; a client with it on (the floor consumer) reads a burst in one turn (real Mosquitto)."""

from __future__ import annotations

import threading
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from floor_help import ROOM
from paho.mqtt.enums import CallbackAPIVersion
from waiting import wait_for

from shoe_ctl.floor import netloop
from shoe_ctl.floor.broker import MONITOR_USER, Mosquitto
from shoe_ctl.floor.netloop import NetLoop
from shoe_ctl.floor.topics import Topics

BURST = 40


@pytest.mark.parametrize("drain", [False, True])
def test_every_packet_of_a_burst_is_read_with_and_without_the_look(mosquitto: Mosquitto, drain: bool,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    looks: list[int] = []
    real = netloop._readable
    monkeypatch.setattr(netloop, "_readable", lambda sock: looks.append(1) or real(sock))
    topic = Topics(ROOM, "t1").events
    monitor = mosquitto.users[MONITOR_USER]
    got: list[bytes] = []
    subscribed = threading.Event()
    reader = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="drain-reader", protocol=mqtt.MQTTv311)
    reader.username_pw_set(monitor.username, monitor.password)
    reader.on_connect = lambda c, *_a: c.subscribe(topic, qos=0)
    reader.on_subscribe = lambda *_a: subscribed.set()
    reader.on_message = lambda _c, _u, msg: got.append(bytes(msg.payload))
    net = NetLoop("floor-test-drain")
    reader.connect_async(mosquitto.host, mosquitto.port, keepalive=15)
    net.add(reader, reconnect=False, drain=drain)
    creds = mosquitto.users["t1"]
    writer = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"table-{ROOM}-t1", protocol=mqtt.MQTTv311)
    writer.username_pw_set(creds.username, creds.password)
    try:
        assert subscribed.wait(10)
        looks.clear()
        writer.connect(mosquitto.host, mosquitto.port)
        sent: list[Any] = [writer.publish(topic, b"%d" % n, qos=0) for n in range(BURST)]
        writer.loop_start()
        assert wait_for(lambda: len(got) == BURST, 10), f"{len(got)} of {BURST} read"
        assert got == [b"%d" % n for n in range(BURST)] and all(s.rc == 0 for s in sent)
        if drain:
            assert looks, "the burst's packets were looked for after each read"
        else:
            assert not looks, "no FIONREAD look without drain"
    finally:
        writer.loop_stop()
        writer.disconnect()
        net.stop()
