"""``shoe-ctl replay PATH... [--rules tda|house] [--json] [--direct] [--seed N]``: recorded PHH
hands through the whole service.

Each hand is dealt by the simulated dealer following the controller's signals, with the hand's
recorded folds, all-ins and betting rounds as dealer inputs, from a virtual shoe stacked with the
hand's known cards (unknown cards seeded random) — over a real pty and ``ShoeLink`` by default,
or straight into the state machine with ``--direct``. Replays run unpaced. The JSON lines have
the keys of ``shoe-ctl analyze`` (``file``, ``game``, ``rules``, ``players``, ``bring_in``,
``first_to_act``, ``seventh``, ``community_card``, ``alerts``, ``error``), computed by the state
machine as it dealt. A scrambled stub yields its own community card (not the record's).

Exit status: 0 when every hand replayed, 1 when some hand gave an error, 2 for a bad profile or
no file found.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from shoe_ctl.analyze import iter_phh_files
from shoe_ctl.config import load_profile
from shoe_ctl.phh import PhhError, read_phh
from shoe_ctl.rules.profiles import ProfileError


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
                   timeout: float = 600.0) -> list[dict[str, Any]]:
    """Replay ``paths`` and return one analyze-shaped report per file, in order.

    :raises shoe_ctl.rules.profiles.ProfileError: an unknown profile.
    :raises TimeoutError: (full path) the hands did not finish in ``timeout`` seconds.
    """
    from shoe_ctl.replay import run_direct, run_full, script_from_record

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
                               "error": None}
        reports.append(rep)
        try:
            rec = read_phh(path)
            scripts.append(script_from_record(rec, seed=seed + k, path=path))
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
    try:
        reports = replay_reports(files, args.rules, direct=args.direct, seed=args.seed)
    except (ProfileError, OSError) as exc:
        print(f"shoe-ctl replay: {exc}", file=sys.stderr)
        return 2
    errors = 0
    for rep in reports:
        errors += rep["error"] is not None
        if args.json:
            stream.write(json.dumps(rep, separators=(", ", ": ")) + "\n")
        else:
            stream.write(_row(rep) + "\n")
    stream.flush()
    return 1 if errors else 0


def _row(rep: dict[str, Any]) -> str:
    if rep["error"]:
        return f"{rep['file']}: ERROR {rep['error']}"
    first = " ".join(f"{st}:P{p}" if p else f"{st}:?" for st, p in rep["first_to_act"].items())
    seventh = rep["seventh"]
    sev = f"7th {seventh['procedure']} (stub {seventh['stub']}/{seventh['required']})" if seventh else "7th -"
    comm = f" community {rep['community_card']}" if rep["community_card"] else ""
    bi = f"P{rep['bring_in']}" if rep["bring_in"] else "?"
    return f"{rep['file']}: {rep['game']} {rep['players']}p bring-in {bi} first {first} {sev}{comm}"
