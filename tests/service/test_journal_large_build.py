"""``bench/journal_large.py`` builds the large journal the bench opens (``ready_large_journal_s``)
as the service writes one: every record with its hash-chain link, so the file's size per hand and
what the open checks are a real journal's (``docs/journal.md``, "The hash chain")."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from paths import ROOT

from shoe_ctl.service.journal import Journal, chain


def test_the_large_journal_is_chained_and_opens_clean(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from bench.journal_large import build, template_hands
    finally:
        sys.path.remove(str(ROOT))
    path = tmp_path / "large.journal"
    out = build(path, 40, table="t", profile="tda", templates=template_hands(count=3))
    conn = sqlite3.connect(path)
    try:
        report = chain.verify(conn)
        chained = conn.execute("SELECT count(*) FROM chain").fetchone()[0]
    finally:
        conn.close()
    assert report.ok, report.problems
    assert chained == out["records"] > 0
    with Journal(path, table="t", profile="tda") as j:
        assert j.report.damage == []
        assert j.store.chain_head[0] == out["records"]
        j.append_record("decision", {"street": "7th"})  # the chain goes on from the built one
        head = j.store.chain_head[0]
    conn = sqlite3.connect(path)
    try:
        assert chain.verify(conn).ok and head == out["records"] + 1
    finally:
        conn.close()
