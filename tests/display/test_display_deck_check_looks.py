"""The display's deck-check looks, each after the first reading only the records committed since
the last (``shoe_ctl.service.deck_check.DeckCheckShown``, docs/build-a-shoe.md "Deck check"),
show at every look what a look reading from the newest hand's start shows (``latest_check``):
checks, hands started, other records, a display started again between looks, and a check's
record changed in the file under the display (its checksum no longer holds: found damaged and put
aside), in any order."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_ctl.service.deck_check import DeckCheckShown, latest_check
from shoe_ctl.service.journal import Journal

_OPS = st.lists(st.sampled_from(["check", "hand", "other", "look", "restart", "tamper"]), min_size=1, max_size=30)


def _tamper(path: Path) -> None:
    """The newest ``deck-check`` record's body changed in the file by another program."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE records SET body = replace(body, '52 of 52', '51 of 52') WHERE seq = "
                   "(SELECT max(seq) FROM records WHERE kind = 'deck-check')")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_OPS)
def test_each_look_shows_what_a_look_from_the_hand_start_shows(tmp_path_factory: object, ops: list[str]) -> None:
    path = Path(tmp_path_factory.mktemp("looks")) / "t.journal"  # type: ignore[attr-defined]
    with Journal(path, table="t", profile="tda") as j:
        clock = [0.0]
        shown = DeckCheckShown(j, every_s=2.0, clock=lambda: clock[0])
        for n, op in enumerate(ops):
            if op == "check":
                j.append_record("deck-check", {"deck": f"D{n}", "by": "bob", "checked": "2026-03-14T09:00:00Z",
                                               "read": 52, "whole": True, "lines": [f"deck D{n}: 52 of 52 cards read"]})
            elif op == "hand":
                j.begin_hand({"game": "stud"})
            elif op == "other":
                j.append_record("decision", {"n": n})
            elif op == "tamper":
                _tamper(path)
            elif op == "restart":
                shown = DeckCheckShown(j, every_s=2.0, clock=lambda: clock[0])
            else:
                clock[0] += 2.0
                assert shown() == latest_check(j)
        clock[0] += 2.0
        assert shown() == latest_check(j)
