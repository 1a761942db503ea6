"""The dealer port's limits (docs/security.md, "Floods and connections"): a client that stops
reading is disconnected with a log line and memory stays bounded; a nesting bomb or an endless
line is answered with an error line and the reader goes on; inputs are rate-limited."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shoe_ctl import events as E
from shoe_ctl.service import codec, dealer_port
from shoe_ctl.service.dealer_port import DealerPort

FOLD = codec.dumps(E.DealerInput(E.DealerAction.FOLD, 4)).encode() + b"\n"


class Posted:
    def __init__(self, answer: Any = None) -> None:
        self.items: list[Any] = []
        self.answer = answer
        self.got = threading.Event()

    def __call__(self, ev: Any) -> Any:
        self.items.append(ev)
        self.got.set()
        return self.answer


@pytest.fixture
def make_port(tmp_path: Path) -> Iterator[Callable[..., tuple[DealerPort, socket.socket]]]:
    made: list[tuple[DealerPort, socket.socket]] = []

    def make(post: Callable[[Any], Any], *, send_timeout_s: float = 5.0, rcvbuf: int = 0) -> tuple[
            DealerPort, socket.socket]:
        port = DealerPort(tmp_path / f"d{len(made)}.sock", post)
        port.send_timeout_s = send_timeout_s
        port.start()
        c = socket.socket(socket.AF_UNIX)
        if rcvbuf:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        c.connect(str(port.path))
        made.append((port, c))
        return port, c

    yield make
    for port, c in made:
        c.close()
        port.close()


def wait_connected(port: DealerPort, timeout: float = 5.0) -> None:
    """Wait until the port's writer has taken the client (a flood before that goes to nobody)."""
    deadline = time.monotonic() + timeout
    while port._conn is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert port._conn is not None, "the dealer port never took the client"


def read_line(c: socket.socket, timeout: float = 5.0) -> bytes:
    c.settimeout(timeout)
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = c.recv(1)
        assert chunk, "the dealer port closed"
        buf += chunk
    return buf


def test_a_client_that_stops_reading_is_dropped_and_memory_stays_bounded(
        make_port: Callable[..., tuple[DealerPort, socket.socket]], caplog: pytest.LogCaptureFixture) -> None:
    port, c = make_port(Posted(), send_timeout_s=0.5, rcvbuf=4096)
    wait_connected(port)
    big = "x" * 50_000
    with caplog.at_level(logging.WARNING):
        for i in range(400):  # ~20 MB of updates to a client that reads nothing
            port.handle(E.DisplayUpdate({"hand": i, "filler": big}))
        most = port._out.qsize()
        deadline = time.monotonic() + 5
        while port._out.qsize() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert port._out.qsize() == 0  # drained: nothing kept for the dropped client
        assert most <= dealer_port.MAX_QUEUED and port.dropped == 1
        assert sum("disconnected" in r.getMessage() for r in caplog.records) == 1
    c.settimeout(5)
    while c.recv(65536):  # what its buffers held, then the end: it is told it was dropped
        pass
    # the next client gets the newest table at once
    with socket.socket(socket.AF_UNIX) as c2:
        c2.connect(str(port.path))
        first = codec.loads(read_line(c2).rstrip(b"\n"))
        assert isinstance(first, E.DisplayUpdate) and first.state["hand"] == 399


def test_the_queue_for_a_slow_client_is_capped(monkeypatch: pytest.MonkeyPatch,
                                              make_port: Callable[..., tuple[DealerPort, socket.socket]]) -> None:
    port, c = make_port(Posted(), send_timeout_s=30.0, rcvbuf=4096)  # the send deadline is far away
    wait_connected(port)
    for i in range(dealer_port.MAX_QUEUED + 500):
        port.handle(E.DisplayUpdate({"hand": i, "filler": "y" * 2000}))
    assert port._out.qsize() <= dealer_port.MAX_QUEUED
    assert port.dropped >= 1
    deadline = time.monotonic() + 5
    while port._out.qsize() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert port._out.qsize() == 0


def test_a_nesting_bomb_gets_an_error_line_and_the_reader_goes_on(
        make_port: Callable[..., tuple[DealerPort, socket.socket]]) -> None:
    posted = Posted()
    port, c = make_port(posted)
    c.sendall(b"[" * 30_000 + b"]" * 30_000 + b"\n")
    assert b"nested too deeply" in read_line(c)
    c.sendall(b'{"type": "DealerInput", "action": ' + b"{" * 20_000 + b"\n")
    assert b"error" in read_line(c)
    c.sendall(FOLD)
    assert posted.got.wait(5) and posted.items == [E.DealerInput(E.DealerAction.FOLD, 4)]


def test_an_endless_line_is_refused_and_the_reader_goes_on(
        make_port: Callable[..., tuple[DealerPort, socket.socket]]) -> None:
    posted = Posted()
    port, c = make_port(posted)
    for _ in range(8):
        c.sendall(b"z" * 65536)
    c.sendall(b"\n")
    assert b"longer than" in read_line(c)
    c.sendall(FOLD)
    assert posted.got.wait(5) and posted.items == [E.DealerInput(E.DealerAction.FOLD, 4)]
    assert port.rejected == 1  # one refusal for the whole long line


