"""The newest deck check on the dealer display (docs/build-a-shoe.md, "Deck check"): the
snapshot's ``deck_check`` carries its findings, line by line, as ``shoe-ctl deck check`` printed
and journaled them, until a hand starts; an older record without its lines names its findings by
tag; null without a check or a journal."""

from __future__ import annotations

import queue
from pathlib import Path
from typing import Any

from display_feed import display_state

from shoe_ctl.display.server import start_display
from shoe_ctl.service.deck_check import DeckCheckShown, latest_check
from shoe_ctl.service.journal import Journal

LINES = ["deck D17: 51 of 52 cards read", "missing: 9c (tag 04a1b2c3d4e5f6)", "foreign: tag 05f0e1d2 (in no deck)"]


def test_the_display_shows_the_newest_deck_check_until_a_hand_starts(tmp_path: Path) -> None:
    posted: queue.Queue[Any] = queue.Queue()
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        sink = start_display("127.0.0.1", 0, posted.put)
        try:
            assert display_state(sink.url)["deck_check"] is None  # nothing attached
            clock = [0.0]
            sink.deck_check = DeckCheckShown(j, every_s=2.0, clock=lambda: clock[0])
            assert display_state(sink.url)["deck_check"] is None  # no check journaled
            j.append_record("deck-check", {"deck": "D17", "by": "bob", "checked": "2026-03-14T09:00:00Z",
                                           "read": 52, "whole": False, "missing": ["04a1b2c3d4e5f6"],
                                           "foreign": ["05f0e1d2"], "lines": LINES})
            assert display_state(sink.url)["deck_check"] is None, "read again only every 2 s"
            clock[0] = 2.0
            shown = display_state(sink.url)["deck_check"]
            j.begin_hand({"game": "stud"})
            clock[0] = 4.0
            after = display_state(sink.url)["deck_check"]
        finally:
            sink.close()
    assert shown == {"deck": "D17", "checked": "2026-03-14T09:00:00Z", "by": "bob", "whole": False, "lines": LINES}
    assert after is None, "a hand started: the check was before it"


def test_a_check_journaled_without_its_lines_names_its_findings_by_tag(tmp_path: Path) -> None:
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        j.append_record("deck-check", {"deck": "D17", "by": "bob", "read": 53, "whole": False,
                                       "missing": [], "twice": ["04aa"], "other": [], "foreign": ["05bb"]})
        shown = latest_check(j)
    assert shown is not None and shown["lines"] == ["deck D17: 53 tags read", "twice: tag 04aa", "foreign: tag 05bb"]



def test_each_look_after_the_first_reads_only_the_records_committed_since(tmp_path: Path) -> None:
    """The display looks every 2 s: the first look reads from the newest hand's start, each later
    one only what was committed since, whoever wrote it (``shoe-ctl deck check`` journals from its
    own process: here each writer is a connection of its own, and the looks read through a third)."""
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        j.begin_hand({"game": "stud"})
        for n in range(6):
            j.append_record("note", {"n": n})
    reader = Journal(path, table="t", profile="tda", readonly=True)
    try:
        clock = [0.0]
        shown = DeckCheckShown(reader, every_s=2.0, clock=lambda: clock[0])
        assert shown() is None and shown.read == 6, "the first look: the records since the hand's start"
        clock[0] = 2.0
        assert shown() is None and shown.read == 6, "an idle table: nothing read"
        with Journal(path, table="t", profile="tda") as j:
            j.end_hand()
        with Journal(path, table="t", profile="tda") as check_process:
            check_process.append_record("deck-check", {"deck": "D17", "by": "bob", "read": 52, "whole": True,
                                                       "lines": LINES[:1]})
        clock[0] = 4.0
        check = shown()
        assert check is not None and check["deck"] == "D17" and check["lines"] == LINES[:1]
        assert shown.read == 8, "the hand's end and the check, nothing else"
        with Journal(path, table="t", profile="tda") as j:
            j.append_record("note", {"n": 6})
            clock[0] = 6.0
            # the new record, and the newest check (the one shown, still as it was)
            assert shown() == check and shown.read == 10, "a record that is neither keeps the check shown"
            j.begin_hand({"game": "stud"})
        clock[0] = 8.0
        assert shown() is None and shown.read == 12, "a hand started: the check was before it"
        assert latest_check(reader) is None
    finally:
        reader.close()
