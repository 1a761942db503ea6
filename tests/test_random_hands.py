"""Seeded random hands in every game and both profiles, dealt directly into the machine by the
simulated dealer: every hand ends, every card lands where the dealer put it, the stub count is
what is physically left, and the only alerts are the short-stub clauses the rules core chose."""

from __future__ import annotations

import pytest

from hil.dealer import random_hands
from shoe_ctl.config import load_profile
from shoe_ctl.replay import run_direct
from shoe_ctl.rules.cards import card_text

PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}
CLAUSES = {"RP-10-H-A", "RP-10-H-B", "RP-10-H-C", "house-16.18", "house-16.19", "house-16.20"}


@pytest.mark.parametrize("game", ["stud", "stud8", "razz"])
@pytest.mark.parametrize("rules", ["tda", "house"])
def test_random_hands_deal_cleanly(game: str, rules: str) -> None:
    seed = ["stud", "stud8", "razz"].index(game) * 10 + ["tda", "house"].index(rules)
    hands = list(random_hands(seed, game=game, rules=rules, fold_rate=0.08, all_in_rate=0.03, count=40))
    recorder, dealer = run_direct(hands, PROFILES, rules=rules, seed=seed, auto_ack=False)
    assert dealer.stalled is None
    assert len(recorder.hands) == len(dealer.history) == 40
    procedures = set()
    for hand, picture in zip(recorder.hands, dealer.history, strict=True):
        assert set(hand.alerts) <= CLAUSES, hand.alerts
        assert hand.summary["game"] == game and hand.summary["rules"] == rules
        for seat, cards in hand.cards.items():
            physical = picture.seats[seat]
            assert cards["down"] == [card_text(c) for f, c in physical if f == "down"]
            assert cards["up"] == [card_text(c) for f, c in physical if f == "up"]
        assert hand.stub == len(picture.stub())
        if hand.summary["seventh"]:
            procedures.add(hand.summary["seventh"]["procedure"])
    assert len(procedures) >= 2  # short stubs do occur with eight seats and few folds
