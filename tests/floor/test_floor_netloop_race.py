"""A publication another thread queues just as paho finds nothing left to write reaches the broker
at once (real Mosquitto), not at the loop's next sweep: paho clears its flag of a registered write
after its look, and a publication queued between the two tells the loop nothing; the loop looks
again when paho says it has nothing left, also after a write made when a full socket became
writable (docs/floor.md, "The network loop")."""

from __future__ import annotations

import selectors
import threading
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from floor_help import ROOM, Tap
from paho.mqtt.enums import CallbackAPIVersion
from waiting import wait_for

from shoe_ctl.floor import netloop
from shoe_ctl.floor.broker import MONITOR_USER, Mosquitto
from shoe_ctl.floor.netloop import NetLoop
from shoe_ctl.floor.topics import Topics


def test_a_publication_queued_as_paho_unregisters_is_written(mosquitto: Mosquitto,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netloop, "SWEEP_EVERY_S", 3600.0)  # no sweep comes to its rescue
    monitor = mosquitto.users[MONITOR_USER]
    topics = Topics(ROOM, "t1")
    tap = Tap(mosquitto.host, mosquitto.port, monitor.username, monitor.password, topics.events)
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"table-{ROOM}-t1", protocol=mqtt.MQTTv311)
    creds = mosquitto.users["t1"]
    client.username_pw_set(creds.username, creds.password)
    connected = threading.Event()
    client.on_connect = lambda *_a: connected.set()
    net = NetLoop("floor-test-race")
    client.connect_async(mosquitto.host, mosquitto.port, keepalive=15)
    net.add(client, reconnect=False)
    unregister = client._call_socket_unregister_write
    raced: list[Any] = []

    def racing(*args: Any) -> None:
        # the other thread's publication lands here: after paho found nothing to write, while
        # its registered flag is still set (so paho tells the loop nothing of it)
        if not raced and client._registered_write:
            raced.append(client.publish(topics.events, b'{"raced": true}', qos=0))
        unregister(*args)

    try:
        assert tap.subscribed.wait(10) and connected.wait(10)
        client._call_socket_unregister_write = racing  # type: ignore[method-assign]
        conn = net._conns[id(client)]

        def full() -> None:  # as after a full socket: the first publication written when it is writable
            client.publish(topics.events, b'{"first": true}', qos=0)
            net._flush.pop(id(conn), None)
            net._watch(conn, selectors.EVENT_READ | selectors.EVENT_WRITE)

        net.call_soon(full)
        assert wait_for(lambda: len(tap.messages) == 2, 10), (raced, tap.messages)
        assert raced, "the race was made"
        assert [m[1] for m in tap.messages] == [b'{"first": true}', b'{"raced": true}']
    finally:
        net.stop()
        tap.close()


class _RacingWake:
    """The loop's wake-up socket, with another thread's call made just as the loop reads it."""

    def __init__(self, net: NetLoop) -> None:
        self.net, self.real, self.raced = net, net._wake_r, threading.Event()

    def fileno(self) -> int:
        return self.real.fileno()

    def recv(self, n: int) -> bytes:
        if not self.raced.is_set():  # as another thread's call_soon, at this moment
            self.raced.set()
            self.net._calls.append(lambda: None)
            if not self.net._woken:
                self.net._woken = True
                self.net._wake_w.send(b"\0")
        return self.real.recv(n)


def test_a_call_made_as_the_loop_reads_its_wake_up_does_not_silence_later_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netloop, "SWEEP_EVERY_S", 3600.0)  # nothing else wakes the loop
    monkeypatch.setattr(netloop, "MISC_EVERY_S", 3600.0)
    net = NetLoop("floor-test-wake")
    racing = _RacingWake(net)
    net._wake_r = racing  # type: ignore[assignment]
    try:
        net.start()
        first = threading.Event()
        net.call_soon(first.set)
        assert first.wait(10) and racing.raced.is_set()
        later = threading.Event()
        net.call_soon(later.set)  # from this thread: it must wake the loop
        assert later.wait(10), "a call after the race never ran"
    finally:
        net._wake_r = racing.real
        net.stop()
