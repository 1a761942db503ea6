"""A deck not shuffled, dealt by the simulated dealer through the virtual shoe on a pty and
``ShoeLink`` (docs/irregularities.md, *A deck not shuffled*): a factory-order deck is flagged by
its 8th card, a deck sorted by rank by its 9th, a shuffled deck not at all; the deal goes on and
the record equals the table."""

from __future__ import annotations

import random

from irregular_help import assert_table_matches, run

from hil.dealer import HandScript
from shoe_ctl.machine.deck_order import RANK_WINDOW, RANKS_CODE, RUNS_CODE, WINDOW
from shoe_ctl.rules.cards import Card

NEW_DECK = [Card.parse(r + s) for s, ranks in (("s", "A23456789TJQK"), ("d", "A23456789TJQK"),
                                                ("c", "KQJT98765432A"), ("h", "KQJT98765432A")) for r in ranks]
BY_RANK = [Card.parse(r + s) for r in "A23456789TJQK" for s in "hcsd"]


def test_a_factory_deck_is_flagged_a_shuffled_one_not_and_the_deal_goes_on_through_the_wire() -> None:
    shuffled = [Card(i) for i in range(52)]
    random.Random(8).shuffle(shuffled)
    scripts = [HandScript(seats=[1, 2, 3, 4], deck=list(d), name=n)
               for n, d in (("factory", NEW_DECK), ("shuffled", shuffled), ("by-rank", BY_RANK))]
    hands, _ = run(scripts, wire=True)
    assert len(hands) == 3
    factory, fresh, by_rank = hands
    [runs] = [a for a in factory.alerts if a.code == RUNS_CODE]
    assert runs.message.startswith(f"read {WINDOW}: ") and not runs.latched
    [ranks] = [a for a in by_rank.alerts if a.code == RANKS_CODE]
    assert f"the last {RANK_WINDOW} cards are in rank order" in ranks.message and not ranks.latched
    assert RUNS_CODE not in fresh.codes() and RANKS_CODE not in fresh.codes() and RUNS_CODE not in by_rank.codes()
    for e in hands:
        assert_table_matches(e)
