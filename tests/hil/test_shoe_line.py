"""The virtual shoe's line (:class:`hil.shoe_line.ShoeLine`): what its stop does to the line's
descriptors (its wake pipe, the pty) while its thread has ended or is still busy in a device call,
and when it is called again."""

from __future__ import annotations

import logging
import os
import threading

import pytest
from test_pty_device import _same_file

from hil.shoe_line import ShoeLine


class StuckDevice:
    """The device calls a line makes, a timer that, once armed, holds the line's thread (and the
    lock, as every device call does) until released."""

    def __init__(self) -> None:
        self.armed = threading.Event()
        self.inside = threading.Event()
        self.release = threading.Event()
        self.thread: threading.Thread | None = None

    def plugged_in(self, now: float) -> None:
        pass

    def new_peer(self) -> None:
        pass

    def say_hello(self) -> None:
        pass

    def receive_data(self, data: bytes, now: float) -> None:
        pass

    def frames_to_send(self) -> list[bytes]:
        return []

    def next_deadline(self) -> float:
        return 0.0 if self.armed.is_set() else float("inf")

    def tick(self, now: float) -> None:
        self.thread = threading.current_thread()
        self.inside.set()
        self.release.wait(30.0)
        self.armed.clear()


def _line(device: StuckDevice) -> tuple[ShoeLine, dict[int, int]]:
    line = ShoeLine(device, threading.RLock())  # type: ignore[arg-type] - the calls a line makes
    with line.lock:
        line.start()
    fds = [line._wake_r, line._wake_w, line._master, line._slave]
    return line, {fd: os.fstat(fd).st_ino for fd in fds if fd is not None}


def _stop(line: ShoeLine) -> None:
    """``line.stop()``, which must come back even while its thread is busy."""
    done = threading.Thread(target=line.stop, daemon=True)
    done.start()
    done.join(10.0)
    assert not done.is_alive(), "stop() did not come back while the line's thread was busy"


def test_stop_after_the_thread_ended_closes_everything_once() -> None:
    line, fds = _line(StuckDevice())
    assert len(fds) == 4
    _stop(line)
    assert line.link_path is not None and not line.link_path.exists()
    assert not any(_same_file(fd, ino) for fd, ino in fds.items())
    r, w = os.pipe()  # may take the numbers the line had
    try:
        line.stop()  # again: closes nothing more, writes nowhere
        line.wake()
        os.write(w, b"ok")
        assert os.read(r, 2) == b"ok"
    finally:
        os.close(r)
        os.close(w)


def test_stop_leaves_the_line_to_a_thread_still_busy_and_it_closes_it_as_it_ends(
        caplog: pytest.LogCaptureFixture) -> None:
    device = StuckDevice()
    line, fds = _line(device)
    line.JOIN_S = 0.2
    device.armed.set()
    line.wake()
    assert device.inside.wait(10.0)
    try:
        with caplog.at_level(logging.WARNING, logger="hil.shoe_line"):
            _stop(line)
        assert device.thread is not None and device.thread.is_alive()
        assert all(_same_file(fd, ino) for fd, ino in fds.items())  # nothing closed under the thread
        assert line.link_path is not None and not line.link_path.exists()  # no host opens it again
        assert "still busy" in caplog.text
        r, w = os.pipe()  # a descriptor opened meanwhile cannot take the busy thread's numbers
        os.close(r)
        os.close(w)
        assert {r, w}.isdisjoint(fds)
    finally:
        device.release.set()
    assert device.thread is not None
    device.thread.join(10.0)
    assert not device.thread.is_alive()
    assert not any(_same_file(fd, ino) for fd, ino in fds.items())
    assert line.link_path is not None and not line.link_path.exists()
    line.stop()  # idempotent once the thread has gone
