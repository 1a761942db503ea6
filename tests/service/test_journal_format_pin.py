"""The journal's bytes on disk do not move: records (body text, CRC) and hash-chain links of a
fixed sequence of appends, written at a fixed clock, hash to the digest pinned here. A change to the
codec's text, the CRC or the chain that would make old and new journals differ fails this test
(``docs/journal.md``, "Records", "The hash chain")."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from shoe_ctl import events as E
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal

PINNED = "fd4d4766efaf9cb6d490e02ac1b708638f6129116954eb6e64451573a670b998"
"""SHA-256 over every record row and chain link of :func:`_write` (see :func:`_digest`)."""


def _write(path: Path) -> None:
    with Journal(path, table="t", profile="tda", synchronous="NORMAL", clock=lambda: 1_700_000_000.123456) as j:
        j.begin_hand({"game": "stud", "seats": [3, 4, 6, 1]})
        acked: list[list[int]] = []
        entries = [j.submit([E.CardRead(s, Card(s), "rfid", s, 2)], on_durable=acked.append, linger=True)
                   for s in range(1, 9)]
        entries.append(j.submit([E.CardRead(9, None, "none", 9),
                                 E.Alert("wrong-card", "Seat 4 — the up card was shown", "3rd", 4, True, ("x",))]))
        assert j.wait_written(entries[-1], 5.0)
        j.append(E.DealerInput(E.DealerAction.FOLD, 4, {"amount": 10, "note": "ñ\u2028\"q\""}))
        j.append_many([E.ShoeFault(10, E.FaultKind.JAM, False, "jam at exit"), E.ShoeButton(11, 2)], sync=False)
        j.append_record("decision", {"seat": 3, "why": "low card", "cards": ["2c", "Ah"]})
        j.append(E.Alert("auth-refused", "PIN refused for sam", "3rd", service=True))  # marked the service's
        j.end_hand({"finished": True})


def _digest(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT seq, time_us, kind, hand, shoe_seq, body, crc FROM records ORDER BY seq").fetchall()
        links = conn.execute("SELECT seq, hash FROM chain ORDER BY seq").fetchall()
    finally:
        conn.close()
    h = hashlib.sha256()
    for row in rows:
        h.update(repr(row).encode("utf-8"))
    for seq, link in links:
        h.update(f"{seq}:{bytes(link).hex()}".encode())
    assert len(rows) == len(links) == 17
    return h.hexdigest()


def test_the_bytes_of_a_known_journal_are_pinned(tmp_path: Path) -> None:
    _write(tmp_path / "pin.journal")
    assert _digest(tmp_path / "pin.journal") == PINNED


def test_a_service_alert_carries_its_marker_and_a_machine_alert_none(tmp_path: Path) -> None:
    """The marker of a service alert is the one key ``"service":true``; the machine's alerts are
    written without it, byte for byte as before the marker existed."""
    _write(tmp_path / "pin.journal")
    conn = sqlite3.connect(tmp_path / "pin.journal")
    try:
        bodies = [b for (b,) in conn.execute("SELECT body FROM records WHERE kind = 'Alert' ORDER BY seq")]
    finally:
        conn.close()
    assert bodies == [
        '{"code":"wrong-card","latched":true,"message":"Seat 4 — the up card was shown","moves":["x"],"seat":4,'
        '"street":"3rd","type":"Alert","v":1}',
        '{"code":"auth-refused","latched":false,"message":"PIN refused for sam","moves":[],"seat":null,'
        '"service":true,"street":"3rd","type":"Alert","v":1}',
    ]
