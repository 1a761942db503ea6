"""The publisher's bench (``bench.bench_floor_publisher``) runs, on a real Mosquitto, a few tables
and counts what reached the broker per event by topic: each record once on ``events``, no
``display`` unless asked for. No timing is asserted."""

from __future__ import annotations

import pytest

from bench.bench_floor_publisher import measure
from shoe_ctl.floor.broker import find_mosquitto


@pytest.mark.parametrize("display", [False, True])
def test_the_bench_counts_the_messages_per_event(display: bool) -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed (scripts/setup.sh test installs it)")
    r = measure(tables=2, seconds=2.0, pace=0.02, display=display)
    assert r["events"] > 20 and r["floor_in_order"]
    # each record once; a table's close adds a record or two after its last counted one
    assert 1.0 <= r["topics"]["events"]["per_event"] <= 1.2
    assert 0 < r["topics"]["state"]["per_event"] <= 1.0
    assert ("display" in r["topics"]) is display
    assert r["publisher_cpu_us_per_event"] > 0 and r["bytes_per_event"] > r["topics"]["events"]["mean_bytes"]
