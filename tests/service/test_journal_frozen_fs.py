"""The journal on a real filesystem frozen mid-table (``fsfreeze`` on a loop-mounted ext4, root
only: skipped elsewhere), as a stalled SD card stops it (docs/journal.md, "The writer"): the
dealer's inputs are still answered, a hand still ends and the next starts, the page still answers,
and the journal's STOP comes once a commit has waited ``STALL_S``; after the thaw every record is
written in order and the journal writes again."""

from __future__ import annotations

import json
import queue
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from rule_profiles import PROFILES
from sinks import Collect
from small_fs import loop_ext4
from waiting import wait_for

from shoe_ctl.display.server import start_display
from shoe_ctl.events import Alert, DealerAction, DealerInput, Instruction
from shoe_ctl.machine import Dealing
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.deck_check import DeckCheckShown
from shoe_ctl.service.journal import Journal, writer
from shoe_ctl.service.recovery import HandMarks


def _state(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "state", timeout=10) as r:
        return dict(json.loads(r.read()))


def test_a_frozen_filesystem_leaves_the_table_answering_and_stops_the_dealer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "STALL_S", 1.0)
    with loop_ext4(tmp_path / "disk") as fs:
        journal = Journal(fs.mount / "t.journal", table="t", profile="tda")
        machine = Dealing(PROFILES)
        ctl = Controller(machine, journal=journal)
        ctl.add_hook(HandMarks(journal, machine, wait=False).after_event)
        tape = Collect()
        ctl.add_sink(tape)
        sink = start_display("127.0.0.1", 0, queue.Queue().put)
        sink.deck_check = DeckCheckShown(journal, every_s=0.0)  # each look reads the journal
        ctl.add_sink(sink)

        def answered(ref: int) -> bool:
            return any(isinstance(c, Instruction) and c.ref == ref for c in tape.commands)

        try:
            with ctl:
                assert ctl.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2], "ref": 1}))
                assert wait_for(lambda: answered(1), 20) and journal.flush(20)
                fs.freeze()
                assert ctl.post(DealerInput(DealerAction.MISDEAL, None, {"confirm": True, "ref": 2}))
                assert ctl.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2], "ref": 3}))
                next_hand = wait_for(lambda: answered(3), 30)
                page = _state(sink.url)  # raises when the page does not answer
                stopped = wait_for(lambda: any(isinstance(c, Alert) and c.code == "journal-write-failed"
                                               for c in tape.commands), 30)
                failing = journal.failing
                still_frozen = fs.frozen
                fs.thaw()
                assert journal.flush(30)
                assert wait_for(lambda: journal.failing is None, 20)
        finally:
            fs.thaw()
            sink.close()
            marks = [(r.kind, r.hand) for r in journal.records() if r.kind.startswith("hand-")]
            journal.close()
    assert still_frozen
    assert next_hand, "the controller stopped answering on the frozen disk"
    assert page["instruction"]["text"], page
    assert stopped and isinstance(failing, writer.StalledCommit)
    assert marks == [("hand-start", 1), ("hand-end", 1), ("hand-start", 2)]
