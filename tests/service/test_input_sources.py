"""Every dealer and floor input carries where it came from, and the journal keeps it
(docs/security.md, "Tamper-evident record"): a button, the display's client address, the dealer
port's peer credentials (never what the client's line claims), the floor page's client and user."""

from __future__ import annotations

import json
import os
import queue
import socket
import urllib.request
from pathlib import Path
from typing import Any

from gpiozero.pins.mock import MockFactory

from drivers.buttons import DealerButtons
from shoe_ctl.display.server import start_display
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.floor.consumer import FloorConsumer, TableView
from shoe_ctl.service import codec
from shoe_ctl.service.dealer_port import DealerPort
from shoe_ctl.service.journal import Journal


def test_a_button_press_names_its_button() -> None:
    factory = MockFactory()
    posted: list[Any] = []
    buttons = DealerButtons({"undo": 13}, posted.append, bounce_s=None, pin_factory=factory)
    try:
        factory.pin(13).drive_low()
    finally:
        buttons.close()
    assert [p.source for p in posted] == ["button:undo"]


def _post(url: str, body: Any) -> int:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return int(r.status)


def test_a_display_input_names_the_client_address_not_what_the_body_says() -> None:
    posted: queue.Queue[Any] = queue.Queue()
    sink = start_display("127.0.0.1", 0, posted.put)
    try:
        assert _post(sink.url + "input", {"action": "undo", "source": "button:undo"}) == 202
        event = posted.get(timeout=5)
    finally:
        sink.close()
    assert isinstance(event, DealerInput) and event.source == "display:127.0.0.1"


def test_a_dealer_port_input_names_the_peer_not_what_the_line_claims(tmp_path: Path) -> None:
    posted: queue.Queue[Any] = queue.Queue()
    port = DealerPort(tmp_path / "d.sock", posted.put).start()
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect(str(port.path))
        forged = DealerInput(DealerAction.UNDO, source="button:undo")
        c.sendall(codec.dumps(forged).encode() + b"\n")
        event = posted.get(timeout=5)
        # the controller's gate mark (an input it refused or took before the machine, read back
        # as a no-op with a "[role-refused]" in the recall and the export) is not the client's
        marked = DealerInput(DealerAction.FOLD, 2, gate="role-refused")
        c.sendall(codec.dumps(marked).encode() + b"\n")
        unmarked = posted.get(timeout=5)
    finally:
        c.close()
        port.close()
    assert event.source == f"dealer-port:uid={os.getuid()},pid={os.getpid()}"
    assert unmarked == DealerInput(DealerAction.FOLD, 2) and unmarked.gate == ""
    assert unmarked.source == event.source


def test_a_floor_acknowledgement_is_journaled_with_its_source(tmp_path: Path) -> None:
    with Journal(tmp_path / "floor.journal", table="floor-r", profile="floor", retention_days=0) as j:
        floor = FloorConsumer(host="127.0.0.1", port=1, room="r", journal=j)
        floor.tables["t1"] = TableView("t1", alerts=[{"id": 7, "code": "x", "acked": None}])
        assert floor.acknowledge("t1", 7, "Ann", "floor-page:10.0.0.9") is not None
        rec = [r for r in j.records() if r.kind == "floor-ack"][-1]
        assert rec.data["source"] == "floor-page:10.0.0.9" and rec.data["who"] == "Ann"


def test_the_source_is_journaled_with_the_input_and_an_old_record_reads_as_none(tmp_path: Path) -> None:
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j:
        seq = j.append(DealerInput(DealerAction.FOLD, 3, source="display:10.1.2.3"))
        old = codec.dumps(DealerInput(DealerAction.FOLD, 3)).replace(',"source":null', "")
        assert "source" not in old
        rec = next(r for r in j.records() if r.seq == seq)
        assert json.loads(rec.body)["source"] == "display:10.1.2.3"
        item = rec.item
        assert isinstance(item, DealerInput) and item.source == "display:10.1.2.3"
    assert codec.loads(old).source is None
