"""``python -m bench.trees``: a commit's tree exported with this bench in place of its own, and one
part of the bench run in it (docs/performance.md, "CPU per card against the code before the work")."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench import trees

ROOT = Path(__file__).resolve().parents[2]


def _head() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: bench.trees exports commits of this repository")


def test_an_exported_tree_has_the_commit_and_this_bench(tmp_path: Path) -> None:
    tree = trees.export(_head(), tmp_path / "t")
    assert (tree / "shoe_ctl" / "table.py").read_bytes() == subprocess.run(
        ["git", "-C", str(ROOT), "show", "HEAD:shoe_ctl/table.py"], check=True, capture_output=True).stdout
    assert (tree / "bench" / "trees.py").read_bytes() == (ROOT / "bench" / "trees.py").read_bytes()
    assert not (tree / "bench" / "__pycache__").exists()


def test_an_unknown_commit_is_refused(tmp_path: Path) -> None:
    _head()
    with pytest.raises(subprocess.CalledProcessError):
        trees.export("0" * 40, tmp_path / "t")


def test_a_part_runs_in_the_tree_with_the_bench_arguments(tmp_path: Path) -> None:
    tree = trees.export(_head(), tmp_path / "t")
    r = trees.summary(trees.run(tree, "cpu", ["--quick", "--floor", "off"]), "cpu")
    assert r["cpu_floor"].startswith("off: asked")
    assert r["cpu_gross_us_per_card"] > 0 and all(c > 0 for c in r["calibration_s"])
    assert "shoe-ctl-controller" in r["threads_us_per_card"]
    assert not any(" /" in k for k in r["threads_us_per_card"])  # the link's thread without its pty path


def test_a_failed_run_says_where_and_why(tmp_path: Path) -> None:
    tree = trees.export(_head(), tmp_path / "t")
    with pytest.raises(RuntimeError, match=r"(?s)exited 2:.*--no-such"):
        trees.run(tree, "cpu", ["--no-such"])
