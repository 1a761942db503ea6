"""The *Place cards…* sheet in real headless Chromium (docs/irregularities.md, *Placing a street's
cards*): fed a real machine's commands after a 3rd-street count that disagrees, the STOP's one
prominent action is *Place cards…*; its sheet lists the street's reads in the order pulled, the
upcards by name and never a downcard; tapping where each lies posts ``place-cards`` with one
place per read. With ``SHOE_CTL_SHOTS=DIR`` the 1280x800 screenshot is kept in ``DIR``
(docs/images/ holds the published one)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from browser import chromium, layout_faults, open_page
from rule_profiles import PROFILES

from shoe_ctl.display.model import DisplayModel
from shoe_ctl.display.server import start_display
from shoe_ctl.events import CardRead, DealerAction, DealerInput, DisplayUpdate
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card, full_deck

SUITS = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}


def shown(card: Card) -> str:
    """A card as the page writes it (rank and suit symbol)."""
    text = f"{card}"
    return text[:-1] + SUITS[text[-1]]


def machine_commands() -> tuple[Dealing, list[object], list[Card]]:
    """Four seats on 3rd street: seat 2 got two cards in the first round (read as seats 2 and 3's),
    the dealer went on dealing by the screen, then counted seats 2 and 4: the commands the display
    gets, and the cards in the order pulled (with the machine)."""
    m = Dealing(PROFILES, default_rules="tda")
    m.start()
    deck = full_deck()
    out: list[object] = [*m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4]}))]
    pulled: list[Card] = []
    for seq in range(1, 12):
        pulled.append(deck.pop())
        out += m.handle(CardRead(seq, pulled[-1], "rfid", seq))
    out += m.handle(DealerInput(DealerAction.CARD_COUNT, 2, {"cards": 4}))
    out += m.handle(DealerInput(DealerAction.CARD_COUNT, 1, {"cards": 2}))
    return m, out, pulled


SIZES = [(800, 480), (1024, 600), (1280, 800)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_place_sheet_shows_no_downcard_and_posts_one_place_per_read(tmp_path: Path,
                                                                        size: tuple[int, int]) -> None:
    m, commands, pulled = machine_commands()
    last = [c for c in commands if isinstance(c, DisplayUpdate)][-1]
    reads = last.state["placement"]["reads"]
    assert [r["face"] for r in reads] == ["down"] * 8 + ["up"] * 3
    posted: list[Any] = []
    got = threading.Event()

    def post(ev: Any) -> bool:
        posted.append(ev)
        got.set()
        return True

    s = start_display("127.0.0.1", 0, post)
    shots = Path(os.environ.get("SHOE_CTL_SHOTS") or tmp_path)
    try:
        with chromium() as browser:
            context, page = open_page(browser, s.url, size)
            try:
                for c in commands:
                    s.handle(c)
                # the page shows each state as it comes: an earlier one already STOPs (the first
                # count's), so wait for the version the display reaches with every command
                final = DisplayModel()
                final.apply_all(commands)
                page.wait_for_function(f"Number(document.body.dataset.version) >= {final.version}", timeout=30000)
                assert page.evaluate("document.body.dataset.stop") == "yes"
                glowing = page.evaluate("""() => [...document.querySelectorAll('button.hot')]
                  .filter((b) => { const r = b.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
                  .map((b) => b.dataset.action || 'ack')""")
                assert glowing == ["place-cards"]
                page.click("#btn-place")
                page.wait_for_selector(".sheet[data-sheet='place']:not([hidden])", timeout=30000)
                # the STOP's instruction stays readable above the sheet, the sheet's title below it
                # at 1280x800 the whole sheet, its Place button too, fits without scrolling
                read = ["#ins-text", "#ins-detail", "#sheet-title"] + (["[data-option='place']"]
                                                                       if size == (1280, 800) else [])
                faults = layout_faults(page, read)
                assert faults == [], f"{size}: {faults}"
                text = page.inner_text("#sheet")
                for card in pulled[:8]:  # the hole cards: never on the page
                    assert shown(card) not in text, card
                for card in pulled[8:]:  # the door cards: shown by name
                    assert shown(card) in text, card
                # as the felt holds them: seat 2 got the 2nd pull too, the dealer then followed the screen
                felt = ["seat 1 down", "seat 2 down", "seat 2 down", "seat 3 down", "seat 4 down", "seat 2 down",
                        "seat 3 down", "seat 4 down", "seat 1 up", "seat 2 up", "seat 3 up"]
                for k, place in enumerate(felt):
                    _, seat, face = place.split()
                    page.click(f"[data-option='read-{k}-seat-{seat}']")
                    if face == "up" and reads[k]["face"] != "up":
                        page.click(f"[data-option='read-{k}-face']")
                if size == (1280, 800):
                    page.screenshot(path=str(shots / "display-place-cards-1280x800.png"))
                page.click("[data-option='place']")
                assert got.wait(30)
            finally:
                context.close()
    finally:
        s.close()
    ev = posted[-1]
    assert ev.action is DealerAction.PLACE_CARDS and ev.args["places"] == felt
    assert "street-placed" in [getattr(c, "code", None) for c in m.handle(ev)]  # the machine takes it
