"""A burst of broken frames for tests of reading a ``socket://`` port, and a count of the reads
pyserial's socket port makes (docs/protocol.md, section 7: a reader drains what waits)."""

from __future__ import annotations

from typing import Any

import pytest

BROKEN_FRAMES = 1000
BROKEN_BURST = (b"\x55" * 50 + b"\x00") * BROKEN_FRAMES
"""51 kB: each frame's code byte promises more bytes than follow, so each is one bad frame."""


def count_socket_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``[n]``: the calls of pyserial's socket port ``read`` from now on (any thread), counted
    while ``monkeypatch`` holds."""
    from serial.urlhandler import protocol_socket

    reads = [0]
    read = protocol_socket.Serial.read

    def counted(self: Any, size: int = 1) -> bytes:
        reads[0] += 1
        return bytes(read(self, size))

    monkeypatch.setattr(protocol_socket.Serial, "read", counted)
    return reads
