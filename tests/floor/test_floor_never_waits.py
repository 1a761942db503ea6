"""Dealing never waits for the broker: a table whose broker is down, or whose broker accepts the
TCP connection and never answers, deals its hands as one with no floor at all, and ``handle``
returns at once; when a broker comes later, the journal (the outbox) brings the floor everything."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from floor_help import ROOM
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto, free_port
from shoe_ctl.floor.consumer import FloorConsumer

HANDLE_BOUND_S = 1.0
"""A ``handle()`` that waited on the network (a CONNECT nobody answers) would take seconds; 1 s
leaves room for a thread kept off a busy CPU."""

_inside = threading.local()


def watch_sockets(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The network socket calls made from inside ``handle()`` (by the thread running it), recorded
    from now; the network loop's own wake-up (a byte on a local socket pair, which never blocks) is
    no network call."""
    made: list[str] = []
    for name in ("connect", "connect_ex", "send", "sendall", "sendto", "recv", "recv_into", "recvfrom"):
        real = getattr(socket.socket, name)

        def watched(self: socket.socket, *args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            if getattr(_inside, "handle", False) and self.family != socket.AF_UNIX:
                made.append(_name)
            return _real(self, *args, **kw)

        monkeypatch.setattr(socket.socket, name, watched)
    return made


def deal(table: VirtualTable) -> tuple[float, list[float]]:
    """Deal every hand; (seconds, the seconds of each call handing the publisher an event's
    commands (``handle_all``, the controller's way), every call having returned)."""
    took: list[float] = []
    entered = [0]
    pub = table.publisher
    inner = pub.handle_all

    def timed(cmds: object) -> None:
        entered[0] += 1
        t = time.perf_counter()
        _inside.handle = True
        try:
            inner(cmds)  # type: ignore[arg-type]
        finally:
            _inside.handle = False
        took.append(time.perf_counter() - t)

    pub.handle_all = timed  # type: ignore[method-assign]
    table.controller.sinks.remove(pub)
    table.controller.add_sink(pub)  # the controller takes the timed handle_all
    t0 = time.monotonic()
    table.start()
    assert wait_for(lambda: table.done, 60)
    assert table.controller.wait_idle(10)
    assert took and len(took) == entered[0]  # no call still inside handle()
    return time.monotonic() - t0, took


def test_a_broker_down_or_silent_changes_nothing_at_the_table(mosquitto: Mosquitto, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    net_calls = watch_sockets(monkeypatch)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections (the kernel's backlog) and never answers a CONNECT
    runs = {}
    try:
        for name, port in (("t1", free_port()), ("t2", silent.getsockname()[1])):
            t = VirtualTable(name, tmp_path / "tables", random_hands(5, count=6), room=ROOM, host="127.0.0.1",
                             port=port, credentials=mosquitto.users[name])
            seconds, took = deal(t)
            runs[name] = (t, seconds, took)
        base = VirtualTable("t3", tmp_path / "base", random_hands(5, count=6), room=ROOM, host="127.0.0.1",
                            port=free_port(), credentials=mosquitto.users["t3"])
        base.controller.sinks.remove(base.publisher)  # no floor at all
        t0 = time.monotonic()
        base.start()
        assert wait_for(lambda: base.done, 60)
        base.controller.wait_idle(5)
        base_s = time.monotonic() - t0
        assert net_calls == [], "handle() used a socket"
        for name, (t, seconds, took) in runs.items():
            assert t.dealer.stalled is None
            assert t.dealer.stats.hands_done == base.dealer.stats.hands_done == 6
            assert t.last_seq() == base.last_seq(), f"{name}: the same journal as without a floor"
            slow = [x for x in took if x >= HANDLE_BOUND_S]
            assert slow == [], f"{name}: {len(slow)} of {len(took)} handle() calls took {HANDLE_BOUND_S:g} s or more"
            assert seconds < base_s * 3 + 2.0, f"{name}: {seconds:.1f} s against {base_s:.1f} s without a floor"
            assert not t.publisher.connected and t.publisher.published == 0
        base.close()

        # the broker comes back: the table that was cut off publishes its whole journal
        t1 = runs["t1"][0]
        t1.publisher.port = mosquitto.port
        floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                              credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
        try:
            t1.publisher.client.connect_async(mosquitto.host, mosquitto.port, keepalive=5)
            last = t1.last_seq()
            assert wait_for(lambda: floor.seqs("t1")[-1:] == [last], 30)
            assert floor.seqs("t1") == list(range(1, last + 1))
        finally:
            floor.close()
    finally:
        for t, _s, _w in runs.values():
            t.close()
        silent.close()
