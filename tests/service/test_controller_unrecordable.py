"""A dealer input the journal's codec cannot record (arguments no input has, e.g. a set) is
refused with ``input-invalid`` and never acted on; the journal is not reported failing and the
inputs around it are journaled and handled as usual, alone or in a burst taken ahead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rule_profiles import PROFILES
from sinks import Collect

from shoe_ctl.events import Alert, DealerAction, DealerInput
from shoe_ctl.machine import Dealing
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal import Journal


def _run(tmp_path: Path, inputs: list[DealerInput]) -> tuple[list[Any], list[str], Controller]:
    journal = Journal(tmp_path / "t.sqlite3", table="t", profile="tda")
    tape = Collect()
    ctl = Controller(Dealing(PROFILES), journal=journal)
    ctl.add_sink(tape)
    try:
        with ctl:
            for ev in inputs:
                assert ctl.post(ev)
            assert ctl.wait_idle(10)
        kinds = [r.kind for r in journal.records()]
    finally:
        journal.close()
    return tape.commands, kinds, ctl


def test_an_unrecordable_input_is_refused_and_the_journal_goes_on(tmp_path: Path) -> None:
    bad = DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2], "odd": {1, 2}})  # a set: no JSON
    good = DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2]})
    commands, kinds, ctl = _run(tmp_path, [bad, good])
    codes = [c.code for c in commands if isinstance(c, Alert)]
    assert "input-invalid" in codes and "journal-write-failed" not in codes
    refusal = next(c for c in commands if isinstance(c, Alert) and c.code == "input-invalid")
    assert "cannot be recorded" in refusal.message
    assert kinds.count("DealerInput") == 1  # the good one only
    assert ctl.machine.hand_no == 1 and ctl.machine.state != "idle"  # one hand: the good input's
    assert ctl.errors == 1


def test_an_unrecordable_input_in_a_burst_is_refused_and_the_rest_handled(tmp_path: Path) -> None:
    new = DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3]})
    bad = DealerInput(DealerAction.UNDO, None, {"odd": {3}})
    undo = DealerInput(DealerAction.UNDO)
    commands, kinds, _ctl = _run(tmp_path, [new, bad, undo])
    codes = [c.code for c in commands if isinstance(c, Alert)]
    assert codes.count("input-invalid") >= 1 and "journal-write-failed" not in codes
    assert kinds.count("DealerInput") == 2  # new hand and the good undo


def test_an_input_with_a_lone_surrogate_is_refused_and_the_journal_goes_on(tmp_path: Path) -> None:
    """A text UTF-8 cannot encode (``"\\ud800"``) in an input's arguments: before, the journal's
    writer failed on it and kept retrying the append (every record after it held back, a
    ``journal-write-failed`` stop) while the machine acted on the input no record kept. Now it is
    refused as any unrecordable input is, and the next input is journaled and handled."""
    bad = DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2], "note": "seat 2 \ud800"})
    good = DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3]})
    commands, kinds, ctl = _run(tmp_path, [bad, good])
    codes = [c.code for c in commands if isinstance(c, Alert)]
    assert "input-invalid" in codes and "journal-write-failed" not in codes
    refusal = next(c for c in commands if isinstance(c, Alert) and c.code == "input-invalid")
    assert "args.note" in refusal.message and "UTF-8 cannot encode" in refusal.message
    assert kinds.count("DealerInput") == 1 and "Alert" in kinds  # the good input, and the refusal
    assert ctl.machine.hand_no == 1 and [s.seat for s in ctl.machine.hand.seats] == [1, 2, 3]  # the good one's
