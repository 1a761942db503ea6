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
from drivers.shoe import IdleWait, device_fd, read_ready, write_frame

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
    written = _counting_writes(monkeypatch)
    write_frame(port, b"\x00frame\x00")
    assert written == [b"\x00frame\x00"] and os.read(master, 64) == b"\x00frame\x00"


def test_what_a_full_buffer_leaves_goes_out_whole_once_the_far_end_reads(
        pty: tuple[int, serial.Serial], monkeypatch: pytest.MonkeyPatch) -> None:
    master, port = pty
    port.write_timeout = 60.0
    filled = fill(port.fd)
    got = bytearray()
    frame = b"\x00" + bytes(range(1, 200)) * 40 + b"\x00"  # larger than a full buffer's first room
    written = _counting_writes(monkeypatch)

    def far_end() -> None:
        time.sleep(0.2)  # the writer is in its wait by now, or finds room at once: either way whole
        while len(got) < filled + len(frame):  # every byte the port took, then stop
            if not select.select([master], [], [], 10.0)[0]:
                return
            got.extend(os.read(master, 65536))

    t = threading.Thread(target=far_end, daemon=True)
    t.start()
    write_frame(port, frame)
    t.join(20.0)
    assert got == b"x" * filled + frame
    assert len(written) < 100  # each write follows room the far end made, never a retry in a loop


def test_a_full_buffer_times_out_without_spinning(pty: tuple[int, serial.Serial],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _master, port = pty
    port.write_timeout = 0.3
    with held_full(port.fd):
        written = _counting_writes(monkeypatch)
        with pytest.raises(serial.SerialTimeoutException):
            write_frame(port, b"\x00full\x00")
    # pyserial's write retried the refused write over and over for the whole write timeout
    assert 1 <= len(written) <= 3


def test_cancel_write_ends_the_wait_for_room(pty: tuple[int, serial.Serial]) -> None:
    _master, port = pty
    port.write_timeout = 120.0
    with held_full(port.fd):
        done = threading.Event()
        t = threading.Thread(target=lambda: (write_frame(port, b"\x00late\x00"), done.set()), daemon=True)
        t.start()
        time.sleep(0.1)
        assert not done.is_set()  # no room comes: only the cancel ends the wait
        port.cancel_write()
        assert done.wait(20.0)
