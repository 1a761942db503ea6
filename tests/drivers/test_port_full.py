"""The link's log while its frames wait for room on a full device port (``drivers.shoe.IdleWait``,
docs/protocol.md section 7): a port that fills again and again (a shoe that reads in bursts) is
said at WARNING once a while, not at every filling, and each time it takes frames again the line
counts the frames dropped in that filling alone. A pipe stands for the port."""

from __future__ import annotations

import logging
import os
import threading
import time

import pytest
from full_port import fill

from drivers import protocol as p
from drivers.shoe import IdleWait

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a non-blocking pipe: POSIX only")

FULL = "output buffer is full"
AGAIN = "takes frames again"


def _empty(fd: int) -> None:
    os.set_blocking(fd, False)
    try:
        while os.read(fd, 65536):
            pass
    except BlockingIOError:
        pass


def _filling(idle: IdleWait, r: int, w: int, lock: threading.RLock, acks: int) -> None:
    """One filling of the port: ``acks`` ACK frames sent to it full (all but the newest dropped),
    then room made and the reader's wait writing what waits."""
    fill(w)
    for i in range(acks):
        idle.send(p.encode(p.Ack(i + 1, i, i + 1, False, False)), None)  # type: ignore[arg-type]
    assert idle.out is not None and idle.out.waiting
    _empty(r)
    stop = threading.Event()
    for _ in range(20):  # the reader's turns: the first one that sees room writes what waits
        idle.read(None, False, lock, lambda: time.monotonic() + 0.05, stop)  # type: ignore[arg-type]
        if not idle.out.waiting:
            break
    assert not idle.out.waiting
    _empty(r)


def test_a_port_that_fills_again_and_again_is_warned_of_once_and_each_filling_counts_its_own_drops(
        pipe: tuple[int, int], caplog: pytest.LogCaptureFixture) -> None:
    r, w = pipe
    lock = threading.RLock()
    idle = IdleWait(0.01)
    caplog.set_level(logging.DEBUG, logger="drivers.shoe")
    with idle.reading(w, lock):
        _filling(idle, r, w, lock, acks=3)  # two older ACKs dropped
        for _ in range(5):
            _filling(idle, r, w, lock, acks=2)  # one older ACK dropped each time
    full = [rec for rec in caplog.records if FULL in rec.getMessage()]
    again = [rec for rec in caplog.records if AGAIN in rec.getMessage()]
    assert len(full) == 6 and len(again) == 6  # every filling is logged...
    assert [rec.levelno for rec in full] == [logging.WARNING] + [logging.DEBUG] * 5  # ...said aloud once
    assert [rec.levelno for rec in again] == [logging.INFO] + [logging.DEBUG] * 5
    assert "(2 dropped" in again[0].getMessage()
    assert all("(1 dropped" in rec.getMessage() for rec in again[1:])  # this filling's, not the total
