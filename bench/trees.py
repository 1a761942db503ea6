"""``python -m bench.trees BEFORE AFTER``: one part of the bench on two commits, run alternately.

Each commit's tree is exported (``git archive``) to a temporary folder and this bench is put in
place of its own, so both trees are measured by the same harness; the runs alternate (before,
after, before, ...) in this process's Python, each a whole ``python -m bench --only PART --json``
with the tree first on its path. Printed: each run's figures with its calibration and load, and
the median of the pairs' ratios. docs/performance.md, "CPU per card against the code before the
work", shows a use; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

FIGURES = {
    "cpu": ("cpu_gross_us_per_card", "cpu_us_per_card", "cpu_pi4_percent_at_2_cards_s", "cpu_floor"),
    "latency": ("latency_led_us",),
    "replay": ("ratio_direct_vs_pokerkit", "ratio_replay_process_vs_pokerkit"),
}
"""The figures printed for a part (any other part prints its whole output)."""


def export(commit: str, into: Path) -> Path:
    """The tree of ``commit`` (this repository's) in ``into``, with this bench in place of its own.

    :raises subprocess.CalledProcessError: an unknown commit (git's own message on stderr).
    """
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    shutil.rmtree(into / "bench", ignore_errors=True)
    shutil.copytree(ROOT / "bench", into / "bench", ignore=shutil.ignore_patterns("__pycache__"))
    return into


def run(tree: Path, part: str, extra: list[str]) -> dict[str, Any]:
    """One ``python -m bench --only PART --json`` in ``tree``; its JSON object.

    :raises RuntimeError: the run failed (its last lines of stderr in the message).
    """
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-m", "bench", "--only", part, "--json", *extra],
                          cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.splitlines()[-8:])
        raise RuntimeError(f"python -m bench in {tree} exited {done.returncode}:\n{tail}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def summary(r: dict[str, Any], part: str) -> dict[str, Any]:
    """The figures of ``part`` in one run's output, with its calibration and load."""
    cal = r.get("calibration", {})
    out: dict[str, Any] = {k: r.get(k) for k in FIGURES.get(part, tuple(r))}
    out["calibration_s"] = [cal.get("start", {}).get("cpu_s"), cal.get("end", {}).get("cpu_s")]
    out["load_avg"] = [cal.get("start", {}).get("load_avg", [None])[0], cal.get("end", {}).get("load_avg", [None])[0]]
    if part == "cpu":
        n = r.get("cpu_cards") or 1
        out["threads_us_per_card"] = {k.split(" /")[0]: round(v / n * 1e6) for k, v in r.get("cpu_threads_dealing_s", {}).items() if v}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.trees", description=__doc__.splitlines()[0],
                                 epilog="arguments after -- go to python -m bench (e.g. -- --floor off)")
    ap.add_argument("before", help="a commit (the tree measured first in each pair)")
    ap.add_argument("after", help="a commit")
    ap.add_argument("--part", default="cpu", help="the bench's part (--only): cpu, latency, replay, ...")
    ap.add_argument("--pairs", type=int, default=2, help="before/after pairs, alternated (default 2)")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    extra = argv[cut + 1:]  # after --: passed to python -m bench
    with tempfile.TemporaryDirectory(prefix="shoe-bench-trees-") as tmp:
        trees = {name: export(commit, Path(tmp) / name)
                 for name, commit in (("before", args.before), ("after", args.after))}
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for _ in range(args.pairs):
            for name, tree in trees.items():
                runs[name].append(summary(run(tree, args.part, extra), args.part))
    key = FIGURES.get(args.part, (None,))[0]
    ratios = [a[key] / b[key] for a, b in zip(runs["after"], runs["before"], strict=True)
              if key and isinstance(a.get(key), (int, float)) and isinstance(b.get(key), (int, float)) and b[key]]
    print(json.dumps({"before": args.before, "after": args.after, "part": args.part, "bench_args": extra,
                      "runs": runs, "ratio_key": key, "ratios_after_over_before": [round(x, 3) for x in ratios],
                      "median_ratio": round(statistics.median(ratios), 3) if ratios else None}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
