"""A ruling that needs the floor says so once: its alert reads "call the floor" one time, whether
the ruling's own instruction already says it or the machine adds it (``docs/irregularities.md``)."""

from __future__ import annotations

import pytest
from irregular_help import run
from test_hil_export_irregular import SCENARIOS


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_floor_ruling_says_call_the_floor_once(name: str) -> None:
    (hand,), _ = run([SCENARIOS[name]])
    for alert in hand.alerts:
        assert alert.message.lower().count("call the floor") <= 1, (alert.code, alert.message)
