"""Hold connections against the loopback dealer display and count what it keeps open.

The figures of docs/security.md, "Floods and connections" (connections). A display on
127.0.0.1 with a token; then, each bounded in count and time:

- slowloris: ``--slowloris`` connections send a request head one header line every second and
  never finish it; how many are still open after ``--hold`` seconds;
- idle: ``--idle`` connections that send nothing; how many the server kept (accepted and not
  closed within a second);
- wrong tokens: POSTs with a wrong token for ``--guess-seconds`` from one connection at a time;
  how many were compared (401) and how many refused unread (429);
- a stalled event stream: one ``/events`` client that reads nothing while 200 updates of 50 KB
  are published; whether the server closed it, and the process's memory growth;
- the dealer port: a client that reads nothing while 1,000 updates of 50 KB are handed over
  10 s (commands still queued, memory growth), then a nesting bomb line followed by a dealer
  input (whether the input is still taken).

    .venv/bin/python scripts/connections.py [--slowloris 200] [--hold 30] [--json]

Run it against another checkout with ``PYTHONPATH=that/checkout``.
"""

from __future__ import annotations

import argparse
import http.client
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from figures import print_figures, rss_mb

from shoe_ctl.display.server import DisplaySink
from shoe_ctl.events import DealerAction, DealerInput, DisplayUpdate
from shoe_ctl.service import codec
from shoe_ctl.service.dealer_port import DealerPort

TOKEN = "flood-test-token-0123456789"


def is_open(s: socket.socket) -> bool:
    s.settimeout(0.01)
    try:
        return s.recv(4096) != b""
    except TimeoutError:
        return True
    except OSError:
        return False


def slowloris(port: int, count: int, hold: float) -> int:
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        socks.append(s)
    end = time.monotonic() + hold
    while time.monotonic() < end:
        time.sleep(1.0)
        for s in socks:
            try:
                s.sendall(b"X-Slow: 1\r\n")
            except OSError:
                pass
    still = sum(is_open(s) for s in socks)
    for s in socks:
        s.close()
    return still


def idle(port: int, count: int) -> int:
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]
    time.sleep(1.0)
    kept = sum(is_open(s) for s in socks)
    for s in socks:
        s.close()
    return kept


def guesses(port: int, seconds: float) -> dict[str, int]:
    counts: dict[str, int] = {}
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("POST", "/input", b'{"action": "undo"}',
                         {"Content-Type": "application/json", "X-Shoe-Token": f"guess-{i:024d}"})
            key = str(conn.getresponse().status)
        except (OSError, http.client.HTTPException) as exc:
            key = type(exc).__name__
        conn.close()
        counts[key] = counts.get(key, 0) + 1
    return counts


def stalled_stream(sink: DisplaySink) -> dict[str, object]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", sink.port))
    s.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{sink.port}\r\n\r\n".encode())
    time.sleep(0.5)
    before = rss_mb()
    for i in range(200):
        sink.handle(DisplayUpdate({"hand": 1, "state": "dealing", "filler": f"{i}" + "x" * 50_000}))
        time.sleep(0.01)
    time.sleep(12)  # past the write deadline
    s.settimeout(2)
    closed = False
    try:
        while True:
            if not s.recv(1 << 20):
                closed = True
                break
    except TimeoutError:
        pass
    except OSError:
        closed = True
    s.close()
    return {"closed_by_server": closed, "rss_growth_mb": round(rss_mb() - before, 1)}


def dealer_port() -> dict[str, object]:
    got = threading.Event()
    path = Path(tempfile.mkdtemp(prefix="dealer-port-")) / "d.sock"
    port = DealerPort(path, lambda ev: got.set()).start()
    c = socket.socket(socket.AF_UNIX)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect(str(path))
    try:
        time.sleep(0.2)
        before = rss_mb()
        for i in range(1000):
            port.handle(DisplayUpdate({"hand": i, "filler": "x" * 50_000}))
            time.sleep(0.01)
        time.sleep(1.0)
        queued, growth = port._out.qsize(), round(rss_mb() - before, 1)
    finally:
        c.close()
    c = socket.socket(socket.AF_UNIX)
    c.connect(str(path))
    time.sleep(0.5)
    c.sendall(b"[" * 30_000 + b"]" * 30_000 + b"\n")
    time.sleep(0.5)
    c.sendall(codec.dumps(DealerInput(DealerAction.UNDO)).encode() + b"\n")
    taken = got.wait(5)
    c.close()
    port.close()
    return {"stalled_queued": queued, "stalled_rss_growth_mb": growth, "input_taken_after_bomb": taken}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slowloris", type=int, default=200)
    ap.add_argument("--hold", type=float, default=30.0)
    ap.add_argument("--idle", type=int, default=200)
    ap.add_argument("--guess-seconds", type=float, default=3.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sink = DisplaySink(lambda ev: None, host="127.0.0.1", port=0, token=TOKEN).start()
    try:
        result = {
            "slowloris": args.slowloris, "hold_s": args.hold,
            "slowloris_still_open": slowloris(sink.port, args.slowloris, args.hold),
            "idle": args.idle, "idle_kept": idle(sink.port, args.idle),
            "guess_seconds": args.guess_seconds, "guess_answers": guesses(sink.port, args.guess_seconds),
            "stalled_stream": stalled_stream(sink),
            "dealer_port": dealer_port(),
        }
    finally:
        sink.close()
    print_figures(result, args.json, 22)
    return 0


if __name__ == "__main__":
    sys.exit(main())
