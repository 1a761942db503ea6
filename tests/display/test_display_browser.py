"""The dealer display in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The page follows a scripted command feed, a touch on "Fold" posts a DealerInput, an alert shows
and clears when acknowledged, and no downcard ever appears in the page.
"""

from __future__ import annotations

import json
import os
import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import chromium, expect, live_page, open_page
from display_feed import all_downcards, feed

from shoe_ctl.display.server import DisplaySink, start_display
from shoe_ctl.embargo import downcards_in
from shoe_ctl.events import Alert, DealerAction, DealerInput, DisplayUpdate

SUIT = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}
GLYPHS = {c: c[:-1] + SUIT[c[-1]] for c in all_downcards()}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def posted() -> queue.Queue[Any]:
    return queue.Queue()


@pytest.fixture
def sink(posted: queue.Queue[Any]) -> Iterator[DisplaySink]:
    s = start_display("127.0.0.1", 0, posted.put)
    yield s
    s.close()


@pytest.fixture
def page(browser: Any, sink: DisplaySink) -> Iterator[Any]:
    outside: list[str] = []
    context, pg = open_page(browser, sink.url,
                            on_request=lambda r: outside.append(r.url) if not r.url.startswith(sink.url) else None)
    yield pg
    context.close()
    assert outside == [], f"the page fetched from elsewhere: {outside}"


def test_page_loads_without_a_console_error(browser: Any, sink: DisplaySink) -> None:
    """Nothing the page or the browser asks for on load is missing: no 404 in the kiosk's console
    (the browser's own request for ``/favicon.ico`` included)."""
    errors: list[str] = []
    statuses: list[tuple[int, str]] = []
    context, pg = open_page(browser, sink.url, on_console=lambda m: errors.append(
        f"{m.text} ({m.location.get('url')})") if m.type == "error" else None)
    try:
        pg.on("response", lambda r: statuses.append((r.status, r.url)) if r.status >= 400 else None)
        pg.wait_for_load_state("networkidle")
        pg.reload()
        pg.wait_for_selector("#conn:text('live')", timeout=5000)
        pg.wait_for_load_state("networkidle")
    finally:
        context.close()
    assert errors == [] and statuses == [], (errors, statuses)


def wait_version(page: Any, version: int) -> None:
    page.wait_for_function(f"Number(document.body.dataset.version) >= {version}", timeout=5000)


def test_page_follows_the_feed(page: Any, sink: DisplaySink) -> None:
    version = 0
    for command in feed():
        sink.handle(command)
        version += 1
        wait_version(page, version)
        shown = set(page.locator(".card:not(.back)").all_inner_texts())
        assert shown.isdisjoint(GLYPHS[c] for c in all_downcards()), shown
        fetched = json.loads(page.evaluate("fetch('/state').then(r => r.text())"))
        assert list(downcards_in(fetched)) == []
        assert all(f'"{c}"' not in json.dumps(fetched) for c in all_downcards())
        if isinstance(command, DisplayUpdate):
            seats = page.locator(".seat")
            assert seats.count() == len(command.state["seats"])
    # the final state: 4th street, burn instruction with its LED pattern, folded seat 2 keeps 2c
    assert page.inner_text("#ins-text") == "BURN 4th"  # the headline; the machine's words below
    assert "Burn one card" in page.inner_text("#ins-detail")
    assert page.get_attribute("#leds", "data-pattern") == "burn"
    assert page.locator("#leds .led.on.amber").count() == 1
    assert page.locator("#leds .led.on").count() == 1
    seat2 = page.locator(".seat[data-seat='2']")
    assert "folded" in (seat2.get_attribute("class") or "")
    assert "2♣" in seat2.inner_text()
    seat1 = page.locator(".seat[data-seat='1']").inner_text()
    assert "FIRST TO ACT" in seat1 and "OPEN PAIR" in seat1 and "5♥" in seat1 and "5♦" in seat1
    assert page.inner_text("#stub-count") == "36" and page.inner_text("#stub-required") == "5"
    assert "7th" in page.inner_text("#forecast")
    assert page.locator(".seat[data-seat='3'] .card.back").count() == 2  # hole cards as backs


