"""``shoe-ctl hil floor --tables N``: N virtual tables against one real Mosquitto and the floor.

Everything but the broker runs in this process: N :class:`~hil.floor_rig.VirtualTable`
(journal, machine, controller, simulated dealer, publisher) reach the broker through a
:class:`~hil.floor_rig.CutProxy` (the tables' network); the :class:`FloorConsumer` connects
to the broker directly. During the run the broker is restarted, the network is cut and one
table's publisher is killed and restarted from its outbox. At the end every table's journal is
compared with what the floor applied. Figures and their reading: ``docs/floor.md``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from hil.dealer import random_hands
from hil.floor_rig import CutProxy, VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer

__all__ = ["main", "run_floor"]


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def run_floor(tables: int, *, seconds: float = 30.0, pace: float = 0.5, seed: int = 0, faults: bool = True,
              workdir: str | None = None, progress: bool = False, catch_up_s: float = 60.0) -> dict[str, Any]:
    """Run the floor rig and return the report (see ``docs/floor.md`` for each key).

    :param tables: virtual tables (1..2000).
    :param seconds: how long the tables deal.
    :param pace: each simulated dealer's pause before an action (seconds; 0.5 is a brisk dealer).
    :param faults: restart the broker at 25 % of the run, kill a publisher at 50 %, cut the
        network for 3 s at 75 %.
    :raises RuntimeError: mosquitto missing or not starting.
    """
    names = [f"t{i + 1:04d}" for i in range(tables)]
    own = tempfile.TemporaryDirectory(prefix="floor-hil-") if workdir is None else None
    root = Path(workdir or (own.name if own else "."))
    room = "hil"
    latencies: list[float] = []
    steady: list[float] = []
    steady_until = [float("inf")]
    lat_lock = threading.Lock()

    def on_event(_table: str, ev: dict[str, Any], received: float) -> None:
        if ev.get("kind") == "CardRead":
            lat = received - ev["time_us"] / 1e6
            with lat_lock:
                latencies.append(lat)
                if ev["time_us"] / 1e6 < steady_until[0]:
                    steady.append(lat)

    def say(text: str) -> None:
        if progress:
            print(f"[{time.monotonic() - t0:6.1f}s] {text}", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    broker = Mosquitto(root / "broker", room=room, tables=names).start()
    proxy = CutProxy(broker.host, broker.port).start()
    consumer = FloorConsumer(host=broker.host, port=broker.port, room=room, credentials=broker.users[FLOOR_USER],
                             keep_seqs=True, on_event=on_event).start()
    rigs: list[VirtualTable] = []
    events_at_fault: dict[str, int] = {}
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    try:
        consumer.connected.wait(10)
        for i, name in enumerate(names):
            rigs.append(VirtualTable(name, root / "tables", random_hands(seed + i, count=None), room=room,
                                     host="127.0.0.1", port=proxy.port,
                                     credentials=broker.users[name], pace=pace, seed=seed + i))
        say(f"{tables} tables built")
        start = time.monotonic()
        steady_until[0] = time.time() + (0.25 * seconds if faults else seconds)
        for r in rigs:
            r.start()
        plan = [(0.25, "broker-restart"), (0.5, "publisher-kill"), (0.75, "network-cut")] if faults else []
        for at, what in plan:
            delay = start + at * seconds - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            events_at_fault[what] = sum(len(consumer.seqs(n)) for n in names)
            say(what)
            if what == "broker-restart":
                broker.restart(down_s=2.0)
            elif what == "publisher-kill":
                rigs[0].kill_publisher()
            else:
                proxy.cut(3.0)
        rest = start + seconds - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        for r in rigs:
            r.dealer.close()
        for r in rigs:
            r.controller.wait_idle(10)
        dealt_s = time.monotonic() - start
        say("dealing stopped; waiting for the floor to catch up")
        lasts = {r.name: r.last_seq() for r in rigs}
        caught = time.monotonic()
        deadline = caught + catch_up_s
        while time.monotonic() < deadline:
            if all(consumer.tables.get(n) is not None and consumer.tables[n].expected > lasts[n] for n in names):
                break
            time.sleep(0.1)
        catch_up = time.monotonic() - caught
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        floor_cpu = _thread_cpu_s("floor-net-")  # the consumer's network thread: parse + fold
        broker.stop()  # counts its CPU time
        lost = dup = disorder = 0
        per_table_bad: list[str] = []
        for n in names:
            seqs = consumer.seqs(n)
            want = list(range(1, lasts[n] + 1))
            if seqs != want:
                s = set(seqs)
                lost_n = len(set(want) - s)
                dup_n = len(seqs) - len(s)
                dis_n = sum(1 for a, b in zip(seqs, seqs[1:], strict=False) if b <= a)
                lost += lost_n
                dup += dup_n
                disorder += dis_n
                per_table_bad.append(f"{n}: lost {lost_n}, duplicated {dup_n}, out of order {dis_n}")
        total = sum(lasts.values())
        cards = len(latencies)
        views = [consumer.tables[n] for n in names if n in consumer.tables]
        report = {
            "tables": tables, "seconds": round(dealt_s, 1), "pace_s": pace, "processes": 2,
            "events": total, "card_reads": cards,
            "events_per_s": round(total / dealt_s, 1) if dealt_s else None,
            "card_reads_per_s_per_table": round(cards / dealt_s / tables, 2) if dealt_s and tables else None,
            "latency_ms": {"p50": _ms(_pct(latencies, 0.5)), "p99": _ms(_pct(latencies, 0.99)),
                           "max": _ms(max(latencies) if latencies else None)},
            "latency_ms_before_faults": {"p50": _ms(_pct(steady, 0.5)), "p99": _ms(_pct(steady, 0.99)),
                                         "reads": len(steady)},
            "lost": lost, "duplicated": dup, "out_of_order": disorder, "bad_tables": per_table_bad[:10],
            "broker_duplicates_dropped": sum(v.duplicates for v in views),
            "replays_asked": sum(v.replays_asked for v in views),
            "stale_wills_ignored": sum(v.stale_wills for v in views),
            "faults": list(events_at_fault) if faults else [],
            "broker_starts": broker.starts, "network_cuts": proxy.cuts,
            "publishers_started": sum(r.publishers for r in rigs),
            "catch_up_s": round(catch_up, 2),
            "cpu_s": round((cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime), 1),
            "max_rss_mb": round(cpu1.ru_maxrss / 1024, 1),
            "broker_cpu_s": round(broker.cpu_s, 1),
            "floor_consumer_cpu_s": None if floor_cpu is None else round(floor_cpu, 2),
            "stalled": [r.name for r in rigs if r.dealer.stalled][:10],
            "ok": lost == 0 and dup == 0 and disorder == 0,
        }
        return report
    finally:
        for r in rigs:
            try:
                r.close()
            except Exception:  # noqa: BLE001 - tear everything down
                pass
        consumer.close()
        proxy.close()
        broker.stop()
        if own is not None:
            own.cleanup()


def _thread_cpu_s(prefix: str) -> float | None:
    """CPU seconds used so far by the live thread whose name starts with ``prefix`` (Linux)."""
    for t in threading.enumerate():
        if t.name.startswith(prefix) and t.ident is not None:
            try:
                return time.clock_gettime(time.pthread_getcpuclockid(t.ident))
            except (AttributeError, OSError):
                return None
    return None


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 1)


def main(args: argparse.Namespace) -> int:
    """``shoe-ctl hil floor``: print the report (``--json``: one line); exit 0 when nothing was
    lost, duplicated or out of order, 1 otherwise, 2 when the rig could not run."""
    import logging

    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if not 1 <= args.tables <= 2000:
        print("shoe-ctl hil floor: --tables must be 1..2000", file=sys.stderr)
        return 2
    try:
        report = run_floor(args.tables, seconds=args.seconds, pace=args.pace, seed=args.seed,
                           faults=not args.no_faults, workdir=args.workdir, progress=args.progress)
    except (RuntimeError, OSError) as exc:
        print(f"shoe-ctl hil floor: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, separators=(",", ":")))
    else:
        for key, value in report.items():
            print(f"{key:28} {value}")
    return 0 if report["ok"] else 1


def register_hil(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``floor`` to the ``hil`` subcommand's subparsers ``sub``."""
    p = sub.add_parser("floor", help="N virtual tables against a real Mosquitto and the floor consumer",
                       description="Run N virtual tables (one process) against a real Mosquitto and the floor "
                       "consumer, restart the broker, kill a publisher and cut the network during the run, "
                       "and report events/s, latency and lost/duplicated events.")
    p.add_argument("--tables", type=int, default=10, metavar="N", help="virtual tables (default 10)")
    p.add_argument("--seconds", type=float, default=30.0, metavar="S", help="dealing time (default 30)")
    p.add_argument("--pace", type=float, default=0.5, metavar="S",
                   help="each dealer's pause before an action, seconds (default 0.5)")
    p.add_argument("--seed", type=int, default=0, metavar="S")
    p.add_argument("--no-faults", action="store_true", help="no broker restart, publisher kill or network cut")
    p.add_argument("--workdir", default=None, metavar="DIR", help="keep the journals and broker files in DIR")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.add_argument("--progress", action="store_true", help="progress lines on stderr")
    p.set_defaults(func=main)

