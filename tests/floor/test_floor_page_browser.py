"""The floor page in a real headless Chromium (Debian's ``chromium``, driven by Playwright), fed
by a table dealing recorded hands through a real Mosquitto: the room map shows the table's tile in
its pit and place, in floor words, with its alert for the floor (hand and age) and its routine
notice (nothing to acknowledge); a supervisor signs in with a PIN and acknowledges in the table's
detail, the page shows who and when and the floor journal holds it; nothing the page fetches
carries a downcard; a table that stops shows offline."""

from __future__ import annotations

import json
import re
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
from shoe_ctl.export import default_machine_factory
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer, open_floor_journal
from shoe_ctl.floor.page import FloorPage
from shoe_ctl.floor.room import Pit, floor_words
from shoe_ctl.phh import read_phh
from shoe_ctl.recall import recall_hands
from shoe_ctl.users import Authenticator, Role, User, UserStore


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


CARD = re.compile(r"\b[2-9TJQKA][cdhs]\b")


def test_floor_page_shows_tables_and_acknowledges_alerts(mosquitto: Mosquitto, tmp_path: Path,
                                                         browser: Any) -> None:
    journal = open_floor_journal(tmp_path / "floor.sqlite3", ROOM)
    consumer = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                             credentials=mosquitto.users[FLOOR_USER], journal=journal).start()
    users = UserStore(tmp_path / "users.toml", hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    users.save([User("pat", Role.FLOOR, users.hash_pin("246810")), User("dee", Role.DEALER, users.hash_pin("135791"))])
    pits = (Pit("Pit A", (("t2", None, "t1"), ("t3", None, None))),)
    page_srv = FloorPage(consumer, port=0, authenticator=Authenticator(users), pits=pits).start()
    files = sorted(EXAMPLES.glob("*.phh"))
    scripts = [script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)]
    table = VirtualTable("t1", tmp_path / "tables", scripts, room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"], record=True)
    table.publisher.recall = lambda: recall_hands(table.journal.records, default_machine_factory, "tda")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    bodies: list[tuple[str, str]] = []
    try:
        table.start()
        assert wait_for(lambda: table.done, 30) and table.dealer.stalled is None
        table.controller.wait_idle(5)
        # an alert for the floor besides the hands' routine community cards (RP-10-H-C)
        table.controller.call_soon(lambda: table.controller.raise_alert(
            "host-unclean-stop", "the service did not stop cleanly last time"))
        table.controller.wait_idle(5)
        assert wait_for(lambda: "t1" in consumer.tables and consumer.tables["t1"].state.get("state") == "idle"
                        and any(a["code"] == "host-unclean-stop" for a in consumer.tables["t1"].alerts), 20)
        snap = consumer.snapshot()["tables"][0]
        assert [a["code"] for a in snap["alerts"]] == ["host-unclean-stop"], snap["alerts"]
        assert any(n["code"] == "RP-10-H-C" for n in snap["notices"]), "the community card: routine, shown"
        first = snap["alerts"][0]

        page = context.new_page()
        outside: list[str] = []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(page_srv.url) else None)
        page.on("response", lambda r: bodies.append((r.url, r.text())) if r.url.startswith(page_srv.url)
                and "/favicon" not in r.url and r.url != page_srv.url else None)
        errors: list[str] = []  # the browser's own /favicon.ico included
        page.on("console", lambda m: errors.append(f"{m.text} ({m.location.get('url')})") if m.type == "error" else None)
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(page_srv.url)
        tile = page.locator("[data-pit='Pit A'] .tile[data-table='t1']")
        expect(tile.locator(".tw")).to_have_text(floor_words(snap["state"]), timeout=5000)
        assert tile.evaluate("e => [getComputedStyle(e).gridRowStart, getComputedStyle(e).gridColumnStart]") == ["1", "3"]
        expect(page.locator(".tile[data-table='t2'] .tw")).to_have_text("no word yet")
        assert "hand_" not in page.inner_text("body") and "idle" not in page.inner_text("main")
        expect(page.locator("#room")).to_have_text(ROOM)
        stub = snap["stub"]
        expect(tile.locator(".th")).to_contain_text(f"stub {stub['count']} / {stub['required']}")
        line = tile.locator(f"[data-alert='t1:{first['id']}']")
        expect(line).to_contain_text("host-unclean-stop")
        expect(line).to_contain_text(f"#{first['hand']}") if first["hand"] is not None else None
        expect(line).to_contain_text(re.compile(r"\d+(s|m)"))
        expect(tile.locator(".tr")).to_contain_text("RP-10-H-C")
        expect(page.locator("#warn")).to_have_text("1")
        expect(page.locator("#crit")).to_have_text("0")
        expect(page.locator("[data-count='betting']")).to_contain_text("betting 0")

        # tables in no pit follow the pits, by name as a person counts (2 before 10)
        page.evaluate("""(u) => window.floorApply(u)""", {
            "room": ROOM, "version": 0, "now_us": 0, "connected": True, "alerts": {"critical": 0, "warning": 0},
            "tiles": [{"table": n, "status": "idle", "words": "Between hands", "hand": None, "online": True,
                       "stub": None, "alerts": [], "open": {"critical": 0, "warning": 0, "info": 0}, "notice": None}
                      for n in ("zz-10", "zz-9")]})
        assert page.locator("#free .tile").evaluate_all("es => es.map(e => e.dataset.table)") == ["zz-9", "zz-10"]

        tile.click()  # the detail: signed out, nothing to acknowledge with
        detail = page.locator("#detail")
        expect(detail.locator(f"[data-detail-alert='t1:{first['id']}']")).to_contain_text("sign in to acknowledge")
        expect(detail.locator("button[data-ack]")).to_have_count(0)
        expect(detail).to_contain_text("RP-10-H-C")  # routine, listed apart, no button
        health = consumer.snapshot()["tables"][0]["health"]  # reader and card health, from the last hand's end
        expect(detail.locator("[data-health='t1']")).to_have_text(
            f"{health['cards']} cards read; per 1,000: unreadable 0, misreads 0, retries 0, foreign 0")

        page.fill("#signin-user", "dee")  # a dealer does not sign in on the floor page
        page.fill("#signin-pin", "135791")
        page.click("#signin-go")
        for _ in range(50):  # Playwright delivers the dialog while it waits, not while this thread sleeps
            if dialogs:
                break
            page.wait_for_timeout(100)
        assert dialogs and "floor supervisor" in dialogs[-1], dialogs
        page.fill("#signin-user", "pat")
        page.fill("#signin-pin", "246810")
        page.click("#signin-go")
        expect(page.locator("#who")).to_have_text("signed in: pat")
        assert page.input_value("#signin-pin") == ""  # the PIN is not kept on the page
        detail.locator(f"button[data-ack='t1:{first['id']}']").click()
        expect(detail.locator(f"[data-acked='t1:{first['id']}']")).to_contain_text("acknowledged by pat at 20",
                                                                                   timeout=5000)
        expect(tile.locator("[data-alert]")).to_have_count(0)
        expect(page.locator("#warn")).to_have_text("0")
        records = [r for r in journal.records() if r.kind == "floor-ack"]
        assert len(records) == 1
        assert records[0].data["who"] == "pat" and records[0].data["alert"] == first["id"]
        assert records[0].data["table"] == "t1" and records[0].data["code"] == first["code"]

        assert wait_for(lambda: len(consumer.tables["t1"].recall) == len(scripts), 10)  # published at most every 2 s
        detail.locator("button[data-recall='t1']").click()  # the last hands: downcards stay at the table
        expect(detail.locator("#recall-body")).to_contain_text("??")

        def post(path: str, body: dict[str, Any], session: str | None = None) -> int:
            head = {"Content-Type": "application/json"}
            if session is not None:
                head["X-Floor-Session"] = session
            req = urllib.request.Request(page_srv.url + path, json.dumps(body).encode(), head)
            try:
                return urllib.request.urlopen(req, timeout=5).status
            except urllib.error.HTTPError as exc:
                return exc.code

        table.controller.call_soon(lambda: table.controller.raise_alert("clock-unsynced", "the clock is not synced"))
        assert wait_for(lambda: bool(consumer.snapshot()["tables"][0]["alerts"]), 10)
        open_id = consumer.snapshot()["tables"][0]["alerts"][0]["id"]
        assert post("ack", {"table": "t1", "id": open_id, "who": "Pat"}) == 400  # a free-text name is no credential
        assert post("ack", {"table": "t1", "id": open_id}, session="forged-session-id") == 401
        assert post("ack", {"table": "t1", "id": open_id, "user": "pat", "pin": "000000"}) == 401
        assert post("ack", {"table": "t1", "id": open_id, "user": "dee", "pin": "135791"}) == 403  # a dealer
        assert post("signin", {"user": "dee", "pin": "135791"}) == 403
        assert post("ack", {"table": "t1", "id": 999999, "user": "pat", "pin": "246810"}) == 404
        page.click("#signout")
        expect(page.locator("#signin-user")).to_be_visible()

        table.close()  # the table stops: the floor shows it offline
        expect(tile).to_have_class(re.compile(r"s-offline"), timeout=10000)
        expect(tile.locator(".tw")).to_contain_text("OFFLINE")
        assert outside == [], f"the page fetched from elsewhere: {outside}"
        expected = [e for e in errors if "status of 403" in e and "/signin" in e]  # the dealer's refused sign-in
        assert len(expected) == 1 and [e for e in errors if e not in expected] == [], errors
    finally:
        context.close()
        table.close()
        page_srv.close()
        consumer.close()
        journal.close()
    # the embargo: no answer the page fetched names a card but the recall's upcards of that hand
    assert table.recorder is not None
    hands = table.recorder.hands
    assert any(u.endswith("/tiles?since=0") for u, _ in bodies) and any("/recall" in u for u, _ in bodies)
    for url, text in bodies:
        if "/recall" in url:
            for h in json.loads(text)["hands"]:
                downs = {c for info in hands[h["hand"] - 1].cards.values() for c in info["down"]} - {"??"}
                shown = {e["card"] for e in h["entries"] if e.get("kind") == "card"}
                assert downs and not downs & shown, (h["hand"], downs & shown)
                assert all(e["card"] == "??" for e in h["entries"] if e.get("role") in ("down", "burn"))
        else:
            assert CARD.search(text) is None, (url, CARD.search(text))