def test_touch_fold_posts_dealer_input(page: Any, sink: DisplaySink, posted: queue.Queue[Any]) -> None:
    for command in feed():
        sink.handle(command)
    wait_version(page, len(feed()))
    fold = page.locator("button[data-action='fold']")
    assert fold.is_disabled()  # no seat selected yet
    page.locator(".seat[data-seat='3']").tap()
    expect(page.locator("#selected")).to_have_text("Seat 3")
    fold.tap()
    event = posted.get(timeout=5)
    assert event == DealerInput(DealerAction.FOLD, 3, {"street": "4th", "ref": 1})
    expect(page.locator("#selected")).to_have_text("Tap a seat")  # released once the server answered
    assert page.locator("button[data-action='betting-complete']").is_hidden()  # a burn is next, no betting
    page.locator("button[data-action='undo']").tap()
    assert posted.get(timeout=5).action is DealerAction.UNDO


def test_alert_shows_and_clears_when_acknowledged(page: Any, sink: DisplaySink,
                                                  posted: queue.Queue[Any], tmp_path: Path) -> None:
    for command in feed():
        sink.handle(command)
    sink.handle(Alert("duplicate-card", "Duplicate card: 5h read twice", street="4th", seat=1, latched=True))
    alert = page.locator(".alert")
    alert.wait_for(timeout=5000)
    assert alert.get_attribute("data-code") == "duplicate-card"
    assert "5♥" not in alert.inner_text() and "5h read twice" in alert.inner_text()
    page.screenshot(path=str(tmp_path / "display.png"))
    alert.locator("button.ack").tap()
    alert.wait_for(state="detached", timeout=5000)
    event = posted.get(timeout=5)
    assert event.action is DealerAction.ACK_ALERT and event.args["code"] == "duplicate-card"
    state = json.loads(page.evaluate("fetch('/state').then(r => r.text())"))
    assert state["alerts"] == []


def test_page_follows_the_machine_and_a_fold_touch_reaches_it(browser: Any) -> None:
    """The real dealing machine behind the controller: 3rd street dealt from card reads, the
    page shows it without hole cards, a touch on Fold folds the seat in the machine."""
    pytest.importorskip("shoe_ctl.service.controller", reason="the service is not available yet")
    from shoe_ctl.config import load_profile
    from shoe_ctl.events import CardRead
    from shoe_ctl.machine import Dealing
    from shoe_ctl.rules.cards import parse_card
    from shoe_ctl.service.controller import Controller

    controller = Controller(Dealing({"tda": load_profile("tda")}))
    sink = start_display("127.0.0.1", 0, controller.post)
    controller.add_sink(sink)
    controller.start()
    try:
        with live_page(browser, sink.url) as page:
            downs = ["Ah", "Kd", "7c", "7s", "Qh", "2d", "9s", "Tc"]   # seats 1-4, two rounds
            ups = ["Kh", "2c", "9d", "Qs"]                              # 2c brings in
            controller.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3, 4], "game": "stud",
                                                                      "rules": "tda"}))
            for seq, text in enumerate(downs[0::2] + downs[1::2] + ups, start=1):
                controller.post(CardRead(seq, parse_card(text), "rfid", seq))
            assert controller.wait_idle(5)
            page.locator(".seat[data-seat='2'] .tags .bring-in").wait_for(timeout=5000)
            shown = set(page.locator(".card:not(.back)").all_inner_texts())
            assert shown == {GLYPHS.get(c) or c[:-1] + SUIT[c[-1]] for c in ups}
            assert page.locator(".card.back").count() == 8
            page.locator(".seat[data-seat='3']").tap()
            page.locator("button[data-action='fold']").tap()
            page.wait_for_selector("body[data-reply='accepted:1']", timeout=5000)  # the machine answered
            expect(page.locator("#refused")).to_be_hidden()
            assert controller.wait_idle(5)
            assert controller.machine.public_state()["seats"][2]["status"] == "folded"  # reached the machine
            page.locator("button[data-action='betting-complete']").tap()
            page.wait_for_selector(".seat[data-seat='3'].folded", timeout=5000)
            page.wait_for_selector("#street:text('4th')", timeout=5000)
            assert page.get_attribute("#leds", "data-pattern") == "burn"
            assert "9♦" in page.locator(".seat[data-seat='3']").inner_text()  # keeps its upcard
    finally:
        controller.close()
        sink.close()


