"""The host's commands to the shoe: the LED pattern it should show and the dispense-counter
reset, each repeated until the shoe reports it done (``docs/protocol.md`` section 5, LED and
RESET_COUNTER).

:class:`HostCommands` is part of :class:`drivers.session.LinkSession`; no I/O. It sends its
frames through the session's :class:`drivers.link_admission.Admission`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from drivers import protocol as p
from drivers.link_admission import Admission
from drivers.link_timers import COMMAND_RETRY
from shoe_ctl.events import CounterReset

_LED_SPECS_CHECKED: set[tuple[Any, ...]] = set()
"""LED frame fields :func:`led_spec` has checked against the protocol already."""


def led_spec(pattern: Mapping[str, Any]) -> dict[str, Any]:
    """The LED frame fields of ``pattern`` (``{"name", "leds", "mode", "on_ms", "off_ms"}`` as
    ``drivers.leds.LedPattern.as_dict`` writes it), checked against the protocol.

    :raises ValueError: an LED name, mode or time the protocol cannot carry.
    """
    name = str(pattern.get("name", ""))
    spec: dict[str, Any] = {
        "signal": name if name in p.LED_SIGNALS else "",
        "leds": tuple(pattern.get("leds", ())),
        "mode": str(pattern.get("mode", "steady")),
        "on_ms": int(pattern.get("on_ms", 0)),
        "off_ms": int(pattern.get("off_ms", 0)),
    }
    try:
        key: tuple[Any, ...] | None = tuple(spec.values())
        if key in _LED_SPECS_CHECKED:
            return spec  # the same fields passed the check before (the signals are a few patterns)
    except TypeError:  # an unhashable LED name: the check below refuses it
        key = None
    p.encode_body(p.Led(0, 1, **spec))
    if key is not None and len(_LED_SPECS_CHECKED) < 256:
        _LED_SPECS_CHECKED.add(key)
    return spec


class HostCommands:
    """The LED pattern and the counter reset the host wants, and what the shoe reports.

    :param events: the session's list of events (a :class:`~shoe_ctl.events.CounterReset` is
        appended when the shoe first reports the epoch a reset asked for).
    :param sender: seals and queues the frames.
    """

    def __init__(self, events: list[Any], sender: Admission) -> None:
        self._events = events
        self._sender = sender
        self.led: dict[str, Any] | None = None
        """The fields of the pattern wanted (None before the first)."""
        self.led_token = 0
        self.shoe_led_token = 0
        self.reset_wanted = False
        self._reset_target: int | None = None
        self.shoe_epoch = 0
        self.reset_floor = 0
        """The shoe's next sequence number when the reset was asked: a card from it on counts."""
        self._last_tx = 0.0

    def show(self, spec: Mapping[str, Any], now: float, connected: bool) -> None:
        """Want ``spec`` shown under a new token; sent now when ``connected``."""
        self.led = dict(spec)
        self.led_token = self._new_token(self.led_token)
        if connected:
            self._send_led(now)

    def reset(self, shoe_next_seq: int, connected: bool) -> None:
        """Want the dispense counter reset under the shoe's next epoch; sent now when
        ``connected``. A card numbered ``shoe_next_seq`` or later confirms it."""
        self.reset_wanted = True
        self._reset_target = self.shoe_epoch % 0xFFFF + 1
        self.reset_floor = shoe_next_seq
        if connected:
            self._send_reset()

    def on_hello(self, hello: p.Hello, prev: p.Hello | None, now: float) -> None:
        """A HELLO accepted: what the shoe shows and counts under; an unfinished command again."""
        self.shoe_epoch = hello.epoch
        self.shoe_led_token = hello.led_token
        if self.reset_wanted:
            if hello.epoch == self._reset_target:
                self.note_epoch(hello.epoch)
            else:
                if self._reset_target is None or prev is None or prev.serial != hello.serial:
                    self._reset_target = hello.epoch % 0xFFFF + 1
                self._send_reset()
        if self.led is not None and hello.led_token != self.led_token:
            if hello.led_token == 0 or prev is None or prev.boot_id != hello.boot_id:
                self.led_token = self._new_token(hello.led_token)
            self._send_led(now)

    def on_heartbeat(self, msg: p.Heartbeat) -> None:
        """A HEARTBEAT: the token the shoe shows, and its epoch."""
        self.shoe_led_token = msg.led_token
        self.note_epoch(msg.epoch)

    def note_epoch(self, epoch: int, *, current: bool = True) -> None:
        """The shoe reported ``epoch`` (``current``: its epoch now, from a HEARTBEAT or HELLO; else
        from a CARD, which may be an older one). The first report of the epoch a reset asked for
        confirms it: a :class:`CounterReset` goes out before any card counted under it."""
        if current:
            self.shoe_epoch = epoch
        if self.reset_wanted and epoch == self._reset_target:
            self.reset_wanted = False
            self.shoe_epoch = epoch
            self._events.append(CounterReset(epoch))

    def _new_token(self, after: int) -> int:
        """The token after ``after`` (1..255, wrapping) that differs from the one the shoe shows:
        a pattern whose LED frame is lost must never look shown (protocol, LED)."""
        token = after % 255 + 1
        if token == self.shoe_led_token:
            token = token % 255 + 1
        return token

    def _send_led(self, now: float) -> None:
        if self.led is not None:
            sender = self._sender
            sender.send(p.Led(sender.next_seq(), self.led_token, **self.led))
            self._last_tx = now

    def _send_reset(self) -> None:
        assert self._reset_target is not None
        sender = self._sender
        sender.send(p.ResetCounter(sender.next_seq(), self._reset_target))

    # ------------------------------------------------------------------ the timer (drivers.link_timers)

    def led_outstanding(self) -> bool:
        """True while the shoe does not report the pattern wanted."""
        return self.led is not None and self.shoe_led_token != self.led_token

    def retry_due(self) -> float:
        """When an unfinished command is sent again (``inf``: none is)."""
        if self.led_outstanding() or (self.reset_wanted and self._reset_target is not None):
            return self._last_tx + COMMAND_RETRY
        return math.inf

    def retry(self, now: float) -> None:
        """Send every unfinished command again."""
        if self.led_outstanding():
            self._send_led(now)
        if self.reset_wanted and self._reset_target is not None:
            self._send_reset()
            self._last_tx = now
