"""LED patterns on a gpiozero mock board, the shoe's LED frames and the console lines."""

from __future__ import annotations

import io
import threading
import time

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from drivers.leds import (
    LED_NAMES,
    PATTERNS,
    ConsoleLedSink,
    GpioLedSink,
    LedPattern,
    ShoeLedSink,
    pattern_for,
)
from shoe_ctl.events import Alert, DisplayUpdate, Instruction, Signal

PINS = {"green": 17, "amber": 27, "blue": 22, "white": 23, "red": 24}
FAST = {s: p.scaled(0.05) for s, p in PATTERNS.items()}  # 0.25 s blink -> 12.5 ms


def history(factory: MockFactory, pin: int) -> list[float]:
    return [s.state for s in factory.pin(pin).states]


def wait_for_changes(factory: MockFactory, pin: int, n: int, timeout: float = 2.0) -> list[float]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = history(factory, pin)
        if len(states) >= n:
            return states
        time.sleep(0.005)
    return history(factory, pin)


@pytest.fixture
def factory() -> MockFactory:
    return MockFactory()


@pytest.fixture
def pwm_factory() -> MockFactory:
    return MockFactory(pin_class=MockPWMPin)


def test_every_signal_has_a_pattern_and_attention_signals_blink() -> None:
    assert set(PATTERNS) == set(Signal)
    for signal, pattern in PATTERNS.items():
        assert pattern.signal is signal
        assert set(pattern.leds) <= set(LED_NAMES)
        if pattern.attention:
            assert pattern.mode == "blink" and pattern.on_s > 0 and pattern.off_s > 0
    for signal in (Signal.STOP, Signal.SHOE_FAULT, Signal.SCRAMBLE):
        assert PATTERNS[signal].attention
    # no two signals look alike
    looks = {(p.leds, p.mode, p.on_s) for p in PATTERNS.values()}
    assert len(looks) == len(PATTERNS)
    assert pattern_for("no-such-signal") is PATTERNS[Signal.STOP]


@pytest.mark.parametrize("signal", [s for s in Signal if PATTERNS[s].mode == "steady"])
def test_steady_signal_pin_history(factory: MockFactory, signal: Signal) -> None:
    sink = GpioLedSink(PINS, pin_factory=factory, patterns=FAST)
    try:
        for pin in PINS.values():
            factory.pin(pin).clear_states()
        sink.handle(Instruction(signal, "x"))
        lit = PATTERNS[signal].leds
        for name, pin in PINS.items():
            assert history(factory, pin) == ([False, True] if name in lit else [False])
    finally:
        sink.close()
    for pin in PINS.values():
        assert history(factory, pin)[-1] is False


@pytest.mark.parametrize("signal", [s for s in Signal if PATTERNS[s].mode == "blink"])
def test_blinking_signal_pin_history(factory: MockFactory, signal: Signal) -> None:
    sink = GpioLedSink(PINS, pin_factory=factory, patterns=FAST)
    try:
        sink.handle(Instruction(Signal.DEAL, "x"))
        for pin in PINS.values():
            factory.pin(pin).clear_states()
        sink.handle(Instruction(signal, "x"))
        lit = PATTERNS[signal].leds
        for name, pin in PINS.items():
            if name in lit:
                states = wait_for_changes(factory, pin, 5)
                assert [bool(s) for s in states[:5]] == [False, True, False, True, False], name
            elif name == "green":  # was on for DEAL: switched off, stays off
                assert history(factory, pin) == [True, False]
            else:
                assert history(factory, pin) == [False]
    finally:
        sink.close()


def test_pulse_fades_on_pwm_board(pwm_factory: MockFactory) -> None:
    fast = dict(FAST)
    fast[Signal.BETTING] = PATTERNS[Signal.BETTING].scaled(0.2)  # 0.2 s fade in, 0.2 s out
    sink = GpioLedSink(PINS, pwm=True, pin_factory=pwm_factory, patterns=fast)
    try:
        pin = PINS["green"]
        pwm_factory.pin(pin).clear_states()
        sink.handle(Instruction(Signal.BETTING, "Betting"))
        states = wait_for_changes(pwm_factory, pin, 8)
        rising = states[1:5]
        assert rising == sorted(rising) and 0 < rising[0] < 1
        assert sum(1 for s in states if 0 < s < 1) >= 3  # intermediate duty cycles: a fade
        assert history(pwm_factory, PINS["red"]) == [0.0]
    finally:
        sink.close()


