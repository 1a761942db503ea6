"""The journal's head kept off the Pi (real Mosquitto): each table's state carries its chain
head as the display tag, the floor keeps the newest, and ``shoe-ctl journal verify --floor-head``
finds a chain rewritten on the Pi after the floor noted it (docs/journal.md, "The hash chain")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from floor_help import ROOM
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.cli import main
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.service.journal.chain import link
from shoe_ctl.service.journal.records import record_crc


def test_the_floor_keeps_the_head_and_verify_compares_with_it(mosquitto: Mosquitto, tmp_path: Path) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER]).start()
    table = VirtualTable("t1", tmp_path / "tables", random_hands(5, count=2), room=ROOM, host=mosquitto.host,
                         port=mosquitto.port, credentials=mosquitto.users["t1"], pace=0.01)
    try:
        table.start()
        assert wait_for(lambda: table.done, 60)
        last = table.last_seq()
        assert wait_for(lambda: (floor.snapshot()["tables"] or [{}])[0].get("chain") is not None
                        and floor.snapshot()["tables"][0]["chain"]["seq"] >= last - 5, 20)
    finally:
        table.close()
        floor.close()
    row = floor.snapshot()["tables"][0]
    noted = f"{row['chain']['seq']}:{row['chain']['tag']}"
    path = str(table.journal_path)
    assert main(["journal", "verify", path, "--floor-head", noted, "--retention-days", "30"]) == 0
    # rewrite the chain on the Pi after editing a card read: the file alone verifies, the floor's copy does not
    conn = sqlite3.connect(path, isolation_level=None)
    seq, t, kind, hand, shoe_seq, body = conn.execute(
        "SELECT seq, time_us, kind, hand, shoe_seq, body FROM records WHERE kind = 'CardRead' LIMIT 1").fetchone()
    body2 = body.replace('"rfid"', '"optical"') if '"rfid"' in body else body + " "
    conn.execute("UPDATE records SET body = ?, crc = ? WHERE seq = ?",
                 (body2, record_crc(seq, t, kind, hand, shoe_seq, body2), seq))
    prev = bytes(32)
    for r in conn.execute("SELECT seq, time_us, kind, hand, shoe_seq, body FROM records ORDER BY seq").fetchall():
        prev = link(prev, *r)
        conn.execute("UPDATE chain SET hash = ? WHERE seq = ?", (prev, r[0]))
    conn.close()
    assert main(["journal", "verify", path, "--retention-days", "30"]) == 0
    assert main(["journal", "verify", path, "--floor-head", noted, "--retention-days", "30"]) == 1
