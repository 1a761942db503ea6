"""The page's fault states in a real headless Chromium: no shoe at start-up, a shoe not heard, a
sequence gap with its *Cards found…* sheet, a latched STOP at a new hand (floor override), merged
alert counts, and "no service — do not deal" when the service stops, hangs or its controller is
stuck (docs/display.md, *No service*; docs/service.md, *The signals*)."""

from __future__ import annotations

import queue
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import chromium, expect  # skips the module without Playwright or Chromium

from shoe_ctl.config import load_profile
from shoe_ctl.display.server import PAGE_TIMEOUT_S, DisplaySink, start_display
from shoe_ctl.events import (
    CardRead,
    CounterReset,
    DealerAction,
    DealerInput,
    LinkChanged,
    LinkStatus,
    SequenceGap,
    ShoeInfo,
)
from shoe_ctl.machine import Dealing
from shoe_ctl.service.controller import Controller

INFO = ShoeInfo(1, "fw", "S-1", ("rfid",))
VIEWPORTS = [(1024, 600), (800, 480), (390, 844), (1920, 1080)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


class Rig:
    """A machine on a shoe link behind a controller, its display, and a page on it."""

    def __init__(self, browser: Any, size: tuple[int, int] = (1024, 600)) -> None:
        self.posted: queue.Queue[Any] = queue.Queue()
        self.controller = Controller(Dealing({"tda": load_profile("tda")}, await_counter_reset=True))
        self.sink: DisplaySink = start_display("127.0.0.1", 0, self._post)
        self.controller.add_sink(self.sink)
        self.controller.start()
        self.context = browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=True)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))  # a script error on the page
        self.page.goto(self.sink.url)
        self.page.wait_for_selector("#conn:text('live')", timeout=5000)

    def _post(self, ev: Any) -> None:
        self.posted.put(ev)
        self.controller.post(ev)

    def send(self, *events: Any) -> None:
        for ev in events:
            self.controller.post(ev)
        assert self.controller.wait_idle(5)
        self.sink.sync()

    def close(self) -> None:
        self.context.close()
        self.controller.close()
        self.sink.close()


@pytest.fixture
def rig(browser: Any) -> Iterator[Rig]:
    r = Rig(browser)
    yield r
    r.close()
    assert r.errors == [], r.errors


def start_hand(rig: Rig) -> None:
    rig.send(LinkChanged(LinkStatus.CONNECTED, "shoe S-1", INFO),
             DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3, 4]}), CounterReset(1))


