"""The STOP screens in real headless Chromium at 800x480, 1024x600 and 1280x800: while a latched
alert is up the only prominent action is the one it asks for (its *Acknowledge*, or *Cards found…*
for a sequence gap); the next-step buttons (*Betting complete*, *Hand complete*, *New hand…*) lose
their glow, and those the machine would refuse are disabled (docs/display.md, *STOP*).

With ``SHOE_CTL_SHOTS=DIR`` the screenshots are kept in ``DIR`` (docs/images/ holds the
published ones)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import chromium, layout_faults, open_page
from display_feed import seat, state

from shoe_ctl.display.server import start_display
from shoe_ctl.events import Alert, DisplayUpdate, Instruction, Signal

SIZES = [(800, 480), (1024, 600), (1280, 800)]
# what a dealer reads or taps on a STOP screen: the instruction, the latched alert and its button,
# the side panel's lines (the Recall button among them) and every button of the bottom bar
READ = ["#ins-text", "#ins-detail", ".alert.latched .code", ".alert.latched .msg", ".alert.latched button",
        ".side > *", ".buttons button", ".buttons .selected"]


def table(street: str | None, machine: str, cards: int) -> dict[str, Any]:
    ranks = "23456789TJQKA"
    seats = [seat(n, [ranks[(n + k) % 13] + "cdhs"[k % 4] for k in range(cards)], smuggle=False,
                  down_count=3 if cards == 4 else 2) for n in range(1, 7)]
    return {**state(street or "7th", seats, machine=machine), "street": street}


NOT_IN_STUB = Alert("card-not-in-stub", "read 47: card not in the scrambled stub: seat 4 down is not one of "
                    "the new stub's cards — stop, call the floor", street="7th", seat=4, latched=True)
STOPS: dict[str, tuple[list[Any], str, list[str]]] = {
    # name: (commands, the one prominent button, the next-step buttons held)
    "betting": ([DisplayUpdate(table("7th", "hand_seventh_betting", 4)), NOT_IN_STUB,
                 Instruction(Signal.STOP, "Stop: card-not-in-stub — check and acknowledge", street="7th")],
                ".alert.latched button.ack", ["betting-complete"]),
    "showdown": ([DisplayUpdate(table(None, "hand_showdown", 4)),
                  Alert("house-16.25", "Seat 2: 8 cards: call the floor (house-16.25)", seat=2, latched=True),
                  Instruction(Signal.STOP, "Stop: house-16.25 — check and acknowledge")],
                 ".alert.latched button.ack", ["hand-complete"]),
    "no-hand": ([DisplayUpdate({**table(None, "idle", 4), "hand": None}),
                 Alert("card-not-expected", "read 3: a card left the shoe with no hand running: put it back with "
                       "the deck before the next hand, then start a new hand", latched=True),
                 Instruction(Signal.STOP, "Stop: card-not-expected — check and acknowledge before the next hand")],
                ".alert.latched button.ack", ["new-hand"]),
    "sequence-gap": ([DisplayUpdate(table("5th", "hand_fifth_deal", 3)),
                      Alert("sequence-gap", "the shoe lost 1 event(s) (30..30): cards may have left unread. Stop; "
                            "the screen showed card #31 next", latched=True),
                      Instruction(Signal.STOP, "Sequence gap: cards may have left unread (card #31 was next). "
                                  "Count the cards on the felt and report the cards found", street="5th",
                                  cards=("seat 3 up", "seat 4 up"), card_no=31)],
                     "#btn-gap", []),
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def prominent(page: Any) -> list[str]:
    """The visible buttons that glow (class ``hot``), by action or alert code."""
    return list(page.evaluate("""() => [...document.querySelectorAll('button.hot')]
      .filter((b) => { const r = b.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
      .map((b) => b.dataset.action || ('ack ' + b.closest('.alert').dataset.code))"""))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_stop_screen_points_only_at_what_the_alert_asks(browser: Any, size: tuple[int, int],
                                                         tmp_path: Path) -> None:
    shots = Path(os.environ.get("SHOE_CTL_SHOTS") or tmp_path)
    for name, (commands, wanted, held) in STOPS.items():
        s = start_display("127.0.0.1", 0, lambda _e: None)
        context, page = open_page(browser, s.url, size)
        try:
            page.wait_for_function("document.body.dataset.version !== undefined || true")
            for c in commands:
                s.handle(c)
            page.wait_for_function(f"Number(document.body.dataset.version) >= {len(commands)}", timeout=5000)
            page.wait_for_function("document.body.dataset.stop === 'yes'", timeout=5000)
            where = f"{name} at {size[0]}x{size[1]}"
            glowing = prominent(page)
            assert len(glowing) == 1, f"{where}: {glowing}"
            assert page.locator(wanted).first.is_visible(), where
            assert "hot" in (page.locator(wanted).first.get_attribute("class") or ""), where
            for action in held:
                b = page.locator(f".buttons button[data-action='{action}']")
                assert "held" in (b.get_attribute("class") or ""), f"{where}: {action}"
                # the floor's override stays on the New hand sheet; the others the machine refuses
                assert b.is_disabled() == (action != "new-hand"), f"{where}: {action}"
            faults = layout_faults(page, READ)
            assert faults == [], f"{where}: {faults}"
            box = page.locator(wanted).first.bounding_box()
            assert box is not None and box["y"] + box["height"] <= size[1] and box["x"] + box["width"] <= size[0]
            page.screenshot(path=str(shots / f"display-stop-{name}-{size[0]}x{size[1]}.png"))
        finally:
            context.close()
            s.close()
