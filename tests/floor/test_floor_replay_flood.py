"""A floor user flooding a table's ``replay`` topic with ``{"from": 1}`` (real Mosquitto): the table
replays its journal a bounded number of times, not once per request, and a floor that joins at the
same moment and asks for the journal itself still gets every record once and in order
(docs/floor.md, "Replay requests")."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import paho.mqtt.client as mqtt
from floor_help import FLOORS, ROOM
from paho.mqtt.enums import CallbackAPIVersion
from waiting import wait_for

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.netloop import NetLoop
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.floor.replay_gate import REPLAY_GAP_S
from shoe_ctl.floor.topics import Topics
from shoe_ctl.service.journal.records import Record

RECORDS = 1500
REQUESTS = 1000


class _Journal:
    """A journal of ``n`` committed records (read only here)."""

    def __init__(self, n: int) -> None:
        self.rows = [Record(seq, 1_000 + seq, "note", None, None, json.dumps({"n": seq})) for seq in range(1, n + 1)]

    def records(self, since: int | None) -> Any:
        return iter(self.rows[since or 0:])


def test_a_flood_of_replay_requests_makes_a_bounded_number_of_replays(mosquitto: Mosquitto) -> None:
    net = NetLoop("floor-pub-test")
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    pub = FloorPublisher(_Journal(RECORDS), table="t1", room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"], loop=net)
    flooder = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="flooder")
    creds = mosquitto.users[FLOORS[1]]
    flooder.username_pw_set(creds.username, creds.password)
    late: FloorConsumer | None = None
    try:
        assert floor.connected.wait(10)
        pub.start()
        assert wait_for(lambda: pub.acked == RECORDS, 30), pub.acked
        flooder.connect(mosquitto.host, mosquitto.port)
        flooder.loop_start()
        started = time.monotonic()
        topic = Topics(ROOM, "t1").replay
        for _ in range(REQUESTS):
            flooder.publish(topic, b'{"from": 1}', qos=0)
        assert wait_for(lambda: pub.replay_requests >= REQUESTS, 30), pub.replay_requests
        flood_s = time.monotonic() - started
        assert wait_for(lambda: not pub.replays.under_way and pub.replays.due() is None, 30)
        gate = pub.replays
        # one replay, then at most one per cooldown while the requests came
        bound = 2 + math.ceil(flood_s / REPLAY_GAP_S)
        assert 1 <= gate.started <= bound, (gate.started, bound, flood_s)
        assert gate.folded + gate.deferred >= REQUESTS - gate.started
        assert pub.republished <= gate.started * RECORDS, (pub.republished, gate.started)
        assert floor.seqs("t1") == list(range(1, RECORDS + 1)), "the floor took each record once, in order"
        # a floor that joins now reads the birth (last: RECORDS) and asks for the journal itself
        replays = gate.started
        late = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                             credentials=mosquitto.users[FLOORS[1]], keep_seqs=True)
        flooder.disconnect()  # the late floor takes the flooder's user (one connection per user)
        flooder.loop_stop()
        late.start()
        assert wait_for(lambda: late is not None and late.seqs("t1") == list(range(1, RECORDS + 1)), 60), \
            late.seqs("t1")[:5]
        assert late.tables["t1"].replays_asked >= 1 and gate.started > replays
    finally:
        flooder.disconnect()
        flooder.loop_stop()
        for consumer in (floor, late):
            if consumer is not None:
                consumer.close()
        pub.close(timeout=1.0)
        net.stop()
