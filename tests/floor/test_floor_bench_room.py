"""The room figure's extrapolation (``bench.bench_room.extrapolate``) scales the measured CPU per
event of the broker and the floor consumer by the event rate of the target room."""

from __future__ import annotations

import pytest

from bench.bench_room import BURST_FACTOR, extrapolate


def test_extrapolation_scales_the_measured_costs_by_the_rooms_event_rate() -> None:
    report = {"events_per_s_per_table": 2.0, "cpu_us_per_event": {"broker": 100.0, "floor_consumer": 250.0}}
    x = extrapolate(report, tables=1000)
    assert x["events_per_s_average"] == 2000 and x["events_per_s_bursting"] == round(2000 * BURST_FACTOR)
    assert x["broker_cores_average"] == pytest.approx(0.2) and x["floor_consumer_cores_average"] == pytest.approx(0.5)
    assert x["floor_consumer_cores_bursting"] == pytest.approx(0.5 * BURST_FACTOR)
    assert x["floor_consumer_events_per_s_one_core"] == 4000
    assert x["tables_one_consumer_core_bursting"] == round(4000 / (2.0 * BURST_FACTOR))
    double = extrapolate(report, tables=2000)
    assert double["broker_cores_bursting"] == pytest.approx(2 * x["broker_cores_bursting"])


def test_a_part_without_a_measure_stays_unknown() -> None:
    x = extrapolate({"events_per_s_per_table": 1.0, "cpu_us_per_event": {"broker": None, "floor_consumer": 0.0}})
    assert x["broker_cores_average"] is None and x["floor_consumer_events_per_s_one_core"] is None
