"""``shoe-ctl replay PATH... [--rules tda|house] [--json] [--direct] [--seed N]``: recorded PHH
hands through the whole service.

Each hand is dealt by the simulated dealer following the controller's signals, with the hand's
recorded folds, all-ins and betting rounds as dealer inputs, from a virtual shoe stacked with the
hand's known cards (unknown cards seeded random) — over a real pty and ``ShoeLink`` by default,
or straight into the state machine with ``--direct``. Replays run unpaced. The JSON lines have
the keys of ``shoe-ctl analyze`` (``file``, ``game``, ``rules``, ``players``, ``bring_in``,
``first_to_act``, ``seventh``, ``community_card``, ``alerts``, ``error``, ``seats``), computed by
the state machine as it dealt. Each player is dealt at the record's table seat where it has them
and they fit seats 1..8 (else at 1..n); ``seats`` is the record's, as analyze reports it. A scrambled stub yields its own community card (not the record's).

Exit status: 0 when every hand replayed, 1 when some hand gave an error, 2 for a bad profile or
no file found.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from shoe_ctl.analyze import HandReport, iter_phh_files
from shoe_ctl.cli.analyze import ReportTable, display_names
from shoe_ctl.config import load_profile
from shoe_ctl.phh import PhhError, read_phh
from shoe_ctl.rules.profiles import ProfileError

REPLAY_SOURCE = (
    "as the state machine dealt it (the virtual shoe stacked with the record's cards)",
    "no '*': the simulated dealer acts in the machine's order",
)


def register(subparsers: Any) -> None:
    """Add the ``replay`` subcommand."""
    p = subparsers.add_parser(
        "replay",
        help="deal recorded PHH hands through the simulated dealer, the shoe and the state machine",
        description=(
            "Replay PHH hands (files, or folders searched for *.phh) through the whole service: the "
            "simulated dealer follows the signals and the recorded folds and all-ins; the virtual shoe "
            "holds the hand's cards. Prints what the state machine decided, per hand."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a .phh file or a folder of them")
    p.add_argument("--rules", default="tda", metavar="tda|house", help="rule profile (default: tda)")
    p.add_argument("--json", action="store_true", help="one JSON object per hand per line (analyze's keys)")
    p.add_argument("--direct", action="store_true", help="skip the serial link: dealer and machine only (fast)")
    p.add_argument("--seed", type=int, default=0, help="seed for unknown cards, scrambles and cuts (default 0)")
    p.set_defaults(func=run)


def replay_reports(paths: list[Path], rules: str, *, direct: bool, seed: int = 0,
                   timeout: float = 600.0, bring_in_cards: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """Replay ``paths`` and return one analyze-shaped report per file, in order.

    :param bring_in_cards: if given, filled with the bring-in card the machine read (card text)
        per report index, for the readable table.

    :raises shoe_ctl.rules.profiles.ProfileError: an unknown profile.
    :raises TimeoutError: (full path) the hands did not finish in ``timeout`` seconds.
    """
    from hil.replay import run_direct, run_full, script_from_record

    profiles = {"tda": load_profile("tda"), "house": load_profile("house")}
    if rules not in profiles:
        profiles[rules] = load_profile(rules)
    name = profiles[rules].name
    reports: list[dict[str, Any]] = []
    scripts = []
    slots: list[int] = []
    for k, path in enumerate(paths):
        rep: dict[str, Any] = {"file": str(path), "game": None, "rules": name, "players": None, "bring_in": None,
                               "first_to_act": {}, "seventh": None, "community_card": None, "alerts": [],
                               "error": None, "seats": None}
        reports.append(rep)
        try:
            rec = read_phh(path)
            rep["seats"] = rec.table_seats()
            scripts.append(script_from_record(rec, seed=seed + k, path=path, table_seats=True))
            slots.append(k)
        except (PhhError, ValueError) as exc:
            rep["error"] = str(exc)
    if scripts:
        key = rules if rules in profiles else name
        if direct:
            recorder, dealer = run_direct(scripts, profiles, rules=key, seed=seed, display=False)
        else:
            recorder, dealer = run_full(scripts, profiles, rules=key, seed=seed, timeout=timeout)
        for k, hand in zip(slots, recorder.hands, strict=False):
            s = hand.summary
            reports[k].update({"game": s["game"], "players": s["players"], "bring_in": s["bring_in"],
                               "first_to_act": s["first_to_act"], "seventh": s["seventh"],
                               "community_card": s["community_card"],
                               "alerts": list(hand.alert_details)})
            if bring_in_cards is not None and s["bring_in"]:
                held = list(hand.cards.values())
                up = held[s["bring_in"] - 1]["up"] if s["bring_in"] <= len(held) else []
                if up:
                    bring_in_cards[k] = up[0]
        for k in slots[len(recorder.hands):]:
            reports[k]["error"] = f"not replayed: the dealer stopped ({dealer.stalled or 'no signal'})"
    return reports


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``replay``; returns the exit status."""
    stream = out or sys.stdout
    files = list(iter_phh_files(args.paths))
    if not files:
        print(f"shoe-ctl replay: no .phh file under {' '.join(args.paths)}", file=sys.stderr)
        return 2
    cards: dict[int, str] = {}
    try:
        reports = replay_reports(files, args.rules, direct=args.direct, seed=args.seed, bring_in_cards=cards)
        profile = None if args.json else load_profile(args.rules)
    except (ProfileError, OSError) as exc:
        print(f"shoe-ctl replay: {exc}", file=sys.stderr)
        return 2
    errors = 0
    table = None
    if profile is not None:
        names = display_names(files, args.paths)
        table = ReportTable(stream, profile, False, max(len(n) for n in names), source=REPLAY_SOURCE)
    for k, rep in enumerate(reports):
        errors += rep["error"] is not None
        if table is None:
            stream.write(json.dumps(rep, separators=(", ", ": ")) + "\n")
        else:
            report = HandReport.from_json(rep)
            report.bring_in_card = cards.get(k)
            table.row(report, names[k])
    if table is not None:
        table.summary()
    stream.flush()
    return 1 if errors else 0
