"""False alarms of the deck-order check (``shoe_ctl.machine.deck_order``; docs/irregularities.md,
*A deck not shuffled*) on shuffled decks: measured, and bounded by counting.

Run: .venv/bin/python bench/bench_deck_order.py [--decks N] [--seed S]   (N default 1,000,000;
pure Python, about a minute per million decks on one core; nothing asserted)

Prints the decks the runs check flags (its windows over all 52 cards, as the machine reads them),
the highest count of linked neighbour pairs in any 8-card window (a histogram: the tail the
threshold cuts), the mean links per deck against its exact value 51 * 2/51 = 2, the 95 % upper
bound on the rate from the count measured, and the union bound by counting
(:func:`union_bound`), which holds for any number of decks.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from math import perm

from shoe_ctl.machine.deck_order import THRESHOLD, WINDOW, flagged_at, links

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


def measure(decks: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    linked = bytearray(CARDS * CARDS)
    for a in range(CARDS):
        for b in range(CARDS):
            linked[a * CARDS + b] = links([a, b])
    deck = list(range(CARDS))
    flagged = 0
    total = 0
    most = [0] * WINDOW  # decks by their best window's linked pairs
    started = time.perf_counter()
    for _ in range(decks):
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
        if best >= THRESHOLD and flagged_at(list[int | None](deck)):
            flagged += 1
    seconds = time.perf_counter() - started
    return {
        "decks": decks, "seed": seed, "flagged": flagged, "rate": flagged / decks,
        # Poisson 95 % upper limit on the rate for the count seen (0 -> 3.0, 1 -> 4.74, 2 -> 6.30)
        "rate_95_upper": {0: 3.0, 1: 4.74, 2: 6.30}.get(flagged, flagged + 2 * flagged ** 0.5 + 2) / decks,
        "union_bound_per_deck": union_bound(),
        "mean_links_per_deck": total / decks, "exact_mean_links": (CARDS - 1) * 2 / (CARDS - 1),
        "decks_by_best_window_links": {k: v for k, v in enumerate(most) if v},
        "seconds_loaded_machine": round(seconds, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decks", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    print(json.dumps(measure(args.decks, args.seed), indent=2))


if __name__ == "__main__":
    main()
