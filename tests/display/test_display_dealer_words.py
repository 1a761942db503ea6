"""What the dealer reads and lights for a start with no hand: a card pulled while no hand runs
stops the dealer in dealer's words, the short-stub alert counts its cards right, an all-in
showdown names the seats that expose first (RP-10-B), and the ``new-hand`` button re-deals the
previous hand's seats, game and rules."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from rule_profiles import PROFILES

from shoe_ctl.dealer_io import LastHand
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, DisplayUpdate, Instruction, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card


def test_a_card_pulled_with_no_hand_running_stops_the_dealer_in_plain_words() -> None:
    m = Dealing(PROFILES)
    m.start()
    assert m.instruction().signal is Signal.IDLE
    cmds = m.handle(CardRead(1, Card.parse("2c"), "rfid", 1))
    alerts = [c for c in cmds if isinstance(c, Alert)]
    assert [a.code for a in alerts] == ["card-not-expected"]
    text = alerts[0].message
    assert "no hand running" in text and "new hand" in text
    assert "state" not in text and "idle" not in text  # no machine words
    assert "2c" not in text  # names no card
    ins = [c for c in cmds if isinstance(c, Instruction)]
    assert ins and ins[-1].signal is Signal.STOP  # the LEDs say stop, not off
    cmds = m.handle(DealerInput(DealerAction.ACK_ALERT))
    assert [c.signal for c in cmds if isinstance(c, Instruction)] == [Signal.IDLE]
    cmds = m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    assert m.state != "idle" and not any(isinstance(c, Alert) for c in cmds)


def _short_stub_alerts(seats: list[int], folds_after_third: list[int], rules: str) -> list[str]:
    """Deal a hand to 7th street, folding ``folds_after_third`` on 3rd; the short-stub alerts."""
    m = Dealing(PROFILES, default_rules=rules)
    m.start()
    out: list[Any] = list(m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": seats})))
    deck = [Card(i) for i in range(52)]
    seq = 0
    for _ in range(200):
        sig = m.instruction().signal
        if sig in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY):
            seq += 1
            out += m.handle(CardRead(seq, deck.pop(), "rfid", seq))
        elif sig is Signal.BETTING:
            if m.p.street == "3rd":
                for s in folds_after_third:
                    out += m.handle(DealerInput(DealerAction.FOLD, s))
            out += m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
        elif sig is Signal.SCRAMBLE:
            out += m.handle(DealerInput(DealerAction.SCRAMBLE_DONE))
        elif sig is Signal.CUT:
            out += m.handle(DealerInput(DealerAction.CUT_DONE))
        else:
            break
    return [a.message for a in out if isinstance(a, Alert) and a.code.startswith(("RP-10-H", "house-16"))]


def test_short_stub_alert_counts_cards_in_words() -> None:
    texts = _short_stub_alerts([1, 2, 3, 4, 5, 6, 7, 8], [], "tda")
    assert texts, "8 players reach 7th street short"
    for t in texts:
        n = int(re.search(r"short stub \((\d+) card", t).group(1))  # type: ignore[union-attr]
        assert ("1 card," in t) == (n == 1) and ("1 cards" not in t)
        if n != 1:
            assert f"{n} cards," in t


def test_all_in_showdown_names_the_seats_that_expose_first() -> None:
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3], "all_in": [2]}))
    deck = [Card(i) for i in range(52)]
    seq = 0
    for _ in range(100):
        sig = m.instruction().signal
        if sig in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY):
            seq += 1
            m.handle(CardRead(seq, deck.pop(), "rfid", seq))
        elif sig is Signal.BETTING:
            m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
        else:
            break
    ins = m.instruction()
    assert ins.signal is Signal.SHOWDOWN
    assert "seats 1, 3 first" in ins.text and "not at risk expose first" in ins.text and "RP-10-B" in ins.text


def test_new_hand_button_repeats_the_previous_hand() -> None:
    """``LastHand`` follows the display updates; the ``new-hand`` button posts its seats (in
    player order), game and rules, or the configured table's before any hand."""
    last = LastHand(seats=[1, 2, 3, 4, 5, 6], game="stud", rules="tda")
    assert last.new_hand_args() == {"seats": [1, 2, 3, 4, 5, 6], "game": "stud", "rules": "tda"}
    last.handle(DisplayUpdate({"hand": None, "game": "razz", "rules": "house", "seats": []}))
    assert last.new_hand_args() == {"seats": [1, 2, 3, 4, 5, 6], "game": "razz", "rules": "house"}
    last.handle(DisplayUpdate({"hand": 3, "game": "stud8", "rules": "house",
                               "seats": [{"seat": 5, "status": "folded"}, {"seat": 7}, {"seat": 2}]}))
    last.handle(Instruction(Signal.IDLE, "Waiting"))  # other commands change nothing
    assert last.new_hand_args() == {"seats": [5, 7, 2], "game": "stud8", "rules": "house"}
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args=last.new_hand_args()))
    assert m.hand is not None and [s.seat for s in m.hand.seats] == [5, 7, 2]
    assert m.p.game.value == "stud8" and m.p.profile.name == "house"


