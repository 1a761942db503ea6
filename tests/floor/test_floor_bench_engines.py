"""``bench/bench_floor_engines.py`` runs end to end on real servers and reports every figure it
names (one failover round, a few central events); the figures themselves are not asserted."""

from __future__ import annotations

import pytest
from nats_help import find_nats_server

from bench import bench_floor_engines
from shoe_ctl.floor.broker import find_mosquitto


def test_the_engines_bench_reports_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    if find_mosquitto() is None or find_nats_server() is None:
        pytest.skip("mosquitto and nats-server are needed (scripts/setup.sh test installs them)")
    out = bench_floor_engines.run(rounds=1, events=100)
    (round_,) = out["failover"]
    assert "error" not in round_, round_
    assert len(round_["moved_s"]) == 2 and all(s > 0 for s in round_["moved_s"]), "both tables reached broker B"
    assert all(s > 0 for s in round_["floor_s"]), "and the floor went on with them"
    assert out["central"]["complete"] and out["central"]["events"] == 100
    assert {"start", "end"} <= set(out["calibration"])
    assert bench_floor_engines.main(["--rounds", "0", "--events", "10"]) == 0
    assert "central: 10 events" in capsys.readouterr().out
