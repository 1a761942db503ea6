"""The shoe link's timers: their periods, and :class:`DeadlineTable`, the one schedule that says
both when the next timer is due and what runs when it is (``docs/protocol.md`` section 7).

A row is a pair of functions made once: ``due()``, the clock value (seconds) at which it next has
work (``inf``: none, ``-inf``: at once), and ``fire(now)``, the work. The session keeps one table
per phase of a connection (before and after the shoe's HELLO); nothing is made per frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

HELLO_INTERVAL = 0.25
"""Seconds between HOST_HELLOs until a HELLO arrives."""
SILENT_HELLO_INTERVAL = 1.0
"""Seconds between HOST_HELLOs while the shoe is silent after its HELLO."""
ACK_KEEPALIVE = 0.5
"""An ACK goes out at least this often (seconds), so the shoe knows a host listens."""
RESEND_HOLDOFF = 0.02
"""Seconds between two resend requests for the same ``want``."""
COMMAND_RETRY = 0.3
"""Seconds between repeats of an LED or RESET_COUNTER the shoe has not reported yet."""
MALFORMED_S = 1.0
"""Seconds a frame that broke v1 names the cause of a ``degraded`` status."""
ACK_MIN_GAP = 0.02
"""Seconds between two ACKs at least (docs/protocol.md section 1): what changes meanwhile (the
consumer's acks, ``want``, a resend request) goes out together in the next one."""
WANT_WAIT_S = 0.1
"""Seconds at most a ``want`` that moved (events received, none of them acked yet) waits for the
consumer's ack to go out in the same ACK (docs/protocol.md section 5): the ack follows the journal's
commit within milliseconds, so a card costs one ACK instead of two; a journal that does not commit
still lets the shoe know what arrived well before its 0.3 s resend timeout."""
SWITCH_GRACE_S = 1.0
"""Version 2: seconds a host that stops hearing the shoe keeps the session before it challenges
again (docs/protocol.md section 14, "Session switch"): what it sends meanwhile (the degraded LED
pattern) is sealed under the keys the shoe still holds, so the shoe shows it."""
STALL_S = 1.5
"""Seconds a hole in the event sequence may stay open (events held behind an event that does not
arrive whole, e.g. one that breaks v1 every time it is resent) before the status is ``degraded``:
the host does not hear the events the shoe sends."""


class Timer(NamedTuple):
    """One row of a :class:`DeadlineTable`: its ``name`` (for docs and tests), ``due()`` and
    ``fire(now)``."""

    name: str
    due: Callable[[], float]
    fire: Callable[[float], None]


class DeadlineTable:
    """Timers in the order they run: :meth:`next_deadline` is the earliest ``due()``;
    :meth:`run` fires, in order, every row due at ``now`` (each row's ``due()`` read just before
    it, so a row sees what the rows before it did)."""

    __slots__ = ("rows",)

    def __init__(self, rows: Sequence[Timer]) -> None:
        self.rows = tuple(rows)

    def next_deadline(self) -> float:
        """The clock value (seconds) of the earliest row; ``inf`` when no row has work."""
        soonest = math.inf
        for row in self.rows:
            when = row.due()
            if when < soonest:
                soonest = when
        return soonest

    def run(self, now: float) -> None:
        """Fire every row whose deadline has come at ``now``, in the table's order."""
        for row in self.rows:
            if now >= row.due():
                row.fire(now)
