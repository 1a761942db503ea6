"""Opening a large journal: only the tail is checked on the start path; the whole-file check and
the retention run later (``Journal(deferred=True)``, ``Journal.check``, ``shoe-ctl journal check``);
damage the later check finds is repaired by the next open (``docs/journal.md``, "What is checked
when")."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from shoe_ctl import events as E
from shoe_ctl.cli import main
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.journal.repair import tail_index_damage


def _fill(path: Path, hands: int, clock: float | None = None) -> None:
    kw = {} if clock is None else {"clock": lambda: clock}
    with Journal(path, table="t", profile="tda", synchronous="NORMAL", retention_days=0, **kw) as j:
        seq = 0
        for _ in range(hands):
            j.begin_hand({"game": "stud"})
            batch = []
            for _ in range(10):
                seq += 1
                batch.append(E.CardRead(seq, Card(seq % 52), "rfid", seq % 52 + 1))
            j.append_many(batch)
            j.end_hand({"finished": True})


def _flip_body(path: Path, seq: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE records SET body = replace(body, 'rfid', 'rfiX') WHERE seq = ?", (seq,))
    conn.commit()
    conn.close()


def test_a_deferred_open_skips_the_whole_file_check_and_the_later_check_finds_old_damage(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _fill(path, 30)
    Journal(path, table="t", profile="tda").close()  # an open has checked every record so far
    _flip_body(path, 5)  # an old record, checked at an earlier open: not on the start path
    j = Journal(path, table="t", profile="tda", deferred=True, deferred_delay_s=60)
    try:
        assert j.report.ok and j.report.records == -1
        assert j.last_hand() == 30 and j.current_hand is None
        found = j.check()
        assert [d.seq for d in found] == [5]
        assert not j.report.ok
    finally:
        j.close()
    # the next open runs the full check (meta check_due) and repairs: the record goes to damaged
    with Journal(path, table="t", profile="tda") as j:
        assert [d.seq for d in j.report.damage] == [5]
        assert j.report.kept_aside
        assert 5 not in {r.seq for r in j.records()}
    with Journal(path, table="t", profile="tda") as j:  # and then the flag is gone
        assert j.report.ok


def test_the_background_maintenance_counts_and_prunes_after_the_open(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    old = time.time() - 40 * 86400
    _fill(path, 5, clock=old)
    _fill(path, 3)
    j = Journal(path, table="t", profile="tda", retention_days=30, deferred=True, deferred_delay_s=0.05)
    try:
        end = time.monotonic() + 10
        while j.checked is None and time.monotonic() < end:
            time.sleep(0.02)
        assert j.checked == []
        end = time.monotonic() + 5
        while j.report.records < 0 and time.monotonic() < end:
            time.sleep(0.02)
        assert j.report.pruned == 5 * 12  # five old hands of 12 records each
        assert j.report.records == 3 * 12
        assert sorted({r.hand for r in j.records()}) == [6, 7, 8]
        assert j.begin_hand() == 9  # numbering goes on after pruning
    finally:
        j.close()


def test_a_damaged_index_in_the_tail_is_found_at_open_and_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _fill(path, 4)
    conn = sqlite3.connect(path, isolation_level=None)
    assert tail_index_damage(conn, 0) is None
    sql = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'records_kind'").fetchone()[0]
    # an index that lacks the hand-end entries, under the original definition: built from a
    # narrower definition, then the definition's text put back
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'records_kind'",
                 (sql.replace("('hand-start', 'hand-end')", "('hand-start')"),))
    conn.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("REINDEX records_kind")
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'records_kind'", (sql,))
    conn.close()
    conn = sqlite3.connect(path)
    assert "records_kind" in (tail_index_damage(conn, 0) or "")
    conn.close()
    with Journal(path, table="t", profile="tda", deferred=True, deferred_delay_s=60) as j:
        assert any(d.where == "indexes" for d in j.report.damage), j.report.lines()
        assert j.replay_start() == max(r.seq for r in j.records() if r.kind == "hand-end")
    conn = sqlite3.connect(path)
    assert tail_index_damage(conn, 0) is None
    conn.close()


def test_shoe_ctl_journal_check(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "t.journal"
    _fill(path, 3)
    assert main(["journal", "check", str(path)]) == 0
    _flip_body(path, 7)
    assert main(["journal", "check", str(path)]) == 1
    assert "record 7: checksum mismatch" in capsys.readouterr().out
    (tmp_path / "text").write_text("not a journal at all, just text\n" * 10)
    assert main(["journal", "check", str(tmp_path / "text")]) == 2
