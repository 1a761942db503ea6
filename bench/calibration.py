"""The machine's speed beside every figure: a fixed pure-Python loop timed at the start and the
end of each ``python -m bench`` run (``docs/performance.md``, "Calibration").

The loop is the cpu-benchmark workload of :func:`bench.bench_scale.python_loop`, a fixed
:data:`ITERATIONS` times (about 0.25 s of one core of the 2-core VM of the docs). A figure divided
by the run's calibration time compares across machines and hours; a Pi 4's calibration time is
estimated (:data:`PI4_CALIBRATION_S`) from the loop's published Pi 4 figure.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

from bench.bench_scale import PUBLISHED, PYTHON_LOOP_ITERATIONS, python_loop

ITERATIONS = 200
"""Iterations of :func:`bench.bench_scale.python_loop` in one calibration run."""

RUNS = 3
"""Calibration runs at each end of a bench run; the figure is their median."""

PY310_OVER_PY311 = 1.43
"""How much longer Python 3.10 runs the loop than 3.11: the middle of the 1.27–1.62 measured on
the docs' VM (``bench.bench_scale``'s ``pi`` part, 3.10 and 3.11 alternately)."""

PI4_CALIBRATION_S = round(PUBLISHED["python_loop_pi4_s"]["value"] * ITERATIONS / PYTHON_LOOP_ITERATIONS
                          / PY310_OVER_PY311, 2)
"""Estimated calibration time (s) on one Raspberry Pi 4 core under Python 3.11: the published
79.216 s per 10,000 iterations (Python 3.10) scaled to :data:`ITERATIONS` and divided by
:data:`PY310_OVER_PY311`. An estimate: no Pi ran it."""

PI4_HOW = (f"estimate: the cpu-benchmark loop's published Raspberry Pi 4 time "
           f"({PUBLISHED['python_loop_pi4_s']['value']} s per {PYTHON_LOOP_ITERATIONS:,} iterations, Ubuntu 22.04's "
           f"Python 3.10) scaled to {ITERATIONS} iterations, divided by {PY310_OVER_PY311} "
           "(Python 3.10 over 3.11 on the bench machine); no Pi ran it")


def calibration_loop() -> tuple[float, float]:
    """One run of the loop: (thread CPU seconds, wall seconds)."""
    cpu0, wall0 = time.thread_time(), time.perf_counter()
    python_loop(ITERATIONS)
    return time.thread_time() - cpu0, time.perf_counter() - wall0


def calibrate(runs: int = RUNS) -> dict[str, Any]:
    """``runs`` calibration runs: ``{"cpu_s", "wall_s"}`` (medians), every run's CPU seconds, the
    load average at the time and the iterations."""
    done = [calibration_loop() for _ in range(runs)]
    return {
        "cpu_s": round(statistics.median(c for c, _ in done), 4),
        "wall_s": round(statistics.median(w for _, w in done), 4),
        "runs_cpu_s": [round(c, 4) for c, _ in done],
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def describe() -> dict[str, Any]:
    """What the calibration is, for the JSON output: the loop, its iterations and the Pi 4's
    estimated time with how it was derived."""
    return {
        "loop": "bench.bench_scale.python_loop (the cpu-benchmark Python loop), thread CPU time",
        "iterations": ITERATIONS,
        "pi4_cpu_s_estimate": PI4_CALIBRATION_S,
        "pi4_how": PI4_HOW,
    }


def pi4_percent(cpu_us_per_card: float, calibration_s: float, cards_per_s: float = 2.0) -> float:
    """The share (%) of one Pi 4 core that ``cpu_us_per_card`` of CPU here takes at
    ``cards_per_s``, scaled by the calibration times (the Pi's estimated over this run's)."""
    return cpu_us_per_card * (PI4_CALIBRATION_S / calibration_s) * cards_per_s / 1e6 * 100
