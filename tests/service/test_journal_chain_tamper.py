"""Tamperings the hash chain must show (``docs/journal.md``, "The hash chain"): a forged record
appended after ``chain_from`` was removed or moved past the end, the first hand deleted under a
pruning anchor that no retention wrote, the chain stripped, every link rewritten after an edit
(against the head the floor noted)."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import time
from pathlib import Path

import pytest

from shoe_ctl import events as E
from shoe_ctl.cli import main
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.journal.chain import link
from shoe_ctl.service.journal.records import record_crc


def _deal(path: Path, hands: int) -> None:
    with Journal(path, table="t", profile="tda", synchronous="NORMAL", retention_days=0) as j:
        for h in range(hands):
            j.begin_hand({"game": "stud"})
            j.append_many([E.CardRead(h * 10 + k + 1, Card(k), "rfid", k + 1) for k in range(8)])
            j.end_hand({"finished": True})


def _db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def _verify(path: Path, **kw: object) -> list[str]:
    with Journal(path, table=None, profile=None, readonly=True) as j:
        return j.verify_chain(**kw).problems  # type: ignore[arg-type]


def _head_tag(path: Path) -> tuple[int, str]:
    with Journal(path, table=None, profile=None, readonly=True) as j:
        seq, value = j.chain_head()
        tag = j.display_tag(value)
        assert tag is not None
        return seq, tag


def _forge_card_read(conn: sqlite3.Connection) -> int:
    """Append a card read copied from the last one, with a valid CRC and no link."""
    seq, t, kind, hand, shoe_seq, body = conn.execute(
        "SELECT seq, time_us, kind, hand, shoe_seq, body FROM records WHERE kind = 'CardRead' "
        "ORDER BY seq DESC LIMIT 1").fetchone()
    new = conn.execute("SELECT max(seq) FROM records").fetchone()[0] + 1
    conn.execute("INSERT INTO records (seq, time_us, kind, hand, shoe_seq, body, crc) VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (new, t + 1, kind, hand, shoe_seq + 1, body, record_crc(new, t + 1, kind, hand, shoe_seq + 1, body)))
    return int(new)


@pytest.mark.parametrize("chain_from", [None, "100000"])
def test_a_forged_record_after_chain_from_is_moved_is_inserted(tmp_path: Path, chain_from: str | None) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 2)
    before = _head_tag(path)
    conn = _db(path)
    if chain_from is None:
        conn.execute("DELETE FROM meta WHERE key = 'chain_from'")
    else:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'chain_from'", (chain_from,))
    forged = _forge_card_read(conn)
    conn.close()
    assert _head_tag(path) == before  # the head alone cannot tell
    assert _verify(path) == [f"record {forged}: has no link (inserted)"]
    assert main(["journal", "verify", str(path), "--retention-days", "30"]) == 1


def test_the_first_hand_deleted_under_a_forged_anchor_is_found(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 3)
    conn = _db(path)
    end = conn.execute("SELECT min(seq) FROM records WHERE kind = 'hand-end'").fetchone()[0]
    kept, t = conn.execute("SELECT c.hash, r.time_us FROM chain c JOIN records r USING (seq) WHERE seq = ?",
                           (end,)).fetchone()
    conn.execute("DELETE FROM records WHERE seq <= ?", (end,))
    conn.execute("DELETE FROM chain WHERE seq <= ?", (end,))
    # the anchor as an older version wrote it (no time): no retention can be checked against it
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('chain_anchor', ?)", (f"{end}:{bytes(kept).hex()}",))
    assert _verify(path, retention_days=30) == [
        f"chain anchor {end}: names no time, so no retention can have pruned up to it (written by hand?)"]
    # with the record's true time: today's hand, which a 30-day retention keeps
    conn.execute("UPDATE meta SET value = ? WHERE key = 'chain_anchor'", (f"{end}:{bytes(kept).hex()}:{t}",))
    conn.close()
    problems = _verify(path, retention_days=30)
    assert len(problems) == 1 and problems[0].startswith(f"chain anchor {end}: records up to it are gone")
    assert main(["journal", "verify", str(path), "--retention-days", "30"]) == 1


def test_a_stripped_chain_is_found(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 2)
    noted = _head_tag(path)
    conn = _db(path)
    n = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    conn.execute("DELETE FROM chain")
    conn.execute("DELETE FROM meta WHERE key IN ('chain_from', 'chain_anchor')")
    conn.close()
    assert _verify(path) == [f"records 1..{n}: no link at all (the chain was stripped)"]
    conn = _db(path)
    conn.execute("DROP TABLE chain")
    conn.close()
    assert _verify(path) == [f"{n} records: no link at all (the chain was stripped)"]
    # the service writes on: the chain starts again, but the head the floor noted is gone
    with Journal(path, table="t", profile="tda", retention_days=0) as j:
        j.begin_hand({"game": "stud"})
    assert _verify(path, floor_tags={noted[0]: noted[1]}) == [
        f"record {noted[0]}: the floor noted the head there, missing from the file (cut or rewritten)"]


def test_a_rewritten_chain_differs_from_the_head_the_floor_noted(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    _deal(path, 2)
    noted = _head_tag(path)
    assert _verify(path, floor_tags={noted[0]: noted[1]}) == []
    conn = _db(path)
    key = bytes.fromhex(conn.execute("SELECT value FROM meta WHERE key = 'chain_key'").fetchone()[0])
    # edit record 3 and recompute every link after it (the file alone then verifies)
    seq, t, kind, hand, shoe_seq, body = conn.execute(
        "SELECT seq, time_us, kind, hand, shoe_seq, body FROM records WHERE seq = 3").fetchone()
    body2 = body.replace('"rfid"', '"optical"')
    conn.execute("UPDATE records SET body = ?, crc = ? WHERE seq = 3", (body2, record_crc(3, t, kind, hand, shoe_seq, body2)))
    prev = bytes(32)
    for row in conn.execute("SELECT seq, time_us, kind, hand, shoe_seq, body FROM records ORDER BY seq").fetchall():
        prev = link(prev, *row)
        conn.execute("UPDATE chain SET hash = ? WHERE seq = ?", (prev, row[0]))
    conn.close()
    assert _verify(path) == []
    assert hmac.new(key, prev, hashlib.sha256).hexdigest()[:16] != noted[1]
    assert _verify(path, floor_tags={noted[0]: noted[1]}) == [
        f"record {noted[0]}: the head the floor noted there differs (the chain was rewritten)"]
    assert main(["journal", "verify", str(path), "--floor-head", f"{noted[0]}:{noted[1]}"]) == 1
    assert main(["journal", "verify", str(path), "--floor-head", "12:xyz"]) == 2


def test_a_real_pruning_fits_the_retention(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    old = time.time() - 40 * 86400
    with Journal(path, table="t", profile="tda", retention_days=0, clock=lambda: old) as j:
        j.begin_hand({"game": "stud"})
        j.end_hand({"finished": True})
    _deal(path, 1)
    with Journal(path, table="t", profile="tda", retention_days=30) as j:
        assert j.report.pruned > 0
    assert _verify(path, retention_days=30) == []
    assert _verify(path, retention_days=60)[0].startswith("chain anchor")  # a longer retention keeps it


def test_doctor_walks_the_chain(tmp_path: Path) -> None:
    from shoe_ctl.cli.doctor import check_journal
    from shoe_ctl.config import TableConfig

    path = tmp_path / "t.journal"
    _deal(path, 2)
    path.chmod(0o600)
    assert check_journal(TableConfig(), path).status == "ok"
    conn = _db(path)
    conn.execute("DELETE FROM meta WHERE key = 'chain_from'")
    forged = _forge_card_read(conn)
    conn.close()
    check = check_journal(TableConfig(), path)
    assert check.status == "fail" and f"record {forged}: has no link (inserted)" in check.detail
