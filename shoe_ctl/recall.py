"""Recall of the last hands from the journal, card by card with times (docs/compliance.md,
"Recall").

The journal's events since shortly before the oldest hand wanted are replayed into a fresh
machine (the journal's promise: same events in, same state out, as :mod:`shoe_ctl.export` does),
so every read is placed where the table placed it. Each hand lists, in order and with the append
time: the cards (upcards and the community card by name; downcards, burns and cards set aside by
name only in the full view, for a floor or surveillance role), the dealer's inputs with who made
them (the user a decision was signed by), the alerts and rulings. :func:`public` makes the view
anyone at the table may see. Reading only: the journal is not changed.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from shoe_ctl.events import Alert, DealerInput
from shoe_ctl.rules.cards import card_text
from shoe_ctl.users import user_of_source

__all__ = ["HIDDEN_ROLES", "MAX_ENTRIES", "RECALL_HANDS", "public", "recall_hands"]

RECALL_HANDS = 10
"""Hands a recall shows (the last ones, the hand in progress included)."""
MAX_ENTRIES = 600
"""Entries kept per hand (a hand of eight players has about 120); later ones are counted only."""
HIDDEN_ROLES = frozenset({"down", "burn", "stray"})
"""Reads whose card the public recall does not name (face down on the table)."""
_EVENT_KINDS = frozenset({"CardRead", "DealerInput", "ShoeFault", "ForeignCard", "StubDeck", "LinkChanged", "TimerFired", "SequenceGap",
                          "CounterReset", "ShoeRestarted"})


def _utc(t_us: int) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(t_us / 1e6)) + f".{(t_us // 1000) % 1000:03d}Z"


def recall_hands(records: Callable[[int | None], Iterable[Any]], make_machine: Callable[[str], Any],
                 profile: str = "tda", last: int = RECALL_HANDS) -> list[dict[str, Any]]:
    """The last ``last`` hands of a journal, oldest first. ``records(since)`` gives the journal's
    records after sequence ``since`` (None: all), oldest first (``Journal.records``): a first pass
    finds where the hands start, the replay reads only from there.

    Each hand: ``hand`` (its number), ``game``, ``rules``, ``seats``, ``started`` (UTC text),
    ``finished`` (bool), ``entries`` and ``more`` (entries beyond :data:`MAX_ENTRIES`). An entry:
    ``t`` (UTC time of day, ms), ``kind`` and, by kind: ``card`` — ``street``, ``role``
    (``up``/``down``/``burn``/``community``/``stray``), ``seat``, ``card`` (``??`` unreadable);
    ``input`` — ``action``, ``seat``, ``by`` (the user who signed it, else the source);
    ``alert`` — ``code``, ``message``, ``latched`` (every journaled alert: the machine's, the
    rulings and refusals, a tilt).

    :param make_machine: builds a machine for a rule profile name (``export.default_machine_factory``).
    """
    wanted = max(1, last)
    starts: deque[int] = deque(maxlen=wanted + 3)  # a margin for new hands that were refused
    for r in records(None):
        if r.kind == "DealerInput" and '"new-hand"' in r.body:
            starts.append(r.seq)
    begin = starts[0] - 1 if len(starts) == starts.maxlen else None
    machine = make_machine(profile)
    hands: deque[dict[str, Any]] = deque(maxlen=wanted)
    current: dict[str, Any] | None = None

    def add(entry: dict[str, Any]) -> None:
        if current is None:
            return
        if len(current["entries"]) < MAX_ENTRIES:
            current["entries"].append(entry)
        else:
            current["more"] += 1

    numbered = True
    for rec in records(begin):
        if rec.kind == "hand-start" and current is not None and not numbered and rec.hand is not None:
            current["hand"] = rec.hand  # the journal's number (the mark follows the new-hand input)
            numbered = True
            continue
        if rec.kind not in _EVENT_KINDS and rec.kind != "Alert":
            continue
        try:
            item = rec.item
        except Exception:  # noqa: BLE001 - a damaged record is skipped, as the export does
            continue
        t = _utc(rec.time_us)
        if isinstance(item, Alert):  # the record's alerts: the machine's and the service's (rulings, tilt)
            add({"t": t, "kind": "alert", "code": item.code, "message": item.message, "latched": item.latched})
            continue
        if item is None:
            continue
        before_no, before_reads = machine.hand_no, len(machine.reads)
        cmds = machine.handle(item)
        if machine.hand_no != before_no and machine.hand is not None:
            numbered = False
            current = {"hand": machine.hand_no, "game": machine.p.game.value,
                       "rules": machine.p.profile.name, "seats": [s.seat for s in machine.hand.seats],
                       "started": t, "finished": False, "entries": [], "more": 0}
            hands.append(current)
            before_reads = 0
        if isinstance(item, DealerInput):
            add({"t": t, "kind": "input", "action": item.action.value, "seat": item.seat,
                 "by": user_of_source(item.source) or item.source or ""})
            if current is not None and machine.state == "idle" and current["entries"]:
                current["finished"] = True
        for read in machine.reads[before_reads:]:
            add({"t": t, "kind": "card", "street": read.street, "role": read.role, "seat": read.seat,
                 "card": card_text(read.card)})
        del cmds
    return list(hands)


def public(hands: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``hands`` with every card not face up on the table written ``??`` (downcards, burns,
    cards set aside): the view of anyone at the table (the hole-card embargo)."""
    out = []
    for h in hands:
        entries = [dict(e, card="??") if e.get("kind") == "card" and e.get("role") in HIDDEN_ROLES else dict(e)
                   for e in h.get("entries", [])]
        out.append({**h, "entries": entries})
    return out
