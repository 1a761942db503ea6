"""Card-step instructions are kept in a bounded table (shoe_ctl/machine/wording.py): a kept one is
the instruction worded afresh, and the table stops growing at its cap."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rule_profiles import PROFILES
from sinks import Collect

from hil.dealer import random_hands
from hil.replay import run_direct
from shoe_ctl.events import Signal
from shoe_ctl.machine import wording
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.stub import Step

STREETS = ("3rd", "4th", "5th", "6th", "7th")


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(["burn", "deal", "community", "scramble", "cut"]), index=st.integers(0, 7),
       face=st.sampled_from([None, "up", "down"]), street=st.sampled_from(STREETS), nxt=st.integers(1, 60))
def test_a_kept_instruction_is_the_one_worded_afresh(kind: str, index: int, face: str | None, street: str,
                                                     nxt: int) -> None:
    hand = HandState.new(Game.STUD, [2, 3, 5, 6, 7, 8, 9, 1])
    step = Step(kind, index if kind == "deal" else None, face, street=street)
    first = wording.step_instruction(hand, step, street, nxt)
    kept = wording.step_instruction(hand, step, street, nxt)
    saved = dict(wording._STEP_INSTRUCTIONS)
    wording._STEP_INSTRUCTIONS.clear()
    try:
        fresh = wording.step_instruction(hand, step, street, nxt)
    finally:
        wording._STEP_INSTRUCTIONS.clear()
        wording._STEP_INSTRUCTIONS.update(saved)
    assert first == kept == fresh
    if kind in ("scramble", "cut"):
        assert fresh is None
        return
    assert fresh is not None and fresh.card_no == nxt and fresh.street == street
    if kind == "deal":
        assert fresh.signal is Signal.DEAL and fresh.seat == hand.seats[index].seat and fresh.face == face


def test_the_table_stops_at_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wording, "_STEP_INSTRUCTIONS", {})
    monkeypatch.setattr(wording, "_STEP_INSTRUCTIONS_MAX", 10)
    hand = HandState.new(Game.STUD, [1, 2])
    step = Step("burn", street="4th")
    for nxt in range(1, 30):
        ins = wording.step_instruction(hand, step, "4th", nxt)
        assert ins is not None and ins.card_no == nxt  # beyond the cap: worded each time, right
    assert len(wording._STEP_INSTRUCTIONS) == 10


def test_a_kept_betting_instruction_is_the_one_worded_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded hands (folds, all-ins, showdowns; TDA and house) give the same commands with the
    betting rounds' instructions worded once and handed out again as worded at every event;
    handed out again, a betting instruction is the same value."""
    def commands(rules: str) -> list[object]:
        tape = Collect()
        run_direct(list(random_hands(7, count=30, rules=rules)), PROFILES, rules=rules, sinks=[tape])
        return tape.commands

    most = wording._STEP_INSTRUCTIONS_MAX
    for rules in ("tda", "house"):
        monkeypatch.setattr(wording, "_BETTING_INSTRUCTIONS", {})
        kept, again = commands(rules), commands(rules)
        assert kept == again
        betting = [c for c in again if getattr(c, "signal", None) is Signal.BETTING and c.text.startswith("Betting on ")]
        table = {id(ins) for ins in wording._BETTING_INSTRUCTIONS.values()}
        assert betting and all(id(c) in table for c in betting if c.ref is None)
        monkeypatch.setattr(wording, "_STEP_INSTRUCTIONS_MAX", 0)
        monkeypatch.setattr(wording, "_BETTING_INSTRUCTIONS", {})
        assert commands(rules) == kept and not wording._BETTING_INSTRUCTIONS
        monkeypatch.setattr(wording, "_STEP_INSTRUCTIONS_MAX", most)
