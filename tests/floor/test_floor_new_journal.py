"""A table whose journal file was replaced (a reinstalled Pi keeping its outbox file, or a new
journal) publishes the new journal from its start, and the floor counts it again from there."""

from __future__ import annotations

from pathlib import Path

from floor_help import ROOM
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer


def deal(mosquitto: Mosquitto, folder: Path, hands: int) -> int:
    t = VirtualTable("t1", folder, random_hands(hands, count=hands), room=ROOM, host=mosquitto.host,
                     port=mosquitto.port, credentials=mosquitto.users["t1"]).start()
    try:
        assert wait_for(lambda: t.done, 30)
        t.controller.wait_idle(5)
        return t.last_seq()
    finally:
        t.close()


def test_new_journal_is_published_from_its_start(mosquitto: Mosquitto, tmp_path: Path) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    folder = tmp_path / "tables"
    try:
        assert floor.connected.wait(10)
        first = deal(mosquitto, folder, 3)
        assert wait_for(lambda: floor.seqs("t1") == list(range(1, first + 1)), 20)
        for f in folder.glob("t1.sqlite3*"):
            if not f.name.endswith(".floor"):
                f.unlink()  # a new journal; the outbox file stays
        assert (folder / "t1.sqlite3.floor").exists()
        second = deal(mosquitto, folder, 1)
        assert second < first
        want = [*range(1, first + 1), *range(1, second + 1)]
        assert wait_for(lambda: floor.seqs("t1") == want, 20), floor.seqs("t1")[first - 3:]
        assert floor.tables["t1"].journal_resets == 1
    finally:
        floor.close()