@pytest.fixture
def machine_page(browser: Any) -> Iterator[tuple[Any, Any, DisplaySink]]:
    """The real dealing machine behind the controller and the display, and the page on it."""
    pytest.importorskip("shoe_ctl.service.controller", reason="the service is not available yet")
    from shoe_ctl.config import load_profile
    from shoe_ctl.machine import Dealing
    from shoe_ctl.service.controller import Controller

    controller = Controller(Dealing({"tda": load_profile("tda")}))
    sink = start_display("127.0.0.1", 0, controller.post)
    controller.add_sink(sink)
    controller.start()
    try:
        with live_page(browser, sink.url) as page:
            yield controller, page, sink
    finally:
        controller.close()
        sink.close()


def test_exposed_hole_card_reported_from_the_page_and_a_refusal_shown(
        machine_page: tuple[Any, Any, DisplaySink]) -> None:
    """RP-10-A from the page: seat 3's first hole card is exposed during the initial deal. The
    dealer taps seat 3, *Exposed card*, *1st hole card*; the machine rules, the page shows the
    RP-10-A alert, the exposed card face up in seat 3, and later asks for seat 3's third card
    face down. Before that, *All-in* is disabled during the deal (the machine would refuse it), and
an *Undo* with cards out since the new hand is refused and the page says so."""
    from shoe_ctl.events import CardRead
    from shoe_ctl.rules.cards import parse_card

    controller, page, _sink = machine_page
    controller.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3, 4], "rules": "tda"}))
    first_round = ["Ah", "7c", "Qh", "9s"]
    for seq, text in enumerate(first_round, start=1):
        controller.post(CardRead(seq, parse_card(text), "rfid", seq))
    assert controller.wait_idle(5)
    expect(page.locator("#ins-text")).to_have_text("DEAL DOWN \u2192 seat 1")
    expect(page.locator("#ins-detail")).to_contain_text("Deal down to seat 1 (3rd)")

    assert page.locator("button[data-action='betting-complete']").is_hidden()  # no betting round open
    page.locator(".seat[data-seat='1']").tap()
    all_in = page.locator("button[data-action='all-in']")  # an all-in while dealing: the machine refuses it
    assert all_in.is_disabled() and all_in.get_attribute("title").startswith("Not now: an all-in is reported")
    page.locator("button[data-action='undo']").tap()  # cards have left since the new hand: refused
    refused = page.locator("#refused")
    refused.wait_for(state="visible", timeout=5000)
    assert "REFUSED" in refused.inner_text() and "undo" in refused.inner_text().lower()
    assert page.get_attribute("body", "data-reply") == "refused:1"
    refused.tap()
    assert refused.is_hidden()

    page.locator(".seat[data-seat='3']").tap()
    page.locator("button[data-action='exposed-card']").tap()
    sheet = page.locator("#sheet")
    assert sheet.is_visible()
    assert page.locator("#sheet-options button").all_inner_texts() == [
        "1st hole card", "2nd hole card", "Both hole cards"]  # 3rd street: the hole cards only
    page.locator("#sheet button[data-option='first']").tap()
    assert sheet.is_hidden()
    page.wait_for_selector("body[data-reply='accepted:2']", timeout=5000)
    alert = page.locator(".alert[data-code='RP-10-A']")
    alert.wait_for(timeout=5000)
    assert "seat 3" in alert.inner_text()
    seat3 = page.locator(".seat[data-seat='3']")
    expect(seat3).to_contain_text("Q♥")  # the exposed card stands as the upcard: public now
    assert controller.machine.hand.seats[2].up == [parse_card("Qh")]
    assert refused.is_hidden()

    for seq, text in enumerate(["Kd", "7s", "2d", "Tc", "Kh", "2c"], start=5):  # 2nd round, ups of 1 and 2
        controller.post(CardRead(seq, parse_card(text), "rfid", seq))
    expect(page.locator("#ins-text")).to_have_text("DEAL DOWN \u2192 seat 3")
    expect(page.locator("#ins-detail")).to_contain_text("Deal down to seat 3 (3rd) \u00b7 card #11")
    shown = set(page.locator(".card:not(.back)").all_inner_texts())
    assert shown == {"Q♥", "K♥", "2♣"}  # no other hole card on the page


