"""Smoke test of the benchmark entry point: ``python -m bench --quick --json`` runs end to end and
emits every key ``docs/performance.md`` documents. No timing is asserted (figures of a reduced run
on a shared machine mean nothing); only the shape and the internal consistency of the report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import ROOT

KEYS = {
    "latency_us", "latency_parts_us", "latency_cards", "journal_sync", "wire_us", "card_frame_bytes",
    "replay_direct_hands_per_s", "replay_full_hands_per_s", "pokerkit_hands_per_s", "pokerkit_hands",
    "ratio_direct_vs_pokerkit", "ratio_direct_vs_pokerkit_cpu", "ratio_engine_vs_pokerkit", "engine_hands_per_s",
    "pokerkit_engine_hands_per_s", "ratio_analyze_vs_pokerkit", "analyze_hands_per_s", "soak_cards_per_s", "rss_mb", "ready_s", "machine", "targets",
    "latency_loaded_cards_per_s", "latency_loaded_runs_cards_per_s",
}


@pytest.mark.shared
def test_bench_quick_json_emits_every_key() -> None:
    """The quick bench prints one JSON line with latency, wire time, replays, pokerkit, soak,
    service footprint and the machine; the figures are consistent with each other."""
    pytest.importorskip("pokerkit")
    out = subprocess.run([sys.executable, "-m", "bench", "--quick", "--json"], cwd=ROOT, capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stdout[-2000:]
    r = json.loads(lines[0])
    assert KEYS <= r.keys(), KEYS - r.keys()
    lat = r["latency_us"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"]
    assert r["latency_cards"] >= 300 and r["journal_sync"] == "FULL"
    assert r["wire_us"] == pytest.approx(r["card_frame_bytes"] * 10 / 115200 * 1e6, abs=0.1)
    assert r["pokerkit_hands"] > 0 and r["replay_full_hands_per_s"] > 0 and r["soak_cards_per_s"] > 0
    assert r["ratio_direct_vs_pokerkit"] == pytest.approx(
        r["replay_direct_common_hands_per_s"] / r["pokerkit_hands_per_s"], rel=0.02)
    assert r["rss_mb"] > 10 and r["ready_s"] > 0
    assert {"python", "cpu_count", "versions"} <= r["machine"].keys()
    assert r["machine"]["versions"]["transitions"] and r["machine"]["versions"]["pyserial"]
    assert set(r["targets"]) == {"latency p99 (us)", "direct replay / pokerkit", "soak (cards/s)",
                                 "service RSS (MiB)", "service ready (s)", "loaded full stack (cards/s)",
                                 "ready on a large journal (s)"}
    assert r["ready_large_journal_s"] > 0 and r["ready_large_journal_file"]["records"] > 0
    assert r["ratio_engine_vs_pokerkit"] == pytest.approx(
        r["engine_hands_per_s"] / r["pokerkit_engine_hands_per_s"], rel=0.02)
    assert r["analyze_hands_per_s"] > 0 and r["ratio_analyze_vs_pokerkit"] > 0
    assert r["latency_loaded_runs_cards_per_s"] == [r["latency_loaded_cards_per_s"]]  # one run when quick


@pytest.mark.shared
def test_bench_without_pokerkit_says_the_comparison_is_skipped() -> None:
    """Without pokerkit the replay row says so in words, never ``None / None ... Nonex``."""
    code = ("import sys, runpy; sys.modules['pokerkit'] = None; "
            "sys.argv = ['bench', '--quick', '--only', 'replay']; runpy.run_module('bench', run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    row = next(ln for ln in out.stdout.splitlines() if ln.startswith("direct replay / pokerkit"))
    assert "pokerkit not installed: replay comparison skipped" in row
    assert "None" not in row and "Nonex" not in out.stdout


def test_loaded_figure_is_the_median_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench_loaded`` reports the median run by cards/s, with that run's latency and parts, and
    lists every run's rate in the order run."""
    import bench.__main__ as bench_main

    seconds = iter([2.0, 1.0, 4.0])  # 1500, 3000, 750 cards/s

    def fake(cards: int, *, pace_s: float, seed: int = 7) -> dict[str, object]:
        s = next(seconds)
        assert pace_s < 0 and seed == 8
        return {"latency_cards": cards, "latency_seconds": s, "latency_reads": cards,
                "latency_dealing_seconds": s / 2, "latency_us": {"p50": s}, "latency_parts_us": {"link": s}}

    monkeypatch.setattr(bench_main, "bench_latency", fake)
    r = bench_main.bench_loaded(3000, runs=3)
    assert r["latency_loaded_runs_cards_per_s"] == [1500.0, 3000.0, 750.0]
    assert r["latency_loaded_cards_per_s"] == 1500.0
    assert r["latency_loaded_dealing_cards_per_s"] == 3000.0
    assert r["latency_loaded_us"] == {"p50": 2.0} and r["latency_loaded_parts_us"] == {"link": 2.0}
