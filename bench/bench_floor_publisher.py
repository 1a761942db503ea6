"""``python -m bench.bench_floor_publisher [--tables N] [--seconds S] [--display] [--json]``: the
table's floor publisher's cost per event — N virtual tables (:class:`hil.floor_rig.VirtualTable`)
in this process at a dealer's pace with bursts against a real Mosquitto and a floor consumer, the
CPU of the publisher threads and their network loop per journal record, and what reached the
broker per record by topic (messages and mean bytes, read by a monitor subscribed to the room),
with the calibration loop and the load average before and after. ``docs/floor.md`` ("The
publisher's cost per event") records the figures.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bench.calibration import calibrate, describe

ROOM = "bench"


def _publisher_cpu_s() -> float:
    """CPU seconds of this process's live publisher threads (``floor-pub-*``: each table's and the
    publishers' network loop)."""
    total = 0.0
    for t in threading.enumerate():
        if t.name.startswith("floor-pub") and t.ident is not None:
            try:
                total += time.clock_gettime(time.pthread_getcpuclockid(t.ident))
            except OSError:
                pass
    return total


def measure(tables: int = 20, seconds: float = 30.0, pace: float = 0.5, display: bool = False) -> dict[str, Any]:
    """Run ``tables`` tables for ``seconds`` and return the figures (see the module's text).

    :raises RuntimeError: mosquitto missing or not starting.
    """
    from hil.dealer import random_hands
    from hil.floor_rig import VirtualTable
    from shoe_ctl.floor.broker import FLOOR_USER, MONITOR_USER, Mosquitto
    from shoe_ctl.floor.config import Credentials
    from shoe_ctl.floor.consumer import FloorConsumer

    names = [f"t{i + 1:03d}" for i in range(tables)]
    counts: collections.Counter[str] = collections.Counter()
    sizes: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()

    def on_message(_c: mqtt.Client, _u: object, msg: mqtt.MQTTMessage) -> None:
        leaf = msg.topic.rsplit("/", 1)[-1]
        with lock:
            counts[leaf] += 1
            sizes[leaf] += len(msg.payload)

    with tempfile.TemporaryDirectory(prefix="bench-pub-") as tmp:
        root = Path(tmp)
        broker = Mosquitto(root / "broker", room=ROOM, tables=names).start()
        monitor = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-monitor")
        mon = broker.users[MONITOR_USER]
        monitor.username_pw_set(mon.username, mon.password)
        monitor.on_message = on_message
        monitor.on_connect = lambda c, *_a: c.subscribe(f"{ROOM}/tables/#", qos=1)
        floor = FloorConsumer(host=broker.host, port=broker.port, room=ROOM, credentials=broker.users[FLOOR_USER],
                              keep_seqs=True)
        rigs: list[Any] = []
        try:
            monitor.connect(broker.host, broker.port)
            monitor.loop_start()
            floor.start().connected.wait(10)
            rigs = [VirtualTable(n, root / "tables", random_hands(i, count=None), room=ROOM, host=broker.host,
                                 port=broker.port, credentials=Credentials(n, broker.users[n].password), pace=pace,
                                 seed=i, bursts=True, display=display) for i, n in enumerate(names)]
            for r in rigs:
                r.start()
            cpu0, t0 = _publisher_cpu_s(), time.monotonic()
            time.sleep(seconds)
            for r in rigs:
                r.dealer.close()
            for r in rigs:
                r.controller.wait_idle(10)
            lasts = {r.name: r.last_seq() for r in rigs}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(len(floor.seqs(n)) < lasts[n] for n in names):
                time.sleep(0.1)
            cpu = _publisher_cpu_s() - cpu0
            dealt_s = time.monotonic() - t0
            in_order = all(floor.seqs(n)[:lasts[n]] == list(range(1, lasts[n] + 1)) for n in names)
        finally:
            for r in rigs:
                r.close()
            monitor.disconnect()
            monitor.loop_stop()
            floor.close()
            broker.stop()
    events = sum(lasts.values())
    with lock:
        per_topic = {leaf: {"per_event": round(counts[leaf] / events, 3), "mean_bytes": round(sizes[leaf] / counts[leaf])}
                     for leaf in sorted(counts)} if events else {}
        total_bytes = sum(sizes.values())
    return {"tables": tables, "seconds": round(dealt_s, 1), "pace_s": pace, "display": display, "events": events,
            "events_per_s_per_table": round(events / dealt_s / tables, 2) if dealt_s else None,
            "publisher_cpu_us_per_event": round(cpu / events * 1e6, 1) if events else None,
            "bytes_per_event": round(total_bytes / events) if events else None,
            "topics": per_topic, "floor_in_order": in_order}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_floor_publisher", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=20, help="virtual tables in this process (1..100, default 20)")
    ap.add_argument("--seconds", type=float, default=30.0, help="dealing time (1..600 s, default 30)")
    ap.add_argument("--pace", type=float, default=0.5, help="each dealer's mean pause, seconds (default 0.5)")
    ap.add_argument("--display", action="store_true", help="the tables also publish the whole public state")
    ap.add_argument("--json", action="store_true", help="print one JSON object on one line")
    args = ap.parse_args(argv)
    if not 1 <= args.tables <= 100 or not 1 <= args.seconds <= 600:
        ap.error("--tables must be 1..100 and --seconds 1..600")
    before = calibrate()
    figures = measure(args.tables, args.seconds, args.pace, args.display)
    after = calibrate()
    result = {"calibration": describe(), "calibration_before": before, "calibration_after": after, **figures}
    if args.json:
        print(json.dumps(result, separators=(",", ":")))
    else:
        print(f"{figures['tables']} tables, {figures['events']} events ({figures['events_per_s_per_table']}/s per "
              f"table): publisher {figures['publisher_cpu_us_per_event']} us CPU per event, "
              f"{figures['bytes_per_event']} bytes per event on the broker; per event by topic {figures['topics']}; "
              f"floor in order {figures['floor_in_order']}; calibration {before['cpu_s']} -> {after['cpu_s']} s, "
              f"load {before['load_avg']} -> {after['load_avg']}")
    return 0 if figures["floor_in_order"] else 1


if __name__ == "__main__":
    sys.exit(main())
