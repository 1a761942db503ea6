"""``shoe-ctl bridge``: run the shoe's firmware on the Pi, with the reader and the card-out beam
wired to it, as a shoe on a pty (:mod:`drivers.shoe_bridge`); its own systemd unit is
``deploy/shoe-ctl-bridge.service``. docs/build-a-shoe.md, "The bridge on the Pi".
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from drivers import shoe_bridge as sb
from drivers.gpio_env import GpioSetupError, claiming
from shoe_ctl.cli.args import Subparsers


def register(subparsers: Subparsers) -> None:
    """Add ``bridge`` to the CLI."""
    p = subparsers.add_parser(
        "bridge", help="run the shoe firmware on the Pi (reader + card-out beam) as a shoe on a pty",
        description="Run the open shoe firmware on the Pi: it owns the RFID reader and the card-out beam and "
        "serves the shoe on a pty behind a stable symlink, which the table opens as its [shoe] url. Sequence "
        "numbers, counters and unacked events are kept in a state file, so a restart loses no card.")
    p.add_argument("--serial", required=True, help="the shoe's serial number (the table's [shoe] serial)")
    p.add_argument("--reader", required=True, metavar="FAMILY:PORT[?reset=GPIO]",
                   help="the reader, e.g. pn532:/dev/serial0?reset=25 or pepper:/dev/ttyACM0")
    p.add_argument("--beam-pin", type=int, default=17, metavar="GPIO",
                   help="BCM number of the beam receiver's output (default 17)")
    p.add_argument("--beam-broken", choices=("low", "high"), default="low",
                   help="the level while the beam is broken (default low: a receiver pulled up)")
    p.add_argument("--state", default=str(sb.DEFAULT_STATE), help=f"state folder (default {sb.DEFAULT_STATE})")
    p.add_argument("--link", default=str(sb.DEFAULT_LINK), help=f"the pty's stable symlink (default {sb.DEFAULT_LINK})")
    p.add_argument("--decks", default=str(sb.DEFAULT_DECKS), help=f"the live-deck folder (default {sb.DEFAULT_DECKS})")
    p.add_argument("--pairing", action="store_true", help="start in pairing mode (then run shoe-ctl pair)")
    p.set_defaults(func=run)


def _say(text: str) -> None:
    print(f"shoe-ctl bridge: {text}", file=sys.stderr, flush=True)


def beam_input(device_class: Any, pin: int, broken: str, **kwargs: Any) -> Any:
    """The card-out beam on ``pin``: ``broken`` ``"low"`` (a receiver with a pull-up, turned on
    here, reads low while broken) or ``"high"`` (pulled down). gpiozero's ``value`` is 1 while
    the input is *active*, and with a pull-up active means low, so the beam is broken while the
    value is 1 either way.

    :param device_class: ``gpiozero.DigitalInputDevice``; ``kwargs`` go to it (``pin_factory``).
    """
    device = device_class(pin, pull_up=broken == "low", **kwargs)
    return sb.GpioBeam(device, broken_level=1)


def run(args: argparse.Namespace) -> int:
    """Run until SIGTERM or SIGINT; 2 for a configuration error (a bad state or secret file, a
    reader that cannot be opened, a beam pin that cannot be used)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    state = Path(args.state)
    try:
        sb.StateFile(state).load()
        sb.SecretFile(state).load()
    except sb.BridgeError as exc:
        _say(str(exc))
        return 2
    # guarded: a missing reader module is said, not a traceback
    try:
        from drivers.reader_port import GPIO_LIBRARY, open_reader, require_libraries
    except ImportError as exc:  # the reader modules are not installed
        _say(f"the reader modules are missing ({exc})")
        return 2
    try:
        require_libraries(f"card-out beam on GPIO {args.beam_pin}", [GPIO_LIBRARY])
        opened = open_reader(args.reader)
    except (ValueError, OSError) as exc:
        _say(str(exc))
        return 2
    try:
        from gpiozero import DigitalInputDevice

        try:
            with claiming(f"beam on GPIO {args.beam_pin}"):
                beam = beam_input(DigitalInputDevice, args.beam_pin, args.beam_broken)
        except GpioSetupError as exc:  # no pin library, no access, a pin in use: the cause and the fix
            _say(str(exc))
            return 2
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        try:
            bridge = sb.Bridge(state=state, link=Path(args.link), serial=args.serial, reader=opened.reader,
                               beam=beam, decks=Path(args.decks), pairing=args.pairing)
        except sb.BridgeError as exc:
            _say(str(exc))
            return 2
        try:
            bridge.start()
        except sb.BridgeError as exc:  # the pty's symlink cannot be placed
            bridge.close()
            beam.device.close()
            _say(str(exc))
            return 2
        with bridge:
            print(f"shoe {args.serial} on {args.link}", flush=True)
            stop.wait()
        beam.device.close()
    finally:
        opened.close()
    return 0
