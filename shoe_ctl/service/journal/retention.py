"""Retention: bound the journal file by deleting finished hands older than ``retention_days``,
with the between-hands records and ``damaged`` rows of the same age and old copies of damaged
files. Never the unfinished hand, what recovery replays, the last shoe sequence or the last hand
number (kept in ``meta``). ``docs/journal.md`` ("Retention").
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from shoe_ctl.service.journal import chain
from shoe_ctl.service.journal.aside import prune_aside
from shoe_ctl.service.journal.records import OpenReport, raise_seq_floor
from shoe_ctl.service.journal.store import Store

CHUNK = 5000
"""Records deleted per transaction by a pruning."""

PRUNE_EVERY_S = 3600.0
"""A long-running service prunes at a hand's end when the last pruning is this old (seconds)."""


class Retention:
    """Prunes one store.

    :param store: the open journal's store.
    :param days: finished hands older than this many days are deleted; ``0`` or less keeps all.
    :param report: gets the copies of damaged files removed (``removed_aside``).
    :param clock: seconds since the epoch.
    """

    def __init__(self, store: Store, days: float, report: OpenReport, clock: Callable[[], float]) -> None:
        self.store = store
        self.days = days
        self.report = report
        self._clock = clock
        self.last_prune = clock()

    def due(self) -> bool:
        """True when retention is on and the last pruning is :data:`PRUNE_EVERY_S` old."""
        return self.days > 0 and self._clock() - self.last_prune >= PRUNE_EVERY_S

    def prune(self, now: float | None = None, stop: threading.Event | None = None) -> int:
        """Delete, as of ``now`` (seconds since the epoch; default the clock), every record up to
        the last ``hand-end`` whose time is older than the retention and that recovery no longer
        replays: the finished and abandoned hands before it and the between-hands records among
        them. The unfinished hand and anything after the last ``hand-end`` always stay; the last
        shoe sequence, the last hand number and the sequence floor are kept in ``meta`` first.

        Deletes in chunks of :data:`CHUNK` records, one short transaction each, so the writer
        (and the shoe's acks) never wait long behind a pruning; ``stop`` set ends it between
        chunks (what is left goes at the next pruning).

        :returns: the number of records deleted (0 when retention is off or the store read-only).
        """
        store = self.store
        if self.days <= 0 or store.readonly:
            return 0
        self.last_prune = self._clock()
        cutoff = int(((self._clock() if now is None else now) - self.days * 86400) * 1e6)
        with store.lock:
            db = store.db()
            keep_from = store.replay_start()
            # the partial index records_kind serves this (kind, seq); time_us is read per mark
            upto = db.execute("SELECT max(seq) FROM records WHERE kind = 'hand-end' AND seq <= ? AND time_us < ?",
                              (keep_from, cutoff)).fetchone()[0]
            last_shoe = store.last_shoe_seq()
            db.execute("BEGIN IMMEDIATE")
            try:
                if last_shoe is not None:
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_shoe_seq', ?)", (str(last_shoe),))
                if store.top_hand:
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_hand', ?)", (str(store.top_hand),))
                raise_seq_floor(db, store.next_seq - 1)
                if upto is not None and store.has_chain:
                    # the chain goes on from the last pruned record's link
                    kept = db.execute("SELECT c.hash, r.time_us FROM chain c JOIN records r ON r.seq = c.seq "
                                      "WHERE c.seq = ?", (upto,)).fetchone()
                    if kept:
                        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('chain_anchor', ?)",
                                   (chain.anchor_value(upto, bytes(kept[0]), int(kept[1])),))
                db.execute("DELETE FROM damaged WHERE found_us < ?", (cutoff,))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            low = db.execute("SELECT min(seq) FROM records").fetchone()[0]
        n = 0
        if upto is not None and low is not None:
            while low <= upto and not (stop is not None and stop.is_set()):
                high = min(low + CHUNK - 1, upto)
                with store.lock:
                    db = store.db()
                    db.execute("BEGIN IMMEDIATE")
                    try:
                        n += db.execute("DELETE FROM records WHERE seq BETWEEN ? AND ?", (low, high)).rowcount
                        if store.has_chain:
                            db.execute("DELETE FROM chain WHERE seq BETWEEN ? AND ?", (low, high))
                        db.execute("COMMIT")
                    except BaseException:
                        if db.in_transaction:
                            db.execute("ROLLBACK")
                        raise
                low = high + 1
        prune_aside(store.path, self.report, cutoff / 1e6)
        return n
