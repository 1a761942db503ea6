"""The virtual readers' pty line (:class:`hil.pty_device.PtyDevice`): what its close does to the
pty's descriptors while its thread has ended or is still busy in a model call."""

from __future__ import annotations

import logging
import os
import threading

import pytest
import serial

from hil.pty_device import PtyDevice


class EchoModel:
    """Answers every byte with itself."""

    def receive(self, data: bytes, now: float) -> bytes:
        return data

    def poll(self, now: float) -> bytes:
        return b""


class StuckModel:
    """A model whose poll, once armed, holds the device's thread until released, then answers
    ``b"late"``: a device thread kept busy past the close's wait."""

    def __init__(self) -> None:
        self.armed = threading.Event()
        self.inside = threading.Event()
        self.release = threading.Event()
        self.thread: threading.Thread | None = None

    def receive(self, data: bytes, now: float) -> bytes:
        return b""

    def poll(self, now: float) -> bytes:
        if not self.armed.is_set():
            return b""
        self.thread = threading.current_thread()
        self.inside.set()
        self.release.wait(30.0)
        return b"late"


def _same_file(fd: int, ino: int) -> bool:
    """True while ``fd`` is still the descriptor whose inode was ``ino`` (not closed, not taken
    by another file)."""
    try:
        return os.fstat(fd).st_ino == ino
    except OSError:
        return False


def test_close_after_the_thread_ended_closes_the_pty_and_removes_the_link() -> None:
    dev = PtyDevice(EchoModel(), name="echo").start()
    with serial.Serial(dev.url, timeout=2.0) as host:
        host.write(b"ping")
        assert host.read(4) == b"ping"
    served = dev._served
    assert served is not None and served.master is not None and served.slave is not None
    fds = {fd: os.fstat(fd).st_ino for fd in (served.master, served.slave)}
    dev.close()
    assert not dev.link_path.exists()
    assert not any(_same_file(fd, ino) for fd, ino in fds.items())
    dev.close()  # idempotent


def test_close_leaves_the_pty_to_a_thread_still_busy_and_it_closes_it_as_it_ends(
        caplog: pytest.LogCaptureFixture) -> None:
    model = StuckModel()
    dev = PtyDevice(model, name="stuck").start()
    dev.JOIN_S = 0.2
    served = dev._served
    assert served is not None and served.master is not None and served.slave is not None
    fds = {fd: os.fstat(fd).st_ino for fd in (served.master, served.slave)}
    model.armed.set()
    assert model.inside.wait(10.0)
    try:
        with caplog.at_level(logging.WARNING, logger="hil.pty_device"):
            dev.close()
        assert model.thread is not None and model.thread.is_alive()
        assert all(_same_file(fd, ino) for fd, ino in fds.items())  # nothing closed under the thread
        assert not dev.link_path.exists()
        assert "still busy" in caplog.text and "stuck" in caplog.text
        # a new pty opened meanwhile cannot take the busy thread's numbers
        with PtyDevice(EchoModel(), name="next") as other:
            assert other._served is not None
            assert {other._served.master, other._served.slave}.isdisjoint(fds)
    finally:
        model.release.set()
    assert model.thread is not None
    model.thread.join(10.0)
    assert not model.thread.is_alive()
    assert dev.bytes_out == len(b"late")  # its last answer went to its own, still open, pty
    assert not any(_same_file(fd, ino) for fd, ino in fds.items())
    dev.close()  # idempotent once the thread has gone
