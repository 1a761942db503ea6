"""``shoe-ctl report decks --day D JOURNAL``: one gaming day of the table's decks from its journal,
each deck received, in play and retired with who signed, and the balance issued = retired + in
play (docs/build-a-shoe.md, "Deck custody").

Exit status: 0 when the day balances, 1 when it does not (the records at fault named), 2 when the
journal or the configuration (its gaming day) cannot be read or the day is not a date.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from datetime import date
from pathlib import Path

from shoe_ctl.cli.args import Subparsers, default_config_path
from shoe_ctl.config import ConfigError
from shoe_ctl.floor.config import load_floor_config
from shoe_ctl.service.deck_custody import custody
from shoe_ctl.service.gaming_day import GamingDay
from shoe_ctl.service.journal import Journal, JournalError, journal_problem


def register(subparsers: Subparsers) -> None:
    """Add the ``report`` subcommand (``report decks``)."""
    p = subparsers.add_parser("report", help="reports from a journal: the day's decks",
                              description="Reports read from a table's journal.")
    sub = p.add_subparsers(dest="report_command", metavar="REPORT", required=True)
    d = sub.add_parser("decks", help="each deck received, in play and retired on a day, and its balance",
                       description="Each deck received (enrolled), in play (a hand dealt from it) and retired on "
                       "one gaming day, with who signed, and the balance issued = retired + in play.")
    d.add_argument("--day", required=True, metavar="YYYY-MM-DD",
                   help="the gaming day, named by the date it begins on ([floor] gaming_day_start, time_zone)")
    d.add_argument("--config", default=None, metavar="PATH",
                   help="table configuration whose [floor] gives the gaming day (default: $SHOE_CTL_TABLE, "
                   "/etc/shoe-ctl/table.toml or config/table.toml; none there: midnight UTC)")
    d.add_argument("journal", metavar="JOURNAL", help="the journal file")
    d.set_defaults(func=run_decks)


def run_decks(args: argparse.Namespace) -> int:
    """Print the day's decks and balance; 0 balanced, 1 not, 2 unreadable journal or bad day."""
    try:
        day = date.fromisoformat(args.day)
    except ValueError:
        print(f"shoe-ctl report decks: --day {args.day!r} is not a date (YYYY-MM-DD)", file=sys.stderr)
        return 2
    config = args.config or default_config_path()
    try:
        # no --config and no table configuration at the default place: the day from midnight UTC
        gaming_day = (load_floor_config(config).gaming_day if args.config or Path(config).exists()
                      else GamingDay())
    except ConfigError as exc:
        print(f"shoe-ctl report decks: {exc}", file=sys.stderr)
        return 2
    try:
        with Journal(args.journal, table=None, profile=None, readonly=True) as journal:
            c = custody(journal.records(), day, gaming_day)
    except (OSError, JournalError, sqlite3.Error) as exc:
        print(f"shoe-ctl report decks: {journal_problem(args.journal, exc)}", file=sys.stderr)
        return 2
    begin, end = gaming_day.window(day)
    print(f"decks on gaming day {day.isoformat()} (from {gaming_day.describe()}: "
          f"{begin:%Y-%m-%dT%H:%MZ} to {end:%Y-%m-%dT%H:%MZ})")
    for d in c.decks.values():
        hands = f"hands {d.hands[0]}-{d.hands[-1]} ({len(d.hands)})" if d.hands else "no hand"
        enrolled = f"enrolled {d.enrolled} by {d.enrolled_by}" if d.enrolled else "enrolled before the journal"
        retired = f"retired {d.retired} by {d.retired_by}" if d.retired else "in play"
        print(f"  {d.deck}: {enrolled}; {hands}; {retired}")
    print(f"issued {c.issued} (live at the start {len(c.opening)} + received {len(c.received)}) = "
          f"retired {len(c.retired)} + in play {len(c.in_play)}: {'balanced' if c.balanced else 'NOT BALANCED'}")
    for problem in c.problems:
        print(f"  {problem}")
    return 0 if c.balanced else 1
