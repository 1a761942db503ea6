"""The shipped broker configuration (``deploy/mosquitto-floor.conf``, which docs/floor.md points
to instead of repeating it) runs a real Mosquitto as the guide installs it, the listener moved to
loopback and the files to a test folder: a table's user connects, an anonymous client is refused,
and a client id is replaced by its user's name (a second connection with the floor's id does not
close the floor's)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paths import ROOT

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto, find_mosquitto

CONF = ROOT / "deploy" / "mosquitto-floor.conf"


def installed(broker: Mosquitto) -> str:
    """The shipped file with its listener on the test broker's loopback port and its files in the
    broker's folder (as the guide says to edit it: the listener's address, nothing else)."""
    text = CONF.read_text()
    text, listeners = re.subn(r"(?m)^listener \d+ \S+$", f"listener {broker.port} {broker.host}", text)
    assert listeners == 1, "the file has one listener line, the one the guide says to edit"
    text = text.replace("/etc/mosquitto/floor.passwd", str(broker.root / "passwd"))
    text = text.replace("/etc/mosquitto/floor.acl", str(broker.root / "acl"))
    return text + f"log_dest file {broker.root / 'mosquitto.log'}\n" + (
        "user root\n" if (broker.root / "mosquitto.conf").read_text().count("user root") else "")


def connect(broker: Mosquitto, user: str | None, client_id: str) -> tuple[mqtt.Client, list[object], threading.Event]:
    answered = threading.Event()
    reasons: list[object] = []
    lost = threading.Event()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id)
    if user is not None:
        creds = broker.users[user]
        client.username_pw_set(creds.username, creds.password)
    client.on_connect = lambda _c, _u, _f, reason, _p: (reasons.append(reason), answered.set())
    client.on_disconnect = lambda *_a: lost.set()
    client.connect(broker.host, broker.port)
    client.loop_start()
    assert answered.wait(10), "the broker did not answer"
    return client, reasons, lost


def test_the_shipped_configuration_runs_the_floors_broker(tmp_path: Path) -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed (scripts/setup.sh test installs it)")
    broker = Mosquitto(tmp_path / "broker", room="room-1", tables=("table-12",))
    (broker.root / "mosquitto.conf").write_text(installed(broker))
    broker.start()
    clients: list[mqtt.Client] = []
    try:
        table, reasons, table_lost = connect(broker, "table-12", "table-12")
        clients.append(table)
        assert not getattr(reasons[0], "is_failure", True)
        anonymous, reasons, _lost = connect(broker, None, "nobody")
        clients.append(anonymous)
        assert getattr(reasons[0], "is_failure", False), "an anonymous client is refused"
        floor, reasons, floor_lost = connect(broker, FLOOR_USER, "floor")
        clients.append(floor)
        assert not getattr(reasons[0], "is_failure", True)
        # the table's user with the floor's client id: its id becomes its user's name, so it takes
        # the table's own connection (not the floor's)
        thief, reasons, _lost = connect(broker, "table-12", "floor")
        clients.append(thief)
        assert not getattr(reasons[0], "is_failure", True)
        assert table_lost.wait(10), "a client id is its user's name: the table's own connection is closed"
        assert not floor_lost.is_set(), "and the floor's stands"
    finally:
        for client in clients:
            client.disconnect()
            client.loop_stop()
        broker.stop()
