"""Argument types and defaults shared by the ``shoe-ctl`` subcommands (docs/service.md)."""

from __future__ import annotations

import argparse
import logging
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from shoe_ctl.config import CONFIG_DIR, load_profile
from shoe_ctl.rules.profiles import RuleProfile

DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "config" / "table.toml"
"""The table configuration of a checkout (``--config`` default of ``run``)."""
SYSTEM_CONFIG = Path("/etc/shoe-ctl/table.toml")
"""The installed table configuration."""


def default_config_path() -> Path:
    """``$SHOE_CTL_TABLE``, else ``/etc/shoe-ctl/table.toml`` if present, else the project's
    ``config/table.toml``."""
    env = os.environ.get("SHOE_CTL_TABLE")
    if env:
        return Path(env)
    return SYSTEM_CONFIG if SYSTEM_CONFIG.exists() else CONFIG_DIR / "table.toml"


def add_table_shoe(p: argparse.ArgumentParser) -> None:
    """Add ``--config`` (the table configuration) and ``--port`` (a shoe URL instead of the
    configuration's ``[shoe] url``) to a subcommand that opens the table's shoe (doctor, pair)."""
    p.add_argument("--config", default=str(default_config_path()),
                   help="table configuration (default: $SHOE_CTL_TABLE, /etc/shoe-ctl/table.toml or config/table.toml)")
    p.add_argument("--port", default=None, help="shoe URL instead of [shoe] url")


def add_phh_inputs(p: argparse.ArgumentParser, json_help: str) -> None:
    """Add what reads recorded hands (analyze, replay): ``PATH...`` (.phh files or folders of
    them), ``--rules`` (a profile name or a profile .toml, default ``tda``) and ``--json``."""
    p.add_argument("paths", nargs="+", metavar="PATH", help="a .phh file or a folder of them")
    p.add_argument("--rules", default="tda", metavar="tda|house",
                   help="rule profile name or a profile .toml (default: tda)")
    p.add_argument("--json", action="store_true", help=json_help)


def pace(text: str) -> float:
    """``--pace``: seconds, a finite number >= 0 (argparse type)."""
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: need a number of seconds >= 0")
    return value


def seconds(text: str) -> float:
    """``--timeout``: seconds, a finite number > 0 (argparse type; ``inf`` would wait forever,
    ``nan`` compares false with every clock)."""
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: need a number of seconds > 0")
    return value


def finite(text: str) -> float:
    """A finite number (argparse type): not ``nan``, ``inf`` or beyond a float."""
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r}: need a finite number")
    return value


def count(text: str) -> int:
    """``--count``: hands, an integer >= 1 (argparse type)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 or more hands")
    return value


def parse_seats(text: str) -> list[int]:
    """``"1-8"``, ``"1,2,4-6"`` -> seat numbers (1..8, distinct, at least 2).

    :raises ValueError: naming the bad part.
    """
    seats: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ValueError(f"--seats {text!r}: {part!r} is not a seat number or range") from None
        if not (1 <= first <= 8 and 1 <= last <= 8):  # before the range: 1-99999999999 is no list to build
            raise ValueError(f"--seats {text!r}: {part!r}: seats are numbered 1..8")
        seats.extend(range(first, last + 1))
    if len(seats) < 2 or len(set(seats)) != len(seats) or not all(1 <= s <= 8 for s in seats):
        raise ValueError(f"--seats {text!r}: need 2..8 distinct seats numbered 1..8")
    return seats


def load_profiles(rules: str) -> tuple[dict[str, RuleProfile], str]:
    """The profiles a machine may switch to (``tda``, ``house`` and ``rules``) and the name of
    ``rules`` (a profile file's own name when ``rules`` is a path).

    :raises shoe_ctl.rules.profiles.ProfileError: ``rules`` names no readable profile.
    """
    profiles = {"tda": load_profile("tda"), "house": load_profile("house")}
    if rules not in profiles:
        prof = load_profile(rules)
        profiles[prof.name] = prof
        rules = prof.name
    return profiles, rules


_UNPRINTABLE = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if c != 0x0A}
_UNPRINTABLE.update({c: f"\\u{c:04x}" for c in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: control characters but the newline (an ESC starts a
    terminal's escape sequence: colours, a cleared screen, a window title), C1 controls and the
    bidirectional overrides become their escapes (``\\x1b``, ``\\u202e``). For texts that come from
    a file or a path: a player's name, a hand record's file name."""
    return text.translate(_UNPRINTABLE)


class PrintableFormatter(logging.Formatter):
    """A log formatter whose lines are :func:`printable`: a text from the shoe (a fault's detail,
    its serial) or a file cannot send escape sequences to the terminal or the journal reader."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``register(subparsers)`` of each subcommand module is given: ``add_parser`` makes its parser."""


def help_only(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """The ``func`` of a subcommand given without its sub-subcommand: print its help, exit status 2."""
    def show(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2
    return show
