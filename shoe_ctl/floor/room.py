"""The room map's model: each table as a tile in its pit, in floor words, coloured by what matters.

:func:`floor_words` says a table's machine state as the floor says it (``Dealing 5th``,
never ``hand_fifth_deal``); :func:`tile_status` is the tile's colour (dealing, betting, showdown,
between hands, STOP, tilt, silent, offline); :func:`tile` a table's tile (``shoe_ctl.floor.page.tiles``: those changed since a version, for
the page's updates); :func:`parse_pits` reads the room's layout
(``[[floor.pits]]``) with errors naming the file and the place. ``docs/floor.md``, "The room map".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shoe_ctl.config import ConfigError
from shoe_ctl.floor.severity import SEVERITIES
from shoe_ctl.floor.topics import NAME_RE
from shoe_ctl.machine.layout import street_of, sub_of
from shoe_ctl.release import TILT_CODE

__all__ = ["STATUSES", "Pit", "floor_words", "layout_json", "parse_pits", "tile", "tile_status"]

STATUSES = ("offline", "silent", "tilt", "stop", "dealing", "betting", "showdown", "idle")
"""A tile's colours, the first that applies wins (:func:`tile_status`)."""

TILT_CODES = frozenset({TILT_CODE})
"""Alerts that are a tilt: the table refuses every new hand until a technician clears it."""

_WORDS: Mapping[str, str] = {
    "idle": "Between hands",
    "attention": "Stopped: machine fault",
    "deal": "Dealing {street}",
    "betting": "Betting {street}",
    "aside": "Cards aside, {street}",
    "scramble": "Scrambling, {street}",
    "cut": "Cutting the stub, {street}",
    "reload": "Loading the stub, {street}",
    "reshuffle": "Premature cards, {street}",
    "showdown": "Showdown",
    "uncontested": "Won, no showdown",
}
"""The floor's words for each state of the chart, by its innermost name (one per kind of state;
the street is filled in): every state of ``shoe_ctl.machine.layout`` has words
(``tests/floor/test_floor_room.py``)."""

_STATUS_OF: Mapping[str, str] = {
    "idle": "idle", "attention": "stop", "deal": "dealing", "aside": "dealing", "scramble": "dealing",
    "cut": "dealing", "reload": "dealing", "reshuffle": "dealing", "betting": "betting",
    "showdown": "showdown", "uncontested": "showdown",
}

MAX_TILE_ALERTS = 1
"""Open alerts a tile lists (the most severe, newest first); the rest are counted (``+N``) and in the detail."""

MAX_PITS = 400
MAX_PIT_SIDE = 60
MAX_PIT_NAME = 40
MAX_PLACED = 10_000
"""Tables placed in the whole room at most (the largest rooms have 1,700)."""


def floor_words(state: object) -> str:
    """A machine state in the floor's words (``"hand_fifth_deal"`` -> ``"Dealing 5th"``);
    ``""`` for no state, ``"In a hand"`` / ``"Unknown state"`` for a state this floor's chart does
    not have (a table on other software)."""
    if not isinstance(state, str) or not state:
        return ""
    words = _WORDS.get(sub_of(state) if state.startswith("hand_") else state)
    if words is None:
        return "In a hand" if state.startswith("hand") else "Unknown state"
    street = street_of(state)
    if "{street}" in words:
        if street is None:
            return "In a hand"
        return words.format(street=street)
    return words


