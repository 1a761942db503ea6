"""``shoe-ctl hil soak|crash|bridge-soak|floor``: hardware-in-the-loop proofs on the virtual shoe
(:mod:`hil.soak`, :mod:`hil.crash`, :mod:`hil.bridge_soak`, :mod:`hil.floor`); each
subcommand's module is imported only when it runs. The options and what each proves:
docs/service.md, docs/recovery.md, docs/build-a-shoe.md and docs/floor.md."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from shoe_ctl.cli.args import Subparsers, finite, help_only


def register(subparsers: Subparsers) -> None:
    """Add the ``hil`` subcommand with its ``soak`` and ``crash`` sub-subcommands."""
    hil = subparsers.add_parser("hil", help="hardware-in-the-loop proofs on the virtual shoe",
                                description="Hardware-in-the-loop proofs on the virtual shoe.")
    sub = hil.add_subparsers(dest="hil_command", metavar="HIL_COMMAND")
    hil.set_defaults(func=help_only(hil))

    soak = sub.add_parser("soak", help="pull many cards through the serial stack with injected faults",
                          description="Pull N cards through the virtual shoe, the line and the shoe link, with "
                          "faults, and check every delivered card event against what the shoe sent.")
    soak.add_argument("--cards", type=int, default=1000, metavar="N", help="cards to pull (default 1000)")
    soak.add_argument("--faults", default="", metavar="SPEC",
                      help="e.g. corrupt=0.01,drop=0.001,garbage=0.001,unplug-every=1000 (see docs/protocol.md)")
    soak.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    soak.add_argument("--transport", choices=("pty", "tcp"), default="pty", help="line to use (default pty)")
    soak.add_argument("--json", action="store_true", help="print one JSON object on one line")
    soak.add_argument("--stall-s", type=finite, default=60.0, metavar="SECONDS",
                      help="give up when nothing is delivered for this long after the last pull (default 60)")
    soak.add_argument("--progress", action="store_true", help="progress lines on stderr (also with --json)")
    soak.add_argument("--shoe", default=None, metavar="URL",
                      help="a real shoe (pyserial URL): the operator pulls the cards, asked through --operator")
    soak.add_argument("--operator", default="prompt", metavar="prompt|command:CMD",
                      help="with --shoe: how the operator is asked to pull cards and reload decks: 'prompt' on "
                      "this terminal (default), or 'command:CMD' run per request (hil/operator.py)")
    soak.add_argument("--batch", type=int, default=10, metavar="N", help="with --shoe: cards per request (default 10)")
    soak.add_argument("--baudrate", type=int, default=115200, metavar="BPS",
                      help="with --shoe: the line's speed (default 115200)")
    soak.set_defaults(func=_dispatch("hil.soak"))

    crash = sub.add_parser("crash", help="kill and restart the service mid-hand; compare with an uninterrupted run",
                           description="Run the service as a child process on the virtual shoe, SIGKILL it at K "
                           "random points across N hands, restart it, and compare every finished hand.")
    crash.add_argument("--hands", type=int, default=10, metavar="N")
    crash.add_argument("--kills", type=int, default=10, metavar="K")
    crash.add_argument("--seed", type=int, default=0, metavar="S")
    crash.add_argument("--json", action="store_true", help="print one JSON object on one line")
    crash.add_argument("--rules", default="tda", choices=("tda", "house"), help="rule profile (default tda)")
    crash.add_argument("--game", default="stud", choices=("stud", "stud8", "razz"), help="game (default stud)")
    crash.add_argument("--progress", action="store_true", help="a line on stderr for every kill")
    crash.add_argument("--workdir", default=None, metavar="DIR",
                       help="keep both runs' journals, service logs and signal lists in DIR (default: a "
                       "temporary folder, removed)")
    crash.set_defaults(func=_dispatch("hil.crash"))

    bsoak = sub.add_parser("bridge-soak", help="the whole path of a reader-backed shoe with reader faults, bridge "
                           "restarts and service kills",
                           description="Deal seeded random hands through a virtual PN532 and a mock beam, the shoe "
                           "bridge, protocol v2 and shoe-ctl run (a child process), with PN532 faults, bridge "
                           "restarts and SIGKILLs of the service; check that no card was lost or doubled and every "
                           "fault was a stop the dealer saw.")
    bsoak.add_argument("--cards", type=int, default=1000, metavar="N", help="cards to pull at least (default 1000)")
    bsoak.add_argument("--seed", type=int, default=0, metavar="S")
    bsoak.add_argument("--kills", type=int, default=3, metavar="K", help="SIGKILLs of the service (default 3)")
    bsoak.add_argument("--reader-faults", type=int, default=4, metavar="F",
                       help="PN532 faults, hang, no-ack, bad-checksum, stale in turn (default 4)")
    bsoak.add_argument("--bridge-restarts", type=int, default=2, metavar="R", help="bridge restarts (default 2)")
    bsoak.add_argument("--json", action="store_true", help="print one JSON object on one line")
    bsoak.add_argument("--progress", action="store_true", help="a line on stderr for every kill")
    bsoak.add_argument("--workdir", default=None, metavar="DIR",
                       help="keep the journal, the service's log and the bridge's state in DIR (default: a "
                       "temporary folder, removed)")
    bsoak.set_defaults(func=_dispatch("hil.bridge_soak"))

    # imported here: hil.floor brings paho and the broker rig, needed by shoe-ctl hil floor alone
    from hil.floor import register_hil as register_floor  # shoe-ctl hil floor

    register_floor(sub)


def _dispatch(module_name: str) -> Any:
    """A ``func`` that imports ``module_name`` only when run and calls its ``main(args)``."""

    def run(args: argparse.Namespace) -> int:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            print(f"shoe-ctl hil: {module_name} is not installed in this build")
            return 2
        return int(module.main(args) or 0)

    return run
