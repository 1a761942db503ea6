"""The table's publisher is woken by the journal's commits, not by reading the journal over and over
(real Mosquitto): the journal's writer hands it each commit's records, so it reads the journal only
for a few records of its start and birth while a table deals, and not at all while nothing is
committed; a journal that tells no commits (read-only here) is still published, by a slow poll."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from floor_help import ROOM
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.service.journal import Journal


def test_the_publisher_is_handed_each_commits_records(mosquitto: Mosquitto, tmp_path: Path) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    t = VirtualTable("t1", tmp_path / "tables", random_hands(11, count=4), room=ROOM, host=mosquitto.host,
                     port=mosquitto.port, credentials=mosquitto.users["t1"], pace=0.01)
    pub = t.publisher
    births: list[dict[str, Any]] = []
    status = pub._status

    def counted(online: bool, **kw: Any) -> dict[str, Any]:
        said = status(online, **kw)
        if online:  # a birth (not the Will nor the clean goodbye)
            births.append(said)
        return said

    pub._status = counted  # type: ignore[method-assign]
    try:
        assert floor.connected.wait(10)
        t.start()
        assert wait_for(lambda: t.done, 60)
        t.controller.wait_idle(5)
        last = t.last_seq()
        assert wait_for(lambda: floor.seqs("t1") == list(range(1, last + 1)), 30)
        commits = t.journal._writer.groups if t.journal._writer is not None else 0
        assert last > 100 and commits > 10
        # the writer hands each commit's records over: the journal is read once before the first
        # hand-over (what was committed before the publisher listened), twice for each birth (its
        # first and last record) and once for each replay asked; a read that overlapped a commit's
        # hand-over is not followed by another (nothing handed over after the last record read)
        allowed = 1 + 2 * len(births) + pub.replay_requests
        assert births and pub.journal_reads <= allowed, (pub.journal_reads, len(births), pub.replay_requests)
        assert pub.records_handed >= last - 20, (pub.records_handed, last)
        idle = pub.journal_reads
        time.sleep(1.5)  # no commit: the publisher does not read the journal
        assert pub.journal_reads == idle
    finally:
        t.close()
        floor.close()


def test_a_journal_that_tells_no_commits_is_still_published(mosquitto: Mosquitto, tmp_path: Path) -> None:
    path = tmp_path / "t2.journal"
    writer = Journal(path, table="t2", profile="tda", retention_days=0)
    reader = Journal(path, table=None, profile=None, readonly=True)
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    pub = FloorPublisher(reader, table="t2", room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t2"]).start()
    try:
        assert floor.connected.wait(10)
        seqs = [writer.append_record("note", {"n": i}) for i in range(5)]
        assert wait_for(lambda: floor.seqs("t2") == seqs, 20), floor.seqs("t2")
        more = [writer.append_record("note", {"n": i}) for i in range(5, 8)]
        assert wait_for(lambda: floor.seqs("t2") == seqs + more, 20), floor.seqs("t2")
    finally:
        pub.close()
        floor.close()
        reader.close()
        writer.close()
