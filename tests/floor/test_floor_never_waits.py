"""Dealing never waits for the broker: a table whose broker is down, or whose broker accepts the
TCP connection and never answers, deals its hands as one with no floor at all, and ``handle``
returns at once; when a broker comes later, the journal (the outbox) brings the floor everything."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from floor_help import ROOM, wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto, free_port
from shoe_ctl.floor.consumer import FloorConsumer


def deal(table: VirtualTable) -> tuple[float, float]:
    """Deal every hand; (seconds, slowest handle() in seconds)."""
    slowest = [0.0]
    pub = table.publisher
    inner = pub.handle

    def timed(cmd: object) -> None:
        t = time.perf_counter()
        inner(cmd)  # type: ignore[arg-type]
        slowest[0] = max(slowest[0], time.perf_counter() - t)

    pub.handle = timed  # type: ignore[method-assign]
    t0 = time.monotonic()
    table.start()
    assert wait_for(lambda: table.done, 60)
    table.controller.wait_idle(5)
    return time.monotonic() - t0, slowest[0]


def test_a_broker_down_or_silent_changes_nothing_at_the_table(mosquitto: Mosquitto, tmp_path: Path) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections (the kernel's backlog) and never answers a CONNECT
    runs = {}
    try:
        for name, port in (("t1", free_port()), ("t2", silent.getsockname()[1])):
            t = VirtualTable(name, tmp_path / "tables", random_hands(5, count=6), room=ROOM, host="127.0.0.1",
                             port=port, credentials=mosquitto.users[name])
            seconds, slowest = deal(t)
            runs[name] = (t, seconds, slowest)
        base = VirtualTable("t3", tmp_path / "base", random_hands(5, count=6), room=ROOM, host="127.0.0.1",
                            port=free_port(), credentials=mosquitto.users["t3"])
        base.controller.sinks.remove(base.publisher)  # no floor at all
        t0 = time.monotonic()
        base.start()
        assert wait_for(lambda: base.done, 60)
        base.controller.wait_idle(5)
        base_s = time.monotonic() - t0
        for name, (t, seconds, slowest) in runs.items():
            assert t.dealer.stalled is None
            assert t.dealer.stats.hands_done == base.dealer.stats.hands_done == 6
            assert t.last_seq() == base.last_seq(), f"{name}: the same journal as without a floor"
            # a sink that waited on the network would take seconds; 50 ms leaves room for a busy CPU
            assert slowest < 0.05, f"{name}: handle() took {slowest * 1000:.1f} ms"
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
