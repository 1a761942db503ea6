"""The signals a dealer learns: one LED pattern per :class:`~shoe_ctl.events.Signal`.

Domain data shared by every LED backend (:mod:`drivers.leds`) and the dealer display. Each signal
lights a fixed set of named LEDs ``steady`` (on until the next signal), ``blink`` (every
*attention* signal: stop, shoe fault, scramble, degraded) or ``pulse`` (fades; a board without PWM
shows a slow blink). The table of patterns is in docs/display.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from shoe_ctl.events import Signal

__all__ = ["LED_NAMES", "PATTERNS", "LedPattern", "Mode", "pattern_dict", "pattern_for"]

LED_NAMES: tuple[str, ...] = ("green", "amber", "blue", "white", "red")
"""Every LED a board may have, in the order the console and the display draw them."""

Mode = Literal["steady", "blink", "pulse"]


@dataclass(frozen=True, slots=True)
class LedPattern:
    """How one signal looks.

    :param signal: the signal shown.
    :param leds: names from :data:`LED_NAMES` that light (empty: all off).
    :param mode: ``"steady"``, ``"blink"`` or ``"pulse"``.
    :param on_s: seconds on per blink, or fade-in seconds per pulse.
    :param off_s: seconds off per blink, or fade-out seconds per pulse.
    :param attention: True for the signals that demand the dealer's attention (they blink).
    """

    signal: Signal
    leds: tuple[str, ...]
    mode: Mode = "steady"
    on_s: float = 0.0
    off_s: float = 0.0
    attention: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form, as sent to the shoe and shown on the display:
        ``{"name", "leds", "mode", "on_ms", "off_ms", "attention"}``."""
        return {
            "name": str(self.signal),
            "leds": list(self.leds),
            "mode": self.mode,
            "on_ms": round(self.on_s * 1000),
            "off_ms": round(self.off_s * 1000),
            "attention": self.attention,
        }

    def scaled(self, factor: float) -> LedPattern:
        """The same pattern with its times multiplied by ``factor`` (tests, demos)."""
        return LedPattern(self.signal, self.leds, self.mode, self.on_s * factor, self.off_s * factor,
                          self.attention)


PATTERNS: Mapping[Signal, LedPattern] = {
    Signal.IDLE: LedPattern(Signal.IDLE, ()),
    Signal.DEAL: LedPattern(Signal.DEAL, ("green",)),
    Signal.BURN: LedPattern(Signal.BURN, ("amber",)),
    Signal.SCRAMBLE: LedPattern(Signal.SCRAMBLE, ("blue", "amber"), "blink", 0.4, 0.4, attention=True),
    Signal.CUT: LedPattern(Signal.CUT, ("blue",)),
    Signal.COMMUNITY: LedPattern(Signal.COMMUNITY, ("white",)),
    Signal.BETTING: LedPattern(Signal.BETTING, ("green",), "pulse", 1.0, 1.0),
    Signal.SHOWDOWN: LedPattern(Signal.SHOWDOWN, ("white", "green")),
    Signal.STOP: LedPattern(Signal.STOP, ("red",), "blink", 0.25, 0.25, attention=True),
    Signal.SHOE_FAULT: LedPattern(Signal.SHOE_FAULT, ("red", "amber"), "blink", 0.25, 0.25, attention=True),
    Signal.DEGRADED: LedPattern(Signal.DEGRADED, ("amber",), "blink", 0.8, 0.8, attention=True),
}
"""The one pattern per signal. Every :class:`Signal` has an entry (a test checks it)."""


def pattern_for(signal: Signal | str) -> LedPattern:
    """The pattern of ``signal``; an unknown signal name shows as STOP (never dark by mistake)."""
    try:
        return PATTERNS[Signal(signal)]
    except ValueError:
        return PATTERNS[Signal.STOP]


_DICTS: Mapping[str, dict[str, Any]] = {signal: pattern.as_dict() for signal, pattern in PATTERNS.items()}


def pattern_dict(signal: Signal | str) -> dict[str, Any]:
    """``pattern_for(signal).as_dict()``, made once per :class:`Signal` at import and shared by
    every caller (the shoe's LED sink hands it over on every instruction): treat it as read-only.
    A signal's name finds the same dict (a :class:`Signal` is its name, a ``StrEnum``); an unknown
    name shows as STOP, as :func:`pattern_for`."""
    return _DICTS.get(signal) or _DICTS[Signal.STOP]