def test_misdeal_needs_a_confirmation(page: Any, sink: DisplaySink, posted: queue.Queue[Any]) -> None:
    """A stray touch on *Misdeal* posts nothing: it opens a confirmation; *Cancel* closes it
    and still nothing is posted; only *Yes: misdeal* posts the misdeal (with ``confirm``)."""
    for command in feed():
        sink.handle(command)
    wait_version(page, len(feed()))
    misdeal = page.locator("button[data-action='misdeal']")
    misdeal.tap()
    sheet = page.locator("#sheet")
    assert sheet.is_visible() and "MISDEAL" in page.inner_text("#sheet-title")
    page.locator("#sheet-cancel").tap()
    assert sheet.is_hidden()
    misdeal.tap()
    page.wait_for_timeout(200)
    assert posted.empty()  # the page never posted without the confirmation
    page.locator("#sheet button[data-option='confirm']").tap()
    assert posted.get(timeout=5) == DealerInput(DealerAction.MISDEAL, None, {"confirm": True, "ref": 1})
    assert sheet.is_hidden()


def test_seat_reports_with_their_arguments_from_the_page(page: Any, sink: DisplaySink,
                                                         posted: queue.Queue[Any]) -> None:
    """Tap a seat, then the report, then the choice: card count, absent player, burn error, and
    a stub mixed with other piles."""
    for command in feed():
        sink.handle(command)
    wait_version(page, len(feed()))
    page.locator(".seat[data-seat='4']").tap()
    page.locator("button[data-action='card-count']").tap()
    page.locator("#sheet button[data-option='n8']").tap()
    assert posted.get(timeout=5) == DealerInput(DealerAction.CARD_COUNT, 4, {"cards": 8, "ref": 1})
    # one report per seat tap: the seat is released when the server's reply comes back
    expect(page.locator("#selected")).to_have_text("Tap a seat")
    page.locator(".seat[data-seat='2']").tap()
    page.locator("button[data-action='absent-player']").tap()
    page.locator("#sheet button[data-option='not-reached']").tap()
    assert posted.get(timeout=5) == DealerInput(DealerAction.ABSENT_PLAYER, 2, {"action_reached": False, "ref": 2})
    page.locator("button[data-action='burn-error']").tap()  # needs no seat
    page.locator("#sheet button[data-option='two']").tap()
    assert posted.get(timeout=5) == DealerInput(DealerAction.BURN_ERROR, None, {"burns": 2, "ref": 3})
    page.locator("button[data-action='stub-mixed']").tap()  # TDA RP-4: which piles went into the stub
    assert page.locator("#sheet-options button").all_inner_texts() == [
        "The muck (folded hands)", "The burns", "The muck and the burns", "The set-aside cards"]
    page.locator("#sheet button[data-option='muck-burns']").tap()
    assert posted.get(timeout=5) == DealerInput(DealerAction.STUB_MIXED, None,
                                                {"piles": ["muck", "burns"], "ref": 4})


