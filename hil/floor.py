"""``shoe-ctl hil floor --tables N``: a room of N virtual tables, in several processes, against one
real Mosquitto and the floor consumer.

The tables run in worker processes of at most :data:`PER_PROCESS` tables each (``python -m
hil.floor --worker``: :class:`~hil.floor_rig.VirtualTable` — journal, machine, controller,
simulated dealer at a dealer's pace with bursts, publisher — behind a
:class:`~hil.floor_rig.CutProxy` of their own, the tables' network); Mosquitto is a process of its
own and the :class:`FloorConsumer` runs in this one, as ``shoe-ctl floor`` does. During the run
the broker is restarted, the network is cut and one table's publisher is killed and restarted from
its outbox. At the end every table's journal is compared with what the floor applied, and the
CPU of each part is read. Figures and their reading: ``docs/floor.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from hil.dealer import random_hands
from hil.floor_rig import CutProxy, VirtualTable
from shoe_ctl.floor import publisher, topics
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.config import Credentials
from shoe_ctl.floor.consumer import FloorConsumer

__all__ = ["main", "run_floor"]

PER_PROCESS = 100
"""The most tables one worker process runs."""

TABLES_NICE = 10
"""The worker processes' niceness: on a floor each table is a Pi of its own and the floor server
runs only the broker and the consumer; here they share the machine's cores, and the simulated
tables (their machines, journals, dealers, publishers and relays) yield the CPU to the floor's
parts rather than delay them."""

TRACE_MAX = 500_000
"""The most first publications a worker notes (table, sequence, commit time, publication time)."""

ROOM = "hil"


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 1)


def thread_cpu_by_name() -> dict[str, float]:
    """CPU seconds (user + system) of each live thread of this process, by thread name (Linux
    ``/proc``; threads of one name summed)."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for t in threading.enumerate():
        if t.native_id is None:
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/self/task/{t.native_id}/stat").read_text().rsplit(")", 1)[1].split()
            out[t.name] = out.get(t.name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


# ---------------------------------------------------------------------------------- the worker


def _trace_publications(sent: dict[tuple[str, int], tuple[int, float]]) -> None:
    """Note in ``sent`` when each record is first handed to paho for publication, by ``(table,
    seq)``: ``(its commit time_us, time.time())`` (the publisher builds its payload just before;
    at most :data:`TRACE_MAX`). The table's side of the latency, apart from the broker's and the
    floor's."""
    build = topics.event_payload

    def traced(record: Any, *, table: str, session: int, body: Any = None) -> dict[str, Any]:
        out = build(record, table=table, session=session, body=body)
        key = (table, out["seq"])
        if key not in sent and len(sent) < TRACE_MAX:
            sent[key] = (out["time_us"], time.time())
        return out

    publisher.__dict__["event_payload"] = traced  # the name the publisher calls


def _worker(stdin: IO[str], stdout: IO[str]) -> int:
    """One worker process: reads its orders as JSON lines on ``stdin`` and answers on ``stdout``
    (``ready``, then ``report`` after ``stop``)."""
    import logging

    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    cfg = json.loads(stdin.readline())
    if cfg.get("nice"):
        os.nice(int(cfg["nice"]))  # the tables yield the CPU to the floor server's broker and consumer
    sent: dict[tuple[str, int], tuple[int, float]] = {}
    _trace_publications(sent)

    def say(obj: dict[str, Any]) -> None:
        stdout.write(json.dumps(obj) + "\n")
        stdout.flush()

    proxy = CutProxy(cfg["host"], cfg["port"]).start()
    rigs = [VirtualTable(name, cfg["folder"], random_hands(seed, count=None), room=cfg["room"], host="127.0.0.1",
                         port=proxy.port, credentials=Credentials(name, password), pace=cfg["pace"], seed=seed,
                         bursts=cfg["bursts"])
            for name, password, seed in cfg["tables"]]
    say({"ready": len(rigs)})
    try:
        for line in stdin:
            order = json.loads(line)
            what = order["do"]
            if what == "start":
                for r in rigs:
                    r.start()
            elif what == "cut":
                proxy.cut(float(order["seconds"]))
            elif what == "kill":
                rigs[0].kill_publisher()
            elif what == "stop":
                for r in rigs:
                    r.dealer.close()
                for r in rigs:
                    r.controller.wait_idle(10)
                threads = thread_cpu_by_name()
                usage = os.times()
                published = [[t, q, at] for (t, q), (_us, at) in list(sent.items())]
                say({"lasts": {r.name: r.last_seq() for r in rigs},
                     "publishers": sum(r.publishers for r in rigs),
                     "journal_reads": sum(r.publisher.journal_reads for r in rigs),
                     "stalled": [r.name for r in rigs if r.dealer.stalled],
                     "process_cpu_s": usage.user + usage.system,
                     "publisher_cpu_s": sum(s for n, s in threads.items() if n.startswith("floor-pub")),
                     "proxy_cpu_s": threads.get("cut-proxy", 0.0), "published": published})
            elif what == "exit":
                break
    finally:
        for r in rigs:
            with contextlib.suppress(Exception):
                r.close()
        proxy.close()
    return 0


class _Worker:
    """The parent's handle on one worker process."""

    def __init__(self, tables: list[tuple[str, str, int]], *, host: str, port: int, folder: Path, pace: float,
                 bursts: bool, nice: int = TABLES_NICE) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                                         os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen([sys.executable, "-m", "hil.floor", "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        self.names = [t[0] for t in tables]
        self.send({"tables": tables, "host": host, "port": port, "room": ROOM, "folder": str(folder), "pace": pace,
                   "bursts": bursts, "nice": nice})

    def send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float) -> dict[str, Any]:
        """The worker's next line.

        :raises RuntimeError: it exited or did not answer within ``timeout`` seconds."""
        assert self.proc.stdout is not None
        out: list[str] = []
        t = threading.Thread(target=lambda: out.append(self.proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        t.start()
        t.join(timeout)
        if not out or not out[0]:
            raise RuntimeError(f"a floor worker ({self.names[0]}..) did not answer within {timeout:g} s")
        data: dict[str, Any] = json.loads(out[0])
        return data

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.send({"do": "exit"})
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


# ---------------------------------------------------------------------------------- the room


def run_floor(tables: int, *, seconds: float = 30.0, pace: float = 0.5, seed: int = 0, faults: bool = True,
              workdir: str | None = None, progress: bool = False, catch_up_s: float = 60.0,
              per_process: int = PER_PROCESS, bursts: bool = True) -> dict[str, Any]:
    """Run the room and return the report (see ``docs/floor.md`` for each key).

    :param tables: virtual tables (1..2000), in processes of at most ``per_process`` (1..100).
    :param seconds: how long the tables deal.
    :param pace: each simulated dealer's mean pause before an action (seconds; 0.5 is a brisk
        dealer); ``bursts``: most pauses short (0.4 × pace: a street dealt card after card), some
        long (2.4 × pace: the betting), the same mean.
    :param faults: restart the broker at 25 % of the run, kill a publisher at 50 %, cut the
        network for 3 s at 75 %.
    :raises RuntimeError: mosquitto missing or not starting, a worker not answering.
    """
    per_process = max(1, min(PER_PROCESS, per_process))
    names = [f"t{i + 1:04d}" for i in range(tables)]
    own = tempfile.TemporaryDirectory(prefix="floor-hil-") if workdir is None else None
    root = Path(workdir or (own.name if own else "."))
    latencies: list[float] = []
    steady: list[float] = []
    applied_at: dict[tuple[str, int], tuple[float, float, bool]] = {}  # (commit, applied, steady) by event
    steady_from, steady_until = [float("inf")], [float("inf")]
    lat_lock = threading.Lock()

    def on_event(_table: str, ev: dict[str, Any], received: float) -> None:
        lat = received - ev["time_us"] / 1e6
        with lat_lock:
            latencies.append(lat)
            is_steady = steady_from[0] <= ev["time_us"] / 1e6 < steady_until[0]
            if is_steady:
                steady.append(lat)
            applied_at[(_table, ev["seq"])] = (ev["time_us"] / 1e6, received, is_steady)

    def say(text: str) -> None:
        if progress:
            print(f"[{time.monotonic() - t0:6.1f}s] {text}", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    broker = Mosquitto(root / "broker", room=ROOM, tables=names).start()
    consumer = FloorConsumer(host=broker.host, port=broker.port, room=ROOM, credentials=broker.users[FLOOR_USER],
                             keep_seqs=True, on_event=on_event).start()
    workers: list[_Worker] = []
    events_at_fault: dict[str, int] = {}
    try:
        consumer.connected.wait(10)
        for i in range(0, tables, per_process):
            chunk = [(n, broker.users[n].password, seed + k) for k, n in enumerate(names[i:i + per_process], i)]
            workers.append(_Worker(chunk, host=broker.host, port=broker.port, folder=root / "tables", pace=pace,
                                   bursts=bursts))
        for w in workers:
            w.answer(120)  # ready
        say(f"{tables} tables built in {len(workers)} processes")
        floor_thread = consumer.net.thread_id
        gaps_thread = next((t.ident for t in threading.enumerate() if t.name == "floor-gaps"), None)
        cpu0 = {"floor": _thread_cpu(floor_thread), "gaps": _thread_cpu(gaps_thread), "broker": broker.cpu_now()}
        start = time.monotonic()
        steady_until[0] = time.time() + (0.25 * seconds if faults else seconds)
        for w in workers:
            w.send({"do": "start"})
        # the steady state: from every table's first connection (their births) to the first fault
        while time.time() < steady_until[0] and not all(
                consumer.tables.get(n) is not None and consumer.tables[n].online for n in names):
            time.sleep(0.05)
        steady_from[0] = time.time()
        say("every table online")
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
                workers[0].send({"do": "kill"})
            else:
                for w in workers:
                    w.send({"do": "cut", "seconds": 3.0})
        rest = start + seconds - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        for w in workers:
            w.send({"do": "stop"})
        reports = [w.answer(120) for w in workers]
        dealt_s = time.monotonic() - start
        say("dealing stopped; waiting for the floor to catch up")
        lasts: dict[str, int] = {k: v for r in reports for k, v in r["lasts"].items()}
        caught = time.monotonic()
        deadline = caught + catch_up_s
        while time.monotonic() < deadline:
            if all(consumer.tables.get(n) is not None and consumer.tables[n].expected > lasts[n] for n in names):
                break
            time.sleep(0.1)
        catch_up = time.monotonic() - caught
        floor_cpu = _thread_cpu(floor_thread) - cpu0["floor"]
        gaps_cpu = _thread_cpu(gaps_thread) - cpu0["gaps"]
        broker_cpu = broker.cpu_now() - cpu0["broker"]
        published = [p for r in reports for p in r.pop("published")]
        split = {"before_faults": _split(applied_at, published, steady=True),
                 "whole_run": _split(applied_at, published, steady=False)}
        return _report(tables, names, consumer, lasts, reports, latencies, steady, split, dealt_s=dealt_s, pace=pace,
                       bursts=bursts, processes=len(workers), faults=list(events_at_fault),
                       broker_starts=broker.starts, catch_up=catch_up, floor_cpu=floor_cpu + gaps_cpu,
                       broker_cpu=broker_cpu)
    finally:
        for w in workers:
            w.close()
        consumer.close()
        broker.stop()
        if own is not None:
            own.cleanup()


def _thread_cpu(ident: int | None) -> float:
    """CPU seconds of the thread ``ident`` (``threading.get_ident``), 0 when unknown."""
    if ident is None:
        return 0.0
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(ident))
    except (AttributeError, OSError):
        return 0.0


def _split(applied_at: dict[tuple[str, int], tuple[float, float, bool]], published: list[list[Any]], *,
           steady: bool) -> dict[str, Any]:
    """The latency in two parts, over the events both noted (``steady``: those committed before
    the faults only): at the table (commit → the publisher hands it to paho: the table's
    threads, its process's interpreter lock and CPU) and after (→ applied to the floor's view: the
    table's network loop, the broker, the consumer; an outage falls here)."""
    table_side: list[float] = []
    floor_side: list[float] = []
    for table, seq, at in published:
        got = applied_at.get((table, seq))
        if got is not None and (got[2] or not steady):
            table_side.append(at - got[0])
            floor_side.append(got[1] - at)
    return {"events": len(table_side),
            "table": {"p50": _ms(_pct(table_side, 0.5)), "p99": _ms(_pct(table_side, 0.99))},
            "publish_to_floor": {"p50": _ms(_pct(floor_side, 0.5)), "p99": _ms(_pct(floor_side, 0.99))}}


def _report(tables: int, names: list[str], consumer: FloorConsumer, lasts: dict[str, int],
            reports: list[dict[str, Any]], latencies: list[float], steady: list[float], split: dict[str, Any], *,
            dealt_s: float,
            pace: float, bursts: bool, processes: int, faults: list[str], broker_starts: int, catch_up: float,
            floor_cpu: float, broker_cpu: float) -> dict[str, Any]:
    lost = dup = disorder = 0
    per_table_bad: list[str] = []
    for n in names:
        seqs = consumer.seqs(n)
        want = list(range(1, lasts[n] + 1))
        # a record the table wrote after its last sequence was read (a timer) may follow: not counted
        if [q for q in seqs if q <= lasts[n]] != want or len(set(seqs)) != len(seqs):
            s = set(seqs)
            lost_n = len(set(want) - s)
            dup_n = len(seqs) - len(s)
            dis_n = sum(1 for a, b in zip(seqs, seqs[1:], strict=False) if b <= a)
            lost, dup, disorder = lost + lost_n, dup + dup_n, disorder + dis_n
            per_table_bad.append(f"{n}: lost {lost_n}, duplicated {dup_n}, out of order {dis_n}")
    total = sum(lasts.values())
    views = [consumer.tables[n] for n in names if n in consumer.tables]
    tables_cpu = sum(r["process_cpu_s"] - r["proxy_cpu_s"] for r in reports)
    publisher_cpu = sum(r["publisher_cpu_s"] for r in reports)

    def per_event(cpu: float) -> float | None:
        return round(cpu / total * 1e6, 1) if total else None

    return {
        "tables": tables, "processes": processes, "seconds": round(dealt_s, 1), "pace_s": pace, "bursts": bursts,
        "events": total, "events_per_s": round(total / dealt_s, 1) if dealt_s else None,
        "events_per_s_per_table": round(total / dealt_s / tables, 3) if dealt_s and tables else None,
        "latency_ms": {"p50": _ms(_pct(latencies, 0.5)), "p99": _ms(_pct(latencies, 0.99)),
                       "max": _ms(max(latencies) if latencies else None)},
        "latency_ms_before_faults": {"p50": _ms(_pct(steady, 0.5)), "p99": _ms(_pct(steady, 0.99)),
                                     "events": len(steady)},
        "latency_ms_split": split,
        "lost": lost, "duplicated": dup, "out_of_order": disorder, "bad_tables": per_table_bad[:10],
        "broker_duplicates_dropped": sum(v.duplicates for v in views),
        "replays_asked": sum(v.replays_asked for v in views),
        "stale_wills_ignored": sum(v.stale_wills for v in views),
        "faults": faults, "broker_starts": broker_starts, "tables_nice": TABLES_NICE,
        "network_cuts": 1 if "network-cut" in faults else 0,
        "publishers_started": sum(r["publishers"] for r in reports),
        "journal_reads_per_event": round(sum(r["journal_reads"] for r in reports) / total, 2) if total else None,
        "catch_up_s": round(catch_up, 2),
        "cpu_s": {"tables": round(tables_cpu, 2), "publishers": round(publisher_cpu, 2),
                  "broker": round(broker_cpu, 2), "floor_consumer": round(floor_cpu, 2)},
        "cpu_us_per_event": {"tables": per_event(tables_cpu), "publishers": per_event(publisher_cpu),
                             "broker": per_event(broker_cpu), "floor_consumer": per_event(floor_cpu)},
        "cpu_percent_of_a_core_per_table": round(tables_cpu / dealt_s / tables * 100, 2) if dealt_s else None,
        "stalled": [n for r in reports for n in r["stalled"]][:10],
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "ok": lost == 0 and dup == 0 and disorder == 0,
    }


def main(args: argparse.Namespace) -> int:
    """``shoe-ctl hil floor``: print the report (``--json``: one line); exit 0 when nothing was
    lost, duplicated or out of order, 1 otherwise, 2 when the rig could not run."""
    import logging

    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if not 1 <= args.tables <= 2000:
        print("shoe-ctl hil floor: --tables must be 1..2000", file=sys.stderr)
        return 2
    if not 1 <= args.per_process <= PER_PROCESS:
        print(f"shoe-ctl hil floor: --per-process must be 1..{PER_PROCESS}", file=sys.stderr)
        return 2
    if not 0 < args.seconds <= 3600:
        print("shoe-ctl hil floor: --seconds must be above 0 and at most 3600", file=sys.stderr)
        return 2
    try:
        report = run_floor(args.tables, seconds=args.seconds, pace=args.pace, seed=args.seed,
                           faults=not args.no_faults, workdir=args.workdir, progress=args.progress,
                           per_process=args.per_process, bursts=not args.no_bursts)
    except (RuntimeError, OSError) as exc:
        print(f"shoe-ctl hil floor: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, separators=(",", ":")))
    else:
        for key, value in report.items():
            print(f"{key:32} {value}")
    return 0 if report["ok"] else 1


def register_hil(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``floor`` to the ``hil`` subcommand's subparsers ``sub``."""
    p = sub.add_parser("floor", help="a room of N virtual tables in several processes, a real Mosquitto, the floor",
                       description="Run N virtual tables (at most 100 per process) against a real Mosquitto and the "
                       "floor consumer, restart the broker, kill a publisher and cut the network during the run, "
                       "and report events/s, latency from each record's commit to the floor's view, the CPU of each "
                       "part and lost/duplicated/out-of-order events.")
    p.add_argument("--tables", type=int, default=10, metavar="N", help="virtual tables (default 10)")
    p.add_argument("--per-process", type=int, default=PER_PROCESS, metavar="K",
                   help=f"tables per worker process (default and most {PER_PROCESS})")
    p.add_argument("--seconds", type=float, default=30.0, metavar="S", help="dealing time (default 30)")
    p.add_argument("--pace", type=float, default=0.5, metavar="S",
                   help="each dealer's mean pause before an action, seconds (default 0.5)")
    p.add_argument("--no-bursts", action="store_true", help="every pause the same (default: bursts)")
    p.add_argument("--seed", type=int, default=0, metavar="S")
    p.add_argument("--no-faults", action="store_true", help="no broker restart, publisher kill or network cut")
    p.add_argument("--workdir", default=None, metavar="DIR", help="keep the journals and broker files in DIR")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.add_argument("--progress", action="store_true", help="progress lines on stderr")
    p.set_defaults(func=main)


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        sys.exit(_worker(sys.stdin, sys.stdout))
    sys.exit(2)
