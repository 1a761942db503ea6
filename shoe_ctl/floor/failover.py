"""Two or more brokers: the floor's own online state on each broker and a table's choice of broker
(Eclipse Sparkplug's primary-host pattern, ``docs/floor.md`` "Two brokers").

The floor consumer publishes ``<room>/hosts/<host id>`` (retained, QoS 1) on every broker it is
connected to: ``{"online": true, "timestamp": ms}`` at each connection, with a Last Will
``{"online": false, "timestamp": ms}`` of the same timestamp, and ``online: false`` itself at a
clean stop. A table with more than one broker (:class:`BrokerChoice`) reads that topic on the
broker it is connected to and moves to the next broker of its list when the floor says offline
there, when no online state came within :data:`HOST_WAIT_S` of connecting, or when the connection
is lost or refused. The journal replay fills whatever the move left out.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from typing import Any

from shoe_ctl.floor.topics import check_name, dumps

__all__ = ["HOST_WAIT_S", "ROUND_PAUSE_S", "BrokerChoice", "host_state", "host_topic", "parse_host_state"]

HOST_WAIT_S = 3.0
"""A table connected to a broker on which no online state of the floor arrived within this many
seconds moves on (the retained state comes right after the subscription when the floor is there)."""

ROUND_PAUSE_S = 30.0
"""After a whole round of the list without finding the floor online, a table stays where it is
(publishing: the floor's persistent session there keeps what it sends) and tries the next broker
only this many seconds later."""


def host_topic(room: str, host_id: str) -> str:
    """``<room>/hosts/<host id>``: the floor's online state on one broker.

    :raises ValueError: a room or host id that is not a topic level.
    """
    return f"{check_name('room', room)}/hosts/{check_name('floor host id', host_id)}"


def host_state(online: bool, timestamp_ms: int) -> bytes:
    """The payload ``{"online": bool, "timestamp": ms}`` (the birth and its Will share the timestamp)."""
    return dumps({"online": bool(online), "timestamp": int(timestamp_ms)})


def parse_host_state(payload: bytes | bytearray) -> tuple[bool, int] | None:
    """``(online, timestamp_ms)`` of a host state, or ``None`` for anything else."""
    try:
        data = json.loads(bytes(payload[:1024]))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    online, stamp = data.get("online"), data.get("timestamp")
    if not isinstance(online, bool) or not isinstance(stamp, int) or isinstance(stamp, bool) or not 0 <= stamp < 2**63:
        return None
    return online, stamp


class BrokerChoice:
    """The table's side of the primary-host pattern: which broker it uses and when it moves.

    :param brokers: ``(host, port)`` of each broker, in order of preference (at least two).
    :param wait_s: see :data:`HOST_WAIT_S`; :param pause_s: see :data:`ROUND_PAUSE_S`.

    Called from paho's network thread (:meth:`connected`, :meth:`lost`, :meth:`take_state`) and
    the publisher's thread (:meth:`due`); a lock keeps them apart. Counters for tests and the
    ``hil`` tools: :attr:`moves`, :attr:`attempts` (connections tried since the last loss,
    the successful one included), :attr:`log` (the last 50 ``(broker index, what)``).
    """

    def __init__(self, brokers: Sequence[tuple[str, int]], *, wait_s: float = HOST_WAIT_S,
                 pause_s: float = ROUND_PAUSE_S) -> None:
        if len(brokers) < 2:
            raise ValueError("a broker choice needs at least two brokers")
        self.brokers = [(str(h), int(p)) for h, p in brokers]
        self.wait_s, self.pause_s = wait_s, pause_s
        self.index = 0
        self.moves = 0
        self.attempts = 0
        self.log: list[tuple[int, str]] = []
        self._lock = threading.Lock()
        self._connected_at: float | None = None
        self._online: bool | None = None  # the floor's state on the current broker, None: not heard
        self._stamp = -1
        self._without_floor = 0  # moves in a row that found no floor online
        self._moved_at = 0.0

    @property
    def current(self) -> tuple[str, int]:
        """``(host, port)`` of the broker in use (or being tried)."""
        return self.brokers[self.index]

    @property
    def floor_here(self) -> bool:
        """The floor said online on the current broker (and not offline since)."""
        return self._online is True

    def _note(self, what: str) -> None:
        self.log.append((self.index, what))
        del self.log[:-50]

    def connected(self, now: float) -> None:
        """A connection to :attr:`current` was accepted."""
        with self._lock:
            self.attempts += 1
            self._connected_at = now
            self._online, self._stamp = None, -1
            self._note("connected")

    def lost(self, now: float, why: str) -> tuple[str, int]:
        """The connection was lost, refused or closed to move: the next broker to try."""
        with self._lock:
            if self.log and self.log[-1][1] in ("connected", "leaving"):
                self.attempts = 0  # a new loss: count the tries from here
            else:
                self.attempts += 1
            self._connected_at = None
            self._online, self._stamp = None, -1
            self._note(why)
            self.index = (self.index + 1) % len(self.brokers)
            self.moves += 1
            self._moved_at = now
            return self.current

    def take_state(self, payload: bytes | bytearray) -> bool:
        """The floor's host state on the current broker; ``True`` when it says online after it
        was not known online (the table sends its birth again). An older timestamp than one
        already seen (a Will delivered late) is ignored."""
        parsed = parse_host_state(payload)
        if parsed is None:
            return False
        online, stamp = parsed
        with self._lock:
            if stamp < self._stamp:
                return False
            was = self._online
            self._online, self._stamp = online, stamp
            if online:
                self._without_floor = 0
            return online and was is not True

    def due(self, now: float) -> str | None:
        """Why the table should leave the current broker now, or ``None``: the floor said offline
        here, or said nothing within ``wait_s`` of connecting. After a round of the list without
        the floor, only once ``pause_s`` passed since the last move."""
        with self._lock:
            if self._connected_at is None or self._online is True:
                return None
            if self._online is None and now - self._connected_at < self.wait_s:
                return None
            if self._without_floor >= len(self.brokers) and now - self._moved_at < self.pause_s:
                return None
            self._without_floor += 1
            self._connected_at = None  # asked once: the move is under way
            self._note("leaving")
            return "the floor is offline here" if self._online is False else "the floor is not on this broker"

    def snapshot(self) -> dict[str, Any]:
        """What the choice is now: broker, floor here, moves (for ``doctor``, tests and logs)."""
        with self._lock:
            host, port = self.current
            return {"broker": f"{host}:{port}", "index": self.index, "floor_here": self._online is True,
                    "moves": self.moves, "attempts": self.attempts, "at": time.time()}
