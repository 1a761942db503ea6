"""The controller watchdog and the outputs it switches: a stuck controller thread turns the GPIO
LEDs and the shoe's LEDs to *stop* and the display's heartbeat to "stuck"; when it runs again
they follow the machine; a stopped service leaves no LED lit (docs/service.md, *When the service
stops or hangs*)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from drivers.leds import GpioLedSink, ShoeLedSink
from shoe_ctl.display.server import BEAT_S, start_display
from shoe_ctl.events import Instruction, Signal
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.watchdog import ControllerWatchdog
from shoe_ctl.signals import PATTERNS

PINS = {"green": 17, "amber": 27, "blue": 22, "white": 23, "red": 24}


class _Machine:
    def start(self) -> list[Any]:
        return [Instruction(Signal.DEAL, "Deal down to seat 1", seat=1, face="down")]

    def handle(self, ev: Any) -> list[Any]:
        return []


class _Output:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.calls: list[tuple[float, bool]] = []

    def service_lost(self, lost: bool) -> None:
        self.calls.append((self.clock(), lost))


class _Blocker:
    """A sink that blocks the controller thread while ``hold`` is clear."""

    def __init__(self) -> None:
        self.hold = threading.Event()
        self.hold.set()

    def handle(self, _cmd: Any) -> None:
        self.hold.wait(30)

    def close(self) -> None:
        self.hold.set()


def test_bad_timing_is_refused() -> None:
    with pytest.raises(ValueError, match="interval"):
        ControllerWatchdog(lambda fn: None, [], interval=1.0, stuck_after=0.5)


def test_a_stuck_controller_is_seen_within_its_limit_and_its_recovery_too() -> None:
    # the limit, on a fake clock and without threads: checks at the times given
    now = [0.0]
    told = _Output(lambda: now[0])
    fake = ControllerWatchdog(lambda fn: None, [told], interval=0.25, stuck_after=1.0, clock=lambda: now[0])
    now[0] = 0.75
    fake._beat()  # the controller thread runs a beat
    now[0] = 1.7
    assert fake.check() and told.calls == []  # 0.95 s without a beat: alive, nothing said
    now[0] = 1.75
    assert not fake.check() and told.calls == [(1.75, True)]  # 1 s: stuck, said at this check
    now[0] = 3.0
    assert not fake.check() and told.calls == [(1.75, True)]  # said once
    fake._beat()
    assert fake.check() and told.calls == [(1.75, True), (3.0, False)] and fake.stuck_count == 1
    fake.close()

    # the same with a controller thread and the watchdog's own thread
    controller = Controller(_Machine())  # type: ignore[arg-type]
    blocker, out = _Blocker(), _Output()
    controller.add_sink(blocker)
    controller.start()
    started = time.monotonic()
    dog = ControllerWatchdog(controller.call_soon, [out], interval=0.05, stuck_after=1.0).start()
    try:
        deadline = started + 10
        while dog._last - started <= dog.stuck_after and time.monotonic() < deadline:
            time.sleep(0.01)
        assert dog._last - started > dog.stuck_after  # beats ran for longer than the limit
        assert out.calls == [] and dog.alive  # and nothing was said
        blocker.hold.clear()
        stuck_at = time.monotonic()
        controller.call_soon(lambda: blocker.handle(None))  # the controller thread hangs here
        deadline = stuck_at + 10
        while not out.calls and time.monotonic() < deadline:
            time.sleep(0.01)
        assert out.calls and out.calls[0][1] is True and not dog.alive
        # the exact limit is checked on the fake clock above; here a thread scheduled late has room
        assert out.calls[0][0] - stuck_at <= 1.0 + 0.05 + 1.0
        blocker.hold.set()
        deadline = time.monotonic() + 10
        while len(out.calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [lost for _t, lost in out.calls] == [True, False] and dog.alive and dog.stuck_count == 1
    finally:
        dog.close()
        controller.close()


def test_gpio_leds_show_stop_while_lost_then_the_last_signal_and_nothing_after_close() -> None:
    factory = MockFactory()
    sink = GpioLedSink(PINS, pin_factory=factory)
    sink.handle(Instruction(Signal.DEAL, "Deal"))
    assert sink.board.green.is_lit and not sink.board.red.is_lit
    sink.service_lost(True)
    assert sink.current is PATTERNS[Signal.STOP]
    assert not sink.board.green.is_lit  # no stale green
    sink.service_lost(False)
    assert sink.current is PATTERNS[Signal.DEAL] and sink.board.green.is_lit
    sink.close()
    assert all(factory.pin(p).state == 0 for p in PINS.values())


def test_shoe_leds_show_stop_while_lost_and_at_close() -> None:
    sent: list[dict[str, Any]] = []
    sink = ShoeLedSink(sent.append, on_close=Signal.STOP)
    sink.handle(Instruction(Signal.DEAL, "Deal"))
    assert sink.flush()
    sink.service_lost(True)
    assert sink.flush()
    sink.handle(Instruction(Signal.BURN, "Burn"))  # while lost nothing replaces the stop
    assert sink.flush()
    sink.service_lost(False)
    assert sink.flush()
    sink.close()
    assert [p["name"] for p in sent] == ["deal", "stop", "burn", "stop"]


def _events(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    return s


def _read_event(s: socket.socket, name: str, buf: list[bytes], timeout: float) -> dict[str, Any] | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        data = b"".join(buf)
        marker = f"event: {name}\n".encode()
        at = data.find(marker)
        if at >= 0:
            line_end = data.find(b"\n\n", at)
            if line_end > 0:
                block = data[at:line_end].decode()
                buf[:] = [data[line_end + 2:]]
                payload = block.split("data: ", 1)[1]
                return dict(json.loads(payload))
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            return None
        buf.append(chunk)
    return None


def test_display_beats_every_second_says_stuck_and_bye() -> None:
    sink = start_display("127.0.0.1", 0, lambda _e: None)
    s = _events(sink.port)
    buf: list[bytes] = []
    try:
        assert _read_event(s, "state", buf, 10) is not None  # the snapshot at connect
        after_state = time.monotonic()
        beat = _read_event(s, "beat", buf, BEAT_S + 10)
        waited = time.monotonic() - after_state
        # a beat after BEAT_S without events, not at once; room above for a display thread run late
        assert beat == {"alive": True} and BEAT_S - 0.75 <= waited <= BEAT_S + 1.0
        sink.service_lost(True)
        assert _read_event(s, "beat", buf, 1) == {"alive": False}
        sink.service_lost(False)
        assert _read_event(s, "beat", buf, 1) == {"alive": True}
        sink.close()
        assert _read_event(s, "bye", buf, 2) == {}
    finally:
        s.close()
        sink.close()
