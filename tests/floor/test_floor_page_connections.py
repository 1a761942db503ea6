"""The floor page under a connection flood (real Mosquitto, ``shoe-ctl floor`` in a process with
the usual 1,024-descriptor limit): 1,100 connections from many addresses, idle or trickling a
request head, neither blind the page nor keep the consumer from the broker (it reconnects after a
broker restart meanwhile), and no traceback is written. Loopback only, bounded counts."""

from __future__ import annotations

import json
import re
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from floor_help import ROOM

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto

CONNECTIONS = 1100
LIMIT = 1024


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def _state(url: str) -> dict[str, object] | None:
    try:
        return json.loads(urllib.request.urlopen(url + "state", timeout=3).read())  # type: ignore[no-any-return]
    except OSError:
        return None


def _connected(url: str, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        state = _state(url)
        if state is not None and state["connected"] is True:
            return True
        time.sleep(0.2)
    return False


def test_the_floor_page_keeps_serving_and_following_under_1100_connections(mosquitto: Mosquitto,
                                                                            tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < CONNECTIONS + 200:
        import pytest

        pytest.skip(f"this test holds {CONNECTIONS} sockets; the descriptor limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, CONNECTIONS + 500)), hard))
    creds = mosquitto.credentials_file(FLOOR_USER)
    proc = subprocess.Popen([sys.executable, "-m", "shoe_ctl.cli", "floor", "--broker", mosquitto.url, "--room", ROOM,
                             "--credentials", str(creds), "--listen", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True, preexec_fn=_limit)
    held: list[socket.socket] = []
    try:
        assert proc.stderr is not None
        match = re.search(r"floor page: (http://127\.0\.0\.1:(\d+)/)", proc.stderr.readline())
        assert match
        url, port = match.group(1), int(match.group(2))
        assert _connected(url, 10)
        for i in range(CONNECTIONS):
            s = socket.socket()
            s.settimeout(5)
            s.bind((f"127.0.{10 + i // 200}.{i % 200 + 1}", 0))
            try:
                s.connect(("127.0.0.1", port))
                if i % 2:
                    s.sendall(b"GET /state HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # a head never finished
            except OSError:
                pass
            held.append(s)
        # the page answers its own machine, and the consumer follows the broker through a restart
        state = _state(url)
        assert state is not None and state["room"] == ROOM
        mosquitto.restart(down_s=1.0)
        assert _connected(url, 20), "the consumer did not reconnect to the broker"
        assert _state(url) is not None
    finally:
        for s in held:
            s.close()
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait(5)
        err = proc.stderr.read() if proc.stderr is not None else ""
    assert code == 0
    assert "Traceback" not in err, err[-3000:]
    assert len(err.splitlines()) < 20, err[-3000:]
