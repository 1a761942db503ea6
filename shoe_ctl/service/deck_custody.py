"""One gaming day of the table's decks from its journal: each deck received (``deck-enrol``), in
play (``StubDeck``: a hand dealt from it) and retired (``deck-retire``), with who signed, and the
day's balance ``issued = retired + in play``. Read by ``shoe-ctl report decks``; described in
docs/build-a-shoe.md, "Deck custody".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from shoe_ctl.service.gaming_day import GamingDay
from shoe_ctl.service.journal.records import Record

__all__ = ["Custody", "DeckDay", "custody"]


@dataclass
class DeckDay:
    """One deck on the day: ``enrolled``/``retired`` (ISO-8601 UTC) and who signed each (``None``
    when outside the journal), the hands dealt from it that day (first and last, and how many)."""

    deck: str
    enrolled: str | None = None
    enrolled_by: str | None = None
    retired: str | None = None
    retired_by: str | None = None
    hands: list[int] = field(default_factory=list)


@dataclass
class Custody:
    """The day's decks. ``opening``: live when the day began; ``received``: enrolled during it;
    ``retired``: retired during it; ``in_play``: live when it ended (deck ids, sorted).
    ``problems``: records that do not fit a deck's life (each naming its journal record)."""

    day: date
    decks: dict[str, DeckDay]
    opening: list[str]
    received: list[str]
    retired: list[str]
    in_play: list[str]
    problems: list[str]

    @property
    def issued(self) -> int:
        """Decks at the table during the day: live at its start plus received."""
        return len(self.opening) + len(self.received)

    @property
    def balanced(self) -> bool:
        """``issued == retired + in play``, and no record out of a deck's life."""
        return self.issued == len(self.retired) + len(self.in_play) and not self.problems


def _text(body: dict[str, object], key: str) -> str | None:
    value = body.get(key)
    return None if value is None else str(value)


def _when(text: object, rec: Record) -> datetime:
    if isinstance(text, str):
        try:
            return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except ValueError:
            pass
    return datetime.fromtimestamp(rec.time, UTC)


def custody(records: Iterable[Record], day: date, gaming_day: GamingDay | None = None) -> Custody:
    """The custody of every deck on gaming day ``day`` (``gaming_day``'s window: by default the
    UTC calendar day) from a journal's ``records`` in order; enrolment and retirement at the times their records give (else when journaled), a
    hand's deck at the time its ``StubDeck`` was journaled. A retirement of a deck not live, an
    enrolment of a deck already live, or a hand dealt from a deck not live is a problem named by
    its record, and the day does not balance."""
    start, end = (gaming_day or GamingDay()).window(day)
    live: dict[str, DeckDay] = {}
    seen: dict[str, DeckDay] = {}
    opening: list[str] = []
    received: list[str] = []
    retired: list[str] = []
    problems: list[str] = []
    opened = False
    for rec in records:
        if rec.kind not in ("deck-enrol", "deck-retire", "StubDeck"):
            continue
        if rec.kind == "StubDeck":
            item = rec.item
            deck, when = str(getattr(item, "deck", "")), datetime.fromtimestamp(rec.time, UTC)
            body: dict[str, object] = {}
        else:
            body = rec.data if isinstance(rec.data, dict) else {}
            deck = str(body.get("deck", ""))
            when = _when(body.get("enrolled" if rec.kind == "deck-enrol" else "retired"), rec)
        if when >= end:
            continue
        if not opened and when >= start:
            opening, opened = sorted(live), True
        today = when >= start
        where = f"journal record {rec.seq}"
        if rec.kind == "deck-enrol":
            if deck in live:
                problems.append(f"{where}: deck {deck} enrolled again while live")
                continue
            live[deck] = seen[deck] = DeckDay(deck, _text(body, "enrolled"), _text(body, "by"))
            if today:
                received.append(deck)
        elif rec.kind == "deck-retire":
            gone = live.pop(deck, None)
            if gone is None:
                problems.append(f"{where}: deck {deck} retired but not live")
                continue
            gone.retired, gone.retired_by = _text(body, "retired"), _text(body, "by")
            if today:
                retired.append(deck)
        elif deck not in live:
            if today:
                problems.append(f"{where}: hand {rec.hand} dealt from deck {deck}, which is not live")
        elif today and rec.hand is not None:
            live[deck].hands.append(rec.hand)
    if not opened:
        opening = sorted(live)
    shown = {d: seen[d] for d in sorted(set(opening) | set(received) | set(retired))}
    return Custody(day, shown, opening, sorted(received), sorted(retired), sorted(live), problems)
