"""The dealer's own screen always gets in (docs/security.md, "Floods and connections"): a program
holding every connection and event stream it can, from other addresses (here loopback addresses
other than 127.0.0.1), needing no token, leaves the kiosk (127.0.0.1) its slots: 8 fresh page
loads and a stream. Raw sockets on loopback, bounded counts."""

from __future__ import annotations

import json
import queue
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from test_display_limits import request
from waiting import wait_for

from shoe_ctl.display.server import DisplaySink
from shoe_ctl.web_guard import Limits, Slots


def _from(address: str, port: int) -> socket.socket:
    s = socket.socket()
    # the display listens with a backlog of 32: hundreds of connections at once, the server's
    # thread slow on a loaded machine, a dropped SYN is sent again 1 s, then 3 s later
    s.settimeout(30)
    s.bind((address, 0))
    s.connect(("127.0.0.1", port))
    return s


@pytest.fixture
def held() -> Iterator[list[socket.socket]]:
    out: list[socket.socket] = []
    yield out
    for s in out:
        s.close()


def test_a_client_holding_every_slot_does_not_lock_the_kiosk_out(held: list[socket.socket]) -> None:
    posted: queue.Queue[Any] = queue.Queue()
    lim = Limits(request_timeout_s=30.0)
    with DisplaySink(posted.put, host="127.0.0.1", port=0, limits=lim).start() as sink:
        port = sink.port
        # event streams first, from many addresses, then idle connections until none is taken
        for i in range(40):
            s = _from(f"127.0.1.{i + 1}", port)
            s.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            held.append(s)
        for i in range(200):
            held.append(_from(f"127.0.2.{i % 60 + 1}", port))
        assert wait_for(lambda: sink._open + sink._conn_refused == len(held), 30)
        # a connection is counted at accept, its stream once its request is read: wait for those
        streams = lim.max_events - lim.reserved_events
        assert wait_for(lambda: sink._streams.used == streams, 30)  # the others got every stream they may
        assert sink._open == lim.max_connections - lim.reserved_connections
        # the kiosk: 8 fresh loads of the page and its state, and its event stream
        loads = [request(port, "GET", path)[0] for _ in range(8) for path in ("/", "/state")]
        assert loads == [200] * 16
        kiosk = socket.create_connection(("127.0.0.1", port), timeout=5)
        held.append(kiosk)
        kiosk.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert kiosk.recv(64).startswith(b"HTTP/1.1 200")
        assert wait_for(lambda: sink._streams.used == streams + 1, 30)
        # one other address holds at most its own share
        refused = sink._conn_refused
        one = [_from("127.0.3.1", port) for _ in range(20)]
        held.extend(one)
        assert wait_for(lambda: sink._conn_refused == refused + len(one), 30)  # each one answered at accept
        assert sink._conns.by_address.get("127.0.3.1", 0) == 0  # the others' share is used up already


def test_slots_share() -> None:
    slots = Slots(total=64, reserved=16, per_address=8)
    assert [slots.take("10.0.0.5") for _ in range(10)].count(True) == 8
    for n in range(1, 6):
        for _ in range(8):
            slots.take(f"10.0.0.{n + 10}")
    assert slots.others == 48 and not slots.take("10.0.0.99")
    assert all(slots.take("127.0.0.1") for _ in range(16)) and not slots.take("::1")
    slots.give_back("10.0.0.5")
    assert slots.by_address["10.0.0.5"] == 7 and slots.used == 63
    assert Slots(total=8, reserved=16, per_address=8).others_max == 6  # at most a quarter kept


def _post_from(address: str, port: int) -> int:
    body = json.dumps({"action": "fold", "seat": 3}).encode()
    head = (f"POST /input HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    with _from(address, port) as s:
        s.sendall(head + body)
        reply = b""
        while chunk := s.recv(4096):
            reply += chunk
    return int(reply.split(b" ", 2)[1])


def test_many_source_addresses_do_not_multiply_the_input_rate() -> None:
    """1,000 loopback addresses, two inputs each: the per-address limit alone let every one through
    (each then journaled as a refused input); the bound on them all together takes its burst and
    no more, while the kiosk's own inputs still go in."""
    posted: queue.Queue[Any] = queue.Queue()
    lim = Limits(inputs_total_per_s=0.001, inputs_total_burst=20)  # no refill within the test
    with DisplaySink(posted.put, host="127.0.0.1", port=0, limits=lim).start() as sink:
        statuses = [_post_from(f"127.{1 + i // 250}.{i % 250 // 50}.{i % 50 + 2}", sink.port)
                    for i in range(1000) for _ in range(2)]
        assert statuses.count(202) == lim.inputs_total_burst
        assert statuses.count(429) == 2000 - lim.inputs_total_burst
        assert posted.qsize() == lim.inputs_total_burst
        # the dealer's own screen is not held back by the others' flood
        assert [request(sink.port, "POST", "/input", {"action": "fold", "seat": 2})[0] for _ in range(3)] == [202] * 3
        assert posted.qsize() == lim.inputs_total_burst + 3
