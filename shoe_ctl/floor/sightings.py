"""One tag at two tables in one gaming day: the floor's record of the keyed tag hashes each table
sends with its hands' ends, and the pairs of tables that sent the same one. Described in
docs/floor.md, "One tag at two tables".
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from shoe_ctl.service.gaming_day import GamingDay

__all__ = ["MAX_TAGS_PER_DAY", "TWO_TABLES_CODE", "Sighting", "TagSightings"]

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
