"""A real Mosquitto on loopback for the floor tests (``shoe_ctl.floor.broker.Mosquitto``: a free
port, its config, password file written with ``mosquitto_passwd`` and ACL file, stopped after)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from floor_help import FLOORS, ROOM, TABLES

from shoe_ctl.floor.broker import Mosquitto, find_mosquitto


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed (scripts/setup.sh test installs it)")
    broker = Mosquitto(tmp_path / "broker", room=ROOM, tables=TABLES, floors=FLOORS).start()
    try:
        yield broker
    finally:
        broker.stop()
