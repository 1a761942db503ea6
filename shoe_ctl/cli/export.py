"""``shoe-ctl export JOURNAL [--hand N] [--out DIR]``: finished hands from a journal as PHH files.

Without ``--out`` the files go into ``./export-<table>-<YYYY-MM-DD>/`` (the journal's table, the
UTC date of the export), named on stderr; every file written is printed on stdout.

Exit status: 0 when the hands were written, 1 when a requested hand is not in the journal (or not
finished), the journal holds no finished hand at all (said on stderr; nothing is written and no
folder is made), or a hand number repeats in the journal (every hand is still written, each
repeat named on stderr with its file), 2 when the journal cannot be read.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

from shoe_ctl.cli.args import Subparsers, default_config_path
from shoe_ctl.cli.journal import open_readonly
from shoe_ctl.export import export_hands
from shoe_ctl.rules.profiles import ProfileError
from shoe_ctl.service.journal import Journal


def register(subparsers: Subparsers) -> None:
    """Add the ``export`` subcommand."""
    p = subparsers.add_parser(
        "export",
        help="write finished hands from a journal as PHH files",
        description=(
            "Replay a table's journal and write every finished hand (or the ones named) as a PHH "
            "file, with the controller's decisions (procedure, community card, alerts) as "
            "user-defined fields. The journal is opened read-only; a running service may keep it open."
        ),
    )
    p.add_argument("journal", metavar="JOURNAL", help="the journal file")
    p.add_argument("--hand", type=int, action="append", metavar="N", help="only hand N (repeatable)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="folder for the .phh files (default: ./export-TABLE-YYYY-MM-DD, the UTC date, printed)")
    p.set_defaults(func=run)


def default_out(table: str | None, now: float | None = None) -> str:
    """The default folder: ``export-<table>-<YYYY-MM-DD>`` (UTC date; ``table`` when the journal
    names none; a ``/`` in the name becomes ``_``)."""
    day = time.strftime("%Y-%m-%d", time.gmtime(time.time() if now is None else now))
    return f"export-{table or 'table'}-{day}".replace("/", "_")


def _software(journal: Journal) -> dict[str, Any]:
    """The software identity written into every exported file: this installation's (its release
    check, docs/compliance.md) and the shoe of the journal's last hello."""
    import json

    # lazy: cryptography, loaded only when the export names the software
    from shoe_ctl.release import ReleaseConfig, check, load_release_config, software_identity

    try:
        cfg = load_release_config(default_config_path())
    except (ProfileError, OSError):
        cfg = ReleaseConfig()
    serial = firmware = ""
    for rec in journal.records():
        if rec.kind == "LinkChanged" and rec.body and '"info"' in rec.body:
            try:
                info = json.loads(rec.body).get("info") or {}
            except ValueError:
                continue
            if isinstance(info, dict):
                serial, firmware = str(info.get("serial", "")), str(info.get("firmware", ""))
    return software_identity(check(cfg), serial, firmware)


def run(args: argparse.Namespace) -> int:
    journal = open_readonly(args.journal, "export")
    if journal is None:
        return 2
    with journal:
        out = args.out
        if out is None:
            out = default_out(journal.identity()[0])
            print(f"shoe-ctl export: writing into {out}/", file=sys.stderr)
        existed = Path(out).exists()
        try:
            undecodable: list[str] = []
            repeated: list[str] = []
            written = export_hands(journal, Path(out), hands=args.hand, undecodable=undecodable,
                                   software=_software(journal), repeated=repeated)
        except OSError as exc:
            print(f"shoe-ctl export: --out {out}: cannot write there: {exc.strerror or exc}", file=sys.stderr)
            return 2
        for d in [*map(str, journal.report.damage), *undecodable]:
            print(f"shoe-ctl export: {args.journal}: skipped damaged {d}", file=sys.stderr)
    for path in written:
        print(path)
    for line in repeated:
        print(f"shoe-ctl export: {args.journal}: hand number repeated: {line}", file=sys.stderr)
    if not written and not existed:
        try:
            Path(out).rmdir()  # made for nothing
        except OSError:
            pass
    if not written and not args.hand:
        print(f"shoe-ctl export: {args.journal}: no finished hand to export", file=sys.stderr)
        return 1
    if args.hand:
        got = {int(m.group(1)) for p in written if (m := re.search(r"-hand-(\d+)(-at-\d+)?$", p.stem))}
        missing = sorted(set(args.hand) - got)
        if missing:
            print(f"shoe-ctl export: {args.journal}: no finished hand {', '.join(map(str, missing))}", file=sys.stderr)
            return 1
    return 1 if repeated else 0
