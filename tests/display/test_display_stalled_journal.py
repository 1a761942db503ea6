"""The page keeps answering while the journal's disk stalls (a commit stuck in its fsync: a frozen
filesystem, a stalled SD card; docs/display.md): the look at the deck check, which reads the
journal through the store's lock the commit holds, runs in a thread of its own, so ``/state`` and
``/events`` answer with the commands handed meanwhile and the deck check last seen; once the disk
goes on, the look catches up."""

from __future__ import annotations

import queue
from pathlib import Path
from typing import Any

import pytest
from display_feed import display_state
from held_store import HeldCommits
from test_display import SseReader
from waiting import wait_for

from shoe_ctl.display import server
from shoe_ctl.display.server import start_display
from shoe_ctl.events import Instruction, Signal
from shoe_ctl.service.deck_check import DeckCheckShown
from shoe_ctl.service.journal import Journal

CHECK = {"deck": "D17", "by": "bob", "read": 52, "whole": True, "lines": ["deck D17: 52 of 52 cards read"]}


def test_state_and_events_answer_while_a_commit_is_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    posted: queue.Queue[Any] = queue.Queue()
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        j.append_record("deck-check", CHECK)
        held = HeldCommits(j)
        sink = start_display("127.0.0.1", 0, posted.put)
        reader: SseReader | None = None
        try:
            sink.deck_check = DeckCheckShown(j, every_s=0.0)  # each look reads the journal
            assert display_state(sink.url)["deck_check"]["deck"] == "D17"
            held.hold()
            j.begin_hand({"game": "stud"}, wait=False)  # its commit is held, with the store's lock
            assert held.inside.wait(20)
            sink.handle(Instruction(Signal.DEAL, "Deal seat 1 down", seat=1, face="down", street="3rd"))
            during = display_state(sink.url)  # raises when the page does not answer
            look = sink._deck._running
            # the look is overdue now: a later request does not wait for it again, however long
            # a request may wait for a look (a wait for it would outlast the client's timeout)
            monkeypatch.setattr(server, "DECK_CHECK_WAIT_S", 600.0)
            again = display_state(sink.url)
            same_look = sink._deck._running is look and look is not None and not look.done()
            monkeypatch.undo()
            reader = SseReader(sink.url)
            streamed = reader.until(lambda e: True, timeout=10)
            still_held = not held._gate.is_set() and held.held == 1
            held.let_go()
            # the look the commit held ends: the hand started, so the check is no longer shown
            caught_up = wait_for(lambda: display_state(sink.url)["deck_check"] is None, 20)
        finally:
            held.let_go()
            if reader is not None:
                reader.close()
            sink.close()
    assert still_held, "the commit was let go before the page was read"
    assert during["instruction"]["text"] == "Deal seat 1 down"
    assert during["deck_check"]["deck"] == "D17", "the check last seen while the look is held"
    assert same_look, "the second request was answered by another look than the held one"
    assert again["deck_check"]["deck"] == "D17" and again["instruction"]["text"] == "Deal seat 1 down"
    assert streamed["instruction"]["text"] == "Deal seat 1 down"
    assert caught_up