def _open(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [a for a in row.get("alerts") or () if isinstance(a, Mapping)]


def tile_status(row: Mapping[str, Any]) -> str:
    """A table's colour on the map (one of :data:`STATUSES`) from its row
    (``shoe_ctl.floor.consumer.TableView.public``): ``offline`` (its Will came, or never seen online),
    ``silent`` (an open ``table-silent`` alert), ``tilt`` (an open tilt alert), ``stop`` (an open
    latched or critical alert, or the machine stopped on a fault), else what the table is doing."""
    alerts = _open(row)
    if not row.get("online"):
        return "offline"
    codes = {a.get("code") for a in alerts}
    if "table-silent" in codes:
        return "silent"
    if codes & TILT_CODES:
        return "tilt"
    if any(a.get("latched") or a.get("severity") == "critical" for a in alerts):
        return "stop"
    state = row.get("state")
    if not isinstance(state, str) or not state:
        return "idle"
    sub = sub_of(state) if state.startswith("hand_") else state
    return _STATUS_OF.get(sub, "dealing" if state.startswith("hand") else "idle")


def tile(row: Mapping[str, Any]) -> dict[str, Any]:
    """A table's tile from its row: ``table``, ``status``, ``words``, ``hand``, ``street``,
    ``online``, ``stub`` (``{"count", "required", "short"}`` or None), ``alerts`` (at most
    :data:`MAX_TILE_ALERTS`, most severe first: ``id``, ``code``, ``severity``, ``message``,
    ``hand``, ``time_us``, ``count``, ``latched``), ``open`` (open alerts by severity), ``notice``
    (the newest routine alert, or None), ``version``. No card: the floor keeps none but the upcards
    of its state, and a tile shows none of them."""
    alerts = _open(row)
    stub = row.get("stub") if isinstance(row.get("stub"), Mapping) else None
    short = None
    if stub is not None:
        count, required = stub.get("count"), stub.get("required")
        short = {"count": count, "required": required,
                 "short": isinstance(count, int) and isinstance(required, int) and count < required}
    notices = row.get("notices") or []
    notice = notices[-1] if notices else None
    return {
        "table": row.get("table"), "status": tile_status(row), "words": floor_words(row.get("state")),
        "hand": row.get("hand"), "street": row.get("street"), "online": bool(row.get("online")),
        "stub": short,
        "alerts": [{k: a.get(k) for k in ("id", "code", "severity", "message", "hand", "time_us", "count", "latched")}
                   for a in alerts[:MAX_TILE_ALERTS]],
        "open": {s: sum(1 for a in alerts if a.get("severity") == s) for s in SEVERITIES},
        "notice": None if notice is None else {k: notice.get(k) for k in ("code", "message", "hand", "time_us")},
        "version": row.get("version", 0),
    }


@dataclass(frozen=True, slots=True)
class Pit:
    """A pit of the room: its ``name`` and its tables' places, row by row (``None``: an empty place)."""

    name: str
    rows: tuple[tuple[str | None, ...], ...]

    def places(self) -> Iterable[tuple[str, int, int]]:
        """``(table, row, column)`` of each table, 1-based."""
        for r, row in enumerate(self.rows, 1):
            for c, name in enumerate(row, 1):
                if name is not None:
                    yield name, r, c


def parse_pits(src: str, data: object) -> tuple[Pit, ...]:
    """``[[floor.pits]]`` (``data``: a list of tables ``{name, rows}``; ``rows`` a list of rows, each
    a list of table names, ``""`` for an empty place) from file ``src``, checked.

    :raises ConfigError: naming ``src`` and the place (``floor.pits[2].rows[0][3]``): not a list, a
        pit without a name or with one used twice, a row of another shape, a name that cannot be a
        table's (``NAME_RE``), a table placed twice (both places named), more than :data:`MAX_PITS`
        pits, :data:`MAX_PIT_SIDE` rows or places in a row, or :data:`MAX_PLACED` tables.
    """
    if not isinstance(data, list):
        raise ConfigError(src, "floor.pits", f"{_short(data)} is not a list of pits", "[[floor.pits]] tables")
    if len(data) > MAX_PITS:
        raise ConfigError(src, "floor.pits", f"{len(data)} pits", f"at most {MAX_PITS}")
    pits: list[Pit] = []
    seen_pits: set[str] = set()
    placed: dict[str, str] = {}
    for i, pit in enumerate(data):
        key = f"floor.pits[{i}]"
        if not isinstance(pit, Mapping):
            raise ConfigError(src, key, f"{_short(pit)} is not a table", "name = TEXT, rows = [[TABLE, ...], ...]")
        unknown = sorted(set(pit) - {"name", "rows"})
        if unknown:
            raise ConfigError(src, f"{key}.{unknown[0]}", "unknown key", "keys name, rows")
        name = pit.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_PIT_NAME or not name.isprintable():
            raise ConfigError(src, f"{key}.name", f"{_short(name)} is no pit name",
                              f"1-{MAX_PIT_NAME} printable characters")
        if name in seen_pits:
            raise ConfigError(src, f"{key}.name", f"{name!r} names two pits", "a name of its own for each pit")
        seen_pits.add(name)
        rows = pit.get("rows")
        if not isinstance(rows, list) or not rows or len(rows) > MAX_PIT_SIDE:
            raise ConfigError(src, f"{key}.rows", f"{_short(rows)} is not a list of 1-{MAX_PIT_SIDE} rows",
                              'rows = [["t1", "t2"], ["t3", ""]]')
        out_rows: list[tuple[str | None, ...]] = []
        for r, row in enumerate(rows):
            if not isinstance(row, list) or not row or len(row) > MAX_PIT_SIDE:
                raise ConfigError(src, f"{key}.rows[{r}]", f"{_short(row)} is not a list of 1-{MAX_PIT_SIDE} places",
                                  'a list of table names, "" for an empty place')
            places: list[str | None] = []
            for c, table in enumerate(row):
                where = f"{key}.rows[{r}][{c}]"
                if table == "":
                    places.append(None)
                    continue
                if not isinstance(table, str) or not NAME_RE.match(table):
                    raise ConfigError(src, where, f"{_short(table)} cannot be a table's name",
                                      '1-64 letters, digits, "_", ".", "-" (the table\'s broker user), or ""')
                if table in placed:
                    raise ConfigError(src, where, f"table {table!r} is placed twice (also at {placed[table]})",
                                      "each table in one place")
                if len(placed) >= MAX_PLACED:
                    raise ConfigError(src, where, f"more than {MAX_PLACED} tables placed", f"at most {MAX_PLACED}")
                placed[table] = where
                places.append(table)
            out_rows.append(tuple(places))
        pits.append(Pit(name, tuple(out_rows)))
    return tuple(pits)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def layout_json(pits: Sequence[Pit]) -> dict[str, Any]:
    """The room's layout for the page: ``{"pits": [{"name", "rows", "columns", "places":
    {table: [row, column]}}]}``; tables in no pit are drawn after them, by name."""
    return {"pits": [{"name": p.name, "rows": len(p.rows), "columns": max(len(r) for r in p.rows),
                      "places": {t: [r, c] for t, r, c in p.places()}} for p in pits]}
