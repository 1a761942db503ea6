"""Helpers for the floor tests: collect every message of a topic filter (to wait for a condition:
``waiting.wait_for``)."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from waiting import wait_for

ROOM = "room-9"
"""The room of the floor tests' broker (``tests/floor/conftest.py``)."""

TABLES = ("t1", "t2", "t3")
"""The tables that broker has users for."""

FLOORS = ("floor", "floor-2")
"""Its floor users: a second floor consumer needs a user of its own (one connection per user)."""


def closed_port() -> int:
    """A loopback port nothing listens on (a broker that is away)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Tap:
    """A client subscribed to ``topic`` (QoS 1) that keeps every (topic, raw payload, json)."""

    def __init__(self, host: str, port: int, user: str, password: str, topic: str = "#",
                 client_id: str = "tap") -> None:
        self.messages: list[tuple[str, bytes, Any]] = []
        self.lock = threading.Lock()
        self.subscribed = threading.Event()
        self.refused: Any = None
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id)
        self.client.username_pw_set(user, password)
        self.client.on_connect = self._connect
        self.client.on_subscribe = lambda *_a: self.subscribed.set()
        self.client.on_message = self._message
        self.topic = topic
        self.client.connect(host, port)
        self.client.loop_start()

    def _connect(self, client: mqtt.Client, _ud: Any, _flags: Any, reason: Any, _props: Any) -> None:
        if reason.is_failure:
            self.refused = reason
            return
        client.subscribe(self.topic, qos=1)

    def _message(self, _c: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            data = json.loads(msg.payload)
        except ValueError:
            data = None
        with self.lock:
            self.messages.append((msg.topic, bytes(msg.payload), data))

    def snapshot(self) -> list[tuple[str, bytes, Any]]:
        with self.lock:
            return list(self.messages)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def dealt(tables: Any, timeout: float = 60.0) -> dict[str, int]:
    """Wait until every virtual table (``hil.floor_rig.VirtualTable``) dealt all its hands without
    a stall and its controller is idle; the newest journal sequence of each, by name."""
    assert wait_for(lambda: all(t.done for t in tables), timeout), [t.dealer.stalled for t in tables]
    assert all(t.dealer.stalled is None for t in tables)
    for t in tables:
        t.controller.wait_idle(5)
    return {t.name: t.last_seq() for t in tables}
