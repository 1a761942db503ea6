"""How the display server folds commands in and publishes them (docs/display.md, "Updates"): a
burst of commands costs one snapshot per ``publish_gap_s``, the first command after a quiet spell
goes out without waiting, and nothing handed is lost or reordered on the way."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator

import pytest
from test_display import SseReader, get

from shoe_ctl.display.server import DisplaySink
from shoe_ctl.events import CardRead, DisplayUpdate, Instruction, Signal
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.controller import Controller
from shoe_ctl.web_guard import Limits


def _ins(n: int) -> Instruction:
    return Instruction(Signal.DEAL, f"Deal card {n}", seat=1 + n % 8, face="up")


def _sink(gap: float) -> Iterator[DisplaySink]:
    s = DisplaySink(lambda _event: None, host="127.0.0.1", port=0, limits=Limits(publish_gap_s=gap)).start()
    yield s
    s.close()


@pytest.fixture
def slow() -> Iterator[DisplaySink]:
    """A server that publishes at most once every 5 s: long enough that a test sees the wait."""
    yield from _sink(5.0)


@pytest.fixture
def usual() -> Iterator[DisplaySink]:
    yield from _sink(Limits().publish_gap_s)


def test_a_burst_is_folded_in_order_and_published_in_fewer_snapshots(usual: DisplaySink) -> None:
    reader = SseReader(usual.url)
    try:
        reader.until(lambda e: True)  # the snapshot at connect
        for n in range(200):
            usual.handle(_ins(n))
        usual.sync(5.0)
        assert usual.model.version == 200  # every command folded in
        last = reader.until(lambda e: e["version"] == 200)
        assert last["instruction"]["text"] == "Deal card 199"  # the newest, none reordered after it
        assert 1 <= usual.published < 200
    finally:
        reader.close()


def test_the_first_command_after_a_quiet_spell_is_published_without_waiting(slow: DisplaySink) -> None:
    reader = SseReader(slow.url)
    try:
        reader.until(lambda e: True)
        started = time.monotonic()
        slow.handle(_ins(1))  # no sync(): the server's own wake-up must publish it
        shown = reader.until(lambda e: e["version"] >= 1, timeout=4.0)
        assert shown["instruction"]["text"] == "Deal card 1"
        assert time.monotonic() - started < 4.0  # well inside the 5 s gap
    finally:
        reader.close()


def test_a_command_waiting_for_its_turn_is_in_get_state_and_in_the_next_snapshot(slow: DisplaySink) -> None:
    reader = SseReader(slow.url)
    try:
        reader.until(lambda e: True)
        slow.handle(_ins(1))
        reader.until(lambda e: e["version"] >= 1, timeout=4.0)
        slow.handle(_ins(2))  # within the gap: waits for the next turn
        state = get(slow.url + "state")
        assert state["instruction"]["text"] == "Deal card 2"  # GET /state folds in what waits
        pushed = reader.until(lambda e: e["version"] >= 2, timeout=4.0)
        assert pushed["instruction"]["text"] == "Deal card 2"
    finally:
        reader.close()


def test_sync_folds_in_a_command_waiting_for_its_turn(slow: DisplaySink) -> None:
    slow.handle(_ins(1))
    slow.sync(5.0)
    slow.handle(_ins(2))
    slow.sync(5.0)  # returns once it is folded in, not 5 s later
    assert slow.model.version == 2
    assert slow.snapshot()["instruction"]["text"] == "Deal card 2"


def test_no_snapshot_is_built_while_no_page_reads_and_a_page_gets_the_latest_at_connect(usual: DisplaySink) -> None:
    for n in range(5):
        usual.handle(_ins(n))
        usual.sync(5.0)
    assert usual.model.version == 5 and usual.published == 0  # folded in, nothing pushed to nobody
    reader = SseReader(usual.url)
    try:
        first = reader.until(lambda e: True)
        assert first["version"] == 5 and first["instruction"]["text"] == "Deal card 4"
        usual.handle(_ins(5))
        shown = reader.until(lambda e: e["version"] >= 6, timeout=4.0)
        assert shown["instruction"]["text"] == "Deal card 5"
        assert usual.published >= 1
    finally:
        reader.close()


def test_the_controller_wakes_the_server_once_per_event(usual: DisplaySink) -> None:
    """The display takes an event's commands in one hand-over at the event's end
    (``DisplaySink.handle_all``): one wake-up of the server's loop per event, whatever the number
    of commands, and the page shows each event's last state."""
    class Machine:
        state = "idle"

        def start(self) -> list[object]:
            return []

        def handle(self, ev: CardRead) -> list[object]:
            return [_ins(ev.seq), DisplayUpdate({"hand": 1, "state": "hand_third", "seats": []}), _ins(ev.seq + 100)]

    reader = SseReader(usual.url)
    c = Controller(Machine())  # type: ignore[arg-type]
    c.add_sink(usual)
    try:
        reader.until(lambda e: True)
        woken = usual.wakes
        for seq in range(1, 6):
            c.step(CardRead(seq, Card(seq), "rfid", seq))
            reader.until(lambda e, seq=seq: e["instruction"] is not None
                         and e["instruction"]["text"] == f"Deal card {seq + 100}")
        assert usual.wakes - woken == 5
        assert usual.model.version == 15  # every command folded in
    finally:
        reader.close()


