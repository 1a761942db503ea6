"""TLS between the tables and the broker: a table configured with ``mqtts://`` and the broker's CA
publishes through a real Mosquitto TLS listener (certificate for 127.0.0.1 made with openssl);
without that CA the broker's certificate is refused and nothing is sent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from floor_help import ROOM
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto, find_mosquitto
from shoe_ctl.floor.config import parse_floor, write_credentials
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.publisher import FloorPublisher, attach_floor


@pytest.fixture
def tls_broker(tmp_path: Path) -> Mosquitto:
    if find_mosquitto() is None or shutil.which("openssl") is None:
        pytest.skip("mosquitto or openssl is not installed")
    broker = Mosquitto(tmp_path / "broker", room=ROOM, tables=["t1", "t2"], tls=True).start()
    yield broker  # type: ignore[misc]
    broker.stop()


def test_tables_publish_over_tls(tls_broker: Mosquitto, tmp_path: Path) -> None:
    b = tls_broker
    assert b.url.startswith("mqtts://") and b.ca_file is not None
    floor = FloorConsumer(host=b.host, port=b.port, room=ROOM, credentials=b.users[FLOOR_USER], tls=True,
                          ca_file=str(b.ca_file), keep_seqs=True).start()
    table = VirtualTable("t1", tmp_path / "t1", random_hands(2, count=2), room=ROOM, host=b.host, port=b.port,
                         credentials=b.users["t1"])
    # the table's publisher as `run` makes it from [floor]: mqtts:// and ca_file
    table.controller.sinks.remove(table.publisher)
    cfg = parse_floor("table.toml", {"enabled": True, "broker": b.url, "room": ROOM, "ca_file": str(b.ca_file),
                                     "credentials": str(write_credentials(tmp_path / "t1.cred", b.users["t1"]))})
    pub = attach_floor(table.controller, table.journal, cfg, table="t1", journal_path=table.journal_path)
    assert isinstance(pub, FloorPublisher)
    table.publisher = pub
    try:
        table.table.start()  # the controller and the dealer, the publisher already started
        assert wait_for(lambda: table.done, 30)
        table.controller.wait_idle(5)
        last = table.last_seq()
        assert wait_for(lambda: floor.seqs("t1") == list(range(1, last + 1)), 20)
    finally:
        table.close()
        floor.close()

    # a table that does not trust the broker's CA (the system's CAs) never connects
    other = VirtualTable("t2", tmp_path / "t2", random_hands(3, count=1), room=ROOM, host=b.host, port=b.port,
                         credentials=b.users["t2"])
    other.controller.sinks.remove(other.publisher)
    untrusting = FloorPublisher(other.journal, table="t2", room=ROOM, host=b.host, port=b.port,
                                credentials=b.users["t2"], tls=True).start()
    other.controller.add_sink(untrusting)
    other.publisher = untrusting
    try:
        other.table.start()
        assert wait_for(lambda: other.done, 30), "dealing goes on without the floor"
        assert not wait_for(lambda: untrusting.connected, 2)
        assert untrusting.published == 0
    finally:
        other.close()
