"""``shoe-ctl leds off [--config PATH]``: switch the table's GPIO LEDs off and release the pins.

systemd runs it after the service's process has ended, whatever ended it (``ExecStopPost=`` in
deploy/shoe-ctl.service): a killed or hung service (killed by the watchdog) leaves no LED lit
that no process drives any more, so no stale green tells the dealer to deal. See
docs/service.md, *When the service stops or hangs*.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from drivers.gpio_env import describe_gpio_failure
from drivers.leds import GpioLedSink
from shoe_ctl.cli.args import Subparsers, default_config_path
from shoe_ctl.config import load_table_config
from shoe_ctl.rules.profiles import ProfileError

if TYPE_CHECKING:
    from gpiozero import Factory  # a gpiozero pin factory (MockFactory in tests)


def register(subparsers: Subparsers) -> None:
    """Add ``leds`` to the CLI."""
    p = subparsers.add_parser("leds", help="switch the table's GPIO LEDs off (after the service ended)",
                              description="Switch the GPIO LEDs of [leds] pins off and release the pins; "
                              "the unit runs it after the service's process ended.")
    p.add_argument("action", choices=("off",), help="off: every LED off")
    p.add_argument("--config", default=str(default_config_path()), help="table configuration")
    p.set_defaults(func=leds)


def switch_off(config: Path, pin_factory: Factory | None = None) -> str:
    """Every configured GPIO LED off, the pins released; returns what was done.

    :raises shoe_ctl.rules.profiles.ProfileError: an unreadable configuration.
    :raises Exception: gpiozero's or lgpio's own error when the pins cannot be had (named by
        :func:`drivers.gpio_env.describe_gpio_failure`).
    """
    cfg = load_table_config(config)
    pins = dict(cfg.leds.pins)
    if cfg.leds.backend != "gpio" or not pins:
        return f"no GPIO LEDs configured ([leds] backend = \"{cfg.leds.backend}\"): nothing to switch off"

    GpioLedSink(pins, pwm=cfg.leds.pwm, active_high=cfg.leds.active_high, pin_factory=pin_factory).close()
    return f"LEDs off: {', '.join(f'{name} (pin {pin})' for name, pin in pins.items())}"


def leds(args: argparse.Namespace) -> int:
    """0 when the LEDs are off (or none are configured), 1 when the pins could not be had, 2 for
    an unreadable configuration."""
    try:
        print(switch_off(Path(args.config)), flush=True)
    except ProfileError as exc:
        print(f"shoe-ctl leds: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # gpiozero's and lgpio's own errors
        what, fix = describe_gpio_failure(exc, "shoe-ctl")
        print(f"shoe-ctl leds: {what}; {fix}", file=sys.stderr)
        return 1
    return 0
