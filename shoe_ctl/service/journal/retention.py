"""Retention: bound the journal file by deleting finished hands older than ``retention_days``,
with the between-hands records and ``damaged`` rows of the same age and old copies of damaged
files. Never the unfinished hand, what recovery replays, the last shoe sequence or the last hand
number (kept in ``meta``). ``docs/journal.md`` ("Retention").
"""

from __future__ import annotations

from collections.abc import Callable

from shoe_ctl.service.journal.aside import prune_aside
from shoe_ctl.service.journal.records import OpenReport, raise_seq_floor
from shoe_ctl.service.journal.store import Store

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

    def prune(self, now: float | None = None) -> int:
        """Delete finished hands (and between-hands records) whose last record is older than the
        retention, as of ``now`` (seconds since the epoch; default the clock); see the module
        docstring for what always stays.

        :returns: the number of records deleted (0 when retention is off or the store read-only).
        """
        store = self.store
        if self.days <= 0 or store.readonly:
            return 0
        with store.lock:
            self.last_prune = self._clock()
            db = store.db()
            cutoff = int(((self._clock() if now is None else now) - self.days * 86400) * 1e6)
            keep_from = store.replay_start()
            old = [
                h.hand
                for h in store.hands(finished_only=True)
                if h.last_seq <= keep_from and int(round((h.ended or h.started) * 1e6)) < cutoff
            ]
            last_shoe = store.last_shoe_seq()
            top_hand = db.execute("SELECT max(hand) FROM records").fetchone()[0]
            db.execute("BEGIN IMMEDIATE")
            try:
                if last_shoe is not None:
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_shoe_seq', ?)", (str(last_shoe),))
                if top_hand is not None:
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_hand', ?)", (str(top_hand),))
                raise_seq_floor(db, store.next_seq - 1)
                n = 0
                for hand in old:
                    n += db.execute("DELETE FROM records WHERE hand = ?", (hand,)).rowcount
                n += db.execute(
                    "DELETE FROM records WHERE hand IS NULL AND time_us < ? AND seq <= ?", (cutoff, keep_from)
                ).rowcount
                db.execute("DELETE FROM damaged WHERE found_us < ?", (cutoff,))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            prune_aside(store.path, self.report, cutoff / 1e6)
            return n
