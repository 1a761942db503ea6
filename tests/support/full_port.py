"""Filling a port's output buffer to its last byte, for the tests of writes that must not wait for
room (a shoe that stopped reading)."""

from __future__ import annotations

import contextlib
import os
import termios
from collections.abc import Iterator


def fill(fd: int, byte: bytes = b"x") -> int:
    """Write ``byte`` to the non-blocking descriptor ``fd`` until a single one is refused; the bytes
    written."""
    wrote = 0
    for chunk in (byte * 1024, byte):
        while True:
            try:
                wrote += os.write(fd, chunk)
            except BlockingIOError:
                break
    return wrote


@contextlib.contextmanager
def held_full(fd: int) -> Iterator[None]:
    """The output of the tty whose descriptor is ``fd`` full and kept so: filled, then suspended
    (``tcflow(TCOOFF)``, what the far end's XOFF does with software flow control), since a pty only
    filled gains room again when the kernel's worker later moves its bytes to the master's side;
    resumed (``TCOON``) on leaving."""
    fill(fd)
    termios.tcflow(fd, termios.TCOOFF)
    try:
        yield
    finally:
        termios.tcflow(fd, termios.TCOON)
