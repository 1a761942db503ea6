"""The shoe link reader's wait while its session has nothing due soon (``drivers.shoe.IdleWait``):
it waits for the port's bytes or a wake-up instead of waking every read timeout; another thread
that brings a timer nearer (an ack held for the next ACK frame) wakes it, bytes end the wait, and
a port that is not a device is read as before. No timing is asserted: the waits are made far
longer than any bound a test waits for."""

from __future__ import annotations

import contextlib
import math
import os
import select
import threading
import time
from collections.abc import Iterator

import pytest
import serial
from full_port import fill, held_full

from drivers import shoe
from drivers.shoe import IdleWait, device_fd, read_ready

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a pty: POSIX only")


@pytest.fixture
def pty() -> Iterator[tuple[int, serial.Serial]]:
    master, slave = os.openpty()
    port = serial.Serial(os.ttyname(slave), timeout=0.02)
    os.close(slave)
    try:
        yield master, port
    finally:
        port.close()
        os.close(master)


@contextlib.contextmanager
def _waiting_reader(port: serial.Serial) -> Iterator[tuple[threading.RLock, IdleWait, list[bytes], threading.Thread]]:
    """A reader thread in :meth:`IdleWait.read` whose next timer is 10 minutes off, waiting."""
    lock = threading.RLock()
    idle = IdleWait(0.02)
    out: list[bytes] = []
    deadline = time.monotonic() + 600.0
    with idle.reading(device_fd(port), lock):
        t = threading.Thread(target=lambda: out.append(idle.read(port, False, lock, lambda: deadline,
                                                                 threading.Event())), daemon=True)
        t.start()
        for _ in range(2000):
            if idle.until:
                break
            time.sleep(0.005)
        assert idle.until, "the reader never began its wait"
        yield lock, idle, out, t
        t.join(10.0)


def test_a_wake_up_ends_the_wait(pty: tuple[int, serial.Serial], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shoe, "IDLE_WAIT_MAX", 120.0)
    with _waiting_reader(pty[1]) as (lock, idle, out, t):
        with lock:
            idle.nearer(lambda: time.monotonic() + 700.0)  # later than its wake-up: it sleeps on
        assert t.is_alive() and idle.until
        with lock:
            idle.nearer(lambda: time.monotonic() + 0.01)  # an ack held for the next ACK frame
    assert not t.is_alive() and out == [b""] and idle.until == 0.0


def test_bytes_end_the_wait_and_are_read(pty: tuple[int, serial.Serial], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shoe, "IDLE_WAIT_MAX", 120.0)
    master, port = pty
    with _waiting_reader(port) as (_lock, _idle, out, t):
        os.write(master, b"\x00card\x00")
    assert not t.is_alive() and out == [b"\x00card\x00"]


def test_a_timer_due_soon_ends_the_wait_and_a_port_that_is_not_a_device_reads_as_before(
        pty: tuple[int, serial.Serial]) -> None:
    master, port = pty
    lock = threading.RLock()
    idle = IdleWait(0.02)
    stop = threading.Event()
    with idle.reading(device_fd(port), lock):
        assert idle.read(port, False, lock, lambda: time.monotonic() + 0.01, stop) == b""  # the timer's wait
        assert idle.read(port, False, lock, lambda: -math.inf, stop) == b""  # a timer due: min_s for bytes
        os.write(master, b"ab")
        assert idle.read(port, False, lock, lambda: time.monotonic() + 0.01, stop) == b"ab"
    loop = serial.serial_for_url("loop://", timeout=0.02)
    try:
        assert device_fd(loop) is None
        with idle.reading(device_fd(loop), lock):
            loop.write(b"xy")
            assert idle.read(loop, False, lock, lambda: time.monotonic() + 600.0, stop) == b"xy"
    finally:
        loop.close()


def test_the_pipe_lives_while_the_port_is_read(pty: tuple[int, serial.Serial]) -> None:
    _master, port = pty
    lock = threading.RLock()
    idle = IdleWait(0.02)
    with idle.reading(device_fd(port), lock):
        assert idle._pipe is not None
        pipe = idle._pipe
    assert idle._pipe is None
    with pytest.raises(OSError):
        os.fstat(pipe[0])
    idle.wake(lock)  # after the port: nothing to wake, nothing written


