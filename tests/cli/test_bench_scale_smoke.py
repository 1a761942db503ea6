"""Smoke test of the scale bench: ``python -m bench.bench_scale --quick --json`` and ``python -m
bench --only scale --quick --json`` run end to end and emit the keys ``docs/performance.md``
("Scale: ...") documents, with figures consistent with each other. No timing is asserted (a quick
run on a shared machine means nothing): only shapes, signs and what must hold whatever the speed
(more seats deal more cards, a hand to 7th street more than one ending early, the chain is a part
of the journal, the pinned child ran on one core)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from paths import ROOT

TOP = {"machine", "deal", "journal", "pinning", "pi", "pi_estimates", "seconds"}
POINT = {"seats", "length", "hands", "cards", "events", "cards_per_hand", "engine_cpu_us_per_card",
         "engine_wall_us_per_card", "engine_cpu_us_per_hand", "direct_cpu_us_per_card", "direct_cpu_us_per_hand"}
JOURNAL = {"seats", "hands", "records", "records_per_hand", "file_bytes", "bytes_per_hand",
           "bytes_per_hand_without_chain", "chain_bytes_per_hand", "bytes_per_record", "pages"}
PROBE = {"cpus", "engine_cpu_us_per_card", "full_cards_per_s", "full_process_cpu_us_per_card",
         "full_service_cpu_us_per_card", "full_thread_cpu_s"}
ESTIMATE = {"python_loop_s", "engine_us_per_card", "engine_cards_per_s", "full_stack_cpu_us_per_card",
            "full_stack_cards_per_s_one_core"}


def _run(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", *args, "--quick", "--json"], cwd=ROOT, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stdout[-2000:]
    result: dict[str, Any] = json.loads(lines[0])
    return result


def _check(r: dict[str, Any]) -> None:
    points = r["deal"]["points"]
    assert {(p["seats"], p["length"]) for p in points} == {(s, n) for s in range(2, 9) for n in ("7th", "early")}
    for p in points:
        assert POINT <= p.keys(), POINT - p.keys()
        assert p["hands"] > 0 and p["cards"] > 0 and p["events"] >= p["cards"]
        assert p["engine_cpu_us_per_card"] > 0 and p["direct_cpu_us_per_card"] > 0
        assert p["engine_cpu_us_per_hand"] == pytest.approx(p["engine_cpu_us_per_card"] * p["cards_per_hand"], rel=0.02)
    by = {(p["seats"], p["length"]): p for p in points}
    for s in range(2, 9):  # nobody folds: every seat gets its cards; folds shorten the hand
        assert by[(s, "7th")]["cards_per_hand"] > by[(s, "early")]["cards_per_hand"]
    assert by[(8, "7th")]["cards_per_hand"] > by[(2, "7th")]["cards_per_hand"]
    for key in ("fit_engine_cpu", "fit_direct_cpu"):
        f = r["deal"][key]
        assert {"us_per_card", "us_per_hand_fixed", "r2"} <= f.keys() and 0 <= f["r2"] <= 1
    jp = {p["seats"]: p for p in r["journal"]["points"]}
    assert set(jp) == {2, 8}
    for p in jp.values():
        assert JOURNAL <= p.keys(), JOURNAL - p.keys()
        assert p["records"] >= p["hands"] > 0 and p["file_bytes"] > 0
        assert 0 < p["chain_bytes_per_hand"] < p["bytes_per_hand"]
        assert p["bytes_per_hand_without_chain"] + p["chain_bytes_per_hand"] == pytest.approx(p["bytes_per_hand"], abs=2)
        assert p["records_by_kind"]["hand-start"] == p["records_by_kind"]["hand-end"] == p["hands"]
        assert p["records_by_kind"]["CardRead"] == p["cards"]
    assert jp[8]["records_per_hand"] > jp[2]["records_per_hand"]
    pin = r["pinning"]
    assert len(pin["pinned"]["cpus"]) == 1 and pin["pinned"]["cpus"] == [pin["pinned_to"]]
    assert len(pin["unpinned"]["cpus"]) == pin["cores"]
    for name in ("pinned", "unpinned"):
        x = pin[name]
        assert PROBE <= x.keys(), PROBE - x.keys()
        assert x["full_cards_per_s"] > 0 and x["engine_cpu_us_per_card"] > 0
        assert x["full_process_cpu_us_per_card"] >= x["full_service_cpu_us_per_card"] >= 0
        assert any(not k.startswith(("sim-dealer", "virtual-shoe")) for k in x["full_thread_cpu_s"])  # the service's
    pi = r["pi"]
    assert pi["python_loop_here_cpu_s"] > 0 and pi["engine_us_per_card_per_loop_s"] > 0
    assert pi["published"]["python_loop_pi4_s"]["source"].startswith("https://")
    est = r["pi_estimates"]
    for name in ("pi4", "pi5"):
        assert ESTIMATE <= est[name].keys(), ESTIMATE - est[name].keys()
        assert est[name]["engine_us_per_card"] == pytest.approx(
            pi["engine_us_per_card_per_loop_s"] * est[name]["python_loop_s"], rel=0.02)
    assert est["pi5"]["engine_us_per_card"] < est["pi4"]["engine_us_per_card"]


def test_bench_scale_quick_json() -> None:
    """The scale bench's own command: every part, consistent figures."""
    r = _run("bench.bench_scale")
    assert TOP <= r.keys(), TOP - r.keys()
    _check(r)


def test_bench_only_scale_hook() -> None:
    """``python -m bench --only scale`` runs the same measure under the key ``scale`` and nothing else."""
    r = _run("bench", "--only", "scale")
    assert "scale" in r and "latency_us" not in r and "replay_direct_hands_per_s" not in r
    assert TOP <= r["scale"].keys(), TOP - r["scale"].keys()
    _check(r["scale"])


def test_pi_estimates_without_a_readable_service_cpu_give_no_full_stack_figure() -> None:
    """A quick run's service threads may use less CPU than one clock tick: the full-stack
    estimates are then ``None`` (not measured), not a division by zero; the engine's stand."""
    sys.path.insert(0, str(ROOT))
    try:
        from bench.bench_scale import estimates
    finally:
        sys.path.remove(str(ROOT))
    pi = {"published_python_here": {"loop_s_ratio_other_over_this": 1.4}, "pi5_over_pi4_sysbench": 1.85,
          "engine_us_per_card_per_loop_s": 2.0}
    for service, expect_none in ((0.0, True), (200.0, False)):
        est = estimates({"pinned": {"full_service_cpu_us_per_card": service, "engine_cpu_us_per_card": 20.0}}, pi)
        for name in ("pi4", "pi5"):
            assert est[name]["engine_us_per_card"] > 0
            assert (est[name]["full_stack_cards_per_s_one_core"] is None) is expect_none
            assert (est[name]["full_stack_cpu_us_per_card"] is None) is expect_none