def test_snapshots_go_straight_to_a_page_that_keeps_up_in_order_and_framed(usual: DisplaySink) -> None:
    """A page that takes everything gets each snapshot written at once, without its stream's
    coroutine (``sent_direct``), as chunks an HTTP client reads like the coroutine's; a beat
    still follows a quiet second, and the stream ends cleanly with ``bye``."""
    host, port = "127.0.0.1", usual.port
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.request("GET", "/events", headers={"Host": f"{host}:{port}"})
    resp = conn.getresponse()
    assert resp.getheader("Transfer-Encoding") == "chunked"

    def event() -> tuple[str, dict[str, object]]:
        kind, data = "", ""
        while (line := resp.readline().decode()) not in ("\n", ""):
            if line.startswith("event: "):
                kind = line[7:].strip()
            elif line.startswith("data: "):
                data = line[6:].strip()
        return kind, json.loads(data or "{}")

    try:
        assert event()[0] == "state"  # at connect, through the coroutine
        for n in range(1, 21):
            usual.handle(_ins(n))
            time.sleep(0.02)  # over publish_gap_s: each published on its own
        seen = [event() for _ in range(20)]
        assert [k for k, _ in seen] == ["state"] * 20
        assert [e["instruction"]["text"] for _, e in seen] == [f"Deal card {n}" for n in range(1, 21)]  # type: ignore[index]
        assert usual.sent_direct >= 10
        started = time.monotonic()
        kind, body = event()
        assert kind == "beat" and body == {"alive": True} and time.monotonic() - started < 2.0
        usual.close()
        assert event()[0] == "bye"
        assert resp.read() == b""  # the last chunk: a clean end
    finally:
        conn.close()


def test_the_wake_up_pipe_lives_as_long_as_the_server() -> None:
    """The loop's wake-up pipe is opened with the server and closed with it; a hand-over after the
    close is dropped without writing anywhere (its descriptors may be another file's by then)."""
    import os

    def open_fds() -> set[str]:
        return set(os.listdir("/proc/self/fd"))

    before = open_fds()
    sink = DisplaySink(lambda _event: None, host="127.0.0.1", port=0).start()
    try:
        bell = sink._bell
        assert bell is not None and {str(fd) for fd in bell} <= open_fds() - before
        sink.handle_all([_ins(1), DisplayUpdate({"hand": 1, "state": "hand_third", "seats": []})])
        sink.sync()
        assert sink.model.version == 2 and sink.wakes == 1
    finally:
        sink.close()
    assert sink._bell is None
    assert not {str(fd) for fd in bell} & (open_fds() - before)
    sink.handle_all([_ins(2)])  # after the close: dropped
    assert sink.model.version == 2
