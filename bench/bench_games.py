"""Speed of the showing-hand decisions (shoe_ctl.rules.games), which run on every card dealt.

Run: .venv/bin/python bench/bench_games.py   (prints microseconds per call; nothing asserted)
"""

from __future__ import annotations

import timeit

from shoe_ctl.rules.cards import Card, parse_cards
from shoe_ctl.rules.games import Game, TieRule, bring_in, first_to_act

BOARDS = ["Kc7sJd3h", "9dTd5sQc", "QhQs4d2h", "2d9s7cKh", "5c5hTh8s", "JcKd6c9h", "7d3sKs8h", "TsJh7h9c"]


def per_call_us(fn: object, number: int) -> float:
    return timeit.timeit(fn, number=number) / number * 1e6  # type: ignore[arg-type]


def main() -> None:
    boards = [parse_cards(t) for t in BOARDS]
    flags = [True] * 8
    doors: list[Card | None] = [b[0] for b in boards]
    community = Card.parse("5d")
    one = [list(b) for b in boards]
    one[3][3] = None
    two = [list(b) for b in one]
    two[2][3] = None  # the best board unknown: every identity is tried
    cases = [
        ("bring_in, 8 players", lambda: bring_in(Game.STUD, doors), 20000),
        ("first_to_act, 8 players, 6th", lambda: first_to_act(Game.STUD, boards, flags, flags, TieRule.SUIT), 5000),
        (
            "first_to_act with community card",
            lambda: first_to_act(Game.STUD, boards, flags, flags, TieRule.SUIT, community),
            5000,
        ),
        ("first_to_act razz, 8 players", lambda: first_to_act(Game.RAZZ, boards, flags, flags, TieRule.SUIT), 5000),
        ("first_to_act, one unknown upcard", lambda: first_to_act(Game.STUD, one, flags, flags, TieRule.SUIT), 200),
        ("first_to_act, two unknown (worst case)", lambda: first_to_act(Game.STUD, two, flags, flags, TieRule.SUIT), 3),
    ]
    for name, fn, number in cases:
        print(f"{name:<42} {per_call_us(fn, number):10.1f} us")


if __name__ == "__main__":
    main()
