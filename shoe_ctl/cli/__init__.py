"""The ``shoe-ctl`` command line.

Each subcommand lives in its own module ``shoe_ctl.cli.<name>`` that defines
``register(subparsers) -> None`` (adds its parser and sets ``func`` to a callable taking the parsed
arguments and returning the exit status); the argument types and defaults they share are in
:mod:`shoe_ctl.cli.args`. Building the parser imports none of them: :data:`SUBCOMMANDS` gives each
its one-line help for ``shoe-ctl --help``, and a subcommand's module is imported when its parser is
first used (parsing its arguments or printing its help), so one command does not pay for the
imports of all (docs/performance.md, "Start-up of a command"). Modules are imported only when
present, so the CLI stays usable while the product grows.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import sys
from collections.abc import Sequence
from typing import Any

from shoe_ctl import __version__

SUBCOMMANDS: dict[str, str] = {
    "run": "run the service (default: virtual shoe and simulated dealer)",
    "sim": "run a virtual shoe and print the URL to connect to",
    "analyze": "bring-in, first to act and the 7th-street stub check for recorded PHH hands",
    "replay": "deal recorded PHH hands through the simulated dealer, the shoe and the state machine",
    "export": "write finished hands from a journal as PHH files",
    "hil": "hardware-in-the-loop proofs on the virtual shoe",
    "doctor": "check the port, shoe handshake, GPIO, config and journal",
    "floor": "the floor page: a map of the room's tables and their alerts",
    "pair": "pair the table's shoe (or rotate its secret)",
    "journal": "check a journal file",
    "conform": "run the shoe conformance kit against a shoe",
    "leds": "switch the table's GPIO LEDs off (after the service ended)",
    "deck": "enrol, list, retire and check the table's tagged decks",
    "report": "reports from a journal: the day's decks",
    "release": "make, sign and verify the signed release manifest",
    "users": "the table's named users, their roles and PINs",
    "verify": "the expected answer to a seeded verification, computed offline",
    "bridge": "run the shoe firmware on the Pi (reader + card-out beam) as a shoe on a pty",
}
"""Every subcommand, in ``--help`` order, with the help its module's ``register`` gives it."""

VERSION = f"shoe-ctl {__version__}"


class _Into:
    """What a subcommand module's ``register`` is handed instead of the subparsers: its
    ``add_parser`` fills the parser already in the tree (description, epilog, ...)."""

    def __init__(self, parser: SubcommandParser) -> None:
        self.parser = parser

    def add_parser(self, name: str, **kwargs: Any) -> SubcommandParser:
        if name != self.parser.command:
            raise ValueError(f"shoe_ctl.cli.{self.parser.command} registers {name!r}, not its own command")
        kwargs.pop("help", None)  # the help listed by shoe-ctl --help is SUBCOMMANDS'
        for key, value in kwargs.items():
            setattr(self.parser, key, value)
        return self.parser


class SubcommandParser(argparse.ArgumentParser):
    """A subcommand's parser whose arguments its module adds the first time the parser is used.

    :param command: the subcommand (``shoe_ctl.cli.<command>`` registers it); ``None`` for a
        parser that is complete as built (a sub-subcommand's).
    """

    def __init__(self, *args: Any, command: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command = command
        self._pending = command is not None

    def load(self) -> None:
        """Import the subcommand's module and let it add its arguments (once).

        :raises ModuleNotFoundError: the module is not installed.
        """
        if not self._pending:
            return
        self._pending = False
        module = importlib.import_module(f"shoe_ctl.cli.{self.command}")
        module.register(_Into(self))
        _add_version(self, VERSION)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.load()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self.load()
        return super().format_usage()

    def format_help(self) -> str:
        self.load()
        return super().format_help()


def _installed(name: str) -> bool:
    """Whether ``shoe_ctl.cli.<name>`` exists (found without importing it)."""
    return importlib.util.find_spec(f"shoe_ctl.cli.{name}") is not None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand that is installed; no subcommand module is
    imported until its parser is used (:func:`load_all` imports them all).

    :param command: a subcommand the arguments to parse begin with (:func:`command_named`): the
        parser then holds that subcommand alone, which parses those arguments as the whole tree
        would (the top level's usage names ``COMMAND``, not the list; the list is shown only by
        its help and by an unknown command). ``None``, or a name that is not an installed
        subcommand: every subcommand.
    """
    parser = argparse.ArgumentParser(
        prog="shoe-ctl",
        description="Card-shoe controller for Seven Card Stud tables.",
    )
    parser.add_argument("--version", action="version", version=VERSION)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=SubcommandParser)
    names = [command] if command in SUBCOMMANDS and _installed(command) else \
        [name for name in SUBCOMMANDS if _installed(name)]
    for name in names:
        sub.add_parser(name, help=SUBCOMMANDS[name], command=name)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` begins with (``["replay", "--direct", ...]``: ``"replay"``), or
    ``None`` when its first word is none (an option such as ``--help``, an unknown word, nothing)."""
    return argv[0] if argv and argv[0] in SUBCOMMANDS else None


def load_all(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` with every subcommand's arguments and sub-subcommands added (for what walks
    the whole tree: help checks, documentation); returns ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                if isinstance(child, SubcommandParser):
                    child.load()
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
        words = sys.argv[1:] if argv is None else argv
        parser = build_parser(command_named(words))  # one subcommand's parser, when that is all it needs
        args = parser.parse_args(words)
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
