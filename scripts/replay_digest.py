"""The command stream of the direct replay as one digest: every command the dealing machine emits
(instructions, alerts, display updates, shoe commands, by ``repr``) for the 208 real hands of
``../shared/data/stud/phh`` and 100 seeded random hands with scripted irregularities
(``hil.dealer.random_hands`` plus :class:`hil.dealer.Irregularity` drawn from a seeded generator).

A change to the hot path must leave the digest unchanged (``docs/performance.md``, "Replay at
2x"). Run with ``PYTHONHASHSEED=0``::

    PYTHONHASHSEED=0 .venv/bin/python scripts/replay_digest.py          # prints the digest
    PYTHONHASHSEED=0 .venv/bin/python scripts/replay_digest.py --dump F # also every command line
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.__main__ import _scripts, phh_files, profiles  # noqa: E402
from hil.dealer import Irregularity, random_hands  # noqa: E402
from hil.replay import run_direct  # noqa: E402

STREETS = ("3rd", "4th", "5th", "6th", "7th")


class _Tape:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def handle(self, cmd: Any) -> None:
        self.lines.append(repr(cmd))


def irregular_hands(count: int = 100, seed: int = 16) -> list[Any]:
    """``count`` random 8-seat hands, each with one or two irregularities drawn from ``seed``."""
    rng = random.Random(seed)
    out = []
    for k, hand in enumerate(random_hands(seed, count=count)):
        hand.rules = "house" if k % 2 else "tda"
        for _ in range(rng.choice((1, 1, 2))):
            kind = rng.choice(("expose", "expose-both", "off-table", "premature", "burn-two", "no-burn",
                               "absent", "wrong-bring-in", "card-count", "misdeal", "undo"))
            seat = rng.choice(hand.seats)
            street = rng.choice(STREETS[:4]) if kind in ("premature", "undo") else rng.choice(STREETS)
            args: dict[str, Any] = {}
            if kind == "card-count":
                args = {"cards": rng.choice((6, 8))}
            elif kind == "absent" and rng.random() < 0.5:
                args = {"at": "betting"}
            hand.irregular.append(Irregularity(kind, "3rd" if kind == "wrong-bring-in" else street, seat,
                                               rng.choice((0, 1, 2)), rng.choice((1, 2, 3)), args))
        out.append(hand)
    return out


def streams() -> list[str]:
    """Every command line of the real hands (one run), then of each irregular hand (a run each)."""
    profs = profiles()
    tape = _Tape()
    _, dealer = run_direct(_scripts(phh_files()), profs, display=True, sinks=[tape])
    lines = [*tape.lines, f"stalled {dealer.stalled!r}"]
    for k, hand in enumerate(irregular_hands()):
        tape = _Tape()
        try:
            _, dealer = run_direct([hand], profs, rules=hand.rules, display=True, sinks=[tape])
            end = f"stalled {dealer.stalled!r}"
        except Exception as exc:  # noqa: BLE001 - an exception is part of the stream
            end = f"raised {type(exc).__name__}: {exc}"
        lines += [f"hand {k}", *tape.lines, end]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", type=Path, default=None, help="write every command line to this file")
    args = ap.parse_args()
    lines = streams()
    if args.dump:
        args.dump.write_text("\n".join(lines) + "\n")
    print(len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
