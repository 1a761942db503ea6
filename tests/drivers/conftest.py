"""Fixtures shared by the link's tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """A pipe standing for a device port, ``(read end, write end)``, its write end non-blocking as
    pyserial opens a port: its buffer is full exactly when a write is refused."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        yield r, w
    finally:
        os.close(r)
        os.close(w)
