"""Smoke test of the benchmark entry point: ``python -m bench --quick --json`` runs end to end and
emits every key ``docs/performance.md`` documents. No timing is asserted (figures of a reduced run
on a shared machine mean nothing); only the shape and the internal consistency of the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from paths import ROOT

KEYS = {
    "latency_us", "latency_parts_us", "latency_cards", "journal_sync", "wire_us", "card_frame_bytes",
    "replay_direct_hands_per_s", "replay_full_hands_per_s", "pokerkit_hands_per_s", "pokerkit_hands",
    "ratio_direct_vs_pokerkit", "ratio_direct_vs_pokerkit_cpu", "ratio_engine_vs_pokerkit", "engine_hands_per_s",
    "pokerkit_engine_hands_per_s", "ratio_analyze_vs_pokerkit", "analyze_hands_per_s", "soak_cards_per_s", "rss_mb", "ready_s", "machine", "targets",
    "latency_loaded_cards_per_s", "latency_loaded_runs_cards_per_s", "calibration", "load_avg_by_part",
    "cpu_us_per_card", "cpu_idle_ms_per_s", "cpu_pi4_percent_at_2_cards_s", "cpu_threads_dealing_s", "line_cards_per_s",
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
    # the wire is the frames the link wrote: an authenticated card frame out and an LED frame back
    assert r["link_auth"] == "hmac" and r["card_frame_bytes"] > 18 and r["led_frame_bytes"] > 0
    assert r["wire_us"] == pytest.approx((r["card_frame_bytes"] + r["led_frame_bytes"]) * 10 / 115200 * 1e6, abs=0.1)
    led = r["latency_led_us"]
    assert 0 < r["latency_led_cards"] <= r["latency_led_signal_changes"] and 0 < led["p50"] <= led["p99"]
    assert r["pokerkit_hands"] > 0 and r["replay_full_hands_per_s"] > 0 and r["soak_cards_per_s"] > 0
    assert r["ratio_direct_vs_pokerkit"] == pytest.approx(
        r["replay_direct_common_hands_per_s"] / r["pokerkit_hands_per_s"], rel=0.02)
    assert r["rss_mb"] > 10 and r["ready_s"] > 0
    assert {"python", "cpu_count", "versions"} <= r["machine"].keys()
    assert r["machine"]["versions"]["transitions"] and r["machine"]["versions"]["pyserial"]
    assert set(r["targets"]) == {"card -> shoe LEDs p99 (us)", "direct replay / pokerkit", "replay process / pokerkit",
                                 "service RSS (MiB)", "service ready, one core (s)",
                                 "ready on a large journal, one core (s)"}
    assert r["ready_cpus"] == [min(os.sched_getaffinity(0))] and r["ready_bytecode_compiled"]
    assert r["ready_all_cores_s"] > 0
    assert r["ready_large_journal_s"] > 0 and r["ready_large_journal_file"]["records"] > 0
    assert r["ratio_engine_vs_pokerkit"] == pytest.approx(
        r["engine_hands_per_s"] / r["pokerkit_engine_hands_per_s"], rel=0.02)
    assert r["analyze_hands_per_s"] > 0 and r["ratio_analyze_vs_pokerkit"] > 0
    assert r["latency_loaded_runs_cards_per_s"] == [r["latency_loaded_cards_per_s"]]  # one run when quick
    assert r["replay_process_bytecode_compiled"] and r["replay_process_hands"] == r["pokerkit_hands"]
    assert r["ratio_replay_process_vs_pokerkit"] > 0 and r["replay_process_s"]["shoe_ctl"]["cpu_s"] > 0
    cal = r["calibration"]
    assert cal["start"]["cpu_s"] > 0 and cal["end"]["cpu_s"] > 0 and cal["pi4_cpu_s_estimate"] > 0
    assert set(r["load_avg_by_part"]) == {"latency", "replay", "cpu", "soak", "service", "large"}
    # CPU per card: the service's threads only (the simulated dealer and shoe left out), with a Pi share
    assert r["cpu_cards"] >= 50 and r["cpu_gross_us_per_card"] >= r["cpu_us_per_card"] >= 0
    assert "shoe-ctl-controller" in r["cpu_threads_dealing_s"] and "kiosk" not in r["cpu_threads_dealing_s"]
    assert r["cpu_kiosk_bytes"] > 0  # the display pushed its snapshots to a browser
    assert not any(k.startswith(("sim-dealer", "virtual-shoe")) for k in r["cpu_threads_dealing_s"])
    assert r["cpu_pi4_percent_at_2_cards_s"] >= r["cpu_pi4_percent_of_it_idle"] >= 0
    assert r["line_cards_per_s"] == pytest.approx(115200 / 10 / r["card_frame_bytes"], abs=0.1)


def test_calibration_runs_the_loop_and_scales_to_a_pi() -> None:
    """The calibration is the fixed loop's CPU time (median of its runs); the Pi 4 share of a
    per-card cost scales by the Pi's estimated calibration over this run's."""
    from bench.calibration import ITERATIONS, PI4_CALIBRATION_S, calibrate, describe, pi4_percent

    cal = calibrate(runs=3)
    assert len(cal["runs_cpu_s"]) == 3 and sorted(cal["runs_cpu_s"])[1] == pytest.approx(cal["cpu_s"], abs=1e-4)
    assert cal["cpu_s"] > 0 and cal["wall_s"] > 0 and len(cal["load_avg"]) == 3
    about = describe()
    assert about["iterations"] == ITERATIONS and about["pi4_cpu_s_estimate"] == PI4_CALIBRATION_S
    assert "estimate" in about["pi4_how"]
    # 100 us a card here, on a machine whose loop takes as long as the Pi's: 2 cards/s is 0.02 %
    assert pi4_percent(100.0, PI4_CALIBRATION_S) == pytest.approx(0.02)
    # a machine twice as fast as the Pi: the same card costs the Pi twice the share
    assert pi4_percent(100.0, PI4_CALIBRATION_S / 2) == pytest.approx(0.04)


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


def test_paired_ratio_is_the_median_of_each_rounds_ratio() -> None:
    """Made-up timings, (wall, CPU) seconds per round: a burst of load in round 3 slows only the
    numerator's run. Each round's ratio is 2 but for that one (6), so the median of the rounds'
    ratios is 2, where the ratio of the two medians would say 6."""
    from bench.__main__ import paired_ratio

    ours = [(1.0, 0.5), (1.0, 0.5), (1.0, 0.5), (3.0, 1.5), (3.0, 1.5)]
    theirs = [(2.0, 1.0), (2.0, 1.0), (6.0, 1.5), (6.0, 3.0), (6.0, 3.0)]
    wall, cpu = paired_ratio(theirs, ours)
    assert wall == pytest.approx(2.0) and cpu == pytest.approx(2.0)
    medians = sorted(w for w, _ in theirs)[2] / sorted(w for w, _ in ours)[2]
    assert medians == pytest.approx(6.0)
    assert paired_ratio(ours, theirs) == (pytest.approx(0.5), pytest.approx(0.5))
    with pytest.raises(ValueError, match="as many runs"):
        paired_ratio(theirs, ours[:4])
    with pytest.raises(ValueError, match="at least one"):
        paired_ratio([], [])


def test_replay_ratios_pair_the_runs_of_a_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench_replays`` gives each pokerkit ratio (wall and CPU) as :func:`paired_ratio` of the
    two sides' runs round by round; the rates stay the median runs'. Timings made up, no replay
    run (every step it takes is replaced)."""
    from types import SimpleNamespace

    import bench.__main__ as bench_main
    import hil.replay

    rounds = {"direct": [(1.0, 1.0)] * 3, "parse": [(0.1, 0.1)] * 3, "deal": [(0.9, 0.9)] * 3,
              "direct_common": [(1.0, 0.5), (1.0, 0.5), (3.0, 1.5)],
              "pokerkit": [(3.0, 2.0), (9.0, 2.0), (9.0, 6.0)]}
    once = {"engine": [(0.5, 0.25)], "pokerkit_engine": [(2.0, 0.5)],
            "analyze": [(0.25, 0.2)], "pokerkit_again": [(1.0, 1.0)]}

    def fake_interleaved(fns: dict[str, object], reps: int) -> dict[str, list[tuple[float, float]]]:
        table = rounds if reps == 3 else once
        assert set(fns) == set(table)
        return {k: list(table[k]) for k in fns}

    files = [ROOT / "a.phh", ROOT / "b.phh"]
    monkeypatch.setattr(bench_main, "_interleaved", fake_interleaved)
    monkeypatch.setattr(bench_main, "profiles", lambda: {})
    monkeypatch.setattr(bench_main, "pokerkit_accepts", lambda fs: (list(fs), []))
    monkeypatch.setattr(bench_main, "_scripts", lambda fs, seed=0: [])
    monkeypatch.setattr(bench_main, "recorded_events", lambda scripts, profs: ([], 0))
    monkeypatch.setattr(bench_main, "engine_replay", lambda events, profs: 0)
    monkeypatch.setattr(bench_main, "pokerkit_histories", lambda fs: [])
    done = (SimpleNamespace(hands=[1, 2]), SimpleNamespace(stalled=None, stats=SimpleNamespace(pulls=40)))
    monkeypatch.setattr(hil.replay, "run_full", lambda *a, **kw: done)
    r = bench_main.bench_replays(files, 3)
    assert (r["ratio_direct_vs_pokerkit"], r["ratio_direct_vs_pokerkit_cpu"]) == (3.0, 4.0)
    assert (r["ratio_engine_vs_pokerkit"], r["ratio_engine_vs_pokerkit_cpu"]) == (4.0, 2.0)
    assert (r["ratio_analyze_vs_pokerkit"], r["ratio_analyze_vs_pokerkit_cpu"]) == (4.0, 5.0)
    assert r["pokerkit_hands_per_s"] == round(2 / 9.0, 1) and r["replay_direct_common_hands_per_s"] == 2.0


