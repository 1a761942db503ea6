"""``shoe-ctl replay PATH... [--rules tda|house] [--json] [--direct] [--seed N]``: recorded PHH hands
dealt through the whole service (or straight into the state machine with ``--direct``), the
report in ``shoe-ctl analyze``'s keys with the alerts counted as ``analyze`` counts them
(:func:`record_departures`). The replay, its seats and its alerts: docs/service.md, "Running"."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from hil.replay import run_direct, run_full, script_from_record
from shoe_ctl.analyze import BETTING, HandReport, iter_phh_files, street_first, street_views
from shoe_ctl.cli.analyze import ReportTable, display_names
from shoe_ctl.cli.args import Subparsers, add_phh_inputs
from shoe_ctl.config import load_profile
from shoe_ctl.phh import PhhError, RecordedHand, read_phh
from shoe_ctl.rules.profiles import ProfileError, RuleProfile
from shoe_ctl.rules.stub import Procedure

REPLAY_SOURCE = (
    "as the state machine dealt it (the virtual shoe stacked with the record's cards)",
    "no '*': the simulated dealer acts in the machine's order",
)


def register(subparsers: Subparsers) -> None:
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
    add_phh_inputs(p, "one JSON object per hand per line (analyze's keys)")
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
    profiles = {"tda": load_profile("tda"), "house": load_profile("house")}
    if rules not in profiles:
        profiles[rules] = load_profile(rules)
    name = profiles[rules].name
    reports: list[dict[str, Any]] = []
    scripts = []
    slots: list[int] = []
    records: dict[int, Any] = {}
    for k, path in enumerate(paths):
        rep: dict[str, Any] = {"file": str(path), "game": None, "rules": name, "players": None, "bring_in": None,
                               "first_to_act": {}, "seventh": None, "community_card": None, "alerts": [],
                               "error": None, "seats": None}
        reports.append(rep)
        try:
            rec = read_phh(path)
            rep["seats"] = rec.table_seats()
            records[k] = rec
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
                               "alerts": record_departures(records[k], s, profiles[key])})
            if bring_in_cards is not None and s["bring_in"]:
                held = list(hand.cards.values())
                up = held[s["bring_in"] - 1]["up"] if s["bring_in"] <= len(held) else []
                if up:
                    bring_in_cards[k] = up[0]
        for k in slots[len(recorder.hands):]:
            reports[k]["error"] = f"not replayed: the dealer stopped ({dealer.stalled or 'no signal'})"
    return reports


def record_departures(record: RecordedHand, summary: dict[str, Any], profile: RuleProfile) -> list[dict[str, Any]]:
    """The alerts of ``analyze`` for ``record``, against the machine's decisions (``summary``, in
    the keys of :meth:`shoe_ctl.machine.Dealing.summary`) instead of the rules core's, in
    ``analyze``'s shapes and order: a 7th street dealt otherwise than the machine's short-stub
    procedure (RP-10-H, house 16.20; code the procedure's clause), then per street a player who
    acted first where the machine named another (``first-to-act``) — only on a street whose
    deciding upcards the record gives (where ``analyze`` names no one the replay decided on its
    own random cards, which is no departure of the record).

    :param record: the :class:`shoe_ctl.phh.RecordedHand` that was replayed.
    """
    alerts: list[dict[str, Any]] = []
    seventh = summary.get("seventh")
    dealt: set[str] = set()
    acted: dict[str, int] = {}  # per street the record's first actor (0-based), as street_views finds it
    for a in record.actions:
        if a.kind in ("dh", "db"):
            dealt.add(a.street)
        elif a.kind in BETTING and a.player is not None and a.street not in acted:
            acted[a.street] = a.player
    if seventh and "6th" in dealt:
        try:
            procedure = Procedure(seventh.get("procedure"))
        except ValueError:
            procedure = None
        recorded_community = record.community_street == "7th"
        if procedure is not None and procedure.community != recorded_community:
            clause = str(seventh.get("clause") or "")
            if clause == "normal" or not procedure.community:
                clause = "house-16.20" if profile.house else "RP-10-H"
            alerts.append({
                "code": clause, "street": "7th", "procedure": str(procedure),
                "message": (f"the record deals a community card on 7th; the {profile.name} rules give every "
                            f"player a card (procedure {procedure})" if recorded_community else
                            f"the record deals every player a 7th card; the {profile.name} rules prescribe a "
                            f"community card (procedure {procedure})"),
            })
    # the record is walked and the rules core asked only for a street where the machine's first
    # differs from the record's: where they agree there is no departure, whatever the record's
    # own cards would decide
    firsts = [(street, first) for street, first in (summary.get("first_to_act") or {}).items()
              if first is not None and street in acted and first != acted[street] + 1]
    departures: list[dict[str, Any]] = []
    try:
        views = street_views(record)[0] if firsts else {}
        for street, first in firsts:
            view = views.get(street)
            if view is None or not view.betting or view.recorded is None:
                continue
            # a street whose deciding upcards the record lacks (analyze: unknown) was decided on
            # the replay's random cards: not a departure of the record
            if street_first(record, profile, view) is None:
                continue
            actor = view.recorded
            departures.append({"code": "first-to-act", "street": street, "player": actor + 1, "expected": first,
                               "message": f"P{actor + 1} acted first; the {profile.name} rules give P{first}"})
    except ValueError:  # lists that do not match the players (a record not read by read_phh)
        departures = []
    return alerts + departures


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``replay``; returns the exit status.

    When the command owns the process (``args.whole_process``), what the imports made moves to
    the cycle collector's permanent generation first (``gc.freeze``, as ``shoe-ctl run`` does once
    its table starts): the collections during the hands then walk only what the hands made.
    """
    if getattr(args, "whole_process", False):
        gc.freeze()  # the modules live as long as the process: never collectable garbage
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