def test_new_hand_button_on_mock_pins_posts_the_previous_hand(tmp_path: Path) -> None:
    from gpiozero.pins.mock import MockFactory

    from drivers.buttons import DealerButtons
    from shoe_ctl.config import load_table_config
    from shoe_ctl.dealer_io import start_dealer_io

    factory = MockFactory()
    posted: list[Any] = []
    with pytest.raises(ValueError, match="new-hand"):
        DealerButtons({"new-hand": 5}, posted.append, pin_factory=factory)
    f = tmp_path / "table.toml"
    f.write_text('seats = 6\ngame = "razz"\n[buttons.pins]\nnew-hand = 5\n[display]\nenabled = false\n')
    dio = start_dealer_io(load_table_config(f), posted.append, pin_factory=factory, env={})
    try:
        factory.pin(5).drive_low()  # before any hand: every table seat, the configured game
        factory.pin(5).drive_high()
        state = {"hand": 1, "game": "stud", "rules": "house", "seats": [{"seat": 2}, {"seat": 4}]}
        for sink in dio.sinks:
            sink.handle(DisplayUpdate(state))
        factory.pin(5).drive_low()
    finally:
        dio.close()
    assert posted == [
        DealerInput(DealerAction.NEW_HAND, None, {"seats": [1, 2, 3, 4, 5, 6], "game": "razz", "rules": "tda"}),
        DealerInput(DealerAction.NEW_HAND, None, {"seats": [2, 4], "game": "stud", "rules": "house"})]


def test_display_numbers_the_card_within_the_current_stub() -> None:
    """The model gives a deal/burn/community instruction ``stub_no`` (the stub's ``drawn`` + 1)
    from the update that carries it, and none to a scramble; ``table_seats`` is in the snapshot."""
    from shoe_ctl.display.model import DisplayModel

    model = DisplayModel(table_seats=6)
    base = {"hand": 1, "game": "stud", "rules": "tda", "state": "hand_seventh_deal", "street": "7th",
            "seats": [], "stub": {"count": 20, "required": 4, "forecast": None, "drawn": 2}}
    model.apply(Instruction(Signal.BURN, "Burn one card (7th)", street="7th", card_no=55))
    assert "stub_no" not in model.snapshot()["instruction"]  # its update is on its way
    model.apply(DisplayUpdate({**base, "instruction": {"signal": "burn", "text": "Burn one card (7th)",
                                                       "seat": None, "face": None}}))
    snap = model.snapshot()
    assert snap["instruction"]["stub_no"] == 3 and snap["instruction"]["card_no"] == 55
    assert snap["table_seats"] == 6
    model.apply(DisplayUpdate({**base, "state": "hand_seventh_scramble",
                               "instruction": {"signal": "scramble", "text": "Scramble", "seat": None,
                                               "face": None}}))
    assert "stub_no" not in model.snapshot()["instruction"]


def test_a_card_in_a_betting_round_is_named_in_dealer_words() -> None:
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    deck = [Card(i) for i in range(52)]
    seq = 0
    while m.instruction().signal is Signal.DEAL:
        seq += 1
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    assert m.instruction().signal is Signal.BETTING
    cmds = m.handle(CardRead(seq + 1, deck.pop(), "rfid", seq + 1))
    text = next(c.message for c in cmds if isinstance(c, Alert) and c.code == "card-not-expected")
    assert "while the betting on 3rd street was open" in text and "state" not in text and "_" not in text
