"""The dealer's screen in real headless Chromium at 1024x600, 800x480, 390x844 and 1920x1080:
every state's boxes inside the viewport and no text cut (checked on the page's own geometry:
element boxes, ``scrollWidth`` against ``clientWidth``), a screenshot of each of the viewport's
size; and the findings of the table trial: a merged alert band acknowledged without an error,
refusals once and in the dealer's words, a next step at the showdown, no previous-hand cards or
information alerts on NO HAND, OPEN PAIR on 4th street only, the stub gauge not red once the
short-stub procedure covers the street, cards that grow on a large screen."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import chromium, expect, open_page
from display_feed import seat, state

from shoe_ctl.display.server import DisplaySink, start_display
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, DisplayUpdate, Instruction, Signal

VIEWPORTS = [(1024, 600), (800, 480), (390, 844), (1920, 1080)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def sink() -> Iterator[DisplaySink]:
    s = start_display("127.0.0.1", 0, lambda _e: None)
    yield s
    s.close()


def eight(street: str, machine: str, cards: int, **kw: Any) -> dict[str, Any]:
    ranks = "23456789TJQKA"
    seats = [seat(n, [ranks[(n + k) % 13] + "cdhs"[k % 4] for k in range(cards)], smuggle=False,
                  down_count=3 if street == "7th" else 2, first_to_act=(n == 8)) for n in range(1, 9)]
    return state(street, seats, machine=machine, **kw)


SCREENS: dict[str, list[Any]] = {
    "betting": [DisplayUpdate(eight("4th", "hand_fourth_betting", 2)),
                Instruction(Signal.BETTING, "Betting on 4th street: seat 8 acts first", seat=8, street="4th")],
    "deal-after-reload": [DisplayUpdate(eight("7th", "hand_seventh_deal", 4, stub=4, required=10, forecast="7th")),
                          Instruction(Signal.DEAL, "Load the new stub, then deal down to seat 8 (7th)", seat=8,
                                      face="down", street="7th")],
    "stop": [DisplayUpdate(eight("5th", "hand_fifth_deal", 3)),
             Alert("duplicate-card", "read 31: duplicate card; both reads are suspect — stop, call the floor",
                   street="5th", seat=3, latched=True),
             Alert("sequence-gap", "the shoe lost events 7..8: cards may have left unreported; check the deal",
                   latched=True),
             Instruction(Signal.STOP, "Stop: duplicate-card — check and acknowledge")],
    "showdown": [DisplayUpdate({**eight("7th", "hand_showdown", 4), "street": None}),
                 Instruction(Signal.SHOWDOWN, "Showdown: seat 8 shows first", seat=None)],
    "no-hand": [DisplayUpdate({**eight("7th", "idle", 4), "street": None}),
                Instruction(Signal.IDLE, "No hand: start a new hand")],
}


def geometry(page: Any) -> dict[str, Any]:
    return dict(page.evaluate("""() => {
      const box = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
      const shown = (e) => { const b = e.getBoundingClientRect(); const s = getComputedStyle(e);
        return b.width > 0 && b.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
      const sel = '#instruction, #ins-text, .alert, .alert button, .seat, .side > *, footer button';
      const items = [...document.querySelectorAll(sel)].filter(shown);
      const cut = (e) => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1;
      const texts = [...document.querySelectorAll('#ins-text, footer button, .alert .code, .alert button, .seat .head, .meta > div')]
        .filter(shown).filter(cut).map((e) => (e.id || e.className) + ': ' + e.textContent);
      const cards = [...document.querySelectorAll('.seat')].filter(shown).flatMap((s) => {
        const sb = s.getBoundingClientRect();
        return [...s.querySelectorAll('.card')].filter((c) => { const b = c.getBoundingClientRect();
          return b.right > sb.right + 1 || b.bottom > sb.bottom + 1 || b.left < sb.left - 1; })
          .map((c) => 'seat ' + s.dataset.seat + ' ' + c.textContent); });
      return {w: innerWidth, h: innerHeight, doc: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
              outside: items.map((e) => [e.id || e.className, box(e)]).filter(([, b]) =>
                b[0] < -0.5 || b[1] < -0.5 || b[2] > innerWidth + 0.5 || b[3] > innerHeight + 0.5),
              cut: texts, cards_out: cards};
    }"""))


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize("size", VIEWPORTS, ids=[f"{w}x{h}" for w, h in VIEWPORTS])
def test_every_screen_fits_the_viewport(browser: Any, size: tuple[int, int], tmp_path: Path) -> None:
    shots = Path(os.environ.get("SHOE_CTL_SHOTS") or tmp_path)
    for name, commands in SCREENS.items():
        s = start_display("127.0.0.1", 0, lambda _e: None)
        context, page = open_page(browser, s.url, size)
        try:
            for c in commands:
                s.handle(c)
            page.wait_for_function(f"Number(document.body.dataset.version) >= {len(commands)}", timeout=5000)
            shot = shots / f"display-{name}-{size[0]}x{size[1]}.png"
            page.screenshot(path=str(shot))
            assert png_size(shot) == size
            g = geometry(page)
            where = f"{name} at {size[0]}x{size[1]}"
            assert g["doc"] == [size[0], size[1]], f"{where}: the page scrolls ({g['doc']})"
            assert g["outside"] == [], f"{where}: outside the viewport: {g['outside']}"
            assert g["cut"] == [], f"{where}: text cut: {g['cut']}"
            assert g["cards_out"] == [], f"{where}: cards outside their seat: {g['cards_out']}"
        finally:
            context.close()
            s.close()


def test_headline_whole_at_390_px(browser: Any, sink: DisplaySink) -> None:
    context, page = open_page(browser, sink.url, (390, 844))
    try:
        for ins in (Instruction(Signal.BETTING, "Betting", seat=8),
                    Instruction(Signal.DEAL, "Load the new stub, then deal down to seat 8", seat=8, face="down"),
                    Instruction(Signal.IDLE, "Misdeal: collect every card"),
                    Instruction(Signal.SHOE_FAULT, "Shoe fault")):
            sink.handle(ins)
            sink.sync()
            page.wait_for_function("document.body.dataset.version >= 1", timeout=5000)
            expect(page.locator("#ins-text")).not_to_have_text("Connecting to the service…")
            text = page.inner_text("#ins-text")
            assert "…" not in text
            fits = page.evaluate("""() => { const e = document.getElementById('ins-text');
              return [e.scrollWidth <= e.clientWidth + 1, e.scrollHeight <= e.clientHeight + 1]; }""")
            assert fits == [True, True], (text, fits)
        expect(page.locator("#ins-text")).to_have_text("SHOE FAULT \u2014 pull no card")
    finally:
        context.close()


def test_cards_grow_on_a_large_screen(browser: Any) -> None:
    heights = {}
    for size in ((1024, 600), (1920, 1080)):
        s = start_display("127.0.0.1", 0, lambda _e: None)
        context, page = open_page(browser, s.url, size)
        try:
            s.handle(DisplayUpdate(eight("4th", "hand_fourth_betting", 2)))
            page.wait_for_selector(".seat .card", timeout=5000)
            heights[size] = page.evaluate("document.querySelector('.seat .card').getBoundingClientRect().height")
        finally:
            context.close()
            s.close()
    small, large = heights[(1024, 600)], heights[(1920, 1080)]
    assert large / 1080 >= 0.9 * small / 600, heights  # scales with the screen, not capped at a small size


def test_showdown_gives_the_next_step(browser: Any, sink: DisplaySink) -> None:
    context, page = open_page(browser, sink.url, (1024, 600))
    try:
        for c in SCREENS["showdown"]:
            sink.handle(c)
        expect(page.locator("#ins-detail")).to_contain_text("tap Hand complete")
        done = page.locator("button[data-action='hand-complete']")
        assert done.is_visible() and "hot" in (done.get_attribute("class") or "")
    finally:
        context.close()


def test_no_hand_screen_drops_the_previous_hand(browser: Any, sink: DisplaySink) -> None:
    context, page = open_page(browser, sink.url, (1024, 600))
    try:
        sink.handle(DisplayUpdate(eight("7th", "hand_seventh_betting", 4)))
        sink.handle(Alert("RP-10-H-C", "7th street: short stub: procedure C", street="7th"))
        sink.handle(Alert("card-not-expected", "a card left the shoe", latched=True))
        expect(page.locator(".alert")).to_have_count(2)
        assert page.locator(".seat .card").count() > 0
        sink.handle(DisplayUpdate({**eight("7th", "idle", 4), "street": None}))
        sink.handle(Instruction(Signal.IDLE, "No hand"))
        expect(page.locator("#ins-text")).to_have_text("NO HAND \u2014 tap New hand")
        expect(page.locator(".alert")).to_have_count(1)  # the latched alert stays
        assert page.locator(".alert").get_attribute("data-code") == "card-not-expected"
        assert page.locator(".seat .card").count() == 0 and page.locator(".tags span").count() == 0
        assert page.inner_text("#hand") == "No hand (last: 7)" and page.inner_text("#stub-count") == "–"
        page.locator("#btn-new-hand").tap()  # the sheet still offers the previous hand's seats
        assert page.inner_text("#sheet button[data-option='deal']") == "Deal seats 1, 2, 3, 4, 5, 6, 7, 8"
    finally:
        context.close()


def test_open_pair_on_4th_only_and_gauge_after_the_procedure(browser: Any, sink: DisplaySink) -> None:
    context, page = open_page(browser, sink.url, (1024, 600))
    try:
        def show(street: str, machine: str, **kw: Any) -> None:
            st = eight(street, machine, 2 if street == "4th" else 3, **kw)
            st["seats"][0]["open_pair"] = True
            sink.handle(DisplayUpdate(st))
            sink.sync()
            page.wait_for_function(f"document.getElementById('street').dataset.street === '{street}'")

        show("4th", "hand_fourth_betting", stub=20, required=10, forecast="7th")
        assert page.locator(".seat[data-seat='1'] .pair").count() == 1
        assert "short" not in (page.get_attribute("#gauge", "class") or "")
        show("6th", "hand_sixth_betting", stub=5, required=10, forecast="7th")
        assert page.locator(".pair").count() == 0  # RP-10-F: an open pair on 4th street
        assert "short" in (page.get_attribute("#gauge", "class") or "")  # short ahead: red
        assert "expected on 7th" in page.inner_text("#forecast")
        show("7th", "hand_seventh_deal", stub=4, required=10, forecast="7th")
        cls = page.get_attribute("#gauge", "class") or ""
        assert "short" not in cls and "handled" in cls  # the procedure covers the street
        assert "procedure" in page.inner_text("#forecast")
    finally:
        context.close()


@pytest.fixture
def machine_page(browser: Any) -> Iterator[tuple[Any, Any, DisplaySink]]:
    from shoe_ctl.config import load_profile
    from shoe_ctl.machine import Dealing
    from shoe_ctl.service.controller import Controller

    controller = Controller(Dealing({"tda": load_profile("tda")}))
    s = start_display("127.0.0.1", 0, controller.post)
    controller.add_sink(s)
    controller.start()
    errors: list[str] = []
    context, page = open_page(browser, s.url, (1024, 600), on_console=lambda m: errors.append(
        f"{m.text} ({m.location.get('url')})") if m.type == "error" else None)
    try:
        yield controller, page, s
    finally:
        context.close()
        controller.close()
        s.close()
    assert errors == [], errors


def test_merged_band_acknowledged_without_an_error(machine_page: tuple[Any, Any, DisplaySink]) -> None:
    """Three cards pulled with no hand running: one red band x3. One tap on Acknowledge clears
    it in the machine and on the page, and nothing says NOT SENT or refused."""
    from shoe_ctl.rules.cards import parse_card

    controller, page, s = machine_page
    for seq, text in enumerate(["2c", "3d", "4h"], start=1):
        controller.post(CardRead(seq, parse_card(text), "rfid", seq))
    band = page.locator(".alert[data-code='card-not-expected']")
    expect(band.locator(".count")).to_have_text("\u00d73")
    band.locator("button.ack").tap()
    expect(page.locator(".alert")).to_have_count(0)
    assert controller.wait_idle(5)
    s.sync()
    assert page.locator("#refused").is_hidden()
    assert "NOT SENT" not in page.inner_text("body") and "refused" not in page.inner_text("#toast").lower()
    assert controller.machine.alerts == []


def test_refusal_once_in_dealer_words(machine_page: tuple[Any, Any, DisplaySink]) -> None:
    controller, page, _s = machine_page
    controller.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3, 4], "rules": "tda"}))
    assert controller.wait_idle(5)
    page.locator(".seat[data-seat='1']").tap()
    assert page.locator("button[data-action='all-in']").is_disabled()  # the machine refuses it while dealing
    page.evaluate("() => sendInput('all-in', 1, {})")  # as a tap just before the state changed would post it
    refused = page.locator("#refused")
    refused.wait_for(state="visible", timeout=5000)
    text = refused.inner_text()
    assert "REFUSED" in text and "3rd street, dealing" in text
    assert "hand_" not in text and "in state" not in text
    assert page.locator(".alert[data-code='input-wrong-time']").count() == 0  # shown once, not also as a band
    assert "hand_" not in page.inner_text("body")
