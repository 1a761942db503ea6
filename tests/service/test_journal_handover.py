"""The journal's commit listeners are handed the records each commit wrote (docs/journal.md, "The
writer"): in journal order, equal to what a read gives back, every append path included (a
direct append, the controller's lingering submit, a record, the hand marks), each event with
itself (``Record.given``: no decoding for a listener); and
``CommittedTail.after`` gives a reader only records that follow what it has without a gap."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shoe_ctl import events as E
from shoe_ctl.rules.cards import Card
from shoe_ctl.service import codec
from shoe_ctl.service.journal import Journal, Record
from shoe_ctl.service.journal.records import CommittedTail


def test_each_commit_hands_over_what_a_read_gives_back(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "t.journal", table="t", profile="tda")
    handed: list[list[Record]] = []

    def listen(records: Sequence[Record]) -> None:
        handed.append(list(records))

    try:
        assert journal.add_commit_listener(listen)
        journal.begin_hand({"game": "stud", "seats": [1, 2]})
        journal.append(E.CardRead(1, Card(5), "rfid", 1))
        entries = [journal.submit([E.CardRead(n, Card(n), "rfid", n)], linger=True) for n in range(2, 9)]
        for entry in entries:
            assert journal.wait_written(entry, 5)
        journal.append_record("decision", {"what": "a ruling"})
        journal.end_hand({"abandoned": False})
        assert journal.flush(5)
        flat = [r for group in handed for r in group]
        assert flat == list(journal.records(None)) and len(flat) == 11
        # an event handed over carries itself (no decoding needed); a mark or a record has none
        assert all((r.given is not None) == (r.kind in codec.TYPES) for r in flat)
        assert all(r.given == codec.loads(r.body) for r in flat if r.given is not None)
        assert len(handed) < len(flat)  # the lingering appends shared commits, each handed over once
    finally:
        journal.close()


def _records(first: int, n: int) -> list[Record]:
    return [Record(seq, seq, "note", None, None, "{}") for seq in range(first, first + n)]


def test_the_tail_gives_only_records_that_follow_without_a_gap() -> None:
    tail = CommittedTail(5)
    assert tail.after(0) is None and tail.last is None  # nothing handed over: read the journal
    tail.add(_records(1, 3))
    assert tail.last == 3
    assert [r.seq for r in tail.after(0) or []] == [1, 2, 3]
    assert [r.seq for r in tail.after(2) or []] == [3] and len(tail) == 1  # 1-2 dropped: the reader has them
    assert tail.after(0) is None  # asked from further back than kept
    tail.add(_records(4, 6))  # more than kept: 4 dropped
    assert tail.after(3) is None and [r.seq for r in tail.after(4) or []] == [5, 6, 7, 8, 9]
    tail.add([])
    assert tail.last == 9 and tail.after(9) == []  # nothing handed over after 9: nothing to read
    assert tail.after(10) == []  # a reader ahead of the hand-over (its read overlapped a commit)