def test_page_shows_moves_absent_no_bet_and_floor_decides(page: Any, sink: DisplaySink) -> None:
    """The machine's extra public keys on the page: a ruling's card moves under its alert, the
    ABSENT and MAY NOT BET marks, and the band when the first to act is unknown."""
    from display_feed import seat as seat_entry
    from display_feed import state as state_of

    seats = [seat_entry(1, ["5h", "5d"]), seat_entry(2, ["2c", "9c"]), seat_entry(3, ["Jd", "3c"]),
             seat_entry(4, ["8s", "Ks"])]
    seats[1]["absent"] = True
    seats[3]["no_bet"] = True
    st = state_of("4th", seats, machine="hand_fourth_betting")
    st["first_to_act_unknown"] = True
    sink.handle(DisplayUpdate(st))
    sink.handle(Alert("house-16.15", "two burns: the top burn goes to the first player", street="4th",
                      moves=("burn 4th -> seat 1 up",)))
    wait_version(page, 2)
    assert "ABSENT" in page.locator(".seat[data-seat='2']").inner_text()
    assert "absent" in (page.locator(".seat[data-seat='2']").get_attribute("class") or "")
    assert "MAY NOT BET" in page.locator(".seat[data-seat='4']").inner_text()
    assert "MAY NOT BET" not in page.locator(".seat[data-seat='1']").inner_text()
    assert page.locator("#first-unknown").is_visible() and "floor" in page.inner_text("#first-unknown")
    assert page.locator(".alert .moves li").all_inner_texts() == ["Move burn 4th \u2192 seat 1 up"]
    assert page.locator("button[data-action='betting-complete']").get_attribute("class").find("hot") >= 0
    assert page.locator("button[data-action='cut-done']").is_hidden()
    st2 = state_of("4th", seats, machine="hand_fourth_cut")
    sink.handle(DisplayUpdate(st2))
    wait_version(page, 3)
    assert page.locator("button[data-action='cut-done']").is_visible()
    assert page.locator("#first-unknown").is_hidden()


def _eight_seats(street: str, machine: str, *, cards: int) -> dict[str, Any]:
    """A state of 8 seats with ``cards`` upcards each (from a fixed list, no downcards)."""
    from display_feed import state as state_of

    ranks = "23456789TJQKA"
    seats = []
    for n in range(1, 9):
        up = [ranks[(n + k) % 13] + "cdhs"[k % 4] for k in range(cards)]
        seats.append({"seat": n, "status": "live", "up": up, "down_count": 3 if street == "7th" else 2,
                      "bring_in": n == 4, "first_to_act": n == 5, "open_pair": False})
    st = state_of(street, seats, machine=machine, stub=1, required=10, forecast="7th")
    st["stub"]["drawn"] = 45
    return st


def _boxes(page: Any) -> dict[str, Any]:
    return dict(page.evaluate("""() => {
      const r = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
      return {header: r(document.querySelector('#instruction')), footer: r(document.querySelector('footer')),
              seats: [...document.querySelectorAll('.seat')].map(r),
              buttons: [...document.querySelectorAll('footer button')].filter((b) => !b.hidden).map(r),
              w: innerWidth, h: innerHeight};
    }"""))


