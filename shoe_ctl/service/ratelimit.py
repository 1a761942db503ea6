"""A token bucket per key: the per-client rate limit of dealer inputs at the display server and
the dealer port (docs/security.md, "Floods and connections")."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

__all__ = ["RateLimiter"]


class RateLimiter:
    """A token bucket per key: ``allow(key)`` is True while the key has credit.

    :param rate: credit regained per second; :param burst: most credit held.
    :param what: words for the log line written once when a key starts being refused
        (``"display inputs"``), and once more after it was quiet for a while.
    :param max_keys: keys remembered; beyond it, keys with full credit are forgotten first.
    """

    def __init__(self, rate: float, burst: int, what: str, *, max_keys: int = 1024,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.what = what
        self.max_keys = max_keys
        self.refused = 0
        self._clock = clock
        self._buckets: dict[str, tuple[float, float, bool]] = {}  # key -> (credit, at, refusing)

    def allow(self, key: str) -> bool:
        """Spend one credit of ``key``; False (and one log line per episode) when it has none."""
        now = self._clock()
        credit, at, refusing = self._buckets.get(key, (self.burst, now, False))
        credit = min(self.burst, credit + (now - at) * self.rate)
        if credit >= 1.0:
            if refusing and credit >= self.burst:
                refusing = False
            self._buckets[key] = (credit - 1.0, now, refusing)
            self._prune()
            return True
        self.refused += 1
        if not refusing:
            log.warning("%s from %s: more than %g per second, refusing the excess", self.what, key, self.rate)
        self._buckets[key] = (credit, now, True)
        return False

    def _prune(self) -> None:
        if len(self._buckets) <= self.max_keys:
            return
        now = self._clock()
        for key, (credit, at, _) in list(self._buckets.items()):
            if credit + (now - at) * self.rate >= self.burst:
                del self._buckets[key]
        while len(self._buckets) > self.max_keys:  # all busy: forget the oldest
            del self._buckets[next(iter(self._buckets))]