def test_pulse_without_pwm_is_a_slow_blink(factory: MockFactory) -> None:
    sink = GpioLedSink(PINS, pin_factory=factory, patterns=FAST)
    try:
        factory.pin(PINS["green"]).clear_states()
        sink.handle(Instruction(Signal.BETTING, "Betting"))
        assert [bool(s) for s in wait_for_changes(factory, PINS["green"], 3)[:3]] == [False, True, False]
    finally:
        sink.close()


def test_other_commands_leave_the_leds_alone(factory: MockFactory) -> None:
    sink = GpioLedSink(PINS, pin_factory=factory, patterns=FAST)
    try:
        sink.handle(Instruction(Signal.BURN, "Burn"))
        sink.handle(Alert("duplicate-card", "Duplicate"))
        sink.handle(DisplayUpdate({"hand": 1}))
        assert history(factory, PINS["amber"]) == [False, True]
        assert sink.current is not None and sink.current.signal is Signal.BURN
    finally:
        sink.close()
    sink.close()  # idempotent


def test_the_signal_already_shown_leaves_the_pins_alone(factory: MockFactory) -> None:
    sink = GpioLedSink(PINS, pin_factory=factory, patterns=FAST)
    try:
        sink.handle(Instruction(Signal.DEAL, "Deal seat 1 down", seat=1))
        for pin in PINS.values():
            factory.pin(pin).clear_states()
        sink.handle(Instruction(Signal.DEAL, "Deal seat 2 down", seat=2))  # the same signal: no switching
        assert all(history(factory, pin) == [False] for name, pin in PINS.items() if name != "green")
        assert history(factory, PINS["green"]) == [True]
        sink.handle(Instruction(Signal.BURN, "Burn"))  # a new signal switches as before
        assert history(factory, PINS["green"]) == [True, False]
        assert history(factory, PINS["amber"]) == [False, True]
        sink.service_lost(True)  # stuck: stop shown; running again: the signal before it
        sink.service_lost(False)
        assert sink.current is not None and sink.current.signal is Signal.BURN
        sink.handle(Instruction(Signal.BURN, "Burn"))
        assert history(factory, PINS["amber"])[-1] is True
    finally:
        sink.close()