def test_layout_at_the_minimum_screen_size(page: Any, sink: DisplaySink) -> None:
    """1024x600: a long scramble instruction keeps the header's height (a headline, the machine's
    words smaller below), seven repeated alerts merge into one band (x7), the seat boxes stay
    above the button bar and every flow button is on the screen."""
    from shoe_ctl.events import Instruction, Signal

    sink.handle(DisplayUpdate(_eight_seats("6th", "hand_sixth_deal", cards=3)))
    sink.handle(Instruction(Signal.DEAL, "Deal up to seat 3 (6th)", seat=3, face="up", street="6th", card_no=46))
    sink.handle(DisplayUpdate({**_eight_seats("6th", "hand_sixth_deal", cards=3),
                               "instruction": {"signal": "deal", "text": "Deal up to seat 3 (6th)", "seat": 3,
                                               "face": "up"}}))
    wait_version(page, 3)
    expect(page.locator("#ins-text")).to_have_text("DEAL UP \u2192 seat 3")
    assert "card #46" in page.inner_text("#ins-detail")  # within the stub: drawn + 1
    assert page.locator(".bring-in").count() == 0  # BRING-IN is a 3rd-street mark
    assert page.inner_text(".meta").split("\n") == ["Hand 7", "Stud \u00b7 TDA rules", "6th street"]
    assert page.locator(".led-name").all_inner_texts() == ["green", "amber", "blue", "white", "red"]
    before = _boxes(page)
    gather = ("stub", "burn 4th", "burn 5th", "burn 6th")
    text = "Scramble: stub, burn 4th, burn 5th, burn 6th into a new stub (RP-10-H-C)"
    sink.handle(Instruction(Signal.SCRAMBLE, text, street="7th", cards=gather, card_no=52))
    st = _eight_seats("7th", "hand_seventh_scramble", cards=4)
    sink.handle(DisplayUpdate(st))
    for seq in range(1, 8):
        sink.handle(Alert("card-not-expected", f"read {seq}: a card left the shoe with no hand running",
                          latched=True))
    sink.handle(Alert("RP-10-H-C", "7th street: short stub (1 card, required 10): procedure C", street="7th"))
    sink.handle(Alert("sequence-gap", "the shoe lost events 7..8: cards may have left unreported; check the deal "
                      "and the stub", latched=True))
    wait_version(page, 3 + 2 + 9)
    expect(page.locator("#ins-text")).to_have_text("SCRAMBLE \u2192 new stub")
    assert text in page.inner_text("#ins-detail") and "card #" not in page.inner_text("#ins-detail")
    after = _boxes(page)
    assert after["header"] == before["header"]  # the table does not jump
    bands = page.locator(".alert")
    assert bands.count() == 3
    first = page.evaluate("""() => { const t = document.querySelector('.seat[data-seat="5"] .first');
      const b = t.getBoundingClientRect(), s = t.closest('.seat').getBoundingClientRect();
      return b.height > 0 && b.top >= s.top && b.bottom <= s.bottom; }""")
    assert first  # the FIRST TO ACT mark is inside its box, not cut off
    stray = page.locator(".alert[data-code='card-not-expected']")
    assert "latched" in (stray.get_attribute("class") or "") and stray.locator(".count").inner_text() == "\u00d77"
    info = page.locator(".alert[data-code='RP-10-H-C']")
    assert "info" in (info.get_attribute("class") or "") and info.locator("button").inner_text() == "OK"
    if os.environ.get("SHOE_CTL_SHOTS"):  # a folder to look at the page in
        page.screenshot(path=str(Path(os.environ["SHOE_CTL_SHOTS"]) / "display-1024x600.png"))
    footer_top = after["footer"][1]
    assert all(seat[3] <= footer_top + 0.5 for seat in after["seats"]), (after["seats"], footer_top)
    assert after["buttons"] and all(0 <= b[0] and b[2] <= after["w"] and b[3] <= after["h"] for b in after["buttons"])
    assert page.locator("button[data-action='scramble-done']").is_visible()
    assert page.locator("button[data-action='betting-complete']").is_hidden()
    # acknowledging the merged band acknowledges every alert in it
    stray.locator("button.ack").tap()
    stray.wait_for(state="detached", timeout=5000)
    state = json.loads(page.evaluate("fetch('/state').then(r => r.text())"))
    assert [a["code"] for a in state["alerts"]] == ["RP-10-H-C", "sequence-gap"]
    # at showdown the gauge is not red, no card number, no forecast
    sink.handle(Instruction(Signal.SHOWDOWN, "Showdown", card_no=54))
    sink.handle(DisplayUpdate({**_eight_seats("7th", "hand_showdown", cards=4), "street": None}))
    expect(page.locator("#ins-text")).to_have_text("SHOWDOWN")
    assert "card #" not in page.inner_text("#ins-detail")
    assert "short" not in (page.get_attribute("#gauge", "class") or "") and page.locator("#forecast").is_hidden()
    assert page.inner_text("#street") == "showdown"


