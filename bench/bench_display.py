"""The dealer display's CPU a card, apart from the rest of the service (docs/performance.md, "The
dealer display's snapshot").

``python -m bench.bench_display [--hands N] [--batches N] [--json]``: seeded random hands dealt
straight into the machine (:func:`hil.replay.run_direct`, no wire) give the commands a display
gets; they are cut into one batch per card (each batch ends with its ``DisplayUpdate``, as the
display folds them at a dealer's pace). Two figures, with the calibration loop's time beside them:

- ``model_us_per_batch``: :class:`shoe_ctl.display.DisplayModel` folding a batch, its snapshot and
  the snapshot's JSON, in this thread (thread CPU, best of five passes);
- ``thread_us_per_batch``: a running :class:`shoe_ctl.display.server.DisplaySink` handed one
  batch every ``gap_s`` in one call, as the controller hands over an event's commands (more than its ``publish_gap_s``, so each is pushed on its own) with a page
  reading ``/events`` (``display_page``) and without one (``display_alone``): the display thread's
  CPU a batch (``/proc`` per thread, to a clock tick), its event loop, stream and socket included.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from bench.calibration import calibrate

GAP_S = 0.012
"""Seconds between two batches handed to the running display (its publish gap is 10 ms)."""


class _Tape:
    """A sink that keeps every command."""

    def __init__(self) -> None:
        self.commands: list[Any] = []

    def handle(self, command: Any) -> None:
        self.commands.append(command)

    def close(self) -> None:
        pass


def batches(hands: int, seed: int = 3) -> list[list[Any]]:
    """The commands of ``hands`` seeded random hands, one batch per ``DisplayUpdate``."""
    from bench.__main__ import profiles
    from hil.dealer import random_hands
    from hil.replay import run_direct
    from shoe_ctl.events import DisplayUpdate

    tape = _Tape()
    run_direct(random_hands(seed, count=hands), profiles(), seed=seed, sinks=[tape])
    out: list[list[Any]] = []
    cur: list[Any] = []
    for c in tape.commands:
        cur.append(c)
        if isinstance(c, DisplayUpdate):
            out.append(cur)
            cur = []
    return out


def model_us(cut: list[list[Any]], passes: int = 5) -> float:
    """Thread CPU µs a batch: fold, snapshot, JSON (best of ``passes``)."""
    from shoe_ctl.display import DisplayModel

    best = float("inf")
    for _ in range(passes):
        model = DisplayModel()
        t0 = time.thread_time()
        for batch in cut:
            if model.apply_all(batch):
                json.dumps(model.snapshot(), separators=(",", ":"))
        best = min(best, time.thread_time() - t0)
    return best / len(cut) * 1e6


def thread_us(cut: list[list[Any]], *, page: bool, gap_s: float = GAP_S) -> dict[str, Any]:
    """The display thread's CPU µs a batch, with a page reading ``/events`` or none."""
    from bench.__main__ import _Kiosk
    from bench.bench_scale import ThreadCpu
    from shoe_ctl.display.server import DisplaySink

    cpu = ThreadCpu()
    sink = DisplaySink(lambda _event: None, port=0).start()
    kiosk = _Kiosk(sink.port) if page else None
    try:
        time.sleep(0.3)  # the page's stream is open
        before = cpu.snapshot()
        for batch in cut:
            sink.handle_all(batch)  # as the controller hands over one event's commands
            time.sleep(gap_s)
        sink.sync()
        after = cpu.snapshot()
    finally:
        if kiosk is not None:
            kiosk.close()
        sink.close()
        cpu.stop()
    return {"us_per_batch": round((after.get("display", 0.0) - before.get("display", 0.0)) / len(cut) * 1e6, 1),
            "published": sink.published, "page_bytes": kiosk.received if kiosk is not None else 0}


def measure(hands: int = 12, count: int = 400) -> dict[str, Any]:
    """Every figure of the module docstring, with the calibration loop's time (``calibration_s``)."""
    cut = batches(hands)[:count]
    return {"batches": len(cut), "calibration_s": calibrate()["cpu_s"],
            "model_us_per_batch": round(model_us(cut), 1),
            "display_page": thread_us(cut, page=True), "display_alone": thread_us(cut, page=False)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_display", description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=12, help="seeded random hands dealt for the commands")
    ap.add_argument("--batches", type=int, default=400, help="batches handed to the running display at most")
    ap.add_argument("--json", action="store_true", help="one JSON object on one line")
    args = ap.parse_args(argv)
    r = measure(args.hands, args.batches)
    if args.json:
        print(json.dumps(r, separators=(",", ":")))
    else:
        print(f"{r['batches']} batches (calibration {r['calibration_s']} s): model {r['model_us_per_batch']} us a batch; "
              f"display thread {r['display_page']['us_per_batch']} us with a page, "
              f"{r['display_alone']['us_per_batch']} us without")
    return 0


if __name__ == "__main__":
    sys.exit(main())
