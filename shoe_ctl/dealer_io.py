"""Everything the dealer sees and touches, built from the table configuration in one call.

:func:`start_dealer_io` builds the LEDs (one sink per backend of :data:`LED_BACKENDS`), the dealer
display and the buttons; :class:`shoe_ctl.table.Table` calls it. What each part does and the
order of the sinks: docs/display.md, *Wiring it into the service*.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TextIO

from drivers.buttons import DealerButtons
from drivers.leds import ConsoleLedSink, GpioLedSink, MockLedSink, ShoeLedSink
from shoe_ctl.config import TableConfig
from shoe_ctl.events import Command, DisplayUpdate, Signal

if TYPE_CHECKING:
    from gpiozero import Factory  # a gpiozero pin factory (MockFactory in tests)

    from shoe_ctl.display.model import DisplayModel
    from shoe_ctl.display.server import DisplaySink

TOKEN_ENV = "SHOE_CTL_DISPLAY_TOKEN"


class LastHand:
    """The arguments of the ``new-hand`` button: the previous hand's seats (player order), game
    and rules, as the machine published them in its ``DisplayUpdate`` states.

    A controller sink: :meth:`handle` takes every command (from the controller's thread) and
    keeps what a ``DisplayUpdate`` says; :meth:`new_hand_args` may be called from any thread.

    :param seats: table seat numbers dealt in before any hand was seen (the configured table).
    :param game: the game before any hand (``stud``, ``stud8``, ``razz``).
    :param rules: the rule profile before any hand.
    """

    def __init__(self, seats: list[int], game: str, rules: str) -> None:
        self._args: dict[str, Any] = {"seats": list(seats), "game": game, "rules": rules}

    def handle(self, command: Command) -> None:
        """Follow a ``DisplayUpdate`` (its ``seats``, ``game``, ``rules``); ignore the rest."""
        if not isinstance(command, DisplayUpdate):
            return
        state = command.state
        args = dict(self._args)
        seats = [e["seat"] for e in state.get("seats") or [] if isinstance(e, Mapping)
                 and isinstance(e.get("seat"), int)]
        dealt = state.get("hand") is not None or state.get("last_hand") is not None
        if dealt and len(seats) >= 2:
            args["seats"] = seats
        for key in ("game", "rules"):
            if isinstance(state.get(key), str) and state[key]:
                args[key] = state[key]
        self._args = args  # one assignment: readers see the old or the new dict

    def new_hand_args(self) -> dict[str, Any]:
        """``{"seats": [int], "game": str, "rules": str}`` for a ``new-hand`` input."""
        args = self._args
        return {"seats": list(args["seats"]), "game": args["game"], "rules": args["rules"]}

    def close(self) -> None:
        """Nothing to release."""


@dataclass
class DealerIO:
    """What :func:`start_dealer_io` built. ``sinks`` go to ``Controller.add_sink`` (in order: the LED
    sinks first, the display last, so a card's LED signal is not held up by the display's thread);
    :meth:`close` closes every part (idempotent)."""

    sinks: list[LedSink | LastHand | DisplaySink] = field(default_factory=list)
    display: DisplaySink | None = None
    buttons: DealerButtons | None = None

    @property
    def display_url(self) -> str | None:
        """The page's URL, or None without a display."""
        return None if self.display is None else str(self.display.url)

    def close(self) -> None:
        """Close the buttons, the display and every LED sink."""
        if self.buttons is not None:
            self.buttons.close()
            self.buttons = None
        for sink in self.sinks:
            sink.close()
        self.sinks = []
        self.display = None


@dataclass(frozen=True)
class LedContext:
    """What an LED backend may need besides the configuration: the shoe link's ``send_leds`` and
    ``try_send_leds``, the console's stream and a gpiozero pin factory (tests)."""

    send_leds: Callable[[dict[str, Any]], Any] | None = None
    try_send_leds: Callable[[dict[str, Any]], bool] | None = None
    stream: TextIO | None = None
    pin_factory: Factory | None = None


LedSink = GpioLedSink | ConsoleLedSink | ShoeLedSink | MockLedSink
"""The LED sinks a backend builds."""


def _gpio_leds(cfg: TableConfig, ctx: LedContext) -> LedSink:
    return GpioLedSink(cfg.leds.pins, pwm=cfg.leds.pwm, active_high=cfg.leds.active_high,
                       pin_factory=ctx.pin_factory)


def _console_leds(cfg: TableConfig, ctx: LedContext) -> LedSink:
    return ConsoleLedSink(ctx.stream)


def _shoe_leds(cfg: TableConfig, ctx: LedContext) -> LedSink:
    if ctx.send_leds is None:
        raise ValueError("[leds] backend = \"shoe\" needs a shoe link (no send_leds given)")
    return ShoeLedSink(ctx.send_leds, on_close=Signal.STOP, try_send=ctx.try_send_leds)  # a stopped service leaves no "deal" lit


def _mock_leds(cfg: TableConfig, ctx: LedContext) -> LedSink:
    return MockLedSink()


LED_BACKENDS: Mapping[str, Callable[[TableConfig, LedContext], LedSink]] = {
    "gpio": _gpio_leds,
    "console": _console_leds,
    "shoe": _shoe_leds,
    "mock": _mock_leds,
}
"""Every LED backend by its ``[leds] backend`` name, in the order their sinks are added."""


def display_token(cfg: TableConfig, env: Mapping[str, str] | None = None) -> str | None:
    """The display token: ``$SHOE_CTL_DISPLAY_TOKEN`` if set, else ``[display] token``."""
    env = os.environ if env is None else env
    return env.get(TOKEN_ENV) or cfg.display.token


def start_dealer_io(cfg: TableConfig, post: Callable[[Any], Any], *,
                    display: tuple[str, int] | None | Literal["config"] = "config",
                    send_leds: Callable[[dict[str, Any]], Any] | None = None,
                    try_send_leds: Callable[[dict[str, Any]], bool] | None = None,
                    console: bool = False, stream: TextIO | None = None, pin_factory: Factory | None = None,
                    env: Mapping[str, str] | None = None, display_model: DisplayModel | None = None) -> DealerIO:
    """Build and start the dealer's LEDs, display and buttons from ``cfg``.

    :param cfg: the table configuration (``shoe_ctl.config.load_table_config``).
    :param post: the controller's thread-safe ``post(event)`` (display touches, buttons).
    :param display: ``(host, port)`` (from ``--display HOST:PORT``), None for ``--display off``,
        or ``"config"`` to use ``[display]`` (``enabled``, ``host``, ``port``).
    :param send_leds: the shoe link's ``send_leds``; adds the shoe's LEDs.
    :param try_send_leds: the shoe link's ``try_send_leds``: the shoe's LED frame written in the
        controller's thread when it needs no wait (:class:`drivers.leds.ShoeLedSink`).
    :param console: also print the signals in the terminal.
    :param stream: where the console sink writes (default stdout).
    :param pin_factory: gpiozero pin factory for the LED board and buttons (tests).
    :param display_model: the display's model to go on from (a restarted service's), else a new one.
    :raises shoe_ctl.display.DisplayError: a display off loopback without a token.
    :raises OSError: the display's address cannot be bound.
    :raises ValueError: ``[leds] backend = "shoe"`` without ``send_leds``.
    :raises gpiozero.GPIOZeroError: GPIO pins cannot be had.
    """
    io = DealerIO()
    try:
        if display == "config":
            display = (cfg.display.host, cfg.display.port) if cfg.display.enabled else None
        if display is not None:
            # imported here: the display server brings aiohttp (a fifth of a second to import),
            # which a table without a display (the direct replay, the bench's rigs) never needs
            from shoe_ctl.display.server import start_display

            io.display = start_display(display[0], display[1], post, token=display_token(cfg, env),
                                       table_seats=cfg.seats, model=display_model)
        wanted = {cfg.leds.backend} | ({"console"} if console else set()) | ({"shoe"} if send_leds else set())
        ctx = LedContext(send_leds=send_leds, try_send_leds=try_send_leds, stream=stream, pin_factory=pin_factory)
        for name, build in LED_BACKENDS.items():  # the map's order: GPIO first, the shoe's LEDs last
            if name in wanted:
                io.sinks.append(build(cfg, ctx))
        last = None
        if cfg.buttons.pins:
            last = LastHand(list(range(1, cfg.seats + 1)), str(cfg.game), str(cfg.rules))
            io.sinks.append(last)
        if io.display is not None:
            io.sinks.append(io.display)  # after the LEDs: its loop thread wakes and competes for the GIL
        if last is not None:
            io.buttons = DealerButtons(cfg.buttons.pins, post, bounce_s=cfg.buttons.bounce_ms / 1000,
                                       pull_up=cfg.buttons.pull_up, pin_factory=pin_factory,
                                       new_hand_args=last.new_hand_args)
    except BaseException:
        io.close()
        raise
    return io
