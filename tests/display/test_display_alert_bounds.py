"""What one display update costs stays bounded however many alerts pile up (docs/security.md,
"Floods and connections"): repeats are merged with a count, the list is capped (latched first)."""

from __future__ import annotations

import json
from typing import Any

from shoe_ctl.display.model import MAX_LISTED_ALERTS, DisplayModel, list_alerts, merge_alerts
from shoe_ctl.events import Alert, DisplayUpdate, Instruction, Signal

REFUSED = "'fold' seat 3 refused in state idle: no hand is running; nothing changed"


def machine_alert(i: int, code: str = "input-wrong-time", message: str = REFUSED, latched: bool = False,
                  seat: int | None = 3) -> dict[str, Any]:
    return {"id": i, "code": code, "message": message, "street": None, "seat": seat, "latched": latched,
            "moves": []}


def test_repeated_alert_commands_are_merged_with_a_count() -> None:
    m = DisplayModel()
    for _ in range(3000):
        m.apply(Alert("input-wrong-time", REFUSED, None, 3))
    alerts = m.snapshot()["alerts"]
    assert len(alerts) == 1 and alerts[0]["count"] == 3000
    m.apply(Instruction(Signal.IDLE, "Waiting", ref=7))
    reply = m.snapshot()["reply"]
    assert reply["refused"] and len(reply["alerts"]) == 1


def test_the_listed_alerts_are_capped_latched_first() -> None:
    m = DisplayModel()
    m.apply(Alert("duplicate-card", "a card read twice", None, 2, latched=True))
    for i in range(3000):
        m.apply(Alert("input-invalid", f"bad input {i}", None, None))
    snap = m.snapshot()
    assert len(snap["alerts"]) == MAX_LISTED_ALERTS
    assert snap["alerts"][0]["code"] == "duplicate-card"
    assert snap["alerts"][-1]["message"] == "bad input 2999"  # the newest are kept
    assert snap["alerts_more"] == 3001 - MAX_LISTED_ALERTS
    assert len(json.dumps(snap)) < 8000


def test_machine_alerts_are_merged_capped_and_acknowledged_as_one() -> None:
    m = DisplayModel()
    listed = [machine_alert(i, "input-invalid", f"bad {i}", seat=None) for i in range(1, 101)] + [
        machine_alert(i) for i in range(101, 3101)]
    m.apply(DisplayUpdate({"hand": 1, "state": "idle", "alerts": listed}))
    snap = m.snapshot()
    assert len(snap["alerts"]) == MAX_LISTED_ALERTS
    assert snap["alerts"][-1]["count"] == 3000 and snap["alerts"][-1]["id"] == 101
    assert snap["alerts"][0]["message"] == "bad 82"  # the newest 19 others
    assert snap["alerts_more"] == 101 - MAX_LISTED_ALERTS
    assert m.acknowledge(101) is not None
    m.apply(DisplayUpdate({"hand": 1, "state": "idle", "alerts": listed}))  # the machine still lists them
    assert all(a["code"] != "input-wrong-time" for a in m.snapshot()["alerts"])


def test_an_update_at_3000_alerts_sends_what_one_at_10_does() -> None:
    def update(n: int) -> int:
        m = DisplayModel()
        state = {"hand": 1, "state": "idle", "alerts": [machine_alert(i) for i in range(n)]}
        for _ in range(10):
            m.apply(DisplayUpdate(state))
            size = len(json.dumps(m.snapshot()))
        return size

    small, large = update(10), update(3000)
    assert large < small + 10  # the same one merged alert (its count has more digits)


def test_merge_and_list_helpers() -> None:
    merged, ids = merge_alerts([machine_alert(1), machine_alert(2, latched=True), machine_alert(3, seat=4)])
    assert [(a["id"], a["count"], a["latched"]) for a in merged] == [(1, 2, True), (3, 1, False)]
    assert ids == {1: [1, 2]}
    alerts = [machine_alert(i, message=str(i), latched=i in (0, 5)) for i in range(10)]
    kept, more = list_alerts(alerts, 4)
    assert [a["id"] for a in kept] == [0, 5, 8, 9] and more == 6
