"""A commit of up to ``ROWS_PER_INSERT`` records is one SQLite statement, a transaction of its own:
an ``INSERT`` into a view of the writing connection alone, whose trigger puts each row in
``records`` and its link in ``chain`` (docs/journal.md, *The writer*). The file's schema is
unchanged, a failure leaves nothing of the commit, and a larger group goes in as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shoe_ctl import events as E
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.journal.store import APPEND_VIEW, ROWS_PER_INSERT


def _cards(first: int, n: int) -> list[E.CardRead]:
    return [E.CardRead(s, Card((s - 1) % 52), "rfid", s, 0) for s in range(first, first + n)]


def _statements(db: sqlite3.Connection) -> list[str]:
    """The statements ``db`` runs from now on, as its trace gives them (a trigger's steps are
    traced with the text of the statement that fired it)."""
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    return seen


def test_a_card_commit_is_one_statement_and_the_chain_holds(tmp_path: Path) -> None:
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        j.begin_hand({"game": "stud"})
        j.append_many(_cards(1, 2))  # the journal's first chained records: the explicit transaction
        seen = _statements(j.store.db())
        j.append_many(_cards(3, 3))
        j.store.db().set_trace_callback(None)
        assert len(set(seen)) == 1 and seen[0].startswith(f"INSERT INTO temp.{APPEND_VIEW} ")  # no BEGIN, no COMMIT
        rows = j.store.db().execute("SELECT r.seq, c.seq FROM records r LEFT JOIN chain c USING (seq) "
                                    "ORDER BY r.seq").fetchall()
        assert [r for r, c in rows] == [c for r, c in rows] and len(rows) == 6  # hand-start and five cards
        assert [rec.item for rec in j.records() if rec.kind == "CardRead"] == _cards(1, 5)
        assert j.verify_chain().ok


def test_the_view_is_not_in_the_file_and_the_file_opens_again(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        j.append_many(_cards(1, 2))
        j.append_many(_cards(3, 2))
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_schema")]
    assert APPEND_VIEW not in names and f"{APPEND_VIEW}_row" not in names
    with Journal(path, table="t", profile="tda") as again:  # the open's schema check passes
        again.append_many(_cards(5, 1))
        assert again.report.ok and again.verify_chain().ok
        assert [rec.item for rec in again.records()] == _cards(1, 5)


def test_a_failing_commit_leaves_none_of_its_records_and_is_written_once_it_can_be(tmp_path: Path) -> None:
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        j.append_many(_cards(1, 2))
        store = j.store
        blocker = store.next_seq + 1  # the second record's link cannot go in: its sequence is taken
        store.db().execute("INSERT INTO chain (seq, hash) VALUES (?, ?)", (blocker, b"x" * 32))
        rows = store.rows_of(_cards(3, 3))
        with pytest.raises(sqlite3.IntegrityError):
            store.write_groups([(rows, None)])
        assert store.db().execute("SELECT count(*) FROM records WHERE seq >= ?", (blocker - 1,)).fetchone()[0] == 0
        store.db().execute("DELETE FROM chain WHERE seq = ?", (blocker,))
        store.write_groups([(rows, None)])
        assert [rec.item for rec in j.records()] == _cards(1, 5)
        assert j.verify_chain().ok


def test_a_group_over_one_statement_goes_in_one_transaction(tmp_path: Path) -> None:
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        j.append_many(_cards(1, 2))
        seen = _statements(j.store.db())
        j.append_many(_cards(3, ROWS_PER_INSERT + 10))
        j.store.db().set_trace_callback(None)
        assert seen[0] == "BEGIN IMMEDIATE" and seen[-1] == "COMMIT"
        assert len(list(j.records())) == ROWS_PER_INSERT + 12 and j.verify_chain().ok