def test_a_new_signal_switches_only_the_leds_that_change(factory: MockFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """An LED already steady on, or off, as the new signal wants it is not switched again (on a
    Pi each switch is gpiozero's work in the controller's thread); a blinking one is started
    again with the pattern's other LEDs, in step."""
    sink = GpioLedSink(PINS, pin_factory=factory, patterns=FAST)
    calls: list[tuple[str, str]] = []
    for name in PINS:
        led = getattr(sink.board, name)
        for method in ("on", "off", "blink"):
            real = getattr(led, method)
            monkeypatch.setattr(led, method, lambda *a, _n=name, _m=method, _r=real, **k: (calls.append((_n, _m)),
                                                                                          _r(*a, **k))[1])
    try:
        sink.handle(Instruction(Signal.DEAL, "Deal seat 1 down", seat=1))  # first: every LED set
        assert sorted(calls) == sorted([("amber", "off"), ("blue", "off"), ("white", "off"), ("red", "off"),
                                        ("green", "on")])
        calls.clear()
        sink.handle(Instruction(Signal.BURN, "Burn"))  # green off, amber on; the rest stay off untouched
        assert sorted(calls) == [("amber", "on"), ("green", "off")]
        calls.clear()
        sink.handle(Instruction(Signal.SCRAMBLE, "Scramble"))  # blue and amber blink together
        assert sorted(calls) == [("amber", "blink"), ("blue", "blink")]
        calls.clear()
        sink.handle(Instruction(Signal.BURN, "Burn"))  # amber was blinking: set steady again
        assert sorted(calls) == [("amber", "on"), ("blue", "off")]
        assert history(factory, PINS["amber"])[-1] is True and history(factory, PINS["blue"])[-1] is False
    finally:
        sink.close()


def test_partial_board_and_bad_names(factory: MockFactory) -> None:
    sink = GpioLedSink({"red": 5}, pin_factory=factory, patterns=FAST)
    try:
        sink.handle(Instruction(Signal.DEAL, "Deal"))  # green absent: nothing lit, no error
        assert history(factory, 5) == [False]
        sink.handle(Instruction(Signal.STOP, "Stop"))
        assert [bool(s) for s in wait_for_changes(factory, 5, 3)[:3]] == [False, True, False]
    finally:
        sink.close()
    with pytest.raises(ValueError, match="purple"):
        GpioLedSink({"purple": 6}, pin_factory=factory)


def test_shoe_led_sink_sends_the_pattern_dict() -> None:
    sent: list[dict[str, object]] = []
    sink = ShoeLedSink(sent.append)
    try:
        sink.handle(Instruction(Signal.SCRAMBLE, "Scramble", cards=("stub", "burn 4th")))
        assert sink.flush()
        sink.handle(Alert("x", "y"))
        sink.handle(Instruction(Signal.CUT, "Cut"))
        assert sink.flush()
    finally:
        sink.close()
    assert [p["name"] for p in sent] == ["scramble", "cut"]
    assert sent[0] == {"name": "scramble", "leds": ["blue", "amber"], "mode": "blink", "on_ms": 400,
                       "off_ms": 400, "attention": True}


def test_shoe_led_sink_survives_a_lost_port() -> None:
    calls: list[str] = []

    def send(pattern: dict[str, object]) -> None:
        calls.append(str(pattern["name"]))
        if len(calls) == 1:
            raise ConnectionError("shoe disconnected")

    sink = ShoeLedSink(send)
    sink.handle(Instruction(Signal.DEAL, "Deal"))
    assert sink.flush()
    sink.handle(Instruction(Signal.BURN, "Burn"))
    assert sink.flush()
    sink.close()
    assert calls == ["deal", "burn"] and sink.errors == 1 and sink.sent == 1


def test_shoe_led_sink_hands_a_pattern_over_once_until_it_changes() -> None:
    calls: list[str] = []
    fail = [False]

    def send(pattern: dict[str, object]) -> None:
        calls.append(str(pattern["name"]))
        if fail[0]:
            fail[0] = False
            raise ConnectionError("shoe disconnected")

    sink = ShoeLedSink(send)
    try:
        for signal in (Signal.BURN, Signal.DEAL, Signal.DEAL, Signal.DEAL, Signal.BETTING, Signal.DEAL):
            sink.handle(Instruction(signal, str(signal)))
            assert sink.flush()
        assert calls == ["burn", "deal", "betting", "deal"]  # three deals in a row: one frame
        fail[0] = True
        sink.handle(Instruction(Signal.BURN, "Burn"))
        assert sink.flush()
        sink.handle(Instruction(Signal.BURN, "Burn"))  # the first was not taken: tried again
        assert sink.flush()
        assert calls[-2:] == ["burn", "burn"] and sink.errors == 1
        sink.service_lost(True)
        assert sink.flush()
        sink.service_lost(False)  # back: the last signal again, though handed before the stop
        assert sink.flush()
        assert calls[-2:] == ["stop", "burn"]
    finally:
        sink.close()


def test_shoe_led_sink_hands_a_pattern_over_in_the_callers_thread_when_that_needs_no_wait() -> None:
    """``try_send`` first, in the thread that calls ``handle`` (the controller's); the worker's
    ``send_leds`` only for a pattern ``try_send`` could not hand over without waiting."""
    import threading

    tried: list[tuple[str, str]] = []
    sent: list[tuple[str, str]] = []
    take = [True]

    def try_send(pattern: dict[str, object]) -> bool:
        tried.append((str(pattern["name"]), threading.current_thread().name))
        return take[0]

    def send(pattern: dict[str, object]) -> None:
        sent.append((str(pattern["name"]), threading.current_thread().name))

    sink = ShoeLedSink(send, try_send=try_send)
    try:
        me = threading.current_thread().name
        sink.handle(Instruction(Signal.DEAL, "Deal"))
        sink.handle(Instruction(Signal.DEAL, "Deal"))  # the shoe has it: not handed again
        assert tried == [("deal", me)] and sent == [] and sink.direct == 1 and sink.sent == 1
        take[0] = False  # the link is busy: the worker sends it, waiting as it must
        sink.handle(Instruction(Signal.BURN, "Burn"))
        assert sink.flush()
        assert tried[-1] == ("burn", me) and sent == [("burn", "shoe-leds")]
        assert sink.sent == 2 and sink.direct == 1 and sink.errors == 0
    finally:
        sink.close()


def test_shoe_led_sink_never_lets_a_pattern_overtake_one_the_worker_holds() -> None:
    """While the worker waits on the port with an older pattern, a newer one is not written from
    the caller's thread (it would reach the shoe first, and the older one would then stay lit):
    it waits for the worker, which sends it next."""
    import threading

    tried: list[str] = []
    sent: list[str] = []
    port_free = threading.Event()
    busy = threading.Event()

    def try_send(pattern: dict[str, object]) -> bool:
        tried.append(str(pattern["name"]))
        return len(tried) > 1  # the first would have to wait

    def send(pattern: dict[str, object]) -> None:
        busy.set()
        port_free.wait(5.0)  # a full output buffer
        sent.append(str(pattern["name"]))

    sink = ShoeLedSink(send, try_send=try_send)
    try:
        sink.handle(Instruction(Signal.BURN, "Burn"))
        assert busy.wait(5.0)
        sink.handle(Instruction(Signal.DEAL, "Deal"))
        assert tried == ["burn"]  # not tried while the worker holds the burn
        port_free.set()
        assert sink.flush()
        assert sent == ["burn", "deal"] and sink.direct == 0
        sink.handle(Instruction(Signal.BETTING, "Betting"))  # the worker idle again: tried at once
        assert tried == ["burn", "betting"] and sink.direct == 1
    finally:
        sink.close()


def test_shoe_led_sink_counts_an_error_of_the_direct_hand_over_and_tries_again() -> None:
    calls: list[str] = []

    def try_send(pattern: dict[str, object]) -> bool:
        calls.append(str(pattern["name"]))
        if len(calls) == 1:
            raise ConnectionError("shoe disconnected")
        return True

    sink = ShoeLedSink(lambda _p: None, try_send=try_send)
    try:
        sink.handle(Instruction(Signal.DEAL, "Deal"))
        sink.handle(Instruction(Signal.DEAL, "Deal"))  # not taken the first time: tried again
        assert calls == ["deal", "deal"] and sink.errors == 1 and sink.sent == 1
    finally:
        sink.close()


def test_console_plain_one_line_per_signal() -> None:
    out = io.StringIO()
    sink = ConsoleLedSink(out)
    sink.handle(Instruction(Signal.DEAL, "Deal seat 3 down", seat=3, face="down", street="3rd"))
    sink.handle(Alert("x", "not an LED signal"))
    sink.handle(Instruction(Signal.STOP, "Stop: read the display"))
    sink.close()  # writes what waits
    lines = out.getvalue().splitlines()
    assert lines == [
        'signal=deal leds=green mode=steady seat=3 face=down street=3rd text="Deal seat 3 down"',
        'signal=stop leds=red mode=blink seat=- face=- street=- text="Stop: read the display"',
    ]
    assert "\x1b" not in out.getvalue()


def test_console_colour_on_a_tty() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    sink = ConsoleLedSink(out)
    sink.handle(Instruction(Signal.SHOE_FAULT, "Shoe fault: jam"))
    assert sink.flush()
    sink.close()
    line = out.getvalue()
    assert line.count("\n") == 1 and "SHOE-FAULT" in line and "Shoe fault: jam" in line
    assert "\x1b[1;31m●" in line and "\x1b[1;33m●" in line  # red and amber, blinking (bold)


def test_console_a_stalled_stream_never_holds_up_the_caller() -> None:
    """A terminal paused (or a pipe nobody reads): handle() returns at once, at most
    MAX_WAITING lines wait, and the lines dropped are said once the stream takes lines again."""
    release, entered = threading.Event(), threading.Event()
    writes: list[str] = []

    class Paused(io.StringIO):
        def write(self, text: str) -> int:
            entered.set()
            release.wait(10)
            writes.append(text)
            return len(text)

    sink = ConsoleLedSink(Paused(), color=False)
    try:
        sink.handle(Instruction(Signal.DEAL, "first"))
        assert entered.wait(5)  # taken alone by the thread, which now blocks in write
        started = time.monotonic()
        for n in range(ConsoleLedSink.MAX_WAITING + 50):
            sink.handle(Instruction(Signal.DEAL, f"line {n}"))
        assert time.monotonic() - started < 5.0  # never waited for the stream (it waits 10 s)
        assert not sink.flush(0.05)  # still stalled
        release.set()
        assert sink.flush(5.0)
    finally:
        sink.close()
    text = "".join(writes)
    assert sink.dropped == 50  # MAX_WAITING + 50 lines came while the stream was stalled
    assert f"({sink.dropped} signal lines not shown" in text
    assert f'text="line {ConsoleLedSink.MAX_WAITING + 49}"' in text  # the newest kept
    assert sink.errors == 0


def test_console_a_broken_stream_is_counted_and_the_sink_goes_on() -> None:
    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError("nobody reads")

    sink = ConsoleLedSink(Broken(), color=False)
    sink.handle(Instruction(Signal.DEAL, "one"))
    assert sink.flush()
    sink.handle(Instruction(Signal.DEAL, "two"))
    assert sink.flush()
    sink.close()
    assert sink.errors == 2


def test_scaled_pattern_keeps_shape() -> None:
    p = LedPattern(Signal.STOP, ("red",), "blink", 0.5, 0.5, True).scaled(0.1)
    assert (p.on_s, p.off_s, p.leds, p.attention) == (pytest.approx(0.05), pytest.approx(0.05), ("red",), True)


def test_docs_table_matches_the_patterns() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "display.md").read_text()
    for signal, p in PATTERNS.items():
        timing = "" if p.mode == "steady" else f"{round(p.on_s * 1000)} ms / {round(p.off_s * 1000)} ms"
        row = (f"| `{signal}` | {' + '.join(p.leds) or '(all off)'} | {p.mode} | {timing} | "
               f"{'yes' if p.attention else ''} |")
        assert "".join(row.split()) in {"".join(line.split()) for line in doc.splitlines()}, row


