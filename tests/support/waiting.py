"""Waiting in tests for what another thread or process does: poll a condition until it holds or
a generous time has passed, instead of sleeping a fixed time."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any


def wait_for(cond: Callable[[], object], timeout: float = 5.0, poll: float = 0.01) -> bool:
    """True as soon as ``cond()`` is true, checked every ``poll`` seconds; after ``timeout``
    seconds, ``cond()``'s last answer (so a slow thread is waited for, not raced)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(poll)
    return bool(cond())


def interrupt(proc: subprocess.Popen[Any], wait_s: float = 60.0) -> None:
    """Stop a service process as Ctrl-C does; one that has not stopped after ``wait_s`` seconds is
    killed (a slow stop after SIGINT is a known defect, not what the calling tests check)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
