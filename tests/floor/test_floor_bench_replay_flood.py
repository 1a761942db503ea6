"""The replay flood's bench (``bench.bench_floor_replay_flood``) runs on a real Mosquitto: no
record published again without a request, at least one replay and no more records published again
than the replays begun times the journal during a flood. No timing is asserted."""

from __future__ import annotations

import pytest

from bench.bench_floor_replay_flood import measure
from shoe_ctl.floor.broker import find_mosquitto


def test_the_bench_counts_the_replays_of_a_flood() -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed (scripts/setup.sh test installs it)")
    r = measure(records=300, seconds=1.0, requests=50)
    assert r["floor_in_order"] and r["requests_taken"] == 50
    assert r["quiet"]["records_published_again"] == 0 and r["quiet"]["replays_begun"] == 0
    flood = r["flood"]
    assert 1 <= flood["replays_begun"] < 50
    assert 0 < flood["records_published_again"] <= flood["replays_begun"] * 300
