"""Filling a port's output buffer to its last byte, for the tests of writes that must not wait for
room (a shoe that stopped reading)."""

from __future__ import annotations

import os
import time


def fill(fd: int) -> int:
    """Write to the non-blocking descriptor ``fd`` until a single byte is refused; the bytes written."""
    wrote = 0
    for chunk in (b"x" * 1024, b"x"):
        while True:
            try:
                wrote += os.write(fd, chunk)
            except BlockingIOError:
                break
    return wrote


def fill_for_good(fd: int, rounds: int = 200) -> None:
    """Fill the output of the pty whose descriptor is ``fd`` until it stays full: the kernel moves
    bytes on towards the far end's input some time after a write, so room can reappear for a
    while; once both buffers are full and nobody reads, it does not.

    :raises AssertionError: room still reappeared after ``rounds`` fills.
    """
    for _ in range(rounds):
        if not fill(fd):
            return
        time.sleep(0.02)
    raise AssertionError("the pty's output never stayed full")