def test_new_hand_sheet_deals_the_previous_seats_by_default(browser: Any) -> None:
    """Idle: the *New hand* button (and no *Betting complete*); its sheet offers the table's seats
    with the previous hand's chosen, the game and the rules; *Deal* posts ``new-hand``. Before any
    hand every table seat is chosen."""
    from display_feed import seat as seat_entry
    from display_feed import state as state_of

    posted: queue.Queue[Any] = queue.Queue()
    sink = start_display("127.0.0.1", 0, posted.put, table_seats=6)
    try:
        with live_page(browser, sink.url) as page:
            sink.handle(DisplayUpdate({**state_of("3rd", [], machine="idle", hand=None), "street": None}))
            new_hand = page.locator("#btn-new-hand")
            expect(new_hand).to_be_visible()
            assert page.locator("button[data-action='betting-complete']").is_hidden()
            new_hand.tap()
            seats = page.locator("#sheet button[data-seat]")
            assert seats.all_inner_texts() == ["1", "2", "3", "4", "5", "6"]
            assert page.locator("#sheet button[data-seat].on").count() == 6
            page.locator("#sheet-cancel").tap()
            previous = [seat_entry(n, [], smuggle=False) for n in (2, 3, 5)]
            sink.handle(DisplayUpdate({**state_of("3rd", previous, machine="idle", hand=4), "street": None,
                                       "rules": "house", "game": "razz"}))
            expect(page.locator("#hand")).to_have_text("No hand (last: 4)")  # the NO HAND screen names the last hand only
            new_hand.tap()
            assert page.locator("#sheet button[data-seat].on").all_inner_texts() == ["2", "3", "5"]
            assert page.locator("#sheet button[data-game].on").inner_text() == "Razz"
            assert page.locator("#sheet button[data-rules].on").inner_text() == "HOUSE rules"
            page.locator("#sheet button[data-option='seat-6']").tap()
            page.locator("#sheet button[data-option='game-stud']").tap()
            deal = page.locator("#sheet button[data-option='deal']")
            assert deal.inner_text() == "Deal seats 2, 3, 5, 6"
            deal.tap()
            assert posted.get(timeout=5) == DealerInput(DealerAction.NEW_HAND, None, {
                "seats": [2, 3, 5, 6], "game": "stud", "rules": "house", "ref": 1})
            sink.handle(DisplayUpdate(state_of("3rd", previous, machine="hand_third_deal", hand=5)))
            expect(new_hand).to_be_hidden()  # a hand is running
    finally:
        sink.close()


def test_buttons_do_nothing_until_the_page_is_live(browser: Any, sink: DisplaySink,
                                                   posted: queue.Queue[Any]) -> None:
    """Without the event stream the page is not live: every button is disabled."""
    context = browser.new_context(viewport={"width": 1024, "height": 600}, has_touch=True)
    try:
        page = context.new_page()
        page.route("**/events", lambda route: route.abort())
        page.goto(sink.url)
        page.wait_for_function("document.body.dataset.live === 'no'", timeout=5000)
        buttons = page.locator("footer button")
        assert buttons.count() > 10
        assert all(buttons.nth(i).is_disabled() for i in range(buttons.count()))
        assert page.inner_text("#conn") != "live"
        assert posted.empty()
    finally:
        context.close()
