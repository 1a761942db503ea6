"""Recall of the last hands on the dealer display (docs/compliance.md, "Recall"), in a real
headless Chromium: a table deals the example hands into its journal, a STOP comes up, the recall
opens all the same and lists each hand card by card with times, upcards named and downcards
hidden; a dealer's credential gets no downcards, a surveillance user's does and that view is
journaled with who. The screenshot in docs/display.md is this test's (``SHOE_CTL_SHOTS=DIR``)."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from browser import chromium, expect, live_page
from paths import EXAMPLES
from rule_profiles import PROFILES
from waiting import wait_for

from hil.dealer import SimulatedDealer
from hil.replay import script_from_record
from shoe_ctl.config import LedConfig, TableConfig
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.phh import read_phh
from shoe_ctl.release import ReleaseConfig, SoftwareIdentity, check
from shoe_ctl.service.journal import Journal
from shoe_ctl.table import Table
from shoe_ctl.users import Role, User, UserStore


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def test_recall_in_a_stop(browser: Any, tmp_path: Path) -> None:
    store = UserStore(tmp_path / "users.toml", hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    store.save([User("dana", Role.DEALER, store.hash_pin("111111")),
                User("vic", Role.SURVEILLANCE, store.hash_pin("444444"))])
    files = sorted(EXAMPLES.glob("*.phh"))
    scripts = [script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)]
    dealers: list[SimulatedDealer] = []

    def dealer(device: Any, post: Any) -> SimulatedDealer:
        dealers.append(SimulatedDealer(device, post, scripts, pace=0.0, seed=1, auto_ack=True))
        return dealers[0]

    journal = tmp_path / "j.sqlite3"
    table = Table.from_config(TableConfig(leds=LedConfig(backend="mock")), profiles=PROFILES, shoe_url="sim",
                              journal=str(journal), display=("127.0.0.1", 0), dealer=dealer,
                              users=str(tmp_path / "users.toml"))
    with table:
        assert wait_for(lambda: dealers[0].done.is_set(), 60) and dealers[0].stalled is None
        c = table.controller
        c.call_soon(lambda: c.raise_alert("duplicate-card", "a card seen twice: stop, call the floor", latched=True))
        # a decision the dealer may not make: refused before the machine, listed with its gate
        c.post(DealerInput(DealerAction.MISDEAL, args={"confirm": True}, source="display:t user=dana role=dealer"))
        assert c.wait_idle(10)
        url = table.io.display.url
        with urllib.request.urlopen(url + "recall", timeout=30) as r:
            public = json.loads(r.read())
        hands = public["hands"]
        assert not public["hole_cards"] and [h["hand"] for h in hands] == list(range(1, len(files) + 1))
        cards = [e for h in hands for e in h["entries"] if e["kind"] == "card"]
        assert cards and all(e["card"] == "??" for e in cards if e["role"] in ("down", "burn"))
        assert any(e["card"] != "??" for e in cards if e["role"] == "up")
        assert all(e["t"].endswith("Z") for h in hands for e in h["entries"])
        inputs = [e for h in hands for e in h["entries"] if e["kind"] == "input"]
        assert "misdeal" in [e["action"] for e in inputs if e.get("gate") == "role-refused"]

        with live_page(browser, url, (1280, 800)) as page:
            expect(page.locator("#instruction")).to_have_attribute("data-signal", "stop")
            page.click("#btn-recall")
            expect(page.locator("#recall")).to_be_visible()
            expect(page.locator("#recall-mode")).to_have_text("upcards only")
            expect(page.locator(".recall-hand")).to_have_count(len(files))
            assert page.locator(".recall-entry.k-card .card.back").count() > 0
            refused = page.locator(".recall-entry.k-input").filter(has_text="misdeal")
            expect(refused).to_have_count(1)
            expect(refused).to_contain_text("(dana")
            expect(refused).to_contain_text("[role-refused]")
            shots = Path(os.environ.get("SHOE_CTL_SHOTS") or tmp_path)
            page.screenshot(path=str(shots / "recall-stop.png"))
            # a dealer's credential: no downcards
            page.click("#recall-holes")
            page.fill("#cred-user", "dana")
            page.fill("#cred-pin", "111111")
            page.click("#cred-ok")
            expect(page.locator("#toast")).to_contain_text("dana is a dealer")
            expect(page.locator("#recall-mode")).to_have_text("upcards only")
            # surveillance: the downcards, and the view is journaled
            page.click("#recall-holes")
            page.fill("#cred-user", "vic")
            page.fill("#cred-pin", "444444")
            page.click("#cred-ok")
            expect(page.locator("#recall-mode")).to_contain_text("with hole cards (shown to vic")
            assert page.locator(".recall-entry.k-card .card.back").count() < len(cards)
            page.click("#recall-close")
            expect(page.locator("#recall")).to_be_hidden()
            assert page.locator(".recall-entry").count() == 0  # the hole cards left the page
            # a development checkout's unverified code is said on the page, never silently
            expect(page.locator("#unverified")).to_be_hidden()
            off = ReleaseConfig(verify="off")
            table.io.display.software = SoftwareIdentity(check(off), off).public
            c.call_soon(lambda: c.raise_alert("input-invalid", "a state update"))
            expect(page.locator("#unverified")).to_be_visible()
            expect(page.locator("#software")).to_contain_text("verified off")
        assert c.wait_idle(10)
        table.journal.flush(5.0)
    with Journal(journal, table=None, profile=None, readonly=True) as j:
        bodies = [json.loads(r.body) for r in j.records() if r.kind == "Alert"]
    viewed = [b for b in bodies if b.get("code") == "recall-hole-cards"]
    assert len(viewed) == 1 and viewed[0]["message"].startswith("vic (surveillance) viewed the downcards")
    assert any(b.get("code") == "role-refused" and "dana (dealer)" in b["message"] for b in bodies)
