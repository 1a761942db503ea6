"""The floor works with its sockets numbered above 1,023 (real Mosquitto): paho's own loop uses
``select()``, which cannot watch such a descriptor (the client reconnects forever and delivers
nothing); the floor's network loop (``shoe_ctl.floor.netloop``, epoll) has no such limit."""

from __future__ import annotations

import gc
import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest
from floor_help import ROOM
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.netloop import NetLoop

SELECT_LIMIT = 1024
"""``FD_SETSIZE``: select() cannot watch a descriptor at or above it."""


def take_low(fds: list[int]) -> None:
    """Take every free descriptor below 1,100 (each ``open`` gets the lowest free number), also
    those an earlier test's sockets left when the collector closed them."""
    gc.collect()
    while True:
        fd = os.open(os.devnull, os.O_RDONLY)
        if fd >= SELECT_LIMIT + 75:
            os.close(fd)
            return
        fds.append(fd)


@pytest.fixture
def low_descriptors_taken() -> Iterator[list[int]]:
    """Every descriptor below 1,100 taken by /dev/null, so the next sockets are numbered above
    1,024 (the soft limit raised for the test, and put back)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip(f"the open-files hard limit is {hard}: the test needs {want} descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    fds: list[int] = []
    try:
        take_low(fds)
        yield fds
    finally:
        for fd in fds:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_events_reach_the_floor_over_sockets_above_1024(mosquitto: Mosquitto, tmp_path: Path,
                                                        low_descriptors_taken: list[int]) -> None:
    take_low(low_descriptors_taken)
    net = NetLoop("floor-net-test")  # the table's publisher on a loop of its own, its sockets high too
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    t = VirtualTable("t1", tmp_path / "tables", random_hands(5, count=2), room=ROOM, host=mosquitto.host,
                     port=mosquitto.port, credentials=mosquitto.users["t1"], loop=net)
    try:
        assert floor.connected.wait(10)
        consumer_sock = floor.client.socket()
        assert consumer_sock is not None and consumer_sock.fileno() >= SELECT_LIMIT
        take_low(low_descriptors_taken)
        t.start()
        assert wait_for(lambda: t.done, 60)
        t.controller.wait_idle(5)
        table_sock = t.publisher.client.socket()
        assert table_sock is not None and table_sock.fileno() >= SELECT_LIMIT
        last = t.last_seq()
        assert last > 20
        assert wait_for(lambda: floor.seqs("t1") == list(range(1, last + 1)), 30), floor.seqs("t1")[-5:]
        assert floor.tables["t1"].online
    finally:
        t.close()
        floor.close()
        net.stop()
