"""LED backends: sinks showing each instruction's signal (patterns: :mod:`shoe_ctl.signals`).

The LEDs are named by colour (``green``, ``amber``, ``blue``, ``white``, ``red``); the pins come
from ``config/table.toml`` (``[leds]``). Three sinks turn :class:`~shoe_ctl.events.Instruction`
commands into light and ignore every other command:

- :class:`GpioLedSink` — an LED board on the Pi's GPIO through gpiozero 2.x;
- :class:`ShoeLedSink` — the same pattern as a small dict for the shoe's own LEDs, handed to the
  shoe link in the controller's thread when that needs no wait, else from a worker thread;
- :class:`ConsoleLedSink` — one line per signal on a terminal (coloured on a tty).

No sink ever receives a card: an Instruction carries a seat, a face and the public words only,
so the hole-card embargo holds for the LEDs by construction.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from drivers.gpio_env import named_failure, prepare_gpio, quiet_fallbacks
from shoe_ctl.events import Command, Instruction, Signal
from shoe_ctl.lifecycle import BatchWorker, Closeable
from shoe_ctl.signals import LED_NAMES, PATTERNS, LedPattern, pattern_dict, pattern_for

if TYPE_CHECKING:
    from gpiozero import Factory  # a gpiozero pin factory (MockFactory in tests)

__all__ = ["LED_NAMES", "PATTERNS", "ConsoleLedSink", "GpioLedSink", "LedPattern", "MockLedSink", "ShoeLedSink",
           "pattern_for"]


# --------------------------------------------------------------------------- GPIO


class GpioLedSink(Closeable):
    """An LED board on GPIO pins (gpiozero 2.x ``LEDBoard``), showing each Instruction's signal.

    :param pins: LED name (from :data:`LED_NAMES`) -> GPIO pin (BCM number or gpiozero pin name).
        LEDs a pattern names but the board lacks are skipped.
    :param pwm: True for PWM LEDs (``pulse`` fades; else it is a slow blink).
    :param active_high: False when the LEDs are wired to sink current.
    :param pin_factory: a gpiozero pin factory (``MockFactory`` in tests), else gpiozero's default.
    :param patterns: override :data:`PATTERNS` (e.g. scaled times in tests).
    :raises ValueError: for an LED name not in :data:`LED_NAMES`.
    :raises gpiozero.GPIOZeroError: when the pins cannot be had (wrong pin, busy, no GPIO access).
    :raises drivers.gpio_env.GpioSetupError: when lgpio itself failed to load (the cause named).

    ``handle`` only switches pins or starts gpiozero's own blink threads, so it returns at once.
    """

    def __init__(self, pins: Mapping[str, int | str], *, pwm: bool = False, active_high: bool = True,
                 pin_factory: Factory | None = None, patterns: Mapping[Signal, LedPattern] | None = None) -> None:
        if pin_factory is None:
            prepare_gpio()  # lgpio's FIFO in a folder of its own, whatever the working folder
        from gpiozero import LEDBoard

        unknown = sorted(set(pins) - set(LED_NAMES))
        if unknown:
            raise ValueError(f"[leds] pins: unknown LED name(s) {unknown}; allowed: {list(LED_NAMES)}")
        self._patterns = dict(patterns or PATTERNS)
        self._pwm = pwm
        self._lock = threading.Lock()
        super().__init__(self._lock)
        self.current: LedPattern | None = None
        self._held: LedPattern | None = None  # the pattern shown before the service was lost
        with quiet_fallbacks() as tried:
            try:
                self.board = LEDBoard(pwm=pwm, active_high=active_high, initial_value=False,
                                      pin_factory=pin_factory, _order=[n for n in LED_NAMES if n in pins],
                                      **dict(pins))
            except Exception as exc:
                raise named_failure(exc, tried=tried) from exc

    def handle(self, command: Command) -> None:
        """Show the signal of an :class:`Instruction`; every other command is ignored, and so is
        the signal already shown (a street of *deal* signals switches the pins once, and a blink
        keeps its rhythm)."""
        if isinstance(command, Instruction):
            pattern = self._patterns.get(command.signal, PATTERNS[Signal.STOP])
            if pattern is not self.current:
                self.show(pattern)

    def show(self, pattern: LedPattern) -> None:
        """Switch the board to ``pattern`` (all other LEDs off). An LED steady on or off already,
        as the pattern wants it, is left alone (gpiozero's ``on``/``off`` stop a blink and write the
        pin each time); one that blinks or pulses is started again, in step with the pattern's
        other LEDs."""
        with self._lock:
            if self._closed:
                return
            before, self.current = self.current, pattern
            was_lit = before.leds if before is not None else None  # None: not known, every LED switched
            was_steady = before.leds if before is not None and before.mode == "steady" else ()
            lit = [name for name in pattern.leds if name in self.board.namedtuple._fields]
            for name in self.board.namedtuple._fields:
                if name not in lit and (was_lit is None or name in was_lit):
                    getattr(self.board, name).off()
            for name in lit:
                led = getattr(self.board, name)
                if pattern.mode == "steady":
                    if name not in was_steady:
                        led.on()
                elif pattern.mode == "pulse" and self._pwm:
                    led.pulse(fade_in_time=pattern.on_s, fade_out_time=pattern.off_s)
                elif pattern.mode == "pulse":
                    led.blink(on_time=pattern.on_s, off_time=pattern.off_s)
                else:
                    led.blink(on_time=pattern.on_s, off_time=pattern.off_s)

    def service_lost(self, lost: bool) -> None:
        """The controller is stuck (``True``: show *stop*, whatever was lit, so no stale green
        stays on) or runs again (``False``: the pattern shown before). Called by
        :class:`shoe_ctl.service.watchdog.ControllerWatchdog`; returns at once."""
        if lost:
            held = self.current
            self.show(self._patterns.get(Signal.STOP, PATTERNS[Signal.STOP]))
            self._held = held
        else:
            held, self._held = self._held, None
            if held is not None:
                self.show(held)

    def _close(self) -> None:
        """``close()``: turn every LED off and release the pins (a stopped service lights nothing)."""
        try:
            self.board.off()
        finally:
            self.board.close()


# --------------------------------------------------------------------------- the shoe's LEDs


class ShoeLedSink(Closeable):
    """The signals as LED frames for the shoe's own LEDs.

    Each Instruction's pattern (:meth:`LedPattern.as_dict`) is handed to ``try_send`` in the
    caller's thread (the controller's), which writes the LED frame only when it need not wait for
    it; when it cannot (``try_send`` returns False, or there is none), and while the worker is
    busy, the pattern goes to ``send_leds`` from this sink's worker thread, so a slow or unplugged
    port never blocks the controller, and a pattern never overtakes an older one. Only the newest
    pattern waits: a burst of signals sends the last one. A pattern equal to the one last handed
    over is not handed again (a street of *deal* signals is one LED frame; the link re-sends its
    pattern until the shoe reports it, also after a reconnect). Errors from either
    (``OSError``, ``ConnectionError`` while the shoe is away) are counted in :attr:`errors` and
    the next signal is tried again, even the same one.

    :param send_leds: e.g. ``ShoeLink.send_leds``; called with one dict per signal, may wait.
    :param try_send: e.g. ``ShoeLink.try_send_leds``: the same without waiting, True when the
        pattern was handed over, False when that would have to wait (nothing done); None: every
        pattern goes through the worker.
    :param on_close: the signal sent last when the sink closes (the service stops), e.g.
        ``Signal.STOP``, so the shoe shows no stale "deal" until its own no-host pattern (3 s
        without a host frame, docs/protocol.md); None: nothing more is sent.
    """

    def __init__(self, send_leds: Callable[[dict[str, Any]], Any], *, on_close: Signal | None = None,
                 try_send: Callable[[dict[str, Any]], bool] | None = None) -> None:
        self._send = send_leds
        self._try = try_send
        self._sending = False  # the worker has a pattern in hand
        self._on_close = on_close
        self._last: dict[str, Any] | None = None
        self._lost = False
        self._cond = threading.Condition()
        super().__init__(self._cond)
        self._pending: dict[str, Any] | None = None
        self._handed: dict[str, Any] | None = None  # the pattern send_leds last took without an error
        self.sent = 0
        """Patterns handed over, either way."""
        self.direct = 0
        """Of those, the ones handed over in the caller's thread (``try_send``)."""
        self.errors = 0
        self._thread = threading.Thread(target=self._run, name="shoe-leds", daemon=True)
        self._thread.start()

    def handle(self, command: Command) -> None:
        """Hand over the pattern of an :class:`Instruction` now when that needs no wait
        (``try_send``), else queue it for the worker (replacing one not yet sent)."""
        if not isinstance(command, Instruction):
            return
        pattern = pattern_dict(command.signal)  # one shared dict per signal
        with self._cond:
            if self._closed:
                return
            self._last = pattern
            if self._lost or (self._pending is None and pattern == self._handed):
                return  # stuck: stop is shown; or the shoe has this pattern already
            if self._try is not None and self._pending is None and not self._sending:
                try:
                    if self._try(pattern):
                        self.sent += 1
                        self.direct += 1
                        self._handed = pattern
                        return
                except (OSError, ConnectionError, ValueError):
                    self.errors += 1
                    self._handed = None
                    return
            self._pending = pattern
            self._cond.notify()

    def service_lost(self, lost: bool) -> None:
        """The controller is stuck (``True``: the shoe shows *stop* instead of the last signal,
        the link's own thread carries it) or runs again (``False``: the last signal again).
        Called by :class:`shoe_ctl.service.watchdog.ControllerWatchdog`; returns at once."""
        with self._cond:
            if self._closed:
                return
            self._lost = lost
            pattern = pattern_dict(Signal.STOP) if lost else self._last
            if pattern is not None:
                self._pending = pattern
                self._cond.notify()

    def flush(self, timeout: float = 1.0) -> bool:
        """Wait until the pending pattern has been handed over; False on timeout (tests)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending is None, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending is not None or self._closed)
                if self._pending is None:
                    return
                pattern = self._pending
                self._sending = True
            handed: dict[str, Any] | None = None
            try:
                self._send(pattern)
                self.sent += 1
                handed = pattern
            except (OSError, ConnectionError, ValueError):
                self.errors += 1
            with self._cond:
                self._handed = handed
                self._sending = False
                if self._pending is pattern:
                    self._pending = None
                self._cond.notify_all()
                if self._closed and self._pending is None:
                    return

    def _closing(self) -> None:
        if self._on_close is not None:
            self._pending = pattern_dict(self._on_close)
        self._cond.notify_all()

    def _close(self) -> None:
        """``close()``: send what is pending (the ``on_close`` signal when set), stop the worker
        and join it."""
        self._thread.join(timeout=2.0)


# --------------------------------------------------------------------------- terminal

_ANSI = {"green": "32", "amber": "33", "blue": "34", "white": "37", "red": "31"}


class ConsoleLedSink(Closeable):
    """The signals in a terminal: one line per Instruction.

    On a tty the line starts with coloured dots for the lit LEDs (bold when blinking), e.g.
    ``●○○○○ DEAL       seat 3 down — Deal seat 3 down``; otherwise one plain line
    ``signal=deal leds=green mode=steady seat=3 face=down street=3rd text="Deal seat 3 down"``
    (for logs and pipes).

    The lines are written by the sink's own thread (``console-leds``, a
    :class:`~shoe_ctl.lifecycle.BatchWorker`), so a terminal that is paused or a pipe nobody reads
    never holds up the controller: the first line after a quiet spell at once, then at most one
    write per :attr:`GAP_S` holding every line that came meanwhile. At most :attr:`MAX_WAITING`
    lines wait; beyond that the oldest are dropped, counted in :attr:`dropped` and said in one line
    when the stream takes lines again. A stream that fails is counted in :attr:`errors`.

    :param stream: where to write (default ``sys.stdout``).
    :param color: force colour on/off; default: on when ``stream`` is a tty and ``NO_COLOR`` is
        unset or empty (https://no-color.org).
    """

    MAX_WAITING = 1000
    """Instructions waiting to be written at most (a stalled stream)."""
    GAP_S = 0.01
    """Seconds between two writes at least (the lines of a burst wait for the next)."""

    def __init__(self, stream: TextIO | None = None, *, color: bool | None = None) -> None:
        super().__init__()
        self._stream = stream if stream is not None else sys.stdout
        if color is None:
            isatty = getattr(self._stream, "isatty", None)
            color = bool(isatty and isatty()) and not os.environ.get("NO_COLOR")
        self._color = color
        self.errors = 0
        self._worker = BatchWorker("console-leds", self._write, gap_s=self.GAP_S, max_waiting=self.MAX_WAITING)

    @property
    def dropped(self) -> int:
        """Lines dropped so far because the stream did not take them in time."""
        return self._worker.dropped

    def format(self, ins: Instruction) -> str:
        """The line for one Instruction (without the newline)."""
        pattern = pattern_for(ins.signal)
        if not self._color:
            parts = [f"signal={ins.signal}", f"leds={'+'.join(pattern.leds) or '-'}", f"mode={pattern.mode}",
                     f"seat={ins.seat if ins.seat is not None else '-'}", f"face={ins.face or '-'}",
                     f"street={ins.street or '-'}", f'text="{ins.text}"']
            return " ".join(parts)
        dots = []
        for name in LED_NAMES:
            if name in pattern.leds:
                style = "1;" if pattern.mode != "steady" else ""
                dots.append(f"\x1b[{style}{_ANSI[name]}m●\x1b[0m")
            else:
                dots.append("\x1b[2m○\x1b[0m")
        label = str(ins.signal).upper()
        if pattern.attention:
            label = f"\x1b[1;5m{label:<10}\x1b[0m"
        else:
            label = f"\x1b[1m{label:<10}\x1b[0m"
        where = " ".join(x for x in (f"seat {ins.seat}" if ins.seat is not None else "", ins.face or "",
                                     ins.street or "") if x)
        return f"{''.join(dots)} {label} {where:<16} {ins.text}"

    def handle(self, command: Command) -> None:
        """Queue the line of an :class:`Instruction` (returns at once); other commands are ignored."""
        if isinstance(command, Instruction):
            self._worker.put(command)

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until every line queued so far is written; False on timeout (a stalled stream)."""
        return self._worker.flush(timeout)

    def _write(self, batch: list[Instruction], dropped: int) -> None:
        lines = [self.format(ins) for ins in batch]
        if dropped:
            lines.insert(0, f"({dropped} signal lines not shown: the terminal did not take them in time)")
        try:
            self._stream.write("\n".join(lines) + "\n")
            self._stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: the service goes on
            self.errors += 1

    def _close(self) -> None:
        """``close()``: write what waits (for at most 2 s) and stop the thread; the stream
        belongs to the caller and stays open."""
        self._worker.close()


# --------------------------------------------------------------------------- recording mock


class MockLedSink:
    """A recording LED backend (tests, demos): keeps ``history``, a list of ``(time, pattern)``
    per signal shown (``time.monotonic()`` seconds), as gpiozero's ``MockPin`` keeps its states.

    :param clock: the clock stamping each entry (default ``time.monotonic``).
    """

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        import time

        self._clock = clock or time.monotonic
        self.history: list[tuple[float, LedPattern]] = []

    def handle(self, command: Command) -> None:
        """Record the pattern of an :class:`Instruction`; every other command is ignored."""
        if isinstance(command, Instruction):
            self.history.append((self._clock(), pattern_for(command.signal)))

    def signals(self) -> list[Signal]:
        """The signals shown so far, in order."""
        return [pattern.signal for _t, pattern in self.history]

    def close(self) -> None:
        """Nothing to release; the history stays readable."""
