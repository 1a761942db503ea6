"""Speed of the stub decisions (shoe_ctl.rules.stub): plan_street runs at the start of every
street and again after any ruling; forecast_short after every fold.

Run: .venv/bin/python bench/bench_stub.py   (prints microseconds per call; nothing asserted)
"""

from __future__ import annotations

import timeit

from shoe_ctl.config import load_profile
from shoe_ctl.rules.cards import full_deck
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import STREETS, HandState
from shoe_ctl.rules.stub import forecast_short, plan_street


def dealt_through_6th(n: int, profile_name: str) -> HandState:
    profile = load_profile(profile_name)
    hand = HandState.new(Game.STUD, list(range(1, n + 1)))
    deck = full_deck()
    for st in STREETS[:4]:
        for step in plan_street(profile, hand, st).steps:
            hand.record(step, deck.pop() if step.pulls_card else None)
    return hand


def main() -> None:
    tda, house = load_profile("tda"), load_profile("house")
    fresh = HandState.new(Game.STUD, list(range(1, 9)))
    short = dealt_through_6th(8, "tda")
    cases = [
        ("plan_street 3rd, 8 players", lambda: plan_street(tda, fresh, "3rd"), 5000),
        ("plan_street 7th RP-10-H-C, 8 players", lambda: plan_street(tda, short, "7th"), 5000),
        ("plan_street 7th house-16.20, 8 players", lambda: plan_street(house, short, "7th"), 5000),
        ("forecast_short from the start, 8 players", lambda: forecast_short(tda, fresh), 500),
        ("HandState.copy, 8 players after 6th", short.copy, 2000),
    ]
    third = plan_street(tda, fresh, "3rd").steps
    five = HandState.new(Game.STUD, list(range(1, 6)))
    for step in plan_street(tda, five, "3rd").steps:
        five.record(step, None)
    cases.append(("forecast_short after 3rd, 5 players", lambda: forecast_short(tda, five), 5000))
    cases.append(("forecast_short 7th, 8 players (RP-10-H-C ahead)", lambda: forecast_short(tda, short), 5000))

    def record_third() -> None:
        h = HandState.new(Game.STUD, list(range(1, 9)))
        for step in third:
            h.record(step, None)

    cases.append(("HandState.record, per card (3rd street, 24 cards)", record_third, 2000))
    for name, fn, number in cases:
        us = timeit.timeit(fn, number=number) / number * 1e6
        if "per card" in name:
            us /= 24
        print(f"{name:50s} {us:10.1f} us")


if __name__ == "__main__":
    main()
