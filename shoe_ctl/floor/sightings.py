"""One tag at two tables in one gaming day, and a hand dealt in an earlier hand's order: the
floor's record of the keyed tag hashes and order fingerprints the tables send with their hands'
ends. Described in docs/floor.md, "One tag at two tables" and "A deck dealt again in the same
order".
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from shoe_ctl.service.gaming_day import GamingDay

__all__ = ["MAX_ORDERS_PER_DAY", "MAX_TAGS_PER_DAY", "REPEATED_ORDER_CODE", "TWO_TABLES_CODE", "OrderSightings",
           "Sighting", "TagSightings"]

REPEATED_ORDER_CODE = "deck-order-repeated-floor"
"""The floor's alert that a hand was dealt in the same order as an earlier one (its first cards):
the deck was not shuffled, or was stacked to an order known before. ``-floor`` as the table's
deck-order alerts."""

MAX_ORDERS_PER_DAY = 1_000_000
"""Order fingerprints remembered per gaming day; beyond, new ones are counted and not compared."""

TWO_TABLES_CODE = "tag-two-tables-floor"
"""The floor's alert that one tag was at two tables in one gaming day. ``-floor``: no rule text
speaks of it; the floor (surveillance) looks into it."""

MAX_TAGS_PER_DAY = 500_000
"""Tags remembered per gaming day (about 10,000 decks); beyond, new ones are counted in
:attr:`TagSightings.dropped` and not compared."""

DAYS_KEPT = 2
"""Gaming days remembered: the current one and the one before (a table's clock near the turn)."""

_HASH_RE = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True, slots=True)
class Sighting:
    """Tags this table sent that ``other`` sent first on ``day``: how many, the deck each table
    read them as (``""``: a card of no deck the table knows)."""

    day: date
    table: str
    deck: str
    other: str
    other_deck: str
    tags: int


class TagSightings:
    """Which table first sent each tag hash, per gaming day (:class:`GamingDay`); a pair of
    tables is found once per day."""

    def __init__(self, gaming_day: GamingDay | None = None) -> None:
        self.gaming_day = gaming_day or GamingDay()
        self.days: OrderedDict[date, dict[str, tuple[str, str]]] = OrderedDict()
        self.pairs: set[tuple[date, str, str]] = set()
        self.dropped = 0

    def seen(self, table: str, when: float, sent: Iterable[object]) -> list[Sighting]:
        """Take the ``seen`` list of a table's ``hand-end`` (each ``{"deck", "tags": [hash...]}``)
        sent at ``when`` (seconds since the epoch); the pairs with another table found for the
        first time that day."""
        day = self.gaming_day.day_of(when)
        tags = self.days.get(day)
        if tags is None:
            tags = self.days[day] = {}
            while len(self.days) > DAYS_KEPT:
                old, _ = self.days.popitem(last=False)
                self.pairs = {p for p in self.pairs if p[0] != old}
        shared: dict[tuple[str, str, str], int] = {}
        for entry in sent:
            if not isinstance(entry, dict) or not isinstance(entry.get("tags"), list):
                continue
            deck = entry["deck"][:64] if isinstance(entry.get("deck"), str) else ""
            for h in entry["tags"][:104]:
                if not isinstance(h, str) or not _HASH_RE.fullmatch(h):
                    continue
                first = tags.get(h)
                if first is None:
                    if len(tags) >= MAX_TAGS_PER_DAY:
                        self.dropped += 1
                    else:
                        tags[h] = (table, deck)
                elif first[0] != table:
                    key = (first[0], first[1], deck)
                    shared[key] = shared.get(key, 0) + 1
        found = []
        for (other, other_deck, deck), count in sorted(shared.items()):
            a, b = sorted((table, other))
            if (day, a, b) in self.pairs:
                continue
            self.pairs.add((day, a, b))
            found.append(Sighting(day, table, deck, other, other_deck, count))
        return found


class OrderSightings:
    """Which table and hand first sent each order fingerprint, per gaming day (the current and
    the one before)."""

    def __init__(self, gaming_day: GamingDay | None = None) -> None:
        self.gaming_day = gaming_day or GamingDay()
        self.days: OrderedDict[date, dict[str, tuple[str, int | None]]] = OrderedDict()
        self.dropped = 0

    def seen(self, table: str, hand: int | None, when: float, order: object) -> tuple[str, int | None] | None:
        """Take a ``hand-end``'s ``order`` fingerprint sent at ``when``; the ``(table, hand)`` that
        sent it first this gaming day or the one before, else ``None``."""
        if not isinstance(order, str) or not _HASH_RE.fullmatch(order):
            return None
        day = self.gaming_day.day_of(when)
        for old in [d for d in self.days if (day - d).days >= DAYS_KEPT]:
            del self.days[old]
        for known in self.days.values():
            first = known.get(order)
            if first is not None and first != (table, hand):
                return first
        orders = self.days.setdefault(day, {})
        while len(self.days) > DAYS_KEPT + 1:  # days out of order (a wrong clock): the oldest taken go
            self.days.popitem(last=False)
        if order not in orders:
            if len(orders) >= MAX_ORDERS_PER_DAY:
                self.dropped += 1
            else:
                orders[order] = (table, hand)
        return None