def test_mock_led_sink_keeps_each_pattern_with_its_time() -> None:
    from drivers.leds import MockLedSink
    from shoe_ctl.signals import pattern_for

    ticks = iter([1.0, 2.5])
    mock = MockLedSink(clock=lambda: next(ticks))
    mock.handle(Instruction(Signal.DEAL, "deal", seat=3, face="down"))
    mock.handle(Instruction(Signal.STOP, "stop"))
    assert mock.history == [(1.0, pattern_for(Signal.DEAL)), (2.5, pattern_for(Signal.STOP))]
    assert mock.signals() == [Signal.DEAL, Signal.STOP]
    mock.close()
    assert len(mock.history) == 2


def test_pattern_dict_is_one_shared_dict_per_signal_equal_to_as_dict() -> None:
    """``pattern_dict`` gives each signal's ``as_dict()``, the same object on every call for a
    :class:`Signal` (the shoe's LED sink compares it by identity first), and STOP for an unknown
    name, as ``pattern_for``."""
    from shoe_ctl.signals import pattern_dict

    for sig in Signal:
        assert pattern_dict(sig) == pattern_for(sig).as_dict()
        assert pattern_dict(sig) is pattern_dict(sig)
        assert pattern_dict(str(sig.value)) == pattern_for(sig).as_dict()
    assert pattern_dict("no-such-signal") == pattern_for(Signal.STOP).as_dict()
