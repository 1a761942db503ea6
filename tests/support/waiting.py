"""Waiting in tests for what another thread or process does: poll a condition until it holds or
a generous time has passed, instead of sleeping a fixed time."""

from __future__ import annotations

import queue
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shoe_ctl.events import CardRead


def wait_for(cond: Callable[[], object], timeout: float = 5.0, poll: float = 0.01) -> bool:
    """True as soon as ``cond()`` is true, checked every ``poll`` seconds; after ``timeout``
    seconds, ``cond()``'s last answer (so a slow thread is waited for, not raced)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(poll)
    return bool(cond())


def interrupt(proc: subprocess.Popen[Any], wait_s: float = 60.0, *, stderr: Path | None = None) -> int:
    """Stop a service process as Ctrl-C does (SIGINT) and return its exit status.

    A process still running after ``wait_s`` seconds fails the test: it is asked for its threads'
    stacks (SIGUSR1: ``shoe-ctl run`` writes them on stderr), killed, and the AssertionError
    carries the end of its stderr, read from ``stderr`` (the file it was given) or its pipe.
    """
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        pass
    proc.send_signal(signal.SIGUSR1)
    time.sleep(1.0)  # the stacks are written by the process itself
    proc.kill()
    proc.wait()
    text = stderr.read_text(errors="replace") if stderr is not None else ""
    if stderr is None and proc.stderr is not None:
        text = proc.stderr.read()
        text = text.decode(errors="replace") if isinstance(text, bytes) else text
    raise AssertionError(f"the service did not exit within {wait_s:g} s of SIGINT; the end of its stderr "
                         f"(the threads' stacks last):\n{text[-20000:]}")


def card_reads(events: queue.Queue[Any], want: int, timeout: float = 10.0) -> list[CardRead]:
    """The card reads taken off ``events`` (other events are dropped) until ``want`` came or
    ``timeout`` seconds passed."""
    got: list[CardRead] = []
    end = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < end:
        try:
            ev = events.get(timeout=0.1)
        except queue.Empty:
            continue
        if isinstance(ev, CardRead):
            got.append(ev)
    return got
