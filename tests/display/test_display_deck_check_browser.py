"""The deck check on the dealer display in a real headless Chromium (docs/build-a-shoe.md, "Deck
check"): a check journaled while the table is idle appears without any command from the machine,
framed as not whole, a line per finding, and goes when a hand starts."""

from __future__ import annotations

import queue
from pathlib import Path
from typing import Any

from browser import chromium, expect, live_page
from test_display_deck_check import LINES

from shoe_ctl.display.server import start_display
from shoe_ctl.service.deck_check import DeckCheckShown
from shoe_ctl.service.journal import Journal


def test_a_deck_check_appears_on_the_page_and_goes_with_the_first_hand(tmp_path: Path) -> None:
    posted: queue.Queue[Any] = queue.Queue()
    with Journal(tmp_path / "t.journal", table="t", profile="tda") as j, chromium() as browser:
        sink = start_display("127.0.0.1", 0, posted.put)
        sink.deck_check = DeckCheckShown(j, every_s=0.0)
        try:
            with live_page(browser, sink.url) as page:
                panel = page.locator("#deck-check")
                expect(panel).to_be_hidden()
                j.append_record("deck-check", {"deck": "D17", "by": "bob", "read": 52, "whole": False,
                                               "lines": LINES})
                expect(panel).to_be_visible(timeout=10_000)
                expect(panel).to_contain_text("Deck check: NOT WHOLE (by bob)")
                expect(panel).to_contain_text("missing: 9c (tag 04a1b2c3d4e5f6)")
                assert panel.get_attribute("data-whole") == "no"
                j.begin_hand({"game": "stud"})
                expect(panel).to_be_hidden(timeout=10_000)
        finally:
            sink.close()
