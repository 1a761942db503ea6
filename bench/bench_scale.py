"""``python -m bench.bench_scale [--json] [--quick]``: what one card and one hand cost against the
number of seats and the hand's length, how many bytes the journal keeps per hand, and what a
Raspberry Pi 4/5 would give. Also ``python -m bench --only scale``.

- ``deal``: random hands (``hil.dealer.random_hands``, no all-ins) for 2..8 seats, either going to
  7th street (no folds) or ending early (``fold_rate`` 0.35), driven straight into a
  :class:`~shoe_ctl.machine.Dealing` machine (no wire). ``engine``: a new machine handed the
  events of that run (recorded once, as ``bench`` does for ``ratio_engine_vs_pokerkit``): the rules
  core + machine alone; ``direct``: :func:`hil.replay.run_direct` (machine + simulated dealer).
  Thread CPU time (steadier than wall time on a shared machine) and wall time, the fastest of
  interleaved runs; a least squares fit of CPU per hand against cards per hand gives the cost per
  card and the fixed cost per hand.
- ``journal``: a real journal file (``shoe-ctl run --journal`` wiring: ``Table.from_config`` with a
  path, ``synchronous=FULL``, hand marks) after N hands dealt through the virtual shoe; its pages
  by table (SQLite ``dbstat``): bytes per hand and per record, the hash chain's share, records per
  hand against seats.
- ``pinning``: the per-card measure and a short full stack (virtual shoe, pty, link, controller
  thread, machine) in a child process pinned to one core (``os.sched_setaffinity``) and unpinned.
- ``pi``: a per-core speed ratio between this machine and a Pi 4 from a stdlib-only Python loop
  whose Pi 4 time is published, run here back to back with the engine (and under the published
  figure's Python 3.10 too); the Pi 5 from the published Pi 5 / Pi 4 single-thread sysbench ratio;
  applied to the measured per-card costs (``pi_estimates``). sysbench is run here for comparison
  only. The published figures and their sources are :data:`PUBLISHED`.

``docs/performance.md`` ("Scale: cost per card and per hand, journal bytes, and a Pi estimate")
records the figures and says which are measured and which derived.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

SEATS = tuple(range(2, 9))
LENGTHS = {"7th": 0.0, "early": 0.35}
"""Hand length: the fold rate per player and street (``random_hands``); ``7th``: nobody folds."""

PUBLISHED: dict[str, dict[str, Any]] = {
    "python_loop_pi4_s": {
        "value": 79.216,
        "what": "the cpu-benchmark Python loop (10,000 iterations, mean of 10 attempts), Raspberry Pi 4, "
                "Ubuntu 22.04.3 (whose python3 is 3.10; the row names neither the Python nor the clock)",
        "source": "https://github.com/alexdedyura/cpu-benchmark (README, 'Benchmark Results (single core)')",
    },
    "sysbench_pi4_eps": {
        "value": 1477.83,
        "what": "sysbench 1.0.20 'sysbench cpu --threads=1 --time=60 run' (primes to 10,000), events/s, "
                "Raspberry Pi 4",
        "source": "https://leoncode.co.uk/articles/raspberry-pi-benchmarks (Sysbench table)",
    },
    "sysbench_pi5_eps": {
        "value": 2737.49,
        "what": "the same, Raspberry Pi 5",
        "source": "https://leoncode.co.uk/articles/raspberry-pi-benchmarks (Sysbench table)",
    },
}
"""Published single-core figures of a Raspberry Pi 4 and 5 for workloads this script runs here."""

PYTHON_LOOP_ITERATIONS = 10_000
"""Iterations of one published attempt of the Python loop (:func:`python_loop`)."""


def profiles() -> dict[str, Any]:
    from shoe_ctl.config import load_profile

    return {"tda": load_profile("tda"), "house": load_profile("house")}


def hands(seed: int, seats: int, fold_rate: float, count: int) -> list[Any]:
    """``count`` random hands at seats 1..``seats``, folds at ``fold_rate``, no all-ins."""
    from hil.dealer import random_hands

    return list(random_hands(seed, seats=tuple(range(1, seats + 1)), fold_rate=fold_rate, all_in_rate=0.0,
                             count=count))


# ---------------------------------------------------------------------------------- deal


class _Count:
    """A sink that counts the commands the machine emits."""

    def __init__(self) -> None:
        self.n = 0

    def handle(self, _command: Any) -> None:
        self.n += 1


def record_run(scripts: Sequence[Any], profs: dict[str, Any]) -> tuple[list[Any], int, int, int]:
    """One direct run of ``scripts``: (every event the machine handled, commands emitted, cards
    pulled, hands finished).

    :raises RuntimeError: the simulated dealer stalled or a hand did not finish.
    """
    from hil.replay import run_direct

    log: list[Any] = []
    count = _Count()
    recorder, dealer = run_direct(scripts, profs, display=False, sinks=[count], log=log)
    if dealer.stalled or len(recorder.hands) != len(scripts):
        raise RuntimeError(f"direct run stopped after {len(recorder.hands)} hands: {dealer.stalled}")
    return log, count.n, dealer.stats.pulls, len(recorder.hands)


def new_machine(profs: dict[str, Any]) -> Any:
    """A new dealing machine (no display), not started: what a run is handed, built outside its timing
    (the service builds its machine once)."""
    from shoe_ctl.machine import Dealing

    return Dealing(profs, default_rules="tda", display=False)


def engine(events: Sequence[Any], profs: dict[str, Any], machine: Any = None) -> int:
    """The rules core + dealing machine alone: ``machine`` (default a new one) started and handed
    ``events``; the number of commands it answered them with."""
    if machine is None:
        machine = new_machine(profs)
    n = len(machine.start())
    handle = machine.handle
    for event in events:
        n += len(handle(event))
    return n


def interleaved_runs(fns: dict[str, Callable[[], Any]], reps: int) -> dict[str, list[tuple[float, float]]]:
    """(thread CPU, wall) seconds of every one of ``reps`` interleaved runs of each function, in
    run order, after one warm-up run each: the k-th run of every function falls in the same round,
    so a pair of functions can be compared round by round."""
    for fn in fns.values():
        fn()
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            c0, t0 = time.thread_time(), time.perf_counter()
            fn()
            wall = time.perf_counter() - t0
            runs[name].append((time.thread_time() - c0, wall))
    return runs


def interleaved(fns: dict[str, Callable[[], Any]], reps: int,
                pick: Callable[[list[float]], float] = min) -> dict[str, tuple[float, float]]:
    """(thread CPU, wall) seconds of each function over ``reps`` interleaved runs
    (:func:`interleaved_runs`): by default the least (on a shared machine other work only adds
    time, so the fastest run is the one it disturbed least), or ``pick`` of them
    (``statistics.median``)."""
    return {k: (pick([c for c, _ in r]), pick([w for _, w in r])) for k, r in interleaved_runs(fns, reps).items()}


def deal_point(seats: int, length: str, count: int, reps: int, profs: dict[str, Any], seed: int = 21,
               pick: Callable[[list[float]], float] = min) -> dict[str, Any]:
    """Cost of ``count`` hands at ``seats`` seats of one ``length`` (a key of :data:`LENGTHS`).

    :returns: cards, events and hands, and per card / per hand: engine and direct CPU and wall µs.
    :raises RuntimeError: the machine handed the recorded events answers differently.
    """
    from hil.replay import run_direct

    scripts = hands(seed + seats, seats, LENGTHS[length], count)
    events, emitted, cards, done = record_run(scripts, profs)
    if engine(events, profs) != emitted:
        raise RuntimeError("the machine handed the recorded events answers differently")
    # each run gets fresh scripts and a fresh machine, made outside the timing
    fresh = [hands(seed + seats, seats, LENGTHS[length], count) for _ in range(reps + 1)]
    machines = [new_machine(profs) for _ in range(2 * (reps + 1))]

    def direct() -> None:
        run_direct(fresh.pop(), profs, machine=machines.pop())

    t = interleaved({"engine": lambda: engine(events, profs, machines.pop()), "direct": direct}, reps, pick)
    point: dict[str, Any] = {"seats": seats, "length": length, "fold_rate": LENGTHS[length], "hands": done,
                             "cards": cards, "events": len(events), "cards_per_hand": round(cards / done, 2),
                             "events_per_hand": round(len(events) / done, 2)}
    for name, (c, w) in t.items():
        point[f"{name}_cpu_us_per_card"] = round(c / cards * 1e6, 2)
        point[f"{name}_wall_us_per_card"] = round(w / cards * 1e6, 2)
        point[f"{name}_cpu_us_per_hand"] = round(c / done * 1e6, 1)
        point[f"{name}_wall_us_per_hand"] = round(w / done * 1e6, 1)
    return point


def fit(points: Sequence[dict[str, Any]], key: str) -> dict[str, float]:
    """Least squares of ``key`` (µs per hand) against cards per hand over ``points``:
    ``us_per_card`` (slope), ``us_per_hand_fixed`` (intercept) and ``r2``."""
    xs = [float(p["cards_per_hand"]) for p in points]
    ys = [float(p[key]) for p in points]
    slope, intercept = statistics.linear_regression(xs, ys)
    r = statistics.correlation(xs, ys)
    return {"us_per_card": round(slope, 2), "us_per_hand_fixed": round(intercept, 1), "r2": round(r * r, 4)}


def bench_deal(count: int, reps: int) -> dict[str, Any]:
    """Every seat count of :data:`SEATS` at every length of :data:`LENGTHS`, and the fits."""
    profs = profiles()
    points = [deal_point(s, length, count, reps, profs) for s in SEATS for length in LENGTHS]
    return {
        "points": points,
        "fit_engine_cpu": fit(points, "engine_cpu_us_per_hand"),
        "fit_engine_wall": fit(points, "engine_wall_us_per_hand"),
        "fit_direct_cpu": fit(points, "direct_cpu_us_per_hand"),
        "fit_direct_wall": fit(points, "direct_wall_us_per_hand"),
        "hands_per_point": count,
        "reps": reps,
    }


# ---------------------------------------------------------------------------------- journal


def journal_pages(path: Path) -> dict[str, int]:
    """Bytes of pages per table or index of the SQLite file at ``path`` (``dbstat``)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {name: int(size) for name, size in
                conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")}
    finally:
        conn.close()


def journal_point(folder: Path, seats: int, count: int, seed: int = 31) -> dict[str, Any]:
    """A real journal after ``count`` random hands (``random_hands`` defaults: folds 0.12, all-ins
    0.01) at ``seats`` seats dealt through the virtual shoe and the controller, as ``shoe-ctl run
    --journal`` writes it (``synchronous=FULL``, hand marks).

    :returns: hands, cards, records (and by kind), the file's bytes, bytes per hand and per record
        (pages of the records table, its indexes and the hash chain), the chain's share.
    """
    from hil.dealer import random_hands
    from hil.replay import run_full
    path = folder / f"scale-{seats}.journal"
    profs = profiles()
    recorder, dealer = run_full(random_hands(seed + seats, seats=tuple(range(1, seats + 1)), count=count), profs,
                                journal=str(path), timeout=120.0)
    done = len(recorder.hands)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        kinds = {k: int(n) for k, n in conn.execute("SELECT kind, COUNT(*) FROM records GROUP BY kind")}
        body = int(conn.execute("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM records").fetchone()[0])
    finally:
        conn.close()
    pages = journal_pages(path)
    records = sum(kinds.values())
    wal = Path(f"{path}-wal")
    file_bytes = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    rec_bytes = sum(v for k, v in pages.items() if k == "records" or k.startswith("records_"))
    chain_bytes = pages.get("chain", 0)
    return {
        "seats": seats, "hands": done, "cards": dealer.stats.pulls, "records": records, "records_by_kind": kinds,
        "records_per_hand": round(records / done, 2), "cards_per_hand": round(dealer.stats.pulls / done, 2),
        "file_bytes": file_bytes, "file_bytes_per_hand": round(file_bytes / done),
        "bytes_per_hand": round((rec_bytes + chain_bytes) / done),
        "bytes_per_hand_without_chain": round(rec_bytes / done),
        "chain_bytes_per_hand": round(chain_bytes / done),
        "bytes_per_record": round((rec_bytes + chain_bytes) / records, 1),
        "body_bytes_per_record": round(body / records, 1),
        "pages": pages,
    }


def bench_journal(seats: Sequence[int], count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shoe-scale-") as d:
        return {"points": [journal_point(Path(d), s, count) for s in seats], "hands_per_point": count}


# ---------------------------------------------------------------------------------- pinning


SIMULATION_THREADS = ("sim-dealer", "virtual-shoe")
"""Name prefixes of the threads that stand in for the dealer and the shoe (not run on a real table)."""


def thread_switches() -> dict[str, int]:
    """Voluntary context switches of every live thread so far, by thread name (threads of one name
    summed; ``/proc/self/task/TID/status``): each is a wait the thread went to sleep in — for its
    queue, its socket, a lock, or the interpreter's lock another thread held."""
    import threading

    out: dict[str, int] = {}
    for t in threading.enumerate():
        with contextlib.suppress(OSError, IndexError, ValueError):
            text = Path(f"/proc/self/task/{t.native_id}/status").read_text()
            n = int(text.split("\nvoluntary_ctxt_switches:", 1)[1].split()[0])
            out[t.name] = out.get(t.name, 0) + n
    return out


class ThreadCpu:
    """CPU seconds of each thread started while it runs, by thread name: the time the scheduler
    ran it (``/proc/self/task/TID/schedstat``, in ns; where the kernel has none, user + system
    clock ticks of ``/proc/self/task/TID/stat``, to a tick, 10 ms) sampled every ``period_s``
    until :meth:`stop`; a thread's last sample is its total."""

    def __init__(self, period_s: float = 0.02) -> None:
        import threading

        self.period_s = period_s
        self.before = {t.native_id for t in threading.enumerate()}
        self.seconds: dict[tuple[str, int], float] = {}
        self._stop = threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK")
        self._thread = threading.Thread(target=self._run, name="thread-cpu-sampler", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        import threading

        for t in threading.enumerate():
            if t.native_id in self.before or t is self._thread or t.native_id is None:
                continue
            with contextlib.suppress(OSError, IndexError, ValueError):
                self.seconds[(t.name, t.native_id)] = self._cpu_s(t.native_id)

    def _cpu_s(self, tid: int) -> float:
        try:
            return int(Path(f"/proc/self/task/{tid}/schedstat").read_text().split()[0]) / 1e9
        except (OSError, IndexError, ValueError):
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / self._tick

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self._sample()

    def snapshot(self) -> dict[str, float]:
        """CPU seconds by thread name now (threads of one name summed), sampling once more."""
        self._sample()
        out: dict[str, float] = {}
        for (name, _tid), sec in dict(self.seconds).items():
            out[name] = out.get(name, 0.0) + sec
        return out

    def stop(self) -> dict[str, float]:
        """Stop sampling; CPU seconds by thread name (threads of one name summed)."""
        self._sample()
        self._stop.set()
        self._thread.join()
        out: dict[str, float] = {}
        for (name, _tid), sec in self.seconds.items():
            out[name] = out.get(name, 0.0) + sec
        return out


def probe(count: int, full_hands: int) -> dict[str, Any]:
    """The per-card measure at 8 seats to 7th street (engine and direct), and a short full stack
    (``run_full``: virtual shoe, pty, ``ShoeLink``, controller thread, machine with its display
    state; no journal): its cards per second, process CPU (all threads) per card, and the CPU per
    card of the service's threads alone (all but the simulated dealer's and the virtual shoe's)."""
    from hil.replay import run_full

    profs = profiles()
    point = deal_point(8, "7th", count, 3, profs, pick=statistics.median)  # as disturbed as the one full run
    run_full(hands(3, 8, 0.12, 2), profs)  # warm-up
    threads = ThreadCpu()
    c0, t0 = time.process_time(), time.perf_counter()
    recorder, dealer = run_full(hands(4, 8, 0.12, full_hands), profs, timeout=120.0)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    by_thread = threads.stop()
    cards = dealer.stats.pulls
    service = sum(v for k, v in by_thread.items() if not k.startswith(SIMULATION_THREADS))
    return {
        "cpus": sorted(os.sched_getaffinity(0)),
        "engine_cpu_us_per_card": point["engine_cpu_us_per_card"],
        "engine_wall_us_per_card": point["engine_wall_us_per_card"],
        "direct_cpu_us_per_card": point["direct_cpu_us_per_card"],
        "direct_wall_us_per_card": point["direct_wall_us_per_card"],
        "full_cards": cards,
        "full_hands": len(recorder.hands),
        "full_cards_per_s": round(cards / wall, 1),
        "full_process_cpu_us_per_card": round(cpu / cards * 1e6, 1),
        "full_service_cpu_us_per_card": round(service / cards * 1e6, 1),
        "full_cpu_per_wall": round(cpu / wall, 2),
        "full_thread_cpu_s": {k: round(v, 2) for k, v in sorted(by_thread.items())},
    }


def _child(pin: int | None, count: int, full_hands: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.bench_scale", "--probe", "--hands", str(count), "--full-hands",
           str(full_hands)]
    if pin is not None:
        cmd += ["--pin", str(pin)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"probe failed: {out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def bench_pinning(count: int, full_hands: int, reps: int) -> dict[str, Any]:
    """The probe in a child process pinned to one core and unpinned, alternately ``reps`` times;
    the median of each figure."""
    cpu = min(os.sched_getaffinity(0))
    runs: dict[str, list[dict[str, Any]]] = {"unpinned": [], "pinned": []}
    for _ in range(reps):
        runs["unpinned"].append(_child(None, count, full_hands))
        runs["pinned"].append(_child(cpu, count, full_hands))
    out: dict[str, Any] = {"pinned_to": cpu, "reps": reps, "cores": len(os.sched_getaffinity(0))}
    for name, rs in runs.items():
        agg: dict[str, Any] = {"cpus": rs[0]["cpus"], "full_thread_cpu_s": rs[0]["full_thread_cpu_s"]}
        for key in rs[0]:
            if key not in agg:
                agg[key] = round(statistics.median(r[key] for r in rs), 2)
        out[name] = agg
    u, p = out["unpinned"], out["pinned"]
    out["full_cards_per_s_pinned_over_unpinned"] = round(p["full_cards_per_s"] / u["full_cards_per_s"], 2)
    out["engine_cpu_pinned_over_unpinned"] = round(p["engine_cpu_us_per_card"] / u["engine_cpu_us_per_card"], 2)
    return out


# ---------------------------------------------------------------------------------- Pi ratio


def python_loop(iterations: int) -> None:
    """The cpu-benchmark workload (``PUBLISHED["python_loop_pi4_s"]``), ``iterations`` times: per
    iteration, ``3.141592 * 2**x`` for x in 1..999, ``float(x) / 3.141592`` and
    ``float(3.141592) / x`` for x in 1..9,999, each result discarded."""
    for _ in range(iterations):
        for x in range(1, 1000):
            3.141592 * 2**x
        for x in range(1, 10000):
            float(x) / 3.141592
        for x in range(1, 10000):
            float(3.141592) / x  # noqa: UP018 - the published workload calls float() here


PUBLISHED_PYTHON = "3.10"
"""The Python of the published Pi 4 loop figure (Ubuntu 22.04's ``python3``)."""


def other_python(version: str = PUBLISHED_PYTHON) -> str | None:
    """An interpreter of ``version`` on this machine: ``$SHOE_SCALE_PYTHON``, a pyenv one, or
    ``pythonX.Y`` on the PATH (not a pyenv shim: it may name a version not selected); ``None`` if
    none."""
    env = os.environ.get("SHOE_SCALE_PYTHON")
    if env:
        return env
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for d in sorted(root.glob(f"{version}.*"), reverse=True):
        exe = d / "bin" / f"python{version}"
        if exe.exists():
            return str(exe)
    found = shutil.which(f"python{version}")
    return found if found and "/shims/" not in found else None


def loop_in(python: str, iterations: int) -> float:
    """Thread CPU seconds of :func:`python_loop` (``iterations``) in the interpreter ``python``
    (this file run as a script: only the standard library is imported)."""
    out = subprocess.run([python, str(Path(__file__)), "--loop", str(iterations)], capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{python}: {out.stderr[-500:]}")
    return float(out.stdout.strip().splitlines()[-1])


def sysbench_eps(seconds: int) -> dict[str, Any] | None:
    """``sysbench cpu --threads=1 --time=SECONDS run`` here: events per second and the version;
    ``None`` without sysbench."""
    exe = shutil.which("sysbench")
    if exe is None:
        return None
    out = subprocess.run([exe, "cpu", "--threads=1", f"--time={seconds}", "run"], capture_output=True, text=True,
                         timeout=seconds + 30)
    m = re.search(r"events per second:\s*([\d.]+)", out.stdout)
    if out.returncode != 0 or m is None:
        return None
    ver = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    return {"events_per_s": float(m.group(1)), "version": ver, "seconds": seconds}


def bench_pi(hands_count: int, loop_iterations: int, reps: int, sysbench_s: int) -> dict[str, Any]:
    """The per-core speed ratio, measured so that the machine's load cancels out: ``reps`` pairs
    of the engine at 8 seats to 7th street (``hands_count`` hands' recorded events) and the Python
    loop of the published figure (``loop_iterations`` iterations), run back to back in thread CPU
    time; ``engine_us_per_card_per_loop_s`` is the median over the pairs of (engine µs per card) /
    (loop seconds per 10,000 iterations). ``slowdown_*`` are Pi time over this machine's time
    (> 1: the Pi is slower). sysbench (if installed) is run once for comparison."""
    profs = profiles()
    events, emitted, cards, _done = record_run(hands(29, 8, LENGTHS["7th"], hands_count), profs)
    if engine(events, profs) != emitted:
        raise RuntimeError("the machine handed the recorded events answers differently")
    python_loop(max(1, loop_iterations // 4))  # warm-up
    per_card: list[float] = []
    loop_s: list[float] = []
    for _ in range(reps):
        machine = new_machine(profs)
        c0 = time.thread_time()
        engine(events, profs, machine)
        c1 = time.thread_time()
        python_loop(loop_iterations)
        c2 = time.thread_time()
        per_card.append((c1 - c0) / cards * 1e6)
        loop_s.append((c2 - c1) * PYTHON_LOOP_ITERATIONS / loop_iterations)
    ratios = [u / s for u, s in zip(per_card, loop_s, strict=True)]
    pair = statistics.median(ratios)
    here = statistics.median(loop_s)
    # the published figure's Python here too, alternated with this one: how much faster this one runs the loop
    other = other_python()
    version: dict[str, Any] = {"python": other, "version": PUBLISHED_PYTHON, "this": platform.python_version()}
    if other is not None:
        speedups = []
        for _ in range(max(1, reps // 2)):
            c0 = time.thread_time()
            python_loop(loop_iterations)
            mine = time.thread_time() - c0
            speedups.append(loop_in(other, loop_iterations) / mine)
        version["loop_s_ratio_other_over_this"] = round(statistics.median(speedups), 3)
        version["loop_s_ratio_range"] = [round(min(speedups), 3), round(max(speedups), 3)]
    else:
        version["loop_s_ratio_other_over_this"] = None
    pi4_loop = PUBLISHED["python_loop_pi4_s"]["value"]
    pi4_sb, pi5_sb = PUBLISHED["sysbench_pi4_eps"]["value"], PUBLISHED["sysbench_pi5_eps"]["value"]
    out: dict[str, Any] = {
        "pairs": reps,
        "python_loop_iterations": loop_iterations,
        "python_loop_here_cpu_s": round(here, 3),
        "python_loop_here_cpu_s_range": [round(min(loop_s), 3), round(max(loop_s), 3)],
        "engine_cpu_us_per_card": round(statistics.median(per_card), 2),
        "engine_us_per_card_per_loop_s": round(pair, 4),
        "engine_us_per_card_per_loop_s_range": [round(min(ratios), 4), round(max(ratios), 4)],
        "published_python_here": version,
        "slowdown_pi4_python_loop": round(pi4_loop / here, 2),
        "pi5_over_pi4_sysbench": round(pi5_sb / pi4_sb, 3),
        # derived: the Pi 5 from the Pi 4's Python figure and the published Pi 5 / Pi 4 sysbench ratio
        "slowdown_pi5_python_loop_derived": round(pi4_loop / here * pi4_sb / pi5_sb, 2),
        "published": PUBLISHED,
    }
    sb = sysbench_eps(sysbench_s)
    out["sysbench"] = sb
    if sb is not None:
        out["slowdown_pi4_sysbench"] = round(sb["events_per_s"] / pi4_sb, 2)
        out["slowdown_pi5_sysbench"] = round(sb["events_per_s"] / pi5_sb, 2)
    return out


def estimates(pinning: dict[str, Any], pi: dict[str, Any]) -> dict[str, Any]:
    """Derived Pi 4/5 figures: the engine's µs per card (8 seats, 7th street, its share of the
    per-hand cost included) is the published Pi 4 loop time, brought to this Python by the 3.10 /
    this Python ratio measured here, times the paired ratio measured here
    (``engine_us_per_card_per_loop_s``); the Pi 5's divided by the published Pi 5 / Pi 4 sysbench
    ratio; the full stack's CPU per card is the engine's times the full stack / engine ratio of
    the pinned probe (the service's threads: no virtual shoe, no simulated dealer). sysbench's own slowdowns are not used (``docs/performance.md`` says why)."""
    # the Pi's loop time in this Python: the published one (Python 3.10) over how much slower 3.10
    # runs the loop here (1 when no 3.10 here: then the versions are mixed, the docs say so)
    factor = pi["published_python_here"]["loop_s_ratio_other_over_this"] or 1.0
    pi4_loop = PUBLISHED["python_loop_pi4_s"]["value"] / factor
    loop_s = {"pi4": pi4_loop, "pi5": pi4_loop / pi["pi5_over_pi4_sysbench"]}
    pinned = pinning["pinned"]
    full_over_engine = pinned["full_service_cpu_us_per_card"] / pinned["engine_cpu_us_per_card"]
    out: dict[str, Any] = {"full_over_engine_pinned": round(full_over_engine, 2)}
    for name, s in loop_s.items():
        eng = pi["engine_us_per_card_per_loop_s"] * s
        out[name] = {
            "python_loop_s": round(s, 2),
            "engine_us_per_card": round(eng, 1),
            "engine_cards_per_s": round(1e6 / eng),
            # None: the service's threads used too little CPU to read (a --quick run: clock ticks)
            "full_stack_cpu_us_per_card": round(eng * full_over_engine) if full_over_engine else None,
            "full_stack_cards_per_s_one_core": round(1e6 / (eng * full_over_engine)) if full_over_engine else None,
        }
    return out


# ---------------------------------------------------------------------------------- report


def measure(quick: bool = False) -> dict[str, Any]:
    """Every part; ``quick``: reduced sizes (a smoke run, the figures mean nothing)."""
    t0 = time.perf_counter()
    from bench.machine import machine_info  # here: the file also runs alone, under another Python (--loop)

    result: dict[str, Any] = {"quick": quick, "machine": machine_info()}
    parts: dict[str, Callable[[], dict[str, Any]]] = {
        "deal": lambda: bench_deal(4 if quick else 25, 1 if quick else 5),
        "journal": lambda: bench_journal((2, 8) if quick else (2, 5, 8), 3 if quick else 30),
        "pinning": lambda: bench_pinning(4 if quick else 20, 3 if quick else 30, 1 if quick else 2),
        "pi": lambda: bench_pi(4 if quick else 30, 5 if quick else 100, 2 if quick else 7, 1 if quick else 3),
    }
    seconds = {}
    for name, part in parts.items():
        t = time.perf_counter()
        result[name] = part()
        seconds[name] = round(time.perf_counter() - t, 1)
    result["pi_estimates"] = estimates(result["pinning"], result["pi"])
    result["machine"]["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    result["part_seconds"] = seconds
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


def _rows(rows: list[tuple[Any, ...]]) -> list[str]:
    text = [tuple(str(c) for c in row) for row in rows]
    w = [max(len(r[i]) for r in text) for i in range(len(text[0]))]
    return ["  ".join(c.rjust(w[i]) for i, c in enumerate(r)) for r in text]


def table(r: dict[str, Any]) -> str:
    """The result as text tables."""
    d, j, p, pi = r["deal"], r["journal"], r["pinning"], r["pi"]
    lines = ["cost per card and per hand (thread CPU us; wall in brackets)"]
    rows: list[tuple[Any, ...]] = [("seats", "length", "cards/hand", "engine us/card", "engine us/hand",
                                    "direct us/card", "direct us/hand")]
    for x in d["points"]:
        rows.append((x["seats"], x["length"], x["cards_per_hand"],
                     f"{x['engine_cpu_us_per_card']} ({x['engine_wall_us_per_card']})", x["engine_cpu_us_per_hand"],
                     f"{x['direct_cpu_us_per_card']} ({x['direct_wall_us_per_card']})", x["direct_cpu_us_per_hand"]))
    lines += _rows(rows)
    for name in ("fit_engine_cpu", "fit_engine_wall", "fit_direct_cpu", "fit_direct_wall"):
        f = d[name]
        lines.append(f"{name}: {f['us_per_card']} us per card + {f['us_per_hand_fixed']} us per hand (r2 {f['r2']})")
    lines += ["", "journal (synchronous FULL, hash chain on)"]
    rows = [("seats", "hands", "cards/hand", "records/hand", "bytes/hand", "without chain", "bytes/record",
             "file bytes/hand")]
    for x in j["points"]:
        rows.append((x["seats"], x["hands"], x["cards_per_hand"], x["records_per_hand"], x["bytes_per_hand"],
                     x["bytes_per_hand_without_chain"], x["bytes_per_record"], x["file_bytes_per_hand"]))
    lines += _rows(rows)
    lines += ["", f"one core (pinned to cpu {p['pinned_to']}) vs unpinned ({p['cores']} cores)"]
    rows = [("", "engine cpu us/card", "engine wall us/card", "full cards/s", "full CPU us/card",
             "service CPU us/card", "CPU/wall")]
    for name in ("unpinned", "pinned"):
        x = p[name]
        rows.append((name, x["engine_cpu_us_per_card"], x["engine_wall_us_per_card"], x["full_cards_per_s"],
                     x["full_process_cpu_us_per_card"], x["full_service_cpu_us_per_card"], x["full_cpu_per_wall"]))
    lines += _rows(rows)
    sb = pi.get("sysbench")
    e = r["pi_estimates"]
    lines += ["", f"python loop here: {pi['python_loop_here_cpu_s']} s CPU per 10,000 iterations "
                  f"(range {pi['python_loop_here_cpu_s_range']}; Pi 4 published {PUBLISHED['python_loop_pi4_s']['value']} s: "
                  f"slowdown {pi['slowdown_pi4_python_loop']}); engine {pi['engine_cpu_us_per_card']} us per card; "
                  f"paired ratio {pi['engine_us_per_card_per_loop_s']} us per card per loop second",
              f"Python {PUBLISHED_PYTHON} here: " + (
                  f"{pi['published_python_here']['loop_s_ratio_other_over_this']}x this Python's loop time "
                  f"(range {pi['published_python_here']['loop_s_ratio_range']})"
                  if pi["published_python_here"]["loop_s_ratio_other_over_this"] else "not found: versions mixed"),
              "sysbench here: " + (f"{sb['events_per_s']} events/s ({sb['version']}): slowdown Pi 4 "
                                   f"{pi['slowdown_pi4_sysbench']}, Pi 5 {pi['slowdown_pi5_sysbench']} (not used)"
                                   if sb else "not installed (apt install sysbench): skipped"),
              f"service threads / engine CPU per card (pinned): {e['full_over_engine_pinned']}; threads (s): "
              f"{p['pinned']['full_thread_cpu_s']}"]
    rows = [("estimate", "loop s", "engine us/card", "engine cards/s", "service CPU us/card", "service cards/s 1 core")]
    for name in ("pi4", "pi5"):
        x = e[name]
        rows.append((name, x["python_loop_s"], x["engine_us_per_card"], x["engine_cards_per_s"],
                     x["full_stack_cpu_us_per_card"], x["full_stack_cards_per_s_one_core"]))
    lines += _rows(rows)
    m = r["machine"]
    lines.append(f"machine: {m.get('cpu')} x{m.get('cpu_count')}, Python {m['python']}, load {m['load_avg_start']} -> "
                 f"{m.get('load_avg_end')}; {r['seconds']} s ({r['part_seconds']})")
    return "\n".join(lines)


def summary(r: dict[str, Any]) -> str:
    """One line for ``python -m bench --only scale``."""
    f = r["deal"]["fit_engine_cpu"]
    j = r["journal"]["points"][-1]
    return (f"scale: {f['us_per_card']} us per card + {f['us_per_hand_fixed']} us per hand (engine CPU, r2 {f['r2']}); "
            f"journal {j['bytes_per_hand']} bytes per {j['seats']}-seat hand ({j['records_per_hand']} records); "
            f"Pi 4 (derived) {r['pi_estimates']['pi4']['engine_us_per_card']} us per card, "
            f"Pi 5 {r['pi_estimates']['pi5']['engine_us_per_card']}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object on one line")
    ap.add_argument("--quick", action="store_true", help="reduced sizes (a smoke run, figures not meaningful)")
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)  # the pinning part's child
    ap.add_argument("--pin", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--hands", type=int, default=40, help=argparse.SUPPRESS)
    ap.add_argument("--full-hands", type=int, default=40, help=argparse.SUPPRESS)
    ap.add_argument("--loop", type=int, default=None, help=argparse.SUPPRESS)  # another Python's loop time
    args = ap.parse_args(argv)
    if args.loop is not None:
        c0 = time.thread_time()
        python_loop(args.loop)
        print(time.thread_time() - c0, flush=True)
        return 0
    if args.probe:
        if args.pin is not None:
            os.sched_setaffinity(0, {args.pin})  # before any thread starts: they all inherit it
        print(json.dumps(probe(args.hands, args.full_hands)), flush=True)
        return 0
    result = measure(args.quick)
    print(json.dumps(result, separators=(",", ":")) if args.json else table(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
