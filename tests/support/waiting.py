"""Waiting in tests for what another thread or process does: poll a condition until it holds or
a generous time has passed, instead of sleeping a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(cond: Callable[[], object], timeout: float = 5.0, poll: float = 0.01) -> bool:
    """True as soon as ``cond()`` is true, checked every ``poll`` seconds; after ``timeout``
    seconds, ``cond()``'s last answer (so a slow thread is waited for, not raced)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(poll)
    return bool(cond())
