"""``python -m bench.bench_room [--tables N] [--seconds S] [--json]``: the room figure — N virtual
tables at a dealer's pace with bursts, in processes of at most 100, against a real Mosquitto and
the floor consumer (``shoe-ctl hil floor``, :func:`hil.floor.run_floor`), through a broker restart,
a publisher kill and a network cut; the calibration loop and the load average before and after;
and, from the measured CPU per event of the broker and the floor consumer, the cores a room of
:data:`TARGET_TABLES` would take (an extrapolation, stated as such). ``docs/floor.md`` ("A room at
1,700 tables") and ``docs/performance.md`` record the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from bench.calibration import calibrate, describe

TARGET_TABLES = 1700
"""The room the figure is stated against (the largest Macau operators' count)."""

TARGET_P99_MS = 250.0
"""The floor's p99 from a table's commit to the floor's view, in steady state, to meet."""

BURST_FACTOR = 2.5
"""A table's event rate in a burst over its mean: the bursty dealer's short pauses are 0.4 x its
mean pause (``hil.floor_rig.BurstDealer``)."""


def extrapolate(report: dict[str, Any], tables: int = TARGET_TABLES) -> dict[str, Any]:
    """The floor server's load for ``tables`` tables dealing as the measured ones did: events/s on
    average and all bursting at once, and the share of one core (of this machine, as loaded as in
    the run) the broker and the floor consumer take at those rates, from their measured CPU per
    event. An extrapolation: linear in the event rate, no queueing."""
    per_table = report["events_per_s_per_table"]
    cost = report["cpu_us_per_event"]
    avg = per_table * tables
    burst = avg * BURST_FACTOR
    out: dict[str, Any] = {"tables": tables, "events_per_s_average": round(avg), "events_per_s_bursting": round(burst),
                           "burst_factor": BURST_FACTOR}
    for part in ("broker", "floor_consumer"):
        us = cost[part]
        out[f"{part}_cores_average"] = round(avg * us / 1e6, 2) if us is not None else None
        out[f"{part}_cores_bursting"] = round(burst * us / 1e6, 2) if us is not None else None
    consumer_us = cost["floor_consumer"]
    out["floor_consumer_events_per_s_one_core"] = round(1e6 / consumer_us) if consumer_us else None
    out["tables_one_consumer_core_bursting"] = (round(1e6 / consumer_us / (per_table * BURST_FACTOR))
                                                if consumer_us and per_table else None)
    return out


def measure(tables: int, seconds: float, pace: float, per_process: int, faults: bool = True) -> dict[str, Any]:
    from hil.floor import run_floor

    before = calibrate()
    report = run_floor(tables, seconds=seconds, pace=pace, per_process=per_process, faults=faults)
    after = calibrate()
    return {"calibration": describe(), "calibration_before": before, "calibration_after": after,
            "room": report, "extrapolation": extrapolate(report),
            "target": {"tables": TARGET_TABLES, "p99_ms_steady": TARGET_P99_MS, "lost_or_doubled": 0}}


def summary(r: dict[str, Any]) -> str:
    room, x = r["room"], r["extrapolation"]
    steady = room["latency_ms_before_faults"]
    split = room["latency_ms_split"]["before_faults"]
    return (f"room: {room['tables']} tables in {room['processes']} processes, {room['events_per_s']} events/s, "
            f"commit->floor p50 {steady['p50']} ms p99 {steady['p99']} ms before faults (at the table p99 "
            f"{split['table']['p99']} ms, after the publication p99 {split['publish_to_floor']['p99']} ms) "
            f"(whole run p99 {room['latency_ms']['p99']} ms), lost {room['lost']} duplicated {room['duplicated']} "
            f"out of order {room['out_of_order']} across a broker restart; CPU per event: broker "
            f"{room['cpu_us_per_event']['broker']} us, floor consumer {room['cpu_us_per_event']['floor_consumer']} us; "
            f"extrapolated to {x['tables']} tables: {x['events_per_s_average']} events/s "
            f"({x['events_per_s_bursting']} bursting), broker {x['broker_cores_average']} / "
            f"{x['broker_cores_bursting']} core, floor consumer {x['floor_consumer_cores_average']} / "
            f"{x['floor_consumer_cores_bursting']} core; calibration {r['calibration_before']['cpu_s']} -> "
            f"{r['calibration_after']['cpu_s']} s, load {r['calibration_before']['load_avg']} -> "
            f"{r['calibration_after']['load_avg']}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_room", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=100, help="virtual tables (default 100)")
    ap.add_argument("--seconds", type=float, default=60.0, help="dealing time (default 60)")
    ap.add_argument("--pace", type=float, default=0.5, help="each dealer's mean pause, seconds (default 0.5)")
    ap.add_argument("--per-process", type=int, default=100, help="tables per worker process (default 100)")
    ap.add_argument("--json", action="store_true", help="print one JSON object on one line")
    args = ap.parse_args(argv)
    result = measure(args.tables, args.seconds, args.pace, args.per_process)
    print(json.dumps(result, separators=(",", ":")) if args.json else summary(result), flush=True)
    return 0 if result["room"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
