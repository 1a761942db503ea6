"""``Journal.hands()`` lists each hand, also when a hand number repeats (a journal written before
numbers ran on across restarts: each run numbered its hands from 1), and ``hand_records`` reads
one of them (docs/journal.md, "Records")."""

from __future__ import annotations

from pathlib import Path

from shoe_ctl import events as E
from shoe_ctl.service.journal import Journal


def _hand(j: Journal, seats: list[int], *, end: bool = True) -> None:
    j.begin_hand({"seats": seats})
    j.append(E.DealerInput(E.DealerAction.FOLD, seats[0]))
    if end:
        j.end_hand({"finished": True})


def test_a_repeated_hand_number_is_listed_once_per_hand(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite3", table="t", profile="tda") as j:
        _hand(j, [1, 2])
        _hand(j, [3, 4])
        j.store.top_hand = 0  # the older numbering: the next run starts again at hand 1
        _hand(j, [5, 6])
        _hand(j, [7, 8], end=False)  # hand 2 again, still open
        hands = j.hands()
        assert [(h.hand, h.info["seats"], h.finished) for h in hands] == [
            (1, [1, 2], True), (2, [3, 4], True), (1, [5, 6], True), (2, [7, 8], False)]
        spans = [(h.first_seq, h.last_seq) for h in hands]
        assert spans == sorted(spans) and all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))
        assert all(h.ended is not None for h in hands[:3]) and hands[3].ended is None
        assert [h.hand for h in j.hands(finished_only=True)] == [1, 2, 1]
        third = j.hand_records(hands[2])
        assert [r.seq for r in third] == list(range(hands[2].first_seq, hands[2].last_seq + 1))
        assert {r.kind for r in third} == {"hand-start", "DealerInput", "hand-end"}
        assert len(j.hand_records(1)) == len(j.hand_records(hands[0])) + len(third)  # the number: both


def test_a_hand_without_a_repeat_reads_as_before(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite3", table="t", profile="tda") as j:
        _hand(j, [1, 2])
        _hand(j, [3, 4], end=False)
        hands = j.hands()
        assert [(h.hand, h.first_seq, h.last_seq, h.finished) for h in hands] == [(1, 1, 3, True), (2, 4, 5, False)]
        assert hands[0].ended is not None and hands[0].info["seats"] == [1, 2]
        assert [r.seq for r in j.hand_records(hands[1])] == [r.seq for r in j.hand_records(2)] == [4, 5]
