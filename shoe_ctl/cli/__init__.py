"""The ``shoe-ctl`` command line.

Each subcommand lives in its own module ``shoe_ctl.cli.<name>`` that defines
``register(subparsers) -> None`` (adds its parser and sets ``func`` to a callable taking the parsed
arguments and returning the exit status); the argument types and defaults they share are in
:mod:`shoe_ctl.cli.args`. Modules are imported only when present, so the CLI stays usable while the
product grows.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Sequence

from shoe_ctl import __version__

SUBCOMMANDS = ("run", "sim", "analyze", "replay", "export", "hil", "doctor", "floor", "pair", "journal",
               "conform", "leds", "deck", "release", "users", "verify", "bridge")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand that is installed."""
    parser = argparse.ArgumentParser(
        prog="shoe-ctl",
        description="Card-shoe controller for Seven Card Stud tables.",
    )
    parser.add_argument("--version", action="version", version=f"shoe-ctl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"shoe_ctl.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"shoe_ctl.cli.{name}":
                raise
            continue
        module.register(sub)
    _add_version(parser, f"shoe-ctl {__version__}")
    return parser


def _add_version(parser: argparse.ArgumentParser, version: str) -> None:
    """``--version`` on ``parser`` and on every subcommand below it (``shoe-ctl hil soak --version``)."""
    if not any("--version" in a.option_strings for a in parser._actions):
        parser.add_argument("--version", action="version", version=version, help="print the version and exit")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _add_version(child, version)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``shoe-ctl`` console script; returns the process exit status.

    ``argv`` None: the process's own command line (``sys.argv``); the command then owns the
    process (``args.whole_process``: ``run`` bounds its stop, docs/service.md *Stopping*), and
    SIGINT stops it even when it was started ignored (a background job of a non-interactive
    shell), from before the subcommands are loaded. A list: a call inside another program (the
    tests), whose signals are left as they are.
    """
    whole_process = argv is None
    if whole_process and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        args.whole_process = whole_process
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return 2
        return int(func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