def test_frame_sizes_are_the_encoders_bytes() -> None:
    """The wire counts the frames as the link's encoders write them: a version-2 card frame is
    its COBS body between delimiters, counter, MAC and CRC included."""
    from bench.__main__ import FrameSizes
    from drivers import protocol as p
    from shoe_ctl.rules.cards import parse_card

    card = p.CardMsg(5, parse_card("Ah"), "rfid", 5, 1)
    sealed = p.seal(card, b"k" * 32, 7)
    sizes = FrameSizes()
    written: list[bytes] = []

    class Port:
        def write(self, frame: bytes) -> None:
            written.append(frame)

    port = Port()
    sizes.watch(port, "write")
    port.write(sealed)
    port.write(p.encode(card))
    port.write(b"\x00\x00")  # no frame: ignored
    assert written[:2] == [sealed, p.encode(card)]
    assert sizes.typical(p.T_CARD)[1] == sorted([len(sealed), len(p.encode(card))])
    assert len(sealed) == len(p.encode(card)) + p.AUTH_TRAILER  # the counter and the MAC
    assert sizes.typical(p.T_LED) == (0, [])


def test_led_shows_pair_each_card_with_the_pattern_the_shoe_showed_for_it() -> None:
    """Card -> shoe LEDs: each card's signal change is timed to the shoe showing the pattern the
    sink handed over for it; a change the sink superseded before sending it, and a dealer input's
    change, are left out; a frame sent again under the same token counts once; patterns shown
    before the first one watched are skipped."""
    from bench.__main__ import LedShows
    from drivers import protocol as p

    class Lights:
        def __init__(self) -> None:
            self.led = None

        def show(self, led: tuple[int, ...]) -> None:
            self.led = led

    class Sink:
        def __init__(self) -> None:
            self.handed: list[dict[str, str]] = []

        def _send(self, pattern: dict[str, str]) -> None:
            self.handed.append(pattern)

        def _try(self, pattern: dict[str, str]) -> bool:  # handed over in the controller's thread?
            if pattern["name"] == "burn":
                return False
            self.handed.append(pattern)
            return True

    idx = {name: k for k, name in enumerate(p.LED_SIGNALS)}
    lights, sink = Lights(), Sink()
    shows = LedShows(lights)
    lights.show((1, idx["idle"], 0, 0, 0, 0))  # before the sink is watched: skipped
    shows.watch_sink(sink)
    # fake clocks: (ns handed over, ns shown)
    shows.sent.clear()
    shows.shown.clear()
    shows.shown.append((5, 1, "idle"))
    # the last one handed over in the controller's thread, just before the change reached the stamp
    shows.sent += [(100, "deal", False), (300, "betting", False), (685, "deal", True)]
    shows.shown += [(150, 2, "deal"), (350, 3, "betting"), (760, 4, "deal")]
    # (reached the sinks, ends, signal, card frame written or None)
    changes = [(90, 200, "deal", 40),            # card 1: handed at 100, shown at 150 -> 110 ns
               (200, 250, "burn", 180),          # card 2: superseded before the sink sent it
               (250, 600, "betting", None),      # a dealer input's change: not a card's
               (600, 690, "idle", 560),          # superseded
               (690, 10_000, "deal", 650)]       # card 5: handed at 685, shown at 760 -> 110 ns
    assert shows.after(changes) == [110, 110]
    # the wrapped show and sink still pass everything on
    lights.show((9, idx["stop"], 0, 0, 0, 0))
    lights.show((9, idx["stop"], 0, 0, 0, 0))  # sent again under its token: once
    assert lights.led == (9, idx["stop"], 0, 0, 0, 0) and shows.shown[-1][1:] == (9, "stop")
    assert [t for _, t, _ in shows.shown].count(9) == 1
    sink._send({"name": "deal"})
    assert sink.handed == [{"name": "deal"}] and shows.sent[-1][1:] == ("deal", False)
    assert sink._try({"name": "cut"}) and not sink._try({"name": "burn"})  # only what was handed over
    assert sink.handed[-1] == {"name": "cut"} and shows.sent[-1][1:] == ("cut", True)