def png_red_share(data: bytes) -> float:
    """The share of clearly red pixels in a PNG screenshot (8-bit RGB or RGBA, any filter)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, ctype = struct.unpack(">IIBB", data[16:26])
    assert depth == 8 and ctype in (2, 6)
    chunks, pos = b"", 8
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            chunks += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(chunks)
    bpp = 3 if ctype == 2 else 4
    stride = width * bpp
    prev = bytearray(stride)
    red = 0
    i = 0
    for _y in range(height):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp * 4):  # every 4th pixel is enough
            r, g, bl = line[x], line[x + 1], line[x + 2]
            red += r > 110 and g < 60 and bl < 60
        prev = line
    return red / (width * height / 4)


def test_no_shoe_at_start_says_check_the_cable_and_offers_no_new_hand(rig: Rig) -> None:
    page = rig.page
    rig.send(LinkChanged(LinkStatus.DISCONNECTED, "cannot open /dev/shoe: [Errno 2] No such file"))
    expect(page.locator("#ins-text")).to_have_text("SHOE NOT CONNECTED \u2014 check the cable")
    assert page.get_attribute("#leds", "data-pattern") == "shoe-fault"
    assert page.locator("#leds .led.on.green").count() == 0
    assert page.locator("#btn-new-hand").is_disabled()
    assert "No such file" in page.inner_text("#shoe-detail")
    rig.send(LinkChanged(LinkStatus.CONNECTED, "shoe S-1", INFO))
    expect(page.locator("#ins-text")).to_have_text("NO HAND \u2014 tap New hand")
    assert page.locator("#btn-new-hand").is_enabled()


def test_a_shoe_not_heard_never_shows_deal(rig: Rig) -> None:
    page = rig.page
    start_hand(rig)
    expect(page.locator("#ins-text")).to_have_text("DEAL DOWN \u2192 seat 1")
    rig.send(LinkChanged(LinkStatus.DEGRADED, "no frame from the shoe for 5.0 s"))
    expect(page.locator("#ins-text")).to_have_text("SHOE NOT HEARD \u2014 pull no card")
    assert page.get_attribute("#leds", "data-pattern") == "degraded"
    assert page.locator("#leds .led.on.green").count() == 0
    assert page.locator(".alert[data-code='shoe-link-degraded']").count() == 1
    rig.send(LinkChanged(LinkStatus.CONNECTED, "link recovered", INFO))
    expect(page.locator("#ins-text")).to_have_text("DEAL DOWN \u2192 seat 1")


def test_sequence_gap_sheet_reports_the_cards_found(rig: Rig) -> None:
    page = rig.page
    start_hand(rig)
    rig.send(CardRead(1, None, "none", 1, 1), SequenceGap(2, 3))
    expect(page.locator("#ins-text")).to_have_text("STOP \u2014 count the cards")
    assert page.locator("#leds .led.on.green").count() == 0
    # the acknowledgement alone does not ask for the card again
    page.locator(".alert[data-code='sequence-gap'] button.ack").tap()
    expect(page.locator(".alert[data-code='sequence-gap']")).to_have_count(0)
    expect(page.locator("#ins-text")).to_have_text("STOP \u2014 count the cards")
    button = page.locator("#btn-gap")
    expect(button).to_be_visible()
    button.tap()
    option = page.locator("#sheet-options button[data-option='n1']")
    expect(option).to_have_text("1 found: seat 2 down")
    while not rig.posted.empty():
        rig.posted.get_nowait()
    option.tap()
    ev = rig.posted.get(timeout=5)
    assert ev.action is DealerAction.GAP_CARDS and ev.args["cards"] == 1
    expect(page.locator("#ins-text")).to_have_text("DEAL DOWN \u2192 seat 3")
    assert page.locator("#btn-gap").is_hidden()


def test_a_latched_stop_blocks_new_hand_until_the_floor_overrides(rig: Rig) -> None:
    page = rig.page
    rig.send(LinkChanged(LinkStatus.CONNECTED, "shoe S-1", INFO), CardRead(1, None, "none", 1, 1))
    expect(page.locator("#ins-text")).to_have_text("STOP \u2014 read the alert")
    page.evaluate("openNewHandSheet()")
    deal = page.locator("#sheet-options button[data-option='deal']")
    assert deal.is_disabled()
    assert "Only the floor may override" in page.inner_text("#sheet")
    page.locator("#sheet-options button[data-option='override']").tap()
    assert deal.is_enabled()
    while not rig.posted.empty():
        rig.posted.get_nowait()
    deal.tap()
    ev = rig.posted.get(timeout=5)
    assert ev.action is DealerAction.NEW_HAND and ev.args["override"] is True
    expect(page.locator("#ins-text")).to_have_text("WAIT \u2014 pull no card yet")
    assert page.locator(".alert[data-code='floor-override']").count() == 1


def test_a_flood_of_refusals_is_one_band_with_its_count(rig: Rig) -> None:
    page = rig.page
    start_hand(rig)
    rig.send(*[DealerInput(DealerAction.BETTING_COMPLETE) for _ in range(100)])  # within the input lane's bound
    band = page.locator(".alert[data-code='input-wrong-time']")
    expect(band.locator(".count")).to_have_text("\u00d7100")
    assert page.locator(".alert").count() == 1


@pytest.mark.parametrize("size", VIEWPORTS, ids=[f"{w}x{h}" for w, h in VIEWPORTS])
def test_no_service_when_the_controller_is_stuck_or_the_service_stops(browser: Any, size: tuple[int, int],
                                                                      tmp_path: Path) -> None:
    rig = Rig(browser, size)
    page = rig.page
    try:
        start_hand(rig)
        expect(page.locator("#ins-text")).to_have_text("DEAL DOWN \u2192 seat 1")
        assert page.locator("#no-service").is_hidden()
        rig.sink.service_lost(True)  # what the controller watchdog says when the controller is stuck
        expect(page.locator("#no-service-text")).to_have_text("SERVICE STUCK \u2014 DO NOT DEAL")
        assert page.locator("#leds .led.on").count() == 0
        assert all(page.locator("footer button").nth(i).is_disabled()
                   for i in range(page.locator("footer button").count()))
        shot = page.screenshot()
        assert png_red_share(shot) > 0.6  # the whole screen, not a side line
        rig.sink.service_lost(False)
        expect(page.locator("#no-service")).to_be_hidden()
        expect(page.locator("#ins-text")).to_have_text("DEAL DOWN \u2192 seat 1")
        rig.sink.close()  # the service stops: "bye" turns the page at once
        expect(page.locator("#no-service-text")).to_have_text("SERVICE STOPPED \u2014 DO NOT DEAL", timeout=2000)
        (tmp_path / f"no-service-{size[0]}x{size[1]}.png").write_bytes(page.screenshot())
    finally:
        rig.close()


def test_a_hung_server_turns_the_page_within_the_stated_time(rig: Rig) -> None:
    """The service hangs (its event loop blocked: no beat, no bye): the page's watchdog turns it
    within PAGE_TIMEOUT_S plus one check after the last event."""
    page = rig.page
    start_hand(rig)
    expect(page.locator("#ins-text")).to_have_text("DEAL DOWN \u2192 seat 1")
    loop = rig.sink._loop
    assert loop is not None
    page.wait_for_timeout(1200)  # a beat has come in the meantime
    hung = time.monotonic()
    loop.call_soon_threadsafe(time.sleep, PAGE_TIMEOUT_S + 3)
    expect(page.locator("#no-service-text")).to_have_text("NO SERVICE \u2014 DO NOT DEAL",
                                                            timeout=int((PAGE_TIMEOUT_S + 2) * 1000))
    took = time.monotonic() - hung
    assert took <= PAGE_TIMEOUT_S + 1.5, took
    # the service answers again: the page follows it
    expect(page.locator("#no-service")).to_be_hidden(timeout=8000)
