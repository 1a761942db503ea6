"""``shoe-ctl verify --seed S --manifest M``: the expected answer of a table to a seeded
verification, computed offline (docs/compliance.md, "Verification on demand").

``--config C`` (the table's configuration file as installed), ``--serial`` and ``--firmware`` (the
table's shoe) complete the inputs: HMAC-SHA256 keyed with the seed over the manifest's bytes, the
configuration's bytes, the serial and the firmware, each preceded by its length. Prints the answer
in hex; exit status 0, or 2 for a bad seed or an unreadable file (said on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from shoe_ctl.cli.args import Subparsers
from shoe_ctl.release import ReleaseError, parse_seed, seeded_answer


def register(subparsers: Subparsers) -> None:
    """Add ``verify`` to the CLI."""
    p = subparsers.add_parser("verify", help="the expected answer to a seeded verification, computed offline",
                              description="Compute HMAC-SHA256(seed, manifest | config | shoe serial | shoe "
                              "firmware) as a table answers a floor's or a lab's seed.")
    p.add_argument("--seed", required=True, help="the seed sent to the table (32..128 hex digits)")
    p.add_argument("--manifest", required=True, help="the release manifest (release.json)")
    p.add_argument("--config", default=None, help="the table's configuration file (default: none, empty)")
    p.add_argument("--serial", default="", help="the table's shoe serial number")
    p.add_argument("--firmware", default="", help="the table's shoe firmware")
    p.set_defaults(func=verify)


def verify(args: argparse.Namespace) -> int:
    """Print the expected answer; 2 for a bad seed or an unreadable file."""
    try:
        seed = parse_seed(args.seed)
        manifest = Path(args.manifest).read_bytes()
        config = Path(args.config).read_bytes() if args.config else b""
    except ReleaseError as exc:
        print(f"shoe-ctl verify: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"shoe-ctl verify: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(seeded_answer(seed, manifest, config, args.serial, args.firmware))
    return 0
