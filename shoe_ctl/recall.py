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

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from shoe_ctl.embargo import CARD_TOKEN, REDACTED, Public
from shoe_ctl.events import Alert, DealerInput
from shoe_ctl.rules.cards import card_text
from shoe_ctl.service.journal.records import CommittedTail, Record
from shoe_ctl.users import user_of_source

__all__ = ["HIDDEN_ROLES", "MAX_ENTRIES", "RECALL_HANDS", "Recall", "public", "recall_hands"]

RECALL_HANDS = 10
"""Hands a recall shows (the last ones, the hand in progress included)."""
KEEP_COMMITTED = 2000
"""Records handed over by the journal's writer that a kept recall holds until its next call (more
than a hand's; past it the oldest are dropped and read from the journal)."""
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
    ``input`` — ``action``, ``seat``, ``by`` (the user who signed it, else the source), ``gate``
    when the controller's gate refused it (``role-refused``, ``tilt-refused``) or took it
    (``tilt-recheck``): the machine never saw it;
    ``alert`` — ``code``, ``message``, ``latched`` (every journaled alert: the machine's, the
    rulings and refusals, a tilt).

    :param make_machine: builds a machine for a rule profile name (``export.default_machine_factory``);
        its ``display`` is set False: the replay builds no public view nobody reads.
    """
    replay = _Replay(make_machine(profile), last)
    for rec in records(replay.begin(records)):
        replay.feed(rec)
    return replay.hands_now()


class Recall:
    """:func:`recall_hands` of one journal kept up to date: the first call replays the last hands
    as :func:`recall_hands` does, each later one only the records appended since the call before
    (the same machine goes on), so a recall at every hand's start and end costs the new records,
    not the last ten hands again. Thread-safe (the floor publisher and the display's recall both
    call it); each call returns its own copy of the hands. Given to the journal's commit listeners
    (``Journal.add_commit_listener(recall.committed)``), it replays the records each commit hands
    over instead of reading them back from the file while they follow the last one replayed; a call
    with nothing handed over since the last record replayed reads nothing (a commit still being
    handed over comes with the next call).

    :param records: ``Journal.records``.
    :param make_machine: builds a machine for a rule profile name (``display`` set False).
    :param profile: the journal's rule profile name, read at the first call.
    """

    def __init__(self, records: Callable[[int | None], Iterable[Any]], make_machine: Callable[[str], Any],
                 profile: Callable[[], str], last: int = RECALL_HANDS) -> None:
        self._records = records
        self._make_machine = make_machine
        self._profile = profile
        self._last = last
        self._lock = threading.Lock()
        self._replay: _Replay | None = None
        self._seq: int | None = None  # the last record fed to the replay
        self._committed = CommittedTail(KEEP_COMMITTED)
        self.replayed = 0
        """Records fed to the replay so far (every call's new ones)."""
        self.reads = 0
        """Reads of the journal (``records`` calls) so far."""

    def committed(self, records: Sequence[Record]) -> None:
        """A commit's records, handed over by the journal's writer (its thread; never blocks)."""
        self._committed.add(records)

    def __call__(self) -> list[dict[str, Any]]:
        """The last hands, as :func:`recall_hands` gives them.

        :raises Exception: what reading the journal or the replay raises; the next call starts
            the replay again from the journal.
        """
        with self._lock:
            replay = self._replay
            since = self._seq
            if replay is None:
                replay = _Replay(self._make_machine(self._profile()), self._last)
                since = replay.begin(self._read)
            self._replay = None  # kept again only once every new record went in
            fresh = self._committed.after(since) if since is not None else None
            for rec in fresh if fresh is not None else self._read(since):
                replay.feed(rec)
                since = rec.seq
                self.replayed += 1
            self._replay, self._seq = replay, since
            return replay.hands_now()

    def _read(self, since: int | None) -> Iterable[Any]:
        self.reads += 1
        return self._records(since)


class _Replay:
    """A machine fed the journal's records in order, and the hands it has seen (at most ``last``)."""

    def __init__(self, machine: Any, last: int) -> None:
        self.machine = machine
        machine.display = False  # the recall reads the reads and the hand, never the public view
        self.wanted = max(1, last)
        self.hands: deque[dict[str, Any]] = deque(maxlen=self.wanted)
        self.current: dict[str, Any] | None = None
        self.numbered = True

    def begin(self, records: Callable[[int | None], Iterable[Any]]) -> int | None:
        """Where the replay starts: before the first of the last hands (a first pass over every
        record finds where the hands start), None for the journal's start."""
        starts: deque[int] = deque(maxlen=self.wanted + 3)  # a margin for new hands that were refused
        for r in records(None):
            if r.kind == "DealerInput" and '"new-hand"' in r.body:
                starts.append(r.seq)
        return starts[0] - 1 if len(starts) == starts.maxlen else None

    def add(self, entry: dict[str, Any]) -> None:
        current = self.current
        if current is None:
            return
        if len(current["entries"]) < MAX_ENTRIES:
            current["entries"].append(entry)
        else:
            current["more"] += 1

    def hands_now(self) -> list[dict[str, Any]]:
        """The hands, each a copy (its entries are never changed once added)."""
        return [{**h, "entries": list(h["entries"])} for h in self.hands]

    def feed(self, rec: Any) -> None:
        """Take one journal record: the hand-start mark's number, an alert, or an event for the machine."""
        machine, current = self.machine, self.current
        if rec.kind == "hand-start" and current is not None and not self.numbered and rec.hand is not None:
            current["hand"] = rec.hand  # the journal's number (the mark follows the new-hand input)
            self.numbered = True
            return
        if rec.kind not in _EVENT_KINDS and rec.kind != "Alert":
            return
        try:
            item = rec.item
        except Exception:  # noqa: BLE001 - a damaged record is skipped, as the export does
            return
        t = _utc(rec.time_us)
        if isinstance(item, Alert):  # the record's alerts: the machine's and the service's (rulings, tilt)
            self.add({"t": t, "kind": "alert", "code": item.code, "message": item.message, "latched": item.latched})
            return
        if item is None:
            return
        before_no, before_reads = machine.hand_no, len(machine.reads)
        machine.handle(item)
        if machine.hand_no != before_no and machine.hand is not None:
            self.numbered = False
            current = self.current = {"hand": machine.hand_no, "game": machine.p.game.value,
                                      "rules": machine.p.profile.name, "seats": [s.seat for s in machine.hand.seats],
                                      "started": t, "finished": False, "entries": [], "more": 0}
            self.hands.append(current)
            before_reads = 0
        if isinstance(item, DealerInput):
            entry = {"t": t, "kind": "input", "action": item.action.value, "seat": item.seat,
                     "by": user_of_source(item.source) or item.source or ""}
            if item.gate:  # refused (or taken) by the controller's gate, before the machine
                entry["gate"] = item.gate
            self.add(entry)
            if current is not None and machine.state == "idle" and current["entries"]:
                current["finished"] = True
        for read in machine.reads[before_reads:]:
            self.add({"t": t, "kind": "card", "street": read.street, "role": read.role, "seat": read.seat,
                      "card": card_text(read.card)})


def public(hands: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``hands`` with every card not face up on the table written ``??`` (downcards, burns,
    cards set aside): the view of anyone at the table (the hole-card embargo). So is an upcard or
    community card read with the identity of a downcard read earlier in its hand (a misread or a
    second deck's card, ``duplicate-card``): its name would be the hole card's, and the display
    never shows it either (:func:`shoe_ctl.machine.views.masked_upcards`)."""
    out = []
    for h in hands:
        down: set[object] = set()
        entries = []
        for e in h.get("entries", []):
            if e.get("kind") == "card":
                role = e.get("role")
                if role == "down":
                    down.add(e.get("card"))
                if role in HIDDEN_ROLES or e.get("card") in down:
                    e = {**e, "card": REDACTED}
            entries.append(dict(e))
        # every other text (an alert's words: a shoe's fault detail is any text the shoe sends)
        # names only the hand's face-up cards, as the display's filter lets through
        shown = {e["card"] for e in entries if e.get("kind") == "card" and e.get("card") != REDACTED}
        keep = Public(shown)
        for e in entries:
            for key, value in e.items():
                if key != "card" and isinstance(value, str) and CARD_TOKEN.search(value):
                    e[key] = CARD_TOKEN.sub(keep, value)
        out.append({**h, "entries": entries})
    return out
