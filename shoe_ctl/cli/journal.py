"""``shoe-ctl journal check JOURNAL``: the whole-file check of a journal, while a service may be
writing it; ``shoe-ctl journal verify JOURNAL``: the hash chain walked over every record.

The check the service's start leaves to a background task (``docs/journal.md``, "What is checked
when"): the file's structure (``PRAGMA integrity_check``) and every record's checksum, on a
read-only connection. Nothing is repaired here; damage found is listed, and the next open of the
journal for writing repairs it.

Exit status (both): 0 when nothing is damaged or broken, 1 when something is (listed on stdout), 2
when the file cannot be read as a journal.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path

from shoe_ctl.cli.args import Subparsers, default_config_path, finite
from shoe_ctl.config import load_table_config
from shoe_ctl.service.journal import Journal, JournalError, journal_problem
from shoe_ctl.service.journal.files import refuse_foreign
from shoe_ctl.service.journal.repair import check_file


def register(subparsers: Subparsers) -> None:
    """Add the ``journal`` subcommand (``journal check``)."""
    p = subparsers.add_parser("journal", help="check a journal file",
                              description="Tools for a table's journal file.")
    sub = p.add_subparsers(dest="journal_command", metavar="ACTION", required=True)
    c = sub.add_parser("check", help="check the whole file: structure and every record's checksum",
                       description="Check the journal's structure (PRAGMA integrity_check) and every record's "
                       "checksum, read-only (a running service may keep writing). Repairs are made by the next "
                       "open of the journal for writing.")
    c.set_defaults(func=run_check)
    v = sub.add_parser("verify", help="walk the hash chain: edited, deleted, inserted or reordered records",
                       description="Walk the journal's hash chain over every record, read-only, and list every "
                       "record edited, deleted, inserted or moved since it was written; print the chain head "
                       "(compare it with the head shown earlier by doctor, the display or an export).")
    v.set_defaults(func=run_verify)
    v.add_argument("--retention-days", type=finite, default=None, metavar="DAYS",
                   help="the table's retention, which a pruning anchor must fit (default: [journal] "
                   "retention_days of the table configuration)")
    v.add_argument("--floor-head", action="append", default=[], metavar="SEQ:TAG",
                   help="a head the floor noted for this table (the floor page's row, /state 'chain'); "
                   "the file's link there must have that display tag (repeatable)")
    for action in (c, v):
        action.add_argument("journal", metavar="JOURNAL", help="the journal file")


def open_readonly(path: str, command: str) -> Journal | None:
    """The journal at ``path`` opened read-only (a running service may keep writing it), or None
    after printing why it cannot be read as a journal (``shoe-ctl <command>: ...``, stderr)."""
    try:
        return Journal(path, table=None, profile=None, readonly=True)
    except (OSError, JournalError, sqlite3.Error) as exc:
        print(f"shoe-ctl {command}: {journal_problem(path, exc)}", file=sys.stderr)
        return None


def run_check(args: argparse.Namespace) -> int:
    path = Path(args.journal)
    if not path.is_file():
        what = ("no such file" if not path.exists() else "a folder, not a journal file" if path.is_dir()
                else "not a regular file; a journal is an SQLite file")
        print(f"shoe-ctl journal check: {path}: {what}", file=sys.stderr)
        return 2
    try:
        refuse_foreign(path)
    except JournalError as exc:
        print(f"shoe-ctl journal check: {journal_problem(path, exc)}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    found = check_file(path)
    seconds = time.perf_counter() - t0
    for d in found:
        print(f"{path}: {d}")
    if found:
        print(f"shoe-ctl journal check: {path}: {len(found)} problem(s) found in {seconds:.2f} s; the next open "
              "for writing keeps the file aside and repairs it", file=sys.stderr)
        return 1
    print(f"shoe-ctl journal check: {path}: ok ({seconds:.2f} s)", file=sys.stderr)
    return 0


def _floor_heads(texts: list[str]) -> dict[int, str] | None:
    """``SEQ:TAG`` options as ``{seq: tag}``, or None after saying which one is malformed."""
    heads: dict[int, str] = {}
    for text in texts:
        seq, _, tag = text.partition(":")
        if not seq.isdigit() or len(tag) != 16 or any(ch not in "0123456789abcdefABCDEF" for ch in tag):
            print(f"shoe-ctl journal verify: --floor-head {text!r}: give SEQ:TAG (a sequence and the "
                  "16 hex digits of the display tag)", file=sys.stderr)
            return None
        heads[int(seq)] = tag.lower()
    return heads


def _retention_days(given: float | None) -> float | None:
    """The retention a pruning anchor must fit: ``given``, else the table configuration's (None
    when it cannot be read: the anchor's time is then checked only for being there)."""
    if given is not None:
        return given
    try:
        return float(load_table_config(default_config_path()).journal.retention_days)
    except (OSError, ValueError):
        return None


def run_verify(args: argparse.Namespace) -> int:
    heads = _floor_heads(args.floor_head)
    if heads is None:
        return 2
    journal = open_readonly(args.journal, "journal verify")
    if journal is None:
        return 2
    with journal:
        rep = journal.verify_chain(retention_days=_retention_days(args.retention_days), floor_tags=heads)
        tag = journal.display_tag(rep.head[1]) if rep.head[1] else None
    for problem in rep.problems:
        print(f"{args.journal}: {problem}")
    seq, value = rep.head
    print(f"shoe-ctl journal verify: {args.journal}: {rep.checked} records chained and intact, "
          f"{len(rep.problems)} problem(s), {rep.unchained} older records not chained; head {seq}:{value}"
          f" (display tag {tag})" + (f"; {rep.compared} floor head(s) compared" if heads else ""), file=sys.stderr)
    return 1 if rep.problems else 0
