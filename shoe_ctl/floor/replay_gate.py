"""When a floor's replay request makes the table's publisher publish its journal again: a request
the replay under way already covers is folded into it, one from further back (or one after a
replay) waits for a cooldown, so a floor user repeating ``{"from": 1}`` cannot keep a table
republishing its journal; the replay under way is taken further back at once, once (docs/floor.md,
"Replay requests"). No I/O, no clock of its own: the publisher passes the time.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["REPLAY_GAP_MAX_S", "REPLAY_GAP_S", "Asked", "ReplayGate"]

REPLAY_GAP_S = 3.0
"""The least time (seconds) between the end of one replay and the start of the next."""

REPLAY_GAP_MAX_S = 10.0
"""The cooldown after a replay is as long as that replay took, between :data:`REPLAY_GAP_S` and
this many seconds: a flood of requests keeps the table replaying at most about half the time."""


class Asked(Enum):
    """What became of one replay request (:meth:`ReplayGate.ask`)."""

    FOLDED = "folded"
    """Nothing more to do: its records are on their way (not yet published, in flight, or covered
    by the replay under way or by a request already waiting)."""
    DEFERRED = "deferred"
    """Kept (its sequence, or the lowest of those waiting) until the replay under way ends and the
    cooldown after it is over."""
    WANTED = "wanted"
    """Starts a replay at the publisher's next step, or takes the replay under way back to it (once
    a replay: a second floor, the central store, asking from before the first one's start)."""


class ReplayGate:
    """The replay requests of one table's publisher and the replay under way.

    A replay runs from its first sequence to the highest one published when it began (after it,
    the publisher is back to its usual stream). Sequences are journal sequences; times are
    monotonic seconds. :attr:`started` counts the replays begun, :attr:`folded` and
    :attr:`deferred` the requests that began none of their own.
    """

    def __init__(self, gap_s: float = REPLAY_GAP_S, gap_max_s: float = REPLAY_GAP_MAX_S) -> None:
        self.gap_s = gap_s
        self.gap_max_s = max(gap_s, gap_max_s)
        self.started = 0
        self.folded = 0
        self.deferred = 0
        self._from: int | None = None  # first sequence of the replay under way
        self._end = 0  # its last sequence
        self._began = 0.0
        self._open_at = float("-inf")  # no replay starts before this time
        self._wanted: int | None = None  # the lowest sequence asked for and not yet replayed
        self._widened = False  # the replay under way was taken further back already

    @property
    def under_way(self) -> bool:
        return self._from is not None

    def ask(self, seq: int, *, next_seq: int, in_flight: bool, now: float) -> Asked:
        """One request ``{"from": seq}``; ``next_seq`` is the next sequence the publisher will send,
        ``in_flight`` whether ``seq`` was published and is not yet acknowledged by the broker."""
        if seq >= next_seq or in_flight or (self._from is not None and seq >= self._from) or (
                self._wanted is not None and seq >= self._wanted):
            self.folded += 1
            return Asked.FOLDED
        self._wanted = seq
        if self._from is not None and not self._widened:
            return Asked.WANTED  # the replay under way goes back to it at the next step
        if self._from is not None or now < self._open_at:
            self.deferred += 1
            return Asked.DEFERRED
        return Asked.WANTED

    def take(self, *, next_seq: int, high: int, now: float) -> int | None:
        """At a step: the sequence to publish from again now, or ``None``. ``high`` is the highest
        sequence published so far (the replay's end)."""
        self.sent(next_seq, now)
        wanted = self._wanted
        widen = self._from is not None and not self._widened
        if wanted is None or (not widen and (self._from is not None or now < self._open_at)):
            return None
        self._wanted = None
        if wanted >= next_seq:
            return None  # published meanwhile
        start = max(wanted, 1)
        if widen:  # its cooldown counts from the first start: the replay's whole time
            self._widened = True
        else:
            self._began = now
        self._from, self._end = start, high
        self.started += 1
        return start

    def sent(self, next_seq: int, now: float) -> None:
        """After a step's publications: the replay under way ends once ``next_seq`` is past its
        end, and the cooldown begins."""
        if self._from is not None and next_seq > self._end:
            self._from = None
            self._widened = False
            self._open_at = now + min(self.gap_max_s, max(self.gap_s, now - self._began))

    def due(self) -> float | None:
        """When a waiting request may start (for a timed step), or ``None``: none waits, or the
        replay under way must end first or takes it at its next step (the publisher's steps for it
        come anyway)."""
        if self._wanted is None or self._from is not None:
            return None
        return self._open_at
