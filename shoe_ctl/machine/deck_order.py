"""A deck that was not shuffled: runs of one suit in dealt order (a factory-order or stacked deck)
and a deck dealt in the same order as an earlier one (a keyed hash of its first cards). Two
information alerts for the floor; described in docs/irregularities.md, *A deck not shuffled*.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections import OrderedDict
from collections.abc import Sequence

from shoe_ctl.machine.link import AlertFn
from shoe_ctl.machine.reads import Read

__all__ = ["MAX_ORDERS", "PREFIX", "REPEAT_CODE", "RUNS_CODE", "THRESHOLD", "WINDOW", "DeckOrders",
           "flagged_at", "links", "take"]

WINDOW = 8
"""Cards in the window looked at: a factory-order deck is flagged by its 8th card."""

THRESHOLD = 6
"""Neighbour pairs of one suit and next ranks, of the window's 7, that flag it."""

PREFIX = 8
"""Cards of a deck's dealt order whose keyed hash is kept to find the same order again."""

MAX_ORDERS = 8192
"""Hashes kept (the oldest forgotten first): about two weeks of one table's decks."""

RUNS_CODE = "deck-order-runs-floor"
REPEAT_CODE = "deck-order-repeated-floor"
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


class DeckOrders:
    """The keyed hashes (HMAC-SHA256, a key drawn when made) of the first :data:`PREFIX` cards of
    the decks dealt, at most :data:`MAX_ORDERS`; never the cards.

    :param key: the HMAC key (bytes); a random 32-byte key when ``None``.
    """

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else os.urandom(32)
        self._seen: OrderedDict[bytes, int] = OrderedDict()
        self._count = 0

    def __len__(self) -> int:
        return len(self._seen)

    def seen(self, codes: Sequence[int]) -> int | None:
        """Remember the order ``codes`` (card codes, the first :data:`PREFIX` of a deck); the
        count of decks since the last one dealt in the same order (1: the deck before), else ``None``."""
        digest = hmac.new(self._key, bytes(codes), hashlib.sha256).digest()[:16]
        self._count += 1
        earlier = self._seen.pop(digest, None)
        self._seen[digest] = self._count
        if len(self._seen) > MAX_ORDERS:
            self._seen.popitem(last=False)
        return None if earlier is None else self._count - earlier


def take(reads: Sequence[Read], seq: int, orders: DeckOrders, alert: AlertFn) -> None:
    """After read ``seq``: when it is the hand's newest read, the runs alert if the last
    :data:`WINDOW` reads just became a flagged window (:func:`flagged_at`), and the repeat alert
    when it is the hand's :data:`PREFIX`-th read, all known, in an order :class:`DeckOrders` has
    seen. Both are information alerts naming no card (the floor decides; no rule text orders a
    deck changed)."""
    if not reads or reads[-1].seq != seq:
        return
    codes = [r.card.code if r.card is not None else None for r in reads[-WINDOW - 1:]]
    if _window_flags(codes, len(codes)) and not _window_flags(codes, len(codes) - 1):
        alert(RUNS_CODE, f"read {seq}: {links(codes[-WINDOW:])} of the last {WINDOW - 1} neighbour cards are of one "
              "suit and next in rank: the deck may not have been shuffled (factory order or stacked). Call the "
              "floor: no rule text covers it; the floor decides whether the hand goes on and the deck is changed")
    if len(reads) == PREFIX:
        first = [r.card.code for r in reads if r.card is not None]
        ago = orders.seen(first) if len(first) == PREFIX else None
        if ago is not None:
            alert(REPEAT_CODE, f"read {seq}: the first {PREFIX} cards came out in the same order as deck "
                  f"{ago} deck(s) ago: the deck may not have been shuffled. Call the floor: no "
                  "rule text covers it; the floor decides whether the hand goes on and the deck is changed")
