"""A table that says nothing for 3 keepalives is a critical floor alert, on a real Mosquitto, in the
case its Last Will never comes: the publisher stops publishing while its network loop still
answers the broker's keepalive, so the broker sees a live connection and the table's retained
status still says online. The floor raises ``table-silent``; the alert is cleared when the table
speaks again (its state, sent at least once a keepalive: the heartbeat) (docs/floor.md).

No wait here depends on how busy the machine is: the keepalive is long enough that neither paho
nor the broker ends the connection while the test runs (either would bring the Will), the
keepalives of silence pass on the floor's own clock, moved on by the test (its watcher looks at
that clock, as it looks at the real one), and the heartbeat a keepalive of quiet would bring is
made due at once."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from floor_help import ROOM
from waiting import wait_for

from shoe_ctl.events import DisplayUpdate
from shoe_ctl.floor import consumer as consumer_module
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import SILENT_KEEPALIVES, FloorConsumer
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.floor.room import tile_status
from shoe_ctl.service.journal import Journal

KEEPALIVE = 30
"""The table's keepalive (s), its heartbeat: far longer than the test, so no pause of a busy
machine makes paho or the broker drop the connection."""


class _FloorClock:
    """The floor consumer's ``time`` module, its wall clock ``ahead`` seconds on."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def time(self) -> float:
        return time.time() + self.ahead

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def row(floor: FloorConsumer, table: str) -> dict[str, Any]:
    return next(r for r in floor.snapshot()["tables"] if r["table"] == table)


def silent(floor: FloorConsumer) -> list[dict[str, Any]]:
    return [a for a in row(floor, "t1")["alerts"] if a["code"] == "table-silent"]


def heartbeat_due(pub: FloorPublisher) -> None:
    """As if the table had sent nothing for a keepalive: its next step sends the heartbeat."""
    moved = threading.Event()

    def back() -> None:  # in the loop's thread, which owns the publisher's steps
        pub._tile_at -= KEEPALIVE
        moved.set()

    assert pub._net is not None
    pub._net.call_soon(back)
    assert moved.wait(10)
    pub._poke()


def test_a_table_whose_will_never_comes_is_silent_until_it_speaks(mosquitto: Mosquitto, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _FloorClock()
    monkeypatch.setattr(consumer_module, "time", clock)
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER])
    looks: list[float] = []  # the floor watcher's looks for silent tables, each once done
    check = floor.check_silent

    def looked(now: float) -> list[str]:
        found = check(now)
        looks.append(now)
        return found

    floor.check_silent = looked  # type: ignore[method-assign]

    def floor_ahead(seconds: float) -> None:
        """Move the floor's clock on to ``seconds`` ahead of the real one; back once its watcher
        has looked at the moved clock."""
        clock.ahead = seconds
        moved = clock.time()
        assert wait_for(lambda: any(now >= moved for now in looks[-3:]), 20)

    floor.start()
    journal = Journal(tmp_path / "t1.sqlite3", table="t1", profile="tda", retention_days=0)
    pub = FloorPublisher(journal, table="t1", room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"], keepalive=KEEPALIVE, outbox=tmp_path / "t1.floor")
    pub.handle(DisplayUpdate({"state": "idle", "hand": 3, "seats": []}))
    step = pub._step
    try:
        pub.start()
        assert wait_for(lambda: "t1" in floor.tables and floor.tables["t1"].online
                        and floor.tables["t1"].keepalive == KEEPALIVE and floor.tables["t1"].last_seen, 20)
        # between hands the table has nothing to say, yet the floor hears it: its heartbeat
        floor_ahead(2 * KEEPALIVE)  # two keepalives without a word: not silent yet
        assert silent(floor) == []
        heard = floor.tables["t1"].last_seen
        heartbeat_due(pub)
        assert wait_for(lambda: floor.tables["t1"].last_seen > heard, 20), "the heartbeat never came"
        floor_ahead(4 * KEEPALIVE)  # four keepalives since the table's first words, two since its heartbeat
        assert silent(floor) == [], "an idle table that sends its heartbeat is not silent"

        def mute() -> int:  # the publisher says nothing; its network loop goes on pinging
            return 0

        pub._step = mute  # type: ignore[method-assign]
        pub._poke()
        last_heard = floor.tables["t1"].last_seen
        floor_ahead(6 * KEEPALIVE)  # more than three keepalives since the heartbeat
        assert wait_for(lambda: bool(silent(floor)), 20), row(floor, "t1")
        (alert,) = silent(floor)
        assert floor.tables["t1"].last_seen == last_heard, "the muted table said something"
        assert alert["time_us"] / 1e6 - last_heard > SILENT_KEEPALIVES * KEEPALIVE, (alert, last_heard)
        assert alert["severity"] == "critical" and alert["hand"] == 3
        assert floor.tables["t1"].online, "no Will came: the broker still sees the connection"
        assert tile_status(row(floor, "t1")) == "silent"
        assert floor.snapshot()["alerts"]["critical"] == 1

        pub._step = step  # type: ignore[method-assign]
        heartbeat_due(pub)  # the table speaks again
        assert wait_for(lambda: silent(floor) == [], 20), row(floor, "t1")
        cleared = [a for a in row(floor, "t1")["acknowledged"] if a["code"] == "table-silent"]
        assert len(cleared) == 1 and cleared[0]["acked"]["by"] is None and cleared[0]["acked"]["cleared"]
        assert floor.snapshot()["alerts"]["critical"] == 0 and tile_status(row(floor, "t1")) == "idle"
    finally:
        pub.close()
        journal.close()
        floor.close()
