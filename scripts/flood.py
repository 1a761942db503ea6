"""Flood the loopback dealer display with refused inputs and measure the table meanwhile.

The figures of docs/security.md, "Floods and connections". In one process: the dealing machine,
the controller with a real journal (a temporary SQLite file), the display on 127.0.0.1 (no
token, as on the table's own screen). A child process posts an input the machine refuses
(``show`` seat 3 while the hand is dealing) from ``--clients`` keep-alive connections as fast as
it can for ``--seconds``. Meanwhile a card read is posted every ``--card-every`` seconds (the
time until the controller handled it is the card latency), ``GET /state`` is timed every
0.25 s, and the process's resident memory is sampled. After the flood, the run waits (at most
``--settle`` seconds) until the controller has handled everything queued.

    .venv/bin/python scripts/flood.py --seconds 5 [--clients 8] [--no-rate-limit] [--json]

Everything is bounded: the flood's duration, the number of cards (at most 52, no repeats), the
wait after the flood. Run it against another checkout with ``PYTHONPATH=that/checkout``.
"""

from __future__ import annotations

import argparse
import http.client
import inspect
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from figures import print_figures, rss_mb

from shoe_ctl.config import load_profile
from shoe_ctl.display.server import DisplaySink
from shoe_ctl.events import CardRead, DealerAction, DealerInput
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal import Journal

FLOODER = r"""
import http.client, json, sys, threading, time
port, seconds, clients = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
body = json.dumps({"action": "show", "seat": 3}).encode()
counts = {}
lock = threading.Lock()
def run():
    end = time.monotonic() + seconds
    conn = None
    while time.monotonic() < end:
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=max(0.5, end - time.monotonic()))
            conn.request("POST", "/input", body, {"Content-Type": "application/json"})
            r = conn.getresponse(); r.read(); key = str(r.status)
            if r.getheader("Connection", "").lower() == "close":
                conn.close(); conn = None
        except (OSError, http.client.HTTPException) as exc:
            key = type(exc).__name__
            if conn is not None:
                conn.close()
            conn = None
        with lock:
            counts[key] = counts.get(key, 0) + 1
threads = [threading.Thread(target=run) for _ in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(counts))
"""


def get_state(port: int, timeout: float) -> tuple[float, int]:
    """Seconds one ``GET /state`` took, and the body's length (-1 when it failed)."""
    start = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", "/state", headers={"Connection": "close"})
        body = conn.getresponse().read()
        conn.close()
        return time.monotonic() - start, len(body)
    except (OSError, http.client.HTTPException):
        return time.monotonic() - start, -1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="flood duration")
    ap.add_argument("--clients", type=int, default=8, help="parallel flooding connections")
    ap.add_argument("--card-every", type=float, default=0.5, help="seconds between card reads")
    ap.add_argument("--settle", type=float, default=90.0, help="most seconds to wait after the flood")
    ap.add_argument("--no-rate-limit", action="store_true", help="lift the display's per-client input rate")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="flood-"))
    journal = Journal(tmp / "journal.sqlite", table="flood", profile="tda")
    machine = Dealing({"tda": load_profile("tda")})
    controller = Controller(machine, journal=journal)
    handled: dict[int, float] = {}
    controller.on_handled = lambda ev, _cmds: (handled.__setitem__(ev.seq, time.monotonic())
                                               if isinstance(ev, CardRead) else None)
    kwargs: dict[str, Any] = {}
    if args.no_rate_limit and "limits" in inspect.signature(DisplaySink).parameters:
        from shoe_ctl.web_guard import Limits
        kwargs["limits"] = Limits(inputs_per_s=1e9, inputs_burst=10**9)
    display = DisplaySink(controller.post, host="127.0.0.1", port=0, **kwargs).start()
    controller.add_sink(display)
    controller.start()
    controller.post(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4, 5, 6, 7, 8]}))
    controller.wait_idle(10)

    stop = threading.Event()
    posted: dict[int, float] = {}
    probes: list[tuple[float, float, int]] = []  # (at, seconds, body length)
    rss: list[float] = [rss_mb()]
    t0 = time.monotonic()

    def cards() -> None:
        for seq in range(1, 53):
            if stop.wait(args.card_every):
                return
            posted[seq] = time.monotonic()
            controller.post(CardRead(seq, Card(seq - 1), "rfid", seq))

    def probe() -> None:
        while not stop.wait(0.25):
            took, size = get_state(display.port, 120)
            probes.append((time.monotonic() - t0, took, size))

    def memory() -> None:
        while not stop.wait(0.1):
            rss.append(rss_mb())

    workers = [threading.Thread(target=f, daemon=True) for f in (cards, probe, memory)]
    for w in workers:
        w.start()
    flood = subprocess.run([sys.executable, "-c", FLOODER, str(display.port), str(args.seconds), str(args.clients)],
                           capture_output=True, text=True, timeout=args.seconds + 120)
    flood_end = time.monotonic()
    drained = controller.wait_idle(args.settle)
    drain_s = time.monotonic() - flood_end
    time.sleep(max(0.0, 1.0 - drain_s))  # at least one more card and probe after the flood
    stop.set()
    for w in workers:
        w.join(130)
    controller.wait_idle(5)

    lat = [handled[s] - posted[s] for s in posted if s in handled]
    unhandled = [s for s in posted if s not in handled]
    snap_size = get_state(display.port, 10)[1]
    result = {
        "flood_seconds": args.seconds, "clients": args.clients, "rate_limit": not args.no_rate_limit,
        "answers": json.loads(flood.stdout or "{}"),
        "cards_posted": len(posted), "cards_unhandled": len(unhandled),
        "card_latency_max_s": round(max(lat, default=0.0), 3),
        "card_latency_median_s": round(statistics.median(lat), 3) if lat else None,
        "controller_drained": drained, "drain_after_flood_s": round(drain_s, 2),
        "state_probe_max_s": round(max((p[1] for p in probes), default=0.0), 3),
        "state_probe_failed": sum(p[2] < 0 for p in probes),
        "rss_start_mb": round(rss[0], 1), "rss_peak_mb": round(max(rss), 1), "rss_end_mb": round(rss_mb(), 1),
        "machine_alerts": len(machine.alerts), "snapshot_bytes": snap_size,
        "inputs_refused_by_controller": getattr(controller, "inputs_refused", None),
    }
    display.close()
    controller.close()
    journal.close()
    print_figures(result, args.json, 30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
