"""ShoeLink against a port where no shoe answers: silence, garbage. The consumer is told."""

from __future__ import annotations

import functools
import os
import queue
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from socket_burst import BROKEN_BURST, BROKEN_FRAMES, count_socket_reads
from waiting import wait_for

from drivers.shoe import ShoeLink
from shoe_ctl.events import LinkChanged, LinkStatus


@pytest.fixture
def tcp_device() -> Iterator[Callable[[Callable[[socket.socket, threading.Event], None]], str]]:
    """A TCP 'device' that behaves as given for each connection; yields a factory of URLs."""
    stop = threading.Event()
    servers: list[socket.socket] = []

    def make(behaviour: Callable[[socket.socket, threading.Event], None]) -> str:
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        srv.settimeout(0.1)
        servers.append(srv)

        def accept() -> None:
            while not stop.is_set():
                try:
                    conn, _ = srv.accept()
                except OSError:
                    continue
                threading.Thread(target=behaviour, args=(conn, stop), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
        return f"socket://127.0.0.1:{srv.getsockname()[1]}"

    yield make
    stop.set()
    for srv in servers:
        srv.close()


def _silent(conn: socket.socket, stop: threading.Event, ready: threading.Event) -> None:
    ready.set()
    stop.wait(10)
    conn.close()


def _garbage(conn: socket.socket, stop: threading.Event, ready: threading.Event) -> None:
    try:
        conn.sendall(b"\x55\x00" + os.urandom(1024))  # a broken frame first, then noise
        ready.set()
        while not stop.is_set():
            conn.sendall(os.urandom(1024))
            time.sleep(0.01)
    except OSError:
        pass
    conn.close()


@pytest.mark.parametrize(("behaviour", "bad_frames"), [(_silent, False), (_garbage, True)])
def test_a_port_with_no_shoe_is_reported_not_waited_on_in_silence(
        tcp_device: Callable[..., str], behaviour: Callable[..., None], bad_frames: bool) -> None:
    """The port opens but no HELLO ever comes (a silent device, or one sending noise): after the
    silence limit the consumer gets a ``disconnected`` event saying so (was: no event at all)."""
    ready = threading.Event()
    url = tcp_device(functools.partial(behaviour, ready=ready))
    events: queue.Queue[Any] = queue.Queue()
    link = ShoeLink(url, events, silence_s=0.3)
    try:
        with link._lock:  # the link's session (and its silence) starts once the device has begun
            link.start()
            assert ready.wait(10)
        ev = events.get(timeout=5)
    finally:
        link.close()
    assert isinstance(ev, LinkChanged)
    assert ev.status is LinkStatus.DISCONNECTED
    assert "no HELLO" in ev.detail and url in ev.detail
    counted = re.search(r"\((\d+) bad frames", ev.detail)
    assert counted is not None
    assert (int(counted.group(1)) > 0) is bad_frames


def test_a_burst_on_a_socket_port_is_read_in_a_few_reads(tcp_device: Callable[..., str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """pyserial's socket:// port says only whether a byte waits; the link drains what waits in one
    read that does not wait. 1,000 broken frames sent at once (51 kB) are all counted, in a few
    dozen reads at most, not two bytes a read (about 25,000 reads, a core's worth of CPU for a
    device streaming noise)."""
    reads = count_socket_reads(monkeypatch)
    sent = threading.Event()

    def burst(conn: socket.socket, stop: threading.Event) -> None:
        # pyserial's socket open discards what came before it returned: the link's first
        # HOST_HELLO says it is open
        conn.settimeout(10)
        conn.recv(1)
        conn.sendall(BROKEN_BURST)
        sent.set()
        stop.wait(10)
        conn.close()

    link = ShoeLink(tcp_device(burst), queue.Queue(), silence_s=30.0)
    try:
        link.start()
        assert sent.wait(10)
        wait_for(lambda: link.stats.bad_frames >= BROKEN_FRAMES, 10)
        assert link.stats.bad_frames == BROKEN_FRAMES
        assert reads[0] < 200, reads[0]
    finally:
        link.close()
