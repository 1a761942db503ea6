"""The display's status shows the journal's hash-chain head as its keyed display tag, never the
link (docs/journal.md, "The hash chain"): the snapshot's ``journal_chain`` follows every append,
and is null without a journal."""

from __future__ import annotations

import json
import queue
from pathlib import Path
from typing import Any

from display_feed import display_state

from shoe_ctl import events
from shoe_ctl.display.server import start_display
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal


def test_the_snapshot_carries_the_chain_head(tmp_path: Path) -> None:
    posted: queue.Queue[Any] = queue.Queue()
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        sink = start_display("127.0.0.1", 0, posted.put)
        try:
            assert display_state(sink.url)["journal_chain"] is None  # no journal attached
            sink.journal_chain = j.chain_public
            j.begin_hand({"game": "stud"})
            j.append(events.CardRead(seq=1, card=Card.parse("As"), reader="rfid", dispense=1))
            first = display_state(sink.url)["journal_chain"]
            j.append(events.CardRead(seq=2, card=Card.parse("Kd"), reader="rfid", dispense=2))
            second = display_state(sink.url)["journal_chain"]
        finally:
            sink.close()
        seq, head = j.chain_head()
    assert second == {"seq": seq, "head": j.display_tag(head)} and len(second["head"]) == 16
    assert head[:16] not in json.dumps(second)  # the link itself never reaches the screen
    assert first["seq"] < second["seq"] and first["head"] != second["head"]


def test_the_head_is_read_while_the_writer_holds_the_store(tmp_path: Path) -> None:
    """The display asks for the head at each state it sends, as the journal's writer commits the
    card before it: the answer must not wait for the commit's lock, and must be the head committed."""
    import threading

    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        j.begin_hand({"game": "stud"})
        j.append(events.CardRead(seq=1, card=Card.parse("As"), reader="rfid", dispense=1))
        before = j.chain_public()
        answers: list[dict[str, Any]] = []
        held, release = threading.Event(), threading.Event()

        def commit_in_progress() -> None:
            with j.store.lock:
                held.set()
                release.wait(10)

        writer = threading.Thread(target=commit_in_progress)
        writer.start()
        held.wait(5)
        reader = threading.Thread(target=lambda: answers.append(j.chain_public()))
        reader.start()
        reader.join(5)
        answered = not reader.is_alive()
        release.set()
        writer.join(5)
        reader.join(5)
        j.append(events.CardRead(seq=2, card=Card.parse("Kd"), reader="rfid", dispense=2))
        after = j.chain_public()
        seq, head = j.chain_head()
    assert answered and answers == [before]
    assert after == {"seq": seq, "head": j.display_tag(head)} and after != before
