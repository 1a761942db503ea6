"""False alarms of the deck-order checks (``shoe_ctl.machine.deck_order``; docs/irregularities.md,
*A deck not shuffled*) on shuffled decks: measured, and bounded by counting.

Run: .venv/bin/python bench/bench_deck_order.py [--decks N] [--seed S] [--max-seconds T]
(N default 1,000,000; pure Python, about two minutes per million decks on one core; the run stops
after T seconds, default 3,600, and says how many decks it dealt; nothing asserted)

Prints the decks the runs check and the ranks check flag (their windows over all 52 cards, as the
machine reads them) and either, the highest count of linked neighbour pairs in any 8-card window
(a histogram: the tail the threshold cuts), the mean links per deck against its exact value
51 * 2/51 = 2, the 95 % upper bound on the rate from the count measured, and the union bounds by
counting (:func:`union_bound`, :func:`rank_union_bound`), which hold for any number of decks.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from itertools import product
from math import perm

from shoe_ctl.machine.deck_order import (
    RANK_SAME,
    RANK_WINDOW,
    THRESHOLD,
    WINDOW,
    flagged_at,
    links,
    rank_flagged_at,
)

CARDS = 52


def _paths(cards: int) -> int:
    """Ordered runs of ``cards`` distinct cards, each of one suit and next in rank to the one
    before (ace next to king and deuce): any first card; then one of two directions, after which
    a run on the 13-rank circle cannot turn back (the card before is taken)."""
    return CARDS if cards == 1 else 2 * CARDS


def union_bound() -> float:
    """Upper bound on the probability that a uniformly shuffled deck is flagged anywhere.

    A window of :data:`WINDOW` cards is flagged when :data:`THRESHOLD` (= ``WINDOW - 2``) or more
    of its ``WINDOW - 1`` pairs are linked: all linked (one run of ``WINDOW`` cards) or one pair
    unlinked, at ``a`` (a run of ``a`` cards then one of ``WINDOW - a``); the ordered card tuples
    that do are at most the sum of those counts, each at the window's places with probability
    ``1 / (52 * 51 * ... )``. The deck's ``52 - WINDOW + 1`` windows are summed over."""
    assert THRESHOLD == WINDOW - 2, "the count below is for one unlinked pair at most"
    tuples = _paths(WINDOW) + sum(_paths(a) * _paths(WINDOW - a) for a in range(1, WINDOW))
    return (CARDS - WINDOW + 1) * tuples / perm(CARDS, WINDOW)


def rank_union_bound() -> float:
    """Upper bound on the probability that a uniformly shuffled deck is flagged by the ranks check
    anywhere: the ordered tuples of :data:`RANK_WINDOW` distinct cards whose neighbour pairs are
    all of one rank or next ranks with :data:`RANK_SAME` or more of one rank, counted by walking
    every rank sequence of steps 0, +1, -1 on the 13-rank circle and giving each rank's cards
    their suits in ``4 * 3 * ...`` ways; times the deck's ``52 - RANK_WINDOW + 1`` windows, over
    ``52 * 51 * ...``."""
    tuples = 0
    for first in range(13):
        for steps in product((0, 1, -1), repeat=RANK_WINDOW - 1):
            if steps.count(0) < RANK_SAME:
                continue
            ranks = [first]
            for step in steps:
                ranks.append((ranks[-1] + step) % 13)
            ways = 1
            for n in Counter(ranks).values():
                ways *= perm(4, n) if n <= 4 else 0
            tuples += ways
    return (CARDS - RANK_WINDOW + 1) * tuples / perm(CARDS, RANK_WINDOW)


def _upper95(count: int, decks: int) -> float:
    """Poisson 95 % upper limit on a rate for ``count`` seen (0 -> 3.0, 1 -> 4.74, 2 -> 6.30)."""
    return {0: 3.0, 1: 4.74, 2: 6.30}.get(count, count + 2 * count ** 0.5 + 2) / max(1, decks)


def measure(decks: int, seed: int, max_seconds: float = 3600.0) -> dict[str, object]:
    rng = random.Random(seed)
    linked = bytearray(CARDS * CARDS)
    for a in range(CARDS):
        for b in range(CARDS):
            linked[a * CARDS + b] = links([a, b])
    deck = list(range(CARDS))
    same_rank = bytearray(1 if a // 4 == b // 4 else 0 for a in range(CARDS) for b in range(CARDS))
    flagged = ranked = either = 0
    total = 0
    most = [0] * WINDOW  # decks by their best window's linked pairs
    started = time.perf_counter()
    dealt = 0
    for dealt in range(1, decks + 1):
        if dealt % 10_000 == 0 and time.perf_counter() - started > max_seconds:
            break
        rng.shuffle(deck)
        pairs = [linked[a * CARDS + b] for a, b in zip(deck, deck[1:], strict=False)]
        n = sum(pairs)
        total += n
        best = 0
        if n:
            run = sum(pairs[:WINDOW - 1])
            best = run
            for i in range(WINDOW - 1, len(pairs)):
                run += pairs[i] - pairs[i - WINDOW + 1]
                best = max(best, run)
        most[best] += 1
        runs = best >= THRESHOLD and bool(flagged_at(list[int | None](deck)))
        # a ranks window needs RANK_SAME pairs of one rank: a deck with fewer in all is not looked at
        by_rank = (sum(same_rank[a * CARDS + b] for a, b in zip(deck, deck[1:], strict=False)) >= RANK_SAME
                   and bool(rank_flagged_at(list[int | None](deck))))
        flagged += runs
        ranked += by_rank
        either += runs or by_rank
    decks = dealt
    seconds = time.perf_counter() - started
    return {
        "decks": decks, "seed": seed, "flagged": flagged, "rate": flagged / decks,
        "rate_95_upper": _upper95(flagged, decks),
        "union_bound_per_deck": union_bound(),
        "ranks_flagged": ranked, "ranks_rate_95_upper": _upper95(ranked, decks),
        "ranks_union_bound_per_deck": rank_union_bound(),
        "either_flagged": either, "either_rate": either / decks, "either_rate_95_upper": _upper95(either, decks),
        "either_union_bound_per_deck": union_bound() + rank_union_bound(),
        "mean_links_per_deck": total / decks, "exact_mean_links": (CARDS - 1) * 2 / (CARDS - 1),
        "decks_by_best_window_links": {k: v for k, v in enumerate(most) if v},
        "seconds_loaded_machine": round(seconds, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decks", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--max-seconds", type=float, default=3600.0)
    args = ap.parse_args()
    print(json.dumps(measure(args.decks, args.seed, args.max_seconds), indent=2))


if __name__ == "__main__":
    main()
