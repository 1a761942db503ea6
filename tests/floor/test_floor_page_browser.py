"""The floor page in a real headless Chromium (Debian's ``chromium``, driven by Playwright), fed
by a table dealing recorded hands through a real Mosquitto: the table's row shows its state,
stub against the required number and alerts by severity; floor staff acknowledge an alert with
their name, the page shows who and when, and the floor journal holds it; a table that stops
shows offline."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from browser import chromium, expect
from floor_help import ROOM
from paths import EXAMPLES
from waiting import wait_for

from hil.floor_rig import VirtualTable
from hil.replay import script_from_record
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer, open_floor_journal
from shoe_ctl.floor.page import FloorPage
from shoe_ctl.phh import read_phh
from shoe_ctl.users import Authenticator, Role, User, UserStore


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def test_floor_page_shows_tables_and_acknowledges_alerts(mosquitto: Mosquitto, tmp_path: Path,
                                                         browser: Any) -> None:
    journal = open_floor_journal(tmp_path / "floor.sqlite3", ROOM)
    consumer = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                             credentials=mosquitto.users[FLOOR_USER], journal=journal).start()
    users = UserStore(tmp_path / "users.toml", hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    users.save([User("pat", Role.FLOOR, users.hash_pin("246810")), User("dee", Role.DEALER, users.hash_pin("135791"))])
    page_srv = FloorPage(consumer, port=0, authenticator=Authenticator(users)).start()
    files = sorted(EXAMPLES.glob("*.phh"))
    scripts = [script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)]
    table = VirtualTable("t1", tmp_path / "tables", scripts, room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"])
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        table.start()
        assert wait_for(lambda: table.done, 30) and table.dealer.stalled is None
        table.controller.wait_idle(5)
        last = table.last_seq()
        assert wait_for(lambda: "t1" in consumer.tables and consumer.tables["t1"].expected > last
                        and consumer.tables["t1"].state.get("state") == "idle", 20)
        snap = consumer.snapshot()["tables"][0]
        assert snap["alerts"], "the recorded hands raise alerts (a community card)"

        page = context.new_page()
        outside: list[str] = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(page_srv.url) else None)
        errors: list[str] = []  # the browser's own /favicon.ico included
        page.on("console", lambda m: errors.append(f"{m.text} ({m.location.get('url')})") if m.type == "error" else None)
        page.goto(page_srv.url)
        row = page.locator("tr[data-table='t1']")
        expect(row.locator(".online-cell")).to_have_text("online", timeout=5000)
        expect(row.locator(".state-cell")).to_have_text(snap["state"])
        stub = snap["stub"]
        expect(row.locator(".stub-cell")).to_contain_text(f"{stub['count']} / {stub['required']}")
        expect(row.locator(".seen-cell")).to_contain_text("s ago")
        expect(page.locator("#room")).to_have_text(ROOM)
        first = snap["alerts"][0]
        alert = row.locator(f"[data-alert='t1:{first['id']}']")
        expect(alert).to_contain_text(first["code"])
        expect(alert.locator(".sev")).to_have_text(first["severity"])
        n_open = len(snap["alerts"])
        expect(page.locator(f"#n-{first['severity']}")).to_have_text(str(snap["counts"][first["severity"]]))

        page.fill("#ack-user", "pat")
        page.fill("#ack-pin", "246810")
        row.locator(f"button[data-ack='t1:{first['id']}']").click()
        acked = row.locator(f"[data-acked='t1:{first['id']}']")
        expect(acked).to_contain_text("acknowledged by pat at 20", timeout=5000)
        assert page.input_value("#ack-pin") == ""  # the PIN is not kept on the page
        expect(row.locator("[data-alert]")).to_have_count(n_open - 1)
        records = [r for r in journal.records() if r.kind == "floor-ack"]
        assert len(records) == 1
        assert records[0].data["who"] == "pat" and records[0].data["alert"] == first["id"]
        assert records[0].data["table"] == "t1" and records[0].data["code"] == first["code"]

        # no name, no acknowledgement; an unknown alert is 404
        def post(body: dict[str, Any]) -> int:
            req = urllib.request.Request(page_srv.url + "ack", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            try:
                return urllib.request.urlopen(req, timeout=5).status
            except urllib.error.HTTPError as exc:
                return exc.code

        last = snap["alerts"][-1]["id"]
        assert post({"table": "t1", "id": last, "who": "Pat"}) == 400  # a free-text name is no credential
        assert post({"table": "t1", "id": last, "user": "pat", "pin": "000000"}) == 401
        assert post({"table": "t1", "id": last, "user": "dee", "pin": "135791"}) == 403  # a dealer
        assert post({"table": "t1", "id": 999999, "user": "pat", "pin": "246810"}) == 404
        state = json.loads(page.evaluate("fetch('/state').then(r => r.text())"))
        assert '"down":' not in json.dumps(state)

        table.close()  # the table stops: the floor shows it offline
        expect(row.locator(".online-cell")).to_have_text("OFFLINE", timeout=10000)
        assert outside == [], f"the page fetched from elsewhere: {outside}"
        assert errors == [], errors
    finally:
        context.close()
        table.close()
        page_srv.close()
        consumer.close()
        journal.close()
