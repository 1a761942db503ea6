"""With no hand running the dealer display offers only what the machine takes then: in real
headless Chromium, fed the real machine's public state before the first hand, between hands and
in the 3rd-street betting, every button whose input needs a hand (``needs_hand`` in
shoe_ctl/input_spec.py) is disabled while idle and the machine refuses each of those inputs there,
changing nothing; mid-hand they are enabled again, but for those the machine refuses in its state
at that moment (a burn error on 3rd street), disabled likewise (docs/display.md, *Buttons*)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from browser import chromium, open_page
from rule_profiles import PROFILES

from shoe_ctl.display.server import start_display
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, DisplayUpdate
from shoe_ctl.input_spec import REFUSED_CODES, SPECS
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.inputs import accepting_states
from shoe_ctl.rules.cards import full_deck

SIZE = (1280, 800)


def before_any_hand() -> Dealing:
    m = Dealing(PROFILES)
    m.start()
    return m


def between_hands() -> Dealing:
    m = before_any_hand()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
    m.handle(DealerInput(DealerAction.MISDEAL, args={"confirm": True}))
    assert m.state == "idle" and m.hand is not None  # the last hand is still the machine's
    return m


def third_betting() -> Dealing:
    m = before_any_hand()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
    deck = full_deck()
    for seq in range(1, 10):
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    assert m.state == "hand_third_betting"
    return m


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def buttons(browser: Any, m: Dealing) -> dict[str, dict[str, bool]]:
    """The page's dealer buttons fed ``m``'s public state, a seat tapped: ``{action: {"shown",
    "enabled", "no_hand", "wrong_time"}}`` (``no_hand``: disabled because no hand is running;
    ``wrong_time``: because the machine refuses the input in its state now)."""
    s = start_display("127.0.0.1", 0, lambda _e: None)
    context, page = open_page(browser, s.url, SIZE)
    try:
        ins = m.instruction()
        s.handle(DisplayUpdate(m.public_state(ins)))
        s.handle(ins)
        page.wait_for_function("Number(document.body.dataset.version) >= 2", timeout=5000)
        page.wait_for_function("() => fetch('/inputs').then(() => true)")
        page.evaluate("() => { selected = 1; renderButtons(); }")  # as a tap on seat 1 does
        rows = page.evaluate("""() => [...document.querySelectorAll('.buttons button[data-action]')].map((b) =>
          [b.dataset.action, !b.hidden, !b.disabled, b.classList.contains('no-hand'),
           b.classList.contains('wrong-time')])""")
        return {a: {"shown": shown, "enabled": on, "no_hand": no_hand, "wrong_time": wrong}
                for a, shown, on, no_hand, wrong in rows}
    finally:
        context.close()
        s.close()


def _public(m: Dealing) -> str:
    st = m.public_state()
    st.pop("alerts")
    return json.dumps(st, sort_keys=True)


@pytest.mark.parametrize("make", [before_any_hand, between_hands], ids=["before-any-hand", "between-hands"])
def test_idle_offers_only_the_inputs_the_machine_takes(browser: Any, make: Callable[[], Dealing]) -> None:
    got = buttons(browser, make())
    assert got, "no dealer buttons on the page"
    needs_hand = {a for a in got if SPECS[DealerAction(a)].needs_hand}
    assert {"premature-done", "burn-error", "stub-mixed", "undo", "misdeal", "fold"} <= needs_hand
    assert {a for a, b in got.items() if b["no_hand"]} == needs_hand
    assert {a for a, b in got.items() if b["enabled"]} == {"new-hand"}
    assert [a for a, b in got.items() if b["enabled"] and b["shown"]] == ["new-hand"]
    for action in sorted(needs_hand):  # each one disabled here, the machine refuses
        m = make()
        before = _public(m)
        out = m.handle(DealerInput(DealerAction(action), 1))
        codes = [c.code for c in out if isinstance(c, Alert)]
        assert codes and set(codes) <= REFUSED_CODES, (action, codes)
        assert m.state == "idle" and _public(m) == before, action


def third_deal() -> Dealing:
    m = before_any_hand()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
    m.handle(CardRead(1, full_deck()[-1], "rfid", 1))
    assert m.state == "hand_third_deal"
    return m


def fourth_deal() -> Dealing:
    m = third_betting()
    m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
    assert m.state == "hand_fourth_deal"
    return m


def test_mid_hand_the_hand_inputs_are_offered(browser: Any) -> None:
    got = buttons(browser, third_betting())
    assert not any(b["no_hand"] for b in got.values())
    for action in ("premature-done", "stub-mixed", "undo", "misdeal", "fold", "all-in", "betting-complete"):
        assert got[action]["enabled"] and got[action]["shown"], action
    assert not got["new-hand"]["shown"]


@pytest.mark.parametrize("make", [third_deal, third_betting, fourth_deal])
def test_mid_hand_a_button_the_machine_would_refuse_now_is_disabled(browser: Any, make: Callable[[], Dealing]) -> None:
    """Each button disabled mid-hand is an input the machine refuses at that moment as wrong
    (``input-wrong-time``, nothing changed); each one enabled is one its state chart takes there."""
    m = make()
    got = buttons(browser, m)
    refused = {a for a in got if m.state not in accepting_states(DealerAction(a))}
    assert {a for a, b in got.items() if b["wrong_time"]} == refused
    assert {a for a, b in got.items() if not b["enabled"]} == refused
    assert ("burn-error" in refused) == (m.p.street == "3rd")  # a burn error is reported on 4th to 7th street
    assert ("premature-done" in refused) == m.state.endswith("_deal")  # premature cards: in a betting round
    for action in sorted(refused):
        m = make()
        before = _public(m)
        out = m.handle(DealerInput(DealerAction(action), 1))
        wrong = "undo-refused" if action == "undo" else "input-wrong-time"
        assert [c.code for c in out if isinstance(c, Alert)] == [wrong], action
        assert _public(m) == before, action