def test_inputs_beyond_the_rate_get_an_error_line(make_port: Callable[..., tuple[DealerPort, socket.socket]],
                                                  caplog: pytest.LogCaptureFixture) -> None:
    posted = Posted()
    port, c = make_port(posted)
    port._rate._clock = lambda: 0.0  # no credit comes back however long the lines take
    with caplog.at_level(logging.WARNING):
        c.sendall(FOLD * (dealer_port.INPUTS_BURST + 100))
        errors = [read_line(c) for _ in range(100)]
    assert all(b"too many inputs" in e for e in errors)
    assert len(posted.items) == dealer_port.INPUTS_BURST and port.rejected == 100
    assert sum("more than" in r.getMessage() for r in caplog.records) == 1


def test_an_input_the_controller_has_no_room_for_gets_an_error_line(
        make_port: Callable[..., tuple[DealerPort, socket.socket]]) -> None:
    port, c = make_port(Posted(answer=False))
    c.sendall(FOLD)
    assert b"busy" in read_line(c)
    assert port.inputs == 0 and port.rejected == 1


@pytest.mark.parametrize(("args", "seat", "named"), [
    ({"x": "[" * 600 + "]" * 600}, None, "args.x[0]: a list in a list"),
    ({"cards": 10**40}, 3, "args.cards: an integer of"),
    ({}, 10**40, "seat: an integer of"),
    ({}, 11, "seat: 11 is not a seat number 1..10"),
    ({"note": "y" * 10_000}, None, "args.note: a text of 10000 characters"),
    ({"note": "seat 2 \ud800"}, None, "args.note: a text with a code point UTF-8 cannot encode"),
])
def test_an_input_of_no_input_shape_is_refused_before_the_journal(
        make_port: Callable[..., tuple[DealerPort, socket.socket]], args: dict[str, Any], seat: Any,
        named: str) -> None:
    """The dealer port checks the shape of an input as the display does (shoe_ctl/input_shape.py):
    a list nested hundreds deep would make the journal's encoder fail (a false journal-write-failed
    stop), an integer of 40 digits is no seat or count; each gets an error line naming the field
    and nothing is posted."""
    import json

    posted = Posted()
    port, c = make_port(posted)
    body = json.loads(codec.dumps(E.DealerInput(E.DealerAction.CARD_COUNT, 3)))
    body["args"] = {k: json.loads(v) if isinstance(v, str) and v.startswith("[") else v for k, v in args.items()}
    body["seat"] = seat
    c.sendall(json.dumps(body).encode() + b"\n")
    assert named.encode() in read_line(c)
    c.sendall(FOLD)
    assert posted.got.wait(5) and posted.items == [E.DealerInput(E.DealerAction.FOLD, 4)]


def reader_threads() -> int:
    return sum(t.name == "dealer-port-read" and t.is_alive() for t in threading.enumerate())


def test_a_new_client_closes_the_one_before_and_held_connections_keep_no_thread(
        make_port: Callable[..., tuple[DealerPort, socket.socket]]) -> None:
    """One client at a time: each new one replaces the one before, whose end reads the close at
    once (before, its socket stayed open with a reader thread blocked on it until the client sent
    something, so clients that connect and hold grew the service's threads without bound), and
    connections made faster than the writer takes them are each closed, none left to post inputs
    that no output answers."""
    posted = Posted()
    port, first = make_port(posted)
    wait_connected(port)
    held = [first]
    for _ in range(60):
        c = socket.socket(socket.AF_UNIX)
        c.connect(str(port.path))
        held.append(c)
    last = held[-1]
    try:
        for c in held[:-1]:
            c.settimeout(5)
            while chunk := c.recv(65536):  # the initial display and signal may come before the close
                assert chunk
        deadline = time.monotonic() + 5
        while reader_threads() != 1 and time.monotonic() < deadline:  # the last one's may not have started yet
            time.sleep(0.01)
        assert reader_threads() == 1
        port.handle(E.DisplayUpdate({"hand": 7}))
        got = codec.loads(read_line(last).rstrip(b"\n"))
        assert isinstance(got, E.DisplayUpdate) and got.state == {"hand": 7}
        last.sendall(FOLD)
        assert posted.got.wait(5) and posted.items == [E.DealerInput(E.DealerAction.FOLD, 4)]
    finally:
        for c in held[1:]:
            c.close()


def test_a_command_with_a_lone_surrogate_is_sent_replaced_and_the_writer_goes_on(
        make_port: Callable[..., tuple[DealerPort, socket.socket]], caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A text UTF-8 cannot encode (``"\\udcff"``: a device path from the command line) in an alert:
    before, encoding it ended the port's writer thread and the client heard nothing more. Now the
    line carries U+FFFD there, one warning names the field, and the next command follows."""
    monkeypatch.setattr(dealer_port, "_REPORTS", dealer_port.Reports(dealer_port.log))  # nothing held back
    port, c = make_port(Posted())
    wait_connected(port)
    with caplog.at_level(logging.WARNING, logger="shoe_ctl.service.dealer_port"):
        port.handle(E.Alert("shoe-lost", "cannot open /dev/ttyUSB\udcff"))
        port.handle(E.Instruction(E.Signal.DEAL, "Deal card 2", seat=2, face="up"))
        first = codec.loads(read_line(c).rstrip(b"\n"))
        second = codec.loads(read_line(c).rstrip(b"\n"))
    assert isinstance(first, E.Alert) and first.message == "cannot open /dev/ttyUSB\ufffd"
    assert isinstance(second, E.Instruction) and second.text == "Deal card 2"
    lines = [r.getMessage() for r in caplog.records if "U+FFFD" in r.getMessage()]
    assert len(lines) == 1 and "Alert.message" in lines[0]
