"""A publisher stopped while its network loop is busy (real Mosquitto): the stop's last words (the
held-back state and the offline status marked clean) are made in the loop's thread, which does not
answer within the stop's time. Its connection is then dropped without DISCONNECT, so the broker
sends the Will and the floor sees the table offline; a DISCONNECT, written once the loop is free
and before any offline status, would have left it online for good (a DISCONNECT sends no Will). docs/floor.md, "Nothing lost, nothing twice"."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from floor_help import ROOM
from waiting import wait_for

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.netloop import NetLoop
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.service.journal import Journal


def test_a_stop_the_busy_loop_cannot_serve_leaves_the_table_offline_at_the_floor(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    journal = Journal(tmp_path / "t1.journal", table="t1", profile="tda", retention_days=0)
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    net = NetLoop("stop-busy").start()
    pub = FloorPublisher(journal, table="t1", room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"], loop=net, outbox=tmp_path / "t1.floor").start()
    release = threading.Event()
    try:
        assert floor.connected.wait(10)
        seqs = [journal.append_record("note", {"n": i}) for i in range(3)]
        assert wait_for(lambda: floor.seqs("t1") == seqs, 20), floor.seqs("t1")
        assert floor.tables["t1"].online
        net.call_soon(lambda: release.wait(30))  # the loop's thread held, as by a long step
        disconnect = pub.client.disconnect

        def disconnect_then_free(*args: Any, **kwargs: Any) -> Any:
            out = disconnect(*args, **kwargs)  # a DISCONNECT queued: the loop, freed, writes it
            release.set()
            return out

        pub.client.disconnect = disconnect_then_free  # type: ignore[method-assign]
        pub.close(timeout=0.5)
        release.set()
        assert wait_for(lambda: not floor.tables["t1"].online, 20)
        assert floor.seqs("t1") == seqs  # nothing lost, nothing twice
    finally:
        release.set()
        pub.close()
        floor.close()
        net.stop()
        journal.close()
