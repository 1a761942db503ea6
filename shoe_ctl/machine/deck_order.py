"""A deck that was not shuffled: runs of one suit in dealt order (a factory-order or stacked deck),
an information alert for the floor; described in docs/irregularities.md, *A deck not shuffled*.
"""

from __future__ import annotations

from collections.abc import Sequence

from shoe_ctl.machine.link import AlertFn
from shoe_ctl.machine.reads import Read

__all__ = ["RUNS_CODE", "THRESHOLD", "WINDOW", "flagged_at", "links", "take"]

WINDOW = 8
"""Cards in the window looked at: a factory-order deck is flagged by its 8th card."""

THRESHOLD = 6
"""Neighbour pairs of one suit and next ranks, of the window's 7, that flag it."""

RUNS_CODE = "deck-order-runs-floor"
"""``-floor``: neither rule text has a clause for a deck not shuffled (TDA RP-10 and house
16.1-16.27 say nothing of a deck's order, nor of changing a deck), so the floor rules."""


def _linked(a: int, b: int) -> bool:
    """Card codes ``a``, ``b`` (``(rank - 2) * 4 + suit``) are of one suit and next ranks, the
    ace next to both the king and the deuce."""
    return a % 4 == b % 4 and (a // 4 - b // 4) % 13 in (1, 12)


def links(codes: Sequence[int | None]) -> int:
    """How many neighbour pairs of ``codes`` (card codes in dealt order, ``None`` unreadable) are
    of one suit and next ranks (ace next to king and deuce)."""
    return sum(1 for a, b in zip(codes, codes[1:], strict=False)
               if a is not None and b is not None and _linked(a, b))


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
    :data:`WINDOW` reads just became a flagged window (:func:`flagged_at`). An information alert
    naming no card (the floor decides; no rule text orders a deck changed). A function of the
    hand's reads alone, so a recovery's replay raises it again the same way."""
    if not reads or reads[-1].seq != seq:
        return
    n = len(reads)
    if n > WINDOW:
        # a window becomes flagged only by its newest pair: unless that pair is linked, the new
        # window holds no more linked pairs than the one before it (every card pays this check)
        last, before = reads[-1].card, reads[-2].card
        if last is None or before is None or not _linked(before.code, last.code):
            return
    codes = [r.card.code if r.card is not None else None for r in reads[-WINDOW - 1:]]
    if _window_flags(codes, len(codes)) and not _window_flags(codes, len(codes) - 1):
        alert(RUNS_CODE, f"read {seq}: {links(codes[-WINDOW:])} of the last {WINDOW - 1} neighbour cards are of one "
              "suit and next in rank: the deck may not have been shuffled (factory order or stacked). Call the "
              "floor: no rule text covers it; the floor decides whether the hand goes on and the deck is changed")
