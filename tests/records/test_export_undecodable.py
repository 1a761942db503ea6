"""A journal record whose checksum holds but whose body is no event -- altered with its checksum
made again (the chain is not keyed: docs/security.md), or written by a bug -- is skipped by the
export like a damaged record and named on stderr; before, ``shoe-ctl export`` ended with a
CodecError traceback (docs/journal.md, export)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from journal_table import Table, play_hand

from shoe_ctl.cli import main
from shoe_ctl.export import export_hands
from shoe_ctl.service.journal.records import record_crc


def _rewrite_first_card(path: Path, old: str, new: str) -> int:
    con = sqlite3.connect(path)
    try:
        seq, t, kind, hand, shoe_seq, body = con.execute(
            "SELECT seq, time_us, kind, hand, shoe_seq, body FROM records WHERE kind = 'CardRead' ORDER BY seq"
        ).fetchone()
        assert old in body
        body = body.replace(old, new, 1)
        con.execute("UPDATE records SET body = ?, crc = ? WHERE seq = ?",
                    (body, record_crc(seq, t, kind, hand, shoe_seq, body), seq))
        con.commit()
        return int(seq)
    finally:
        con.close()


@pytest.mark.parametrize("new", ['"card":"Zz"', '"card":[1,2]', '"card":5'])
def test_a_record_that_does_not_decode_is_skipped_and_named(tmp_path: Path, journal_table: Callable[..., Table],
                                                            capsys: pytest.CaptureFixture[str], new: str) -> None:
    t = journal_table()
    play_hand(t)
    path = Path(t.journal.path)
    t.journal.close()
    seq = _rewrite_first_card(path, '"card":"As"', new)
    assert main(["export", str(path), "--out", str(tmp_path / "out")]) in (0, 1)
    err = capsys.readouterr().err
    assert f"skipped damaged record {seq}: CardRead" in err
    assert "Traceback" not in err


def test_export_hands_collects_what_it_skipped(tmp_path: Path, journal_table: Callable[..., Table]) -> None:
    from shoe_ctl.service.journal import Journal

    t = journal_table()
    play_hand(t)
    path = Path(t.journal.path)
    t.journal.close()
    seq = _rewrite_first_card(path, '"card":"As"', '"card":"Zz"')
    skipped: list[str] = []
    with Journal(path, table="t9", profile="tda") as journal:
        export_hands(journal, tmp_path / "out", undecodable=skipped)
    assert len(skipped) == 1 and skipped[0].startswith(f"record {seq}: ") and "'Zz' is not a card" in skipped[0]
