"""``shoe-ctl analyze PATH... [--rules tda|house] [--json] [--detail]``: the rules core applied to
recorded PHH hands (files, or folders searched recursively for ``*.phh``).

Exit status: 0 when every file was analysed, 1 when some file gave an error (the others are still
reported), 2 for a bad rule profile or no file found.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from shoe_ctl.analyze import CLAUSES, HandReport, analyze_file, iter_phh_files
from shoe_ctl.cli.args import Subparsers, add_phh_inputs, printable
from shoe_ctl.config import load_profile
from shoe_ctl.phh import STREETS
from shoe_ctl.rules.profiles import ProfileError, RuleProfile

DETAIL_UP_TO = 10


def register(subparsers: Subparsers) -> None:
    """Add the ``analyze`` subcommand."""
    p = subparsers.add_parser(
        "analyze",
        help="bring-in, first to act and the 7th-street stub check for recorded PHH hands",
        description=(
            "Read PHH hand records (files, or folders searched for *.phh) and report per hand: the "
            "bring-in, who acts first on each street, the 7th-street stub check (live dealing: no burn "
            "before 3rd, one burn per later street), the community card and alerts."
        ),
    )
    add_phh_inputs(p, "one JSON object per hand per line")
    p.add_argument(
        "--detail",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"table: show why each player acts first (default: only for up to {DETAIL_UP_TO} hands)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``analyze``; returns the exit status."""
    stream = out or sys.stdout
    try:
        profile = load_profile(args.rules)
    except (ProfileError, OSError) as exc:
        print(f"shoe-ctl analyze: {exc}", file=sys.stderr)
        return 2
    files = list(iter_phh_files(args.paths))
    if not files:
        print(f"shoe-ctl analyze: no .phh file under {' '.join(args.paths)}", file=sys.stderr)
        return 2
    errors = 0
    names = display_names(files, args.paths)
    detail = args.detail if args.detail is not None else len(files) <= DETAIL_UP_TO
    table = None if args.json else ReportTable(stream, profile, detail, max(len(n) for n in names))
    for path, name in zip(files, names, strict=True):
        report = analyze_file(path, profile)
        errors += report.error is not None
        if table is None:
            stream.write(json.dumps(report.as_json(), separators=(", ", ": ")) + "\n")
            stream.flush()
        else:
            table.row(report, name)
    if table is not None:
        table.summary()
    return 1 if errors else 0


def _seat(p: int | None) -> str:
    return "?" if p is None else f"P{p}"


def display_names(files: list[Path], args: list[str]) -> list[str]:
    """File names as the reader knows them: relative to the folder given, else as given."""
    roots = [Path(a) for a in args if Path(a).is_dir()]
    names = []
    for f in files:
        name = str(f)
        for r in roots:
            if f.is_relative_to(r):
                name = str(f.relative_to(r))
                break
        names.append(name)
    return names


ANALYZE_SOURCE = (
    "assuming live dealing (no burn before 3rd, one burn on each later street)",
    "'*' the record shows someone else acting first",
)


class _Printable:
    """A text stream that writes :func:`shoe_ctl.cli.args.printable` text."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> int:
        return self._out.write(printable(text))


class ReportTable:
    """The readable table of ``analyze`` and ``replay``: one line per hand; below it the reason
    for each first actor (when ``detail`` and known) and every alert; :meth:`summary` counts
    hands read, alerts and files that could not be read (an unreadable file is no hand).

    :param source: the two phrases of the heading that say where the decisions come from (how
        the stub was dealt; what ``*`` marks); default: analyze's.
    """

    def __init__(self, out: TextIO, profile: RuleProfile, detail: bool, width: int,
                 source: tuple[str, str] = ANALYZE_SOURCE) -> None:
        self.out = _Printable(out)  # names and file names come from the records: no terminal escapes
        self.profile = profile
        self.detail = detail
        self.width = max(4, min(width, 40))
        self.hands = 0
        self.errors = 0
        self.alerts = 0
        stub_rule = "house 16.18-16.20" if profile.house else "RP-10-H"
        ties = "high card by suit (RP-10-D)" if str(profile.tie) == "suit" else "position"
        out.write(
            f"Rules: {profile.name}. Ties: {ties}. Short stub: {stub_rule}, {source[0]}.\n"
            "Players are numbered from the dealer's left (P1). A street column shows who acts first: "
            "'-' no betting, '?' unknown upcards decide,\n"
            f"{source[1]}. 7th street: the short-stub procedure, "
            "the stub before 7th and the required number.\n\n"
        )
        head = f"{'HAND':<{self.width}}  {'GAME':<5} {'PL':>2}  {'BRING-IN':<8}"
        head += "".join(f" {s.upper():<4}" for s in STREETS)
        out.write(head + "  7TH STREET                       COMMUNITY\n")

    def row(self, r: HandReport, name: str) -> None:
        if len(name) > self.width:
            name = "..." + name[-(self.width - 3) :]
        if r.error is not None:
            self.errors += 1
            self.out.write(f"{name:<{self.width}}  ERROR: {r.error}\n")
            return
        self.hands += 1
        bring = f"{_seat(r.bring_in)} {r.bring_in_card or ''}".rstrip() if r.bring_in else "?"
        flagged = {a["street"] for a in r.alerts if a.get("code") == "first-to-act"}
        cells = [
            "-" if st not in r.first_to_act else _seat(r.first_to_act[st]) + ("*" if st in flagged else "")
            for st in STREETS
        ]
        s = r.seventh
        stub = f"{clause_of(s)} (stub {s['stub']}, need {s['required']})" if s is not None else "-"
        line = f"{name:<{self.width}}  {r.game or '':<5} {r.players or 0:>2}  {bring:<8}"
        line += "".join(f" {c:<4}" for c in cells)
        line += f"  {stub:<32} {r.community_card or '-'}"
        self.out.write(line.rstrip() + "\n")
        if self.detail:
            if r.names and list(r.names) != [f"P{i + 1}" for i in range(len(r.names))]:
                self.out.write("    players: " + ", ".join(f"P{i + 1} {nm}" for i, nm in enumerate(r.names)) + "\n")
            if r.seats:
                self.out.write("    table seats: " + ", ".join(f"P{i + 1} seat {st}" for i, st in enumerate(r.seats))
                               + "\n")
            for v in r.streets:
                if v.betting and v.why:
                    self.out.write(f"    {v.street:<4} {_seat(None if v.first is None else v.first + 1):<3} {v.why}\n")
        for a in r.alerts:
            self.alerts += 1
            where = a.get("street") or "-"
            self.out.write(f"    ! {where:<4} {a['code']}: {a.get('message') or ''}".rstrip() + "\n")
        if self.detail or r.alerts:
            self.out.write("\n")

    def summary(self) -> None:
        self.out.write(f"{self.hands} hand(s), {self.alerts} alert(s), {self.errors} unreadable file(s)\n")


def clause_of(seventh: dict[str, Any]) -> str:
    """The 7th-street cell's clause: ``seventh["clause"]``, or from its procedure (``normal``,
    ``RP-10-H-A`` ..., ``house-16.18`` ...)."""
    if seventh.get("procedure") == "normal":
        return "normal"
    return str(seventh.get("clause") or CLAUSES.get(str(seventh.get("procedure")), seventh.get("procedure")))