def test_a_turn_takes_every_byte_waiting_in_one_read_and_an_empty_readable_port_is_lost(
        pty: tuple[int, serial.Serial], monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/protocol.md section 7: once its ``select`` says the port is readable, the reader takes
    what waits in one ``os.read`` (three frames at once here); a descriptor that is readable and
    gives nothing is a lost port (pyserial says the same in its own read)."""
    master, port = pty
    frames = b"\x00one\x00" + b"\x00two\x00" + b"\x00three\x00"
    os.write(master, frames)
    fd = device_fd(port)
    assert fd is not None
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(shoe.os, "read", lambda f, n: reads.append(f) or real_read(f, n))
    assert read_ready(fd) == frames and reads == [fd]
    r, w = os.pipe()
    try:
        os.close(w)  # readable, and empty: the far end is gone
        with pytest.raises(serial.SerialException, match="no data"):
            read_ready(r)
    finally:
        os.close(r)


def _counting_writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every ``os.write`` from now on (the link's and pyserial's), recorded."""
    written: list[bytes] = []
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        written.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    return written


def test_a_frame_is_written_in_one_write(pty: tuple[int, serial.Serial], monkeypatch: pytest.MonkeyPatch) -> None:
    master, port = pty
    lock = threading.RLock()
    idle = IdleWait(0.02)
    with idle.reading(device_fd(port), lock):
        written = _counting_writes(monkeypatch)
        with lock:
            idle.send(b"\x00frame\x00", port)
    assert written == [b"\x00frame\x00"] and os.read(master, 64) == b"\x00frame\x00"
    assert idle.stats.frames_out == 1


def test_what_a_full_buffer_leaves_goes_out_whole_once_the_far_end_reads(
        pty: tuple[int, serial.Serial], monkeypatch: pytest.MonkeyPatch) -> None:
    """The write returns at once; the reader's wait ends when the far end made room, and it writes
    the rest: each write follows room, never a retry in a loop (pyserial's own ``write`` retries a
    refused write at once, spinning a core up to the port's write timeout)."""
    master, port = pty
    filled = fill(port.fd)
    got = bytearray()
    frame = b"\x00" + bytes(range(1, 200)) * 40 + b"\x00"  # larger than a full buffer's first room
    lock = threading.RLock()
    idle = IdleWait(0.02)
    stop = threading.Event()
    with idle.reading(device_fd(port), lock):
        written = _counting_writes(monkeypatch)
        with lock:
            idle.send(frame, port)
        out = idle.out
        assert out is not None and out.waiting  # nothing waited for room: the frame waits in the link
        for _ in range(2000):  # the far end reads; the reader's turns write as room comes
            while select.select([master], [], [], 0)[0]:
                got.extend(os.read(master, 65536))
            if not out.waiting and len(got) >= filled + len(frame):
                break
            idle.read(port, False, lock, lambda: time.monotonic() + 0.05, stop)
    assert got == b"x" * filled + frame
    assert idle.stats.frames_out == 1
    assert len(written) < 100  # each write follows room the far end made


def test_a_held_full_port_takes_a_frame_without_a_wait_or_a_retry(pty: tuple[int, serial.Serial],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _master, port = pty
    port.write_timeout = None  # a write that waited for room would wait for good
    lock = threading.RLock()
    idle = IdleWait(0.02)
    with idle.reading(device_fd(port), lock), held_full(port.fd):
        written = _counting_writes(monkeypatch)
        with lock:
            idle.send(b"\x00full\x00", port)
        assert idle.out is not None and idle.out.waiting
    assert written[:1] == [b"\x00full\x00"] and written.count(b"\x00full\x00") == 1  # tried once


def test_a_device_the_reader_does_not_read_is_never_written(pty: tuple[int, serial.Serial],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the reader's connection begins and after it ends (the link stopping, the port lost),
    a frame for a device is dropped, with what waited for room: a device is written only through
    the reader's :class:`drivers.port_output.PortOutput`, so the journal's thread acking a card
    then never waits up to the port's write timeout for room a deaf shoe never makes."""
    master, port = pty
    lock = threading.RLock()
    idle = IdleWait(0.02)
    monkeypatch.setattr(port, "write", lambda data: pytest.fail("written with pyserial's write, which may wait"))
    with lock:
        idle.send(b"\x00early\x00", port)
    with idle.reading(device_fd(port), lock), held_full(port.fd):
        with lock:
            idle.send(b"\x00waits\x00", port)
        assert idle.out is not None and idle.out.waiting
    assert idle.out is None  # what waited went with the connection
    written = _counting_writes(monkeypatch)
    with lock:
        idle.send(b"\x00late\x00", port)
    assert written == [] and idle.stats.frames_out == 0
    got = bytearray()
    while select.select([master], [], [], 0)[0]:
        got.extend(os.read(master, 65536))
    assert b"early" not in got and b"waits" not in got and b"late" not in got
