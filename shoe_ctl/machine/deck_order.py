"""A deck that was not shuffled: runs of one suit in dealt order (a factory-order or stacked deck)
or cards in rank order (a deck sorted by rank), an information alert for the floor; described in
docs/irregularities.md, *A deck not shuffled*.
"""

from __future__ import annotations

from collections.abc import Sequence

from shoe_ctl.machine.link import AlertFn
from shoe_ctl.machine.reads import Read

__all__ = ["RANKS_CODE", "RANK_SAME", "RANK_WINDOW", "RUNS_CODE", "THRESHOLD", "WINDOW", "flagged_at", "links",
           "rank_flagged_at", "rank_pairs", "take"]

WINDOW = 8
"""Cards in the window looked at: a factory-order deck is flagged by its 8th card."""

THRESHOLD = 6
"""Neighbour pairs of one suit and next ranks, of the window's 7, that flag it."""

RUNS_CODE = "deck-order-runs-floor"
"""``-floor``: neither rule text has a clause for a deck not shuffled (TDA RP-10 and house
16.1-16.27 say nothing of a deck's order, nor of changing a deck), so the floor rules."""


RANK_WINDOW = 9
"""Cards in the window of the rank check: a deck sorted by rank is flagged by its 9th card."""

RANK_SAME = 6
"""Neighbour pairs of one rank, of the window's 8, that flag it when every other pair is of next
ranks (a rank-sorted window of 9 cards holds two changes of rank: 6 pairs of one rank)."""

RANKS_CODE = "deck-order-ranks-floor"
"""Cards dealt in rank order (``A A A A 2 2 2 2 ...``); ``-floor`` as :data:`RUNS_CODE`."""


def _linked(a: int, b: int) -> bool:
    """Card codes ``a``, ``b`` (``(rank - 2) * 4 + suit``) are of one suit and next ranks, the
    ace next to both the king and the deuce."""
    return a % 4 == b % 4 and (a // 4 - b // 4) % 13 in (1, 12)


def links(codes: Sequence[int | None]) -> int:
    """How many neighbour pairs of ``codes`` (card codes in dealt order, ``None`` unreadable) are
    of one suit and next ranks (ace next to king and deuce)."""
    return sum(1 for a, b in zip(codes, codes[1:], strict=False)
               if a is not None and b is not None and _linked(a, b))


def rank_pairs(codes: Sequence[int | None]) -> tuple[int, int]:
    """``(same, linked)``: how many neighbour pairs of ``codes`` are of one rank, and how many of
    one rank or next ranks (ace next to king and deuce), whatever the suits."""
    same = linked = 0
    for a, b in zip(codes, codes[1:], strict=False):
        if a is None or b is None:
            continue
        step = (a // 4 - b // 4) % 13
        same += step == 0
        linked += step in (0, 1, 12)
    return same, linked


def _rank_window_flags(codes: Sequence[int | None], end: int) -> bool:
    if end < RANK_WINDOW:
        return False
    same, linked = rank_pairs(codes[end - RANK_WINDOW:end])
    return same >= RANK_SAME and linked == RANK_WINDOW - 1


def rank_flagged_at(codes: Sequence[int | None]) -> list[int]:
    """The card counts (1-based) at which ``codes`` raise the ranks alert: each time the last
    :data:`RANK_WINDOW` cards' neighbour pairs are all of one rank or next ranks, :data:`RANK_SAME`
    or more of one rank, and the window one card earlier was not so."""
    return [end for end in range(RANK_WINDOW, len(codes) + 1)
            if _rank_window_flags(codes, end) and not _rank_window_flags(codes, end - 1)]


def _window_flags(codes: Sequence[int | None], end: int) -> bool:
    return end >= WINDOW and links(codes[end - WINDOW:end]) >= THRESHOLD


def flagged_at(codes: Sequence[int | None]) -> list[int]:
    """The card counts (1-based) at which ``codes``, dealt in that order, raise the runs alert:
    each time the last :data:`WINDOW` cards hold :data:`THRESHOLD` or more linked neighbour
    pairs and the window one card earlier did not."""
    return [end for end in range(WINDOW, len(codes) + 1)
            if _window_flags(codes, end) and not _window_flags(codes, end - 1)]


def take(reads: Sequence[Read], seq: int, alert: AlertFn) -> None:
    """After read ``seq``: when it is the hand's newest read, the runs alert if the last
    :data:`WINDOW` reads just became a flagged window (:func:`flagged_at`), the ranks alert if the
    last :data:`RANK_WINDOW` did (:func:`rank_flagged_at`). Information alerts naming no card (the
    floor decides; no rule text orders a deck changed). A function of the hand's reads alone, so a
    recovery's replay raises them again the same way."""
    if not reads or reads[-1].seq != seq:
        return
    n = len(reads)
    if n < WINDOW:
        return  # no window yet: neither check can flag fewer cards than its window
    runs = True
    if n > WINDOW:
        # a window becomes flagged only by its newest pair: unless that pair is of one or next ranks
        # (as every linked pair is), the new window is no more flagged than the one before it
        # (every card pays this check); the runs window, only by a linked newest pair
        last, before = reads[-1].card, reads[-2].card
        if last is None or before is None or (before.code // 4 - last.code // 4) % 13 not in (0, 1, 12):
            return
        runs = _linked(before.code, last.code)
        if not runs:
            # the ranks window is flagged only with every one of its pairs of one or next ranks:
            # the pair before the newest too (the runs window cannot be flagged by this read)
            prior = reads[-3].card
            if prior is None or (prior.code // 4 - before.code // 4) % 13 not in (0, 1, 12):
                return
    codes = [r.card.code if r.card is not None else None for r in reads[-max(WINDOW, RANK_WINDOW) - 1:]]
    if runs and _window_flags(codes, len(codes)) and not _window_flags(codes, len(codes) - 1):
        alert(RUNS_CODE, f"read {seq}: {links(codes[-WINDOW:])} of the last {WINDOW - 1} neighbour cards are of one "
              "suit and next in rank: the deck may not have been shuffled (factory order or stacked). Call the "
              "floor: no rule text covers it; the floor decides whether the hand goes on and the deck is changed")
    if _rank_window_flags(codes, len(codes)) and not _rank_window_flags(codes, len(codes) - 1):
        alert(RANKS_CODE, f"read {seq}: the last {RANK_WINDOW} cards are in rank order ({rank_pairs(codes[-RANK_WINDOW:])[0]} "
              f"of their {RANK_WINDOW - 1} neighbour pairs of one rank, the others of next ranks): the deck may have "
              "been sorted by rank and not shuffled. Call the floor: no rule text covers it; the floor decides "
              "whether the hand goes on and the deck is changed")
