"""A STOP still up when a hand ends (a misdeal is declared under it) holds the next hand back,
and does so again after a restart between hands: the ``hand-end`` mark keeps it (``stops``), and
the recovery's fresh machine shows it again. Before, a restart between hands started the table
with no STOP up, and a new hand went on without the floor's override (docs/journal.md,
"Recovery")."""

from __future__ import annotations

import json
from pathlib import Path

from rule_profiles import PROFILES

from shoe_ctl.events import Alert, DealerAction, DealerInput, Event
from shoe_ctl.machine import Dealing
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import HandMarks, recover

NEW_HAND = DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3]})


def _refusals(commands: list[object]) -> list[str]:
    return [c.message for c in commands if isinstance(c, Alert) and c.code == "input-wrong-time"]


def test_a_stop_up_at_a_misdeal_is_up_again_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "table.journal"
    journal = Journal(path, table="t1", profile="tda")
    live = Dealing(PROFILES, default_rules="tda")
    marks = HandMarks(journal, live)

    def feed(ev: Event) -> list[object]:
        journal.append(ev)
        commands = live.handle(ev)
        journal.append_many([c for c in commands if isinstance(c, Alert)])
        marks.after(live)
        return list(commands)

    feed(NEW_HAND)
    journal.append_many([c for c in live.service_alert("journal-write-failed", "the journal cannot be written: "
                                                       "stop, call the floor", latched=True) if isinstance(c, Alert)])
    feed(DealerInput(DealerAction.MISDEAL, None, {"confirm": True}))
    assert live.state == "idle" and [s["code"] for s in live.open_stops()] == ["journal-write-failed"]
    end = [r for r in journal.records(0) if r.kind == "hand-end"][-1]
    assert [s["code"] for s in json.loads(end.body)["stops"]] == ["journal-write-failed"]
    journal.close()

    reopened = Journal(path, table="t1", profile="tda")
    try:
        again, _seq, report = recover(reopened, lambda: Dealing(PROFILES, default_rules="tda"))
        assert report.clean, report.lines()
        assert again.open_stops() == live.open_stops()
        assert again.instruction() == live.instruction()  # the STOP's signal, not "waiting for a new hand"
        said = _refusals(again.handle(NEW_HAND))
        assert said and said == _refusals(live.handle(NEW_HAND))  # refused under the STOP, in the same words
    finally:
        reopened.close()


def test_stops_kept_again_are_taken_only_in_the_marks_shape() -> None:
    """A hand ended with no STOP up has none to keep; a forged mark keeps only well-formed entries."""
    live = Dealing(PROFILES, default_rules="tda")
    live.handle(NEW_HAND)
    live.handle(DealerInput(DealerAction.MISDEAL, None, {"confirm": True}))
    assert live.open_stops() == []
    fresh = Dealing(PROFILES, default_rules="tda")
    assert fresh.show_again([{"code": 3}, "x", {"code": "c", "message": "m", "seat": True, "moves": [1, "a"]}], latched=True) == 1
    assert fresh.open_stops() == [{"code": "c", "message": "m", "street": None, "seat": None, "moves": ["a"]}]
