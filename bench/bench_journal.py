"""Journal costs: appends per second at each ``synchronous`` level, and open time of a big journal.

Run: ``.venv/bin/python bench/bench_journal.py [--dir DIR] [--records N]`` (DIR on the disk the
journal will live on: an fsync costs what that disk costs). Figures go to ``docs/journal.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import tempfile
import time
from pathlib import Path

from shoe_ctl import events
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal


def appends_per_s(folder: Path, sync: str, n: int) -> float:
    path = folder / f"append-{sync}.journal"
    with Journal(path, table="bench", profile="tda", synchronous=sync) as j:
        j.begin_hand({"game": "stud"})
        t0 = time.perf_counter()
        for i in range(n):
            j.append(events.CardRead(seq=i + 1, card=Card(i % 52), reader="rfid", dispense=i % 52 + 1))
        return n / (time.perf_counter() - t0)


def grouped_appends_per_s(folder: Path, n: int) -> float:
    """Appends queued as the controller queues them (``Journal.submit``, no wait), each acked by
    its commit callback: what the writer's group commit sustains with synchronous=FULL."""
    import threading

    path = folder / "grouped.journal"
    done = threading.Event()
    count = [0]

    def durable(_seqs: list[int]) -> None:
        count[0] += 1
        if count[0] == n:
            done.set()

    with Journal(path, table="bench", profile="tda", synchronous="FULL") as j:
        j.begin_hand({"game": "stud"})
        t0 = time.perf_counter()
        for i in range(n):
            j.submit([events.CardRead(seq=i + 1, card=Card(i % 52), reader="rfid", dispense=i % 52 + 1)],
                     on_durable=durable)
        done.wait(60)
        return n / (time.perf_counter() - t0)


def open_seconds(folder: Path, records: int) -> tuple[dict[str, float], int]:
    path = folder / "big.journal"
    with Journal(path, table="bench", profile="tda", synchronous="NORMAL") as j:
        seq = 0
        while seq < records:
            j.begin_hand({"game": "stud", "seats": [1, 2, 3, 4, 5, 6, 7, 8]})
            batch = []
            for _ in range(50):
                seq += 1
                batch.append(events.CardRead(seq=seq, card=Card(seq % 52), reader="rfid", dispense=seq % 52 + 1))
            j.append_many(batch)
            j.end_hand({"finished": True})
    times = {}
    for verify in ("full", "recent"):  # "recent" after a first open has verified everything
        t0 = time.perf_counter()
        with Journal(path, table="bench", profile="tda", verify=verify):
            pass
        times[verify] = round(time.perf_counter() - t0, 3)
    return times, path.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--appends", type=int, default=3000)
    ap.add_argument("--records", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        folder = Path(d)
        out = {
            "appends_per_s": {s: round(appends_per_s(folder, s, args.appends)) for s in ("FULL", "NORMAL")},
            "grouped_appends_per_s": round(grouped_appends_per_s(folder, args.appends * 3)),
            "machine": platform.machine(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        }
        secs, size = open_seconds(folder, args.records)
        out["open_s"] = {"records": args.records, **secs, "file_mb": round(size / 1e6, 1)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
