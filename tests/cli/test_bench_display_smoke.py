"""The display's bench (``bench.bench_display``) runs on a few hands and gives each figure; with no
page reading it the display pushes no snapshot. No timing is asserted."""

from __future__ import annotations

from bench.bench_display import batches, measure


def test_the_display_bench_gives_every_figure() -> None:
    r = measure(hands=2, count=30)
    assert r["batches"] == 30 and r["calibration_s"] > 0 and r["model_us_per_batch"] > 0
    assert r["display_page"]["published"] >= 1 and r["display_page"]["page_bytes"] > 0
    assert r["display_alone"]["published"] == 0 and r["display_alone"]["page_bytes"] == 0


def test_each_batch_ends_with_its_display_update() -> None:
    cut = batches(2)
    assert len(cut) > 20
    assert all(type(b[-1]).__name__ == "DisplayUpdate" for b in cut)
