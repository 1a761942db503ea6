"""Inputs the controller's gate takes before the machine (docs/compliance.md: a role refused, an
input refused on a tilted table, a technician's acknowledgement of the tilt) are journaled marked
with what the gate did (``DealerInput.gate``, docs/journal.md "Records"), and no replay acts on
them: the recovery resumes the table the dealer had (no hand the tilt refused), with no
mismatch, and the export writes only the hands dealt and only the inputs the machine took."""

from __future__ import annotations

from pathlib import Path

from rule_profiles import PROFILES

from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.export import default_machine_factory, replay_hands
from shoe_ctl.machine import Dealing
from shoe_ctl.recall import recall_hands
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import recover

A = DealerAction
FLOOR = "display:1 user=sam role=floor-supervisor"
DEALER = "display:1 user=dana role=dealer"
TECH = "display:1 user=tess role=technician"
SEATS = {"seats": [1, 2, 3]}


def test_gated_inputs_are_marked_and_no_replay_acts_on_them(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal(path, table="t", profile="tda") as j:
        c = Controller(Dealing(PROFILES), journal=j)
        c.roles_enforced = True
        c.tilt_recheck = lambda: ""  # the signed release verifies again at the technician's check
        c.tilt("software-mismatch", "software mismatch: shoe_ctl/x.py differs")
        # queued before the controller runs: they reach it as one burst of inputs
        for ev in (DealerInput(A.NEW_HAND, args=SEATS, source=DEALER),  # refused: tilted
                   DealerInput(A.ACK_ALERT, args={"code": "software-mismatch"}, source=TECH),  # clears the tilt
                   DealerInput(A.NEW_HAND, args=SEATS, source=DEALER),  # hand 1
                   DealerInput(A.MISDEAL, args={"confirm": True}, source=DEALER),  # refused: a floor decision
                   DealerInput(A.FOLD, 2, source=DEALER)):
            c.post(ev)
        c.start()
        assert c.wait_idle(10)
        c.close()
        live = (c.machine.hand_no, c.machine.state, [s.folded for s in c.machine.hand.seats])
        assert live[0] == 1 and c.tilted is None
        j.flush(5.0)
    with Journal(path, table="t", profile="tda") as j:
        gates = [(r.item.action, r.item.gate) for r in j.records() if r.kind == "DealerInput"]
        assert gates == [(A.NEW_HAND, "tilt-refused"), (A.ACK_ALERT, "tilt-recheck"), (A.NEW_HAND, ""),
                         (A.MISDEAL, "role-refused"), (A.FOLD, "")]
        machine, _seq, report = recover(j, lambda: Dealing(PROFILES))
        assert report.mismatches == []
        assert (machine.hand_no, machine.state, [s.folded for s in machine.hand.seats]) == live
        hands = list(replay_hands(j, default_machine_factory))
        recalled = recall_hands(j.records, default_machine_factory, "tda")
    assert [h.number for h in hands] == [1] and not any("misdeal" in i for i in hands[0].inputs)
    inputs = [(e["action"], e.get("gate", "")) for h in recalled for e in h["entries"] if e["kind"] == "input"]
    assert ("misdeal", "role-refused") in inputs and ("fold", "") in inputs
    assert len(recalled) == 1


def test_an_old_record_without_the_gate_reads_as_an_input_the_machine_took() -> None:
    from shoe_ctl.service import codec

    old = codec.loads('{"action":"fold","args":{},"seat":2,"source":null,"type":"DealerInput","v":1}')
    assert isinstance(old, DealerInput) and old.gate == ""
    assert codec.dumps(DealerInput(A.FOLD, 2)) == '{"action":"fold","args":{},"seat":2,"source":null,' \
                                                  '"type":"DealerInput","v":1}'
    assert '"gate":"role-refused"' in codec.dumps(DealerInput(A.FOLD, 2, gate="role-refused"))
