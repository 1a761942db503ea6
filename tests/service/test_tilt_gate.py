"""The controller's tilt (docs/compliance.md, "Software identity and the tilt"): while tilted no hand starts (not even on the
floor's override) and no acknowledgement takes the tilt's alert away; other alerts are still
acknowledged; every refusal is an alert and the refused input is journaled; clearing it names who."""

from __future__ import annotations

from typing import Any

from rule_profiles import PROFILES

from shoe_ctl.events import Alert, DealerAction, DealerInput
from shoe_ctl.machine import Dealing
from shoe_ctl.service.controller import Controller


class Recorder:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def append(self, item: Any) -> int:
        self.items.append(item)
        return len(self.items)


def tilted() -> tuple[Controller, Recorder]:
    journal = Recorder()
    c = Controller(Dealing(PROFILES), journal=journal)
    c.machine.start()
    c.tilt("software-mismatch", "software mismatch: shoe_ctl/x.py differs from the release")
    return c, journal


def codes(c: Controller) -> list[str]:
    return [a["code"] for a in c.machine.alerts]


def test_no_hand_and_no_ack_while_tilted() -> None:
    c, journal = tilted()
    assert codes(c) == ["software-mismatch"] and c.machine.alerts[0]["latched"]
    tilt_id = c.machine.alerts[0]["id"]
    for args in ({"override": True}, {}):
        c.step(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3], **args}))
    for args in ({}, {"code": "software-mismatch"}, {"id": tilt_id}):
        c.step(DealerInput(DealerAction.ACK_ALERT, args=args))
    assert c.machine.hand is None and "software-mismatch" in codes(c)
    refused = [a for a in c.machine.alerts if a["code"] == "tilt-refused"]
    assert refused and "no hand starts on a tilted table" in refused[0]["message"]
    inputs = [x for x in journal.items if isinstance(x, DealerInput)]
    assert len(inputs) == 5  # every refused input is in the record
    assert [x.code for x in journal.items if isinstance(x, Alert)][0] == "software-mismatch"


def test_other_alerts_are_acknowledged_and_the_clear_names_who() -> None:
    c, journal = tilted()
    c.raise_alert("input-invalid", "something else")
    other = next(a["id"] for a in c.machine.alerts if a["code"] == "input-invalid")
    c.step(DealerInput(DealerAction.ACK_ALERT, args={"id": other}))
    assert codes(c) == ["software-mismatch"]
    assert c.clear_tilt("tech-7", "the release verifies again")
    assert "software-mismatch" not in codes(c) and c.tilted is None
    cleared = [x for x in journal.items if isinstance(x, Alert) and x.code == "tilt-cleared"]
    assert cleared and "tech-7" in cleared[0].message
    assert not c.clear_tilt("tech-7", "again")


def test_a_technician_clears_the_tilt_once_the_release_verifies_again() -> None:
    c, journal = tilted()
    c.roles_enforced = True
    problems = ["shoe_ctl/x.py differs from the release"]
    c.tilt_recheck = lambda: problems[0]
    ack = {"code": "software-mismatch"}
    c.step(DealerInput(DealerAction.ACK_ALERT, args=ack, source="display:1 user=sam role=floor-supervisor"))
    assert c.tilted is not None
    assert "needs a technician" in next(a["message"] for a in c.machine.alerts if a["code"] == "role-refused")
    c.step(DealerInput(DealerAction.ACK_ALERT, args=ack, source="display:1 user=tess role=technician"))
    assert c.tilted is not None and "tilt not cleared by tess: shoe_ctl/x.py differs" in \
        [a["message"] for a in c.machine.alerts if a["code"] == "tilt-refused"][-1]
    problems[0] = ""  # the signed release installed again
    c.step(DealerInput(DealerAction.ACK_ALERT, args=ack, source="display:1 user=tess role=technician"))
    assert c.tilted is None and "software-mismatch" not in codes(c)
    c.step(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    assert c.machine.hand is not None  # hands start again
    assert any(isinstance(x, Alert) and x.code == "tilt-cleared" and "tess" in x.message for x in journal.items)
