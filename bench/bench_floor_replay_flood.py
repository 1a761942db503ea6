"""``python -m bench.bench_floor_replay_flood [--records N] [--seconds S] [--requests R] [--json]``: a
floor user repeating ``{"from": 1}`` on one table's ``replay`` topic — one table's floor publisher
over a journal of N records against a real Mosquitto, a floor consumer subscribed, then S seconds
with no request and S seconds with R requests spread evenly over them; for each window the CPU of
the publisher's network-loop thread (where its steps run) and of the broker, the replays begun and
the records published again, with the calibration loop and the load average before and after.
``docs/floor.md`` ("Replay requests") records the figures.
"""

from __future__ import annotations

import argparse
import json
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


class _Journal:
    """``n`` committed records of a dealt hand's size (read only)."""

    def __init__(self, n: int) -> None:
        from shoe_ctl.service.journal.records import Record

        body = {"card": "Qh", "seat": 3, "street": "4th", "face": "up", "tag": "0" * 16, "read_ms": 12}
        self.rows = [Record(seq, 1_000_000 + seq, "CardRead", 1 + seq // 60, None, json.dumps({**body, "n": seq}))
                     for seq in range(1, n + 1)]

    def records(self, since: int | None) -> Any:
        return iter(self.rows[since or 0:])


def _thread_cpu_s(name: str) -> float:
    for t in threading.enumerate():
        if t.name == name and t.ident is not None:
            return time.clock_gettime(time.pthread_getcpuclockid(t.ident))
    return 0.0


def measure(records: int = 5000, seconds: float = 10.0, requests: int = 1000) -> dict[str, Any]:
    """The figures of one run (see the module's text). :raises RuntimeError: mosquitto missing."""
    from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
    from shoe_ctl.floor.consumer import FloorConsumer
    from shoe_ctl.floor.netloop import NetLoop
    from shoe_ctl.floor.publisher import FloorPublisher
    from shoe_ctl.floor.topics import Topics

    loop_name = "floor-pub-bench"
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        broker = Mosquitto(Path(tmp) / "broker", room=ROOM, tables=["t1"], floors=[FLOOR_USER, "floor-2"]).start()
        net = NetLoop(loop_name)
        floor = FloorConsumer(host=broker.host, port=broker.port, room=ROOM, credentials=broker.users[FLOOR_USER],
                              keep_seqs=True)
        pub = FloorPublisher(_Journal(records), table="t1", room=ROOM, host=broker.host, port=broker.port,
                             credentials=broker.users["t1"], loop=net)
        flooder = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-flooder")
        creds = broker.users["floor-2"]
        flooder.username_pw_set(creds.username, creds.password)
        windows: dict[str, Any] = {}
        try:
            floor.start().connected.wait(10)
            pub.start()
            deadline = time.monotonic() + 120
            while pub.acked < records and time.monotonic() < deadline:
                time.sleep(0.05)
            flooder.connect(broker.host, broker.port)
            flooder.loop_start()
            topic = Topics(ROOM, "t1").replay
            for label, count in (("quiet", 0), ("flood", requests)):
                cpu0, broker0, rep0 = _thread_cpu_s(loop_name), broker.cpu_now(), pub.republished
                gate = getattr(pub, "replays", None)
                started0 = gate.started if gate is not None else None
                t0 = time.monotonic()
                for i in range(count):
                    time.sleep(max(0.0, t0 + i * seconds / count - time.monotonic()))
                    flooder.publish(topic, b'{"from": 1}', qos=0)
                time.sleep(max(0.0, t0 + seconds - time.monotonic()))
                windows[label] = {
                    "publisher_cpu_s": round(_thread_cpu_s(loop_name) - cpu0, 3),
                    "broker_cpu_s": round(broker.cpu_now() - broker0, 3),
                    "records_published_again": pub.republished - rep0,
                    "replays_begun": gate.started - started0 if gate is not None and started0 is not None else None,
                }
            windows["requests_taken"] = pub.replay_requests
            windows["floor_in_order"] = floor.seqs("t1") == list(range(1, records + 1))
        finally:
            flooder.disconnect()
            flooder.loop_stop()
            floor.close()
            pub.close(timeout=1.0)
            net.stop()
            broker.stop()
    return {"records": records, "seconds": seconds, "requests": requests, **windows}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_floor_replay_flood",
                                 description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--records", type=int, default=5000, help="journal records (100..100000, default 5000)")
    ap.add_argument("--seconds", type=float, default=10.0, help="each window (1..120 s, default 10)")
    ap.add_argument("--requests", type=int, default=1000, help="requests in the flood window (1..10000)")
    ap.add_argument("--json", action="store_true", help="print one JSON object on one line")
    args = ap.parse_args(argv)
    if not 100 <= args.records <= 100_000 or not 1 <= args.seconds <= 120 or not 1 <= args.requests <= 10_000:
        ap.error("--records must be 100..100000, --seconds 1..120, --requests 1..10000")
    before = calibrate()
    figures = measure(args.records, args.seconds, args.requests)
    after = calibrate()
    result = {"calibration": describe(), "calibration_before": before, "calibration_after": after, **figures}
    print(json.dumps(result, separators=(",", ":")) if args.json else json.dumps(result, indent=1))
    return 0 if figures["floor_in_order"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
