"""``python -m bench.bench_floor_engines [--rounds 3] [--events 3000] [--json]``: the floor's two
engines beyond one broker (``docs/floor.md``, "Two brokers" and "Many properties").

- ``failover``: per round, two real Mosquittos, the floor on both, two virtual tables dealing on
  broker A; A is killed (SIGKILL) mid-deal. Measured from the kill: ``moved_s`` (each table on
  broker B with the floor online there), ``floor_s`` (the floor has applied 5 more events of each
  table), and ``attempts`` (connections each table tried after the loss: 1 = straight to B);
- ``central``: one :class:`~shoe_ctl.floor.central.Replicator` sending ``--events`` events of 5
  tables, queued at once, to a real ``nats-server`` (JetStream, file store): ``events_per_s`` from
  the first to the last acknowledged (each publication waits for its acknowledgement);
- ``calibration``: the bench loop's time at start and end (``bench/calibration.py``).

Nothing is asserted. The machine is shared: compare figures with the calibration beside them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.calibration import calibrate
from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto, free_port
from shoe_ctl.floor.central import Replicator
from shoe_ctl.floor.consumer import open_consumer

ROOM = "room-b"
TABLES = ("t1", "t2")


def _wait(cond: Callable[[], object], timeout: float, poll: float = 0.005) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(poll)
    return False


def failover_round(root: Path, seed: int = 0, keepalive: int = 10) -> dict[str, Any]:
    """One round: broker A killed mid-deal; seconds until each table is on B and the floor moves on."""
    a = Mosquitto(root / "a", room=ROOM, tables=TABLES).start()
    b = Mosquitto(root / "b", room=ROOM, tables=TABLES, users=a.users).start()
    floor = open_consumer([a.url, b.url], room=ROOM, credentials=a.users[FLOOR_USER], keep_seqs=True)
    tables = [VirtualTable(n, root / "tables", random_hands(seed + i, count=8), room=ROOM, host=a.host, port=a.port,
                           credentials=a.users[n], pace=0.01, seed=seed + i, others=[(b.host, b.port)],
                           keepalive=keepalive) for i, n in enumerate(TABLES)]

    def on(t: VirtualTable, index: int) -> bool:
        c = t.publisher.choice
        return c is not None and c.index == index and c.floor_here and t.publisher.connected

    try:
        floor.start()
        _wait(lambda: floor.connected.is_set() and floor.peers[0].connected.is_set(), 10)
        for t in tables:
            t.start()
        if not _wait(lambda: all(on(t, 0) and len(floor.seqs(t.name)) > 30 for t in tables), 30):
            return {"error": "the tables did not deal on broker A"}
        before = {t.name: len(floor.seqs(t.name)) for t in tables}
        t0 = time.monotonic()
        a.stop(hard=True)
        moved: dict[str, float] = {}
        applied: dict[str, float] = {}
        while time.monotonic() < t0 + 4 * keepalive and (len(moved) < len(tables) or len(applied) < len(tables)):
            now = time.monotonic()
            for t in tables:
                if t.name not in moved and on(t, 1):
                    moved[t.name] = now - t0
                if t.name in moved and t.name not in applied and len(floor.seqs(t.name)) > before[t.name] + 5:
                    applied[t.name] = now - t0
            time.sleep(0.005)
        return {"moved_s": [round(moved.get(n, -1), 3) for n in TABLES],
                "floor_s": [round(applied.get(n, -1), 3) for n in TABLES],
                "attempts": [t.publisher.choice.attempts if t.publisher.choice else None for t in tables],
                "keepalive_s": keepalive}
    finally:
        for t in tables:
            t.close()
        floor.close()
        a.stop()
        b.stop()


def central_rate(root: Path, events: int, tables: int = 5) -> dict[str, Any]:
    """``events`` events of ``tables`` tables through a Replicator to a real nats-server."""
    binary = shutil.which("nats-server") or "/usr/sbin/nats-server"
    port = free_port()
    proc = subprocess.Popen([binary, "-js", "-sd", str(root / "store"), "-a", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rep = Replicator(f"nats://127.0.0.1:{port}", prop="bench", room=ROOM)
    try:
        def listening() -> bool:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    return True
            except OSError:
                return False

        if not _wait(listening, 10, 0.05):
            return {"error": "nats-server did not listen"}
        rep.start()
        if not rep.ready.wait(10):
            return {"error": "the replicator did not connect"}
        per = max(1, events // tables)
        t0 = time.monotonic()
        for seq in range(1, per + 1):
            for k in range(tables):
                rep.offer(f"t{k}", {"seq": seq, "kind": "CardRead", "table": f"t{k}", "time_us": seq, "dispense": seq})
        done = _wait(lambda: all(rep.positions.get(f"t{k}") == per for k in range(tables)), 300, 0.01)
        wall = time.monotonic() - t0
        return {"events": per * tables, "wall_s": round(wall, 3), "events_per_s": round(per * tables / wall),
                "complete": done, "duplicates": rep.duplicates}
    finally:
        rep.close()
        proc.terminate()
        proc.wait(10)


def run(rounds: int = 3, events: int = 3000) -> dict[str, Any]:
    """Every figure of this bench (see the module's docstring)."""
    cal_start = calibrate()
    out: dict[str, Any] = {"failover": [], "calibration": {"start": cal_start}}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            out["failover"].append(failover_round(Path(tmp) / f"round-{i}", seed=70 + 10 * i))
        out["central"] = central_rate(Path(tmp) / "nats", events)
    moved = [s for r in out["failover"] for s in r.get("moved_s", []) if s >= 0]
    if moved:
        out["failover_moved_s"] = {"p50": round(statistics.median(moved), 3), "max": round(max(moved), 3)}
    out["calibration"]["end"] = calibrate()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.bench_floor_engines", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--events", type=int, default=3000)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    result = run(args.rounds, args.events)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for r in result["failover"]:
        print(f"failover: on broker B after {r.get('moved_s')} s, floor moving on after {r.get('floor_s')} s, "
              f"attempts {r.get('attempts')} (keepalive {r.get('keepalive_s')} s) {r.get('error', '')}")
    c = result["central"]
    print(f"central: {c.get('events')} events in {c.get('wall_s')} s = {c.get('events_per_s')} events/s "
          f"{c.get('error', '')}")
    print(f"calibration: {result['calibration']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
