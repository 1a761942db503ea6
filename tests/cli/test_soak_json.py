"""``shoe-ctl hil soak --json``: every key says what it counts (fault events vs line noise)."""

from __future__ import annotations

import json

import pytest

from shoe_ctl.cli import main

REQUIRED = {"cards", "delivered", "lost", "duplicated", "out_of_order", "bad_frames", "reconnects", "seconds"}


@pytest.mark.faults
def test_soak_json_names_shoe_fault_events_apart_from_bad_frames(capsys: pytest.CaptureFixture[str]) -> None:
    """Two scheduled jams and line noise: the jams are ``shoe_faults`` (FAULT events the shoe
    reported), the noise ``bad_frames``; no bare ``faults`` key sits next to them."""
    rc = main(["hil", "soak", "--cards", "40", "--faults", "jam-at=10:20,corrupt=0.005", "--seed", "3",
               "--json", "--stall-s", "5"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0
    assert REQUIRED <= set(result)
    assert "faults" not in result
    assert result["shoe_faults"] >= 2
    assert result["bad_frames"] > 0
    assert result["injected_faults"] == "corrupt=0.005,jam-at=10,jam-at=20"
    assert {"shoe_buttons", "bad_frames_at_shoe"} <= set(result)
