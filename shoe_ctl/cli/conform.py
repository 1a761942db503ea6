"""``shoe-ctl conform --shoe URL``: the conformance kit against a shoe (docs/conformance.md).

Runs :mod:`hil.conform` (imported only when the command runs) and writes its report as JSON and
JUnit XML. ``--shoe virtual`` (or a ``vshoe://`` URL) tests the virtual shoe, whose bench is
built in; a real shoe needs ``--operator CMD`` for the tests that pull a card, power-cycle or
unplug it (without one they are skipped, and the report says so). ``--protocol 2`` tests a
paired shoe in authenticated frames (``--secret-file``: its pairing secret). Exit status: 0 when
no test failed, 1 when one did, 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from drivers.reader_port import ReaderLibraryError
from shoe_ctl.cli.args import Subparsers


def register(subparsers: Subparsers) -> None:
    """Add the ``conform`` subcommand."""
    cmd = subparsers.add_parser("conform", help="run the shoe conformance kit against a shoe",
                                description="Test a shoe against docs/protocol.md: handshake, heartbeats, LED and "
                                "counter commands, malformed host frames, dropped/duplicated ACKs, resend "
                                "requests, a host restart, no-host pattern, power cycle, unplug and a "
                                "foreign card, with the timing limits of section 13. Report as JSON and JUnit XML.")
    cmd.add_argument("--shoe", required=True, metavar="URL",
                     help="the shoe's port (/dev/serial/by-id/..., socket://host:port), or 'virtual' (the virtual shoe), 'bridge-virtual' (the shoe bridge on a virtual PN532 and beam)")
    cmd.add_argument("--operator", default=None, metavar="CMD",
                     help="command run as 'CMD ACTION' (pull-card, pull-foreign, power-cycle, unplug, replug); exit 0 = done; "
                     "may print {\"at\": UNIX_TIME} (when the card passed the sensor)")
    cmd.add_argument("--json", default=None, metavar="FILE", help="write the JSON report here ('-': stdout)")
    cmd.add_argument("--junit", default=None, metavar="FILE", help="write the JUnit XML report here")
    cmd.add_argument("--time-scale", type=float, default=1.0, metavar="K",
                     help="multiply every timing limit by K (default 1; the report states it)")
    cmd.add_argument("--protocol", type=int, choices=(1, 2), default=1,
                     help="1: an unpaired shoe (plain frames); 2: a paired shoe, every frame authenticated with "
                     "--secret-file (the virtual shoe and bridge-virtual are paired by the kit)")
    cmd.add_argument("--secret-file", default=None, metavar="FILE",
                     help="protocol 2: the shoe's pairing secret, 64 hex digits (as shoe-ctl pair stores it)")
    cmd.add_argument("--operator-budget-ms", type=float, default=0.0, metavar="MS",
                     help="how far the operator's {\"at\"} may be off (a person: about 300; a robot timestamping "
                     "the sensor: a few); the card limit is 50 ms plus this (default 0; the report states it)")
    cmd.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Run the kit; print a line per test; write the reports."""
    if not args.time_scale >= 1.0:
        print(f"shoe-ctl conform: --time-scale {args.time_scale}: need 1 or more", file=sys.stderr)
        return 2
    if not 0 <= args.operator_budget_ms <= 10_000:
        print(f"shoe-ctl conform: --operator-budget-ms {args.operator_budget_ms}: need 0..10000", file=sys.stderr)
        return 2
    secret = None
    if args.secret_file is not None:
        try:
            secret = bytes.fromhex(Path(args.secret_file).read_text(encoding="ascii").strip())
        except (OSError, ValueError) as exc:
            print(f"shoe-ctl conform: --secret-file {args.secret_file}: not a shoe secret ({exc})", file=sys.stderr)
            return 2
        if len(secret) != 32:
            print(f"shoe-ctl conform: --secret-file {args.secret_file}: a secret is 32 bytes, not {len(secret)}",
                  file=sys.stderr)
            return 2
    real = args.shoe not in ("virtual", "bridge-virtual") and not args.shoe.lower().startswith("vshoe://")
    if args.protocol == 2 and secret is None and real:
        print("shoe-ctl conform: --protocol 2 needs --secret-file (the shoe's pairing secret)", file=sys.stderr)
        return 2
    kit_mod = importlib.import_module("hil.conform")
    try:
        report: dict[str, Any] = kit_mod.run_kit(args.shoe, operator_command=args.operator,
                                                 time_scale=args.time_scale,
                                                 operator_budget=args.operator_budget_ms / 1000,
                                                 protocol=args.protocol, secret=secret)
    except ReaderLibraryError as exc:  # bridge-virtual without the reader packages
        print(f"shoe-ctl conform: --shoe {args.shoe}: {exc}", file=sys.stderr)
        return 2
    for r in report["results"]:
        print(f"{r['status']:>8}  {r['name']:<22} {r['message']}", file=sys.stderr if args.json == "-" else sys.stdout)
    text = json.dumps(report, indent=1)
    if args.json == "-":
        print(text)
    elif args.json:
        Path(args.json).write_text(text + "\n")
    if args.junit:
        Path(args.junit).write_text(kit_mod.junit_xml(report) + "\n")
    return 1 if report["summary"]["failed"] else 0
