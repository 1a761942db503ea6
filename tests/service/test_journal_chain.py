"""The journal's hash chain: ``shoe-ctl journal verify`` finds an edited, deleted, inserted or
reordered record; pruning and a salvage keep the chain verifiable (``docs/journal.md``, "The hash
chain")."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from shoe_ctl import events as E
from shoe_ctl.cli import main
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.journal.records import record_crc


def _deal(path: Path, hands: int, clock: float | None = None, retention_days: float = 0) -> None:
    kw = {} if clock is None else {"clock": lambda: clock}
    with Journal(path, table="t", profile="tda", synchronous="NORMAL", retention_days=retention_days, **kw) as j:
        for h in range(hands):
            j.begin_hand({"game": "stud"})
            j.append_many([E.CardRead(h * 10 + k + 1, Card(k), "rfid", k + 1) for k in range(8)])
            j.append(E.DealerInput(E.DealerAction.NEW_HAND))
            j.end_hand({"finished": True})


def _verify(path: Path) -> list[str]:
    with Journal(path, table=None, profile=None, readonly=True) as j:
        return j.verify_chain().problems


def _sql(path: Path, *stmts: tuple[str, tuple]) -> None:  # type: ignore[type-arg]
    conn = sqlite3.connect(path, isolation_level=None)
    for sql, args in stmts:
        conn.execute(sql, args)
    conn.close()


def _row(path: Path, seq: int) -> tuple:  # type: ignore[type-arg]
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT seq, time_us, kind, hand, shoe_seq, body FROM records WHERE seq = ?",
                            (seq,)).fetchone()
    finally:
        conn.close()


def test_an_intact_journal_verifies_and_its_head_is_the_last_record(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 3)
    with Journal(path, table="t", profile="tda") as j:
        seq, head = j.chain_head()
        rep = j.verify_chain()
        assert rep.ok and rep.checked == j.store.count() and rep.head == (seq, head)
        assert seq == j.store.next_seq - 1 and len(head) == 64


def test_an_edit_with_a_fixed_crc_is_found(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 3)
    seq, t, kind, hand, shoe_seq, body = _row(path, 5)
    body2 = body.replace('"rfid"', '"optical"')
    assert body2 != body
    _sql(path, ("UPDATE records SET body = ?, crc = ? WHERE seq = ?",
                (body2, record_crc(seq, t, kind, hand, shoe_seq, body2), seq)))
    assert _verify(path) == ["record 5: altered or moved (its link does not match)"]


def test_a_deleted_record_is_found_with_or_without_its_link(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 3)
    _sql(path, ("DELETE FROM records WHERE seq = 7", ()))
    assert _verify(path) == ["record 7: deleted (its link remains)"]
    _sql(path, ("DELETE FROM chain WHERE seq IN (7, 8)", ()), ("DELETE FROM records WHERE seq = 8", ()))
    # the deleted run is named, not the intact record after it
    assert _verify(path) == ["records 7..8: deleted with their links"]


def test_reordered_records_are_found(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 2)
    a, b = _row(path, 4), _row(path, 5)
    # swap the bodies of two records (each with a valid CRC for its new place)
    _sql(path,
         ("UPDATE records SET body = ?, crc = ? WHERE seq = 4", (b[5], record_crc(4, a[1], a[2], a[3], a[4], b[5]))),
         ("UPDATE records SET body = ?, crc = ? WHERE seq = 5", (a[5], record_crc(5, b[1], b[2], b[3], b[4], a[5]))))
    assert _verify(path) == ["record 4: altered or moved (its link does not match)",
                             "record 5: altered or moved (its link does not match)"]


def test_an_inserted_record_is_found(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 2)
    seq, t, kind, hand, shoe_seq, body = _row(path, 4)
    _sql(path, ("INSERT INTO records (seq, time_us, kind, hand, shoe_seq, body, crc) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (1000, t, kind, hand, shoe_seq, body, record_crc(1000, t, kind, hand, shoe_seq, body))))
    assert _verify(path) == ["record 1000: has no link (inserted)"]


def test_the_chain_survives_pruning_and_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 4, clock=time.time() - 40 * 86400)
    _deal(path, 2)
    with Journal(path, table="t", profile="tda", retention_days=30) as j:
        assert j.report.pruned > 0
        j.begin_hand({"game": "stud"})
        j.append(E.CardRead(500, Card(3), "rfid", 1))
        rep = j.verify_chain(retention_days=30)
        assert rep.ok and rep.checked == j.store.count(), rep.problems


def test_an_old_journal_without_a_chain_is_verified_from_where_the_chain_starts(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 2)
    n = 0
    with Journal(path, table="t", profile="tda") as j:
        n = j.store.count()
    _sql(path, ("DELETE FROM chain", ()), ("DELETE FROM meta WHERE key = 'chain_from'", ()))  # as before the chain
    with Journal(path, table="t", profile="tda") as j:
        j.begin_hand({"game": "stud"})
        rep = j.verify_chain()
        assert rep.ok and rep.unchained == n and rep.checked == 1


def test_shoe_ctl_journal_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 2)
    assert main(["journal", "verify", str(path)]) == 0
    assert "head " in capsys.readouterr().err
    _sql(path, ("DELETE FROM records WHERE seq = 3", ()))
    assert main(["journal", "verify", str(path)]) == 1
    assert "record 3: deleted" in capsys.readouterr().out


def test_doctor_and_exports_show_the_chain_head(tmp_path: Path) -> None:
    from test_recovery import hand_events, run_controller

    from shoe_ctl.cli.doctor import check_journal
    from shoe_ctl.config import TableConfig
    from shoe_ctl.export import default_machine_factory, export_hands

    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        run_controller(j, default_machine_factory("tda"), hand_events(1, [2, 4, 6]))
        seq, head = j.chain_head()
        written = export_hands(j, tmp_path / "out")
    check = check_journal(TableConfig(), path)
    assert check.status == "ok" and f"chain head {seq}:{head}" in check.detail
    assert written and all(f'_chain_head = "{seq}:{head}"' in p.read_text() for p in written)


@pytest.mark.parametrize("count", [1, 63, 64, 65, 150])
def test_a_group_larger_than_one_insert_is_written_whole_in_order_and_chained(tmp_path: Path, count: int) -> None:
    """One commit inserts its rows 64 to a statement (store.ROWS_PER_INSERT): a group of any size
    is written whole, numbered in order, with every record's CRC and link."""
    path = tmp_path / "t.sqlite3"
    events = [E.CardRead(k + 1, Card(k % 52), "rfid", k + 1) for k in range(count)]
    with Journal(path, table="t", profile="tda", synchronous="NORMAL") as j:
        seqs = j.append_many(events)
        got = [r for r in j.records() if r.kind == "CardRead"]
    assert seqs == list(range(seqs[0], seqs[0] + count))
    assert [r.seq for r in got] == seqs and [r.shoe_seq for r in got] == [e.seq for e in events]
    assert _verify(path) == []
