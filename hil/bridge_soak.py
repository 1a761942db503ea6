"""``shoe-ctl hil bridge-soak``: the whole path of a reader-backed shoe (a virtual PN532 and a mock
beam feeding the shoe bridge, ``shoe-ctl run`` paired on its pty, the simulated dealer) soaked
with reader faults, bridge restarts and kills of the service, then checked from the journal.
The faults, the checks and one run's figures: docs/build-a-shoe.md, "Soak"."""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from drivers.reader_port import ReaderLibraryError
from drivers.shoe_fw import codec as fwc
from hil.crash import CrashRun, _seat_cards, _workdir, read_journal
from hil.dealer import random_hands
from hil.reader_shoe import ReaderShoe
from shoe_ctl.service.journal import Journal

__all__ = ["main", "run_bridge_soak"]

READER_FAULTS = ("hang", "no-ack", "bad-checksum", "stale")
CARDS_PER_HAND = 45
"""A low estimate of the cards a random eight-seat hand takes (burns, folds): hands are made
until the dealt cards reach the target."""


def _plan(rng: random.Random, cards: int, reader_faults: int, restarts: int) -> dict[int, str]:
    """Which pulls get a reader fault or a bridge restart before them (never the first 5)."""
    slots = rng.sample(range(6, max(cards, reader_faults + restarts + 7)), reader_faults + restarts)
    plan = {n: "restart" for n in slots[:restarts]}
    for k, n in enumerate(slots[restarts:]):
        plan[n] = READER_FAULTS[k % len(READER_FAULTS)]
    return plan


def _alerts(journal: Path) -> Counter[str]:
    """The journal's alerts by code, and its shoe restarts (``(shoe restarted)``)."""
    out: Counter[str] = Counter()
    with Journal(journal, table=None, profile=None, readonly=True) as j:
        for rec in j.records():
            if rec.kind == "Alert":
                out[str(getattr(rec.item, "code", ""))] += 1
            elif rec.kind == "ShoeRestarted":
                out["(shoe restarted)"] += 1
    return out


def run_bridge_soak(cards: int, seed: int, *, kills: int = 0, reader_faults: int = 0, restarts: int = 0,
                    workdir: str | Path | None = None, timeout: float | None = None,
                    progress: TextIO | None = None) -> dict[str, Any]:
    """Deal at least ``cards`` cards through the whole path with the given faults.

    :returns: the result dict: ``cards`` (pulled), ``hands``, ``kills``, ``reader_faults``,
        ``bridge_restarts``, ``lost_cards``, ``duplicated_cards``, ``reader_error_faults`` (sent
        by the shoe), ``reader_error_alerts``, ``restarts_seen`` and ``restart_stops`` (journaled), ``seconds``,
        ``cards_per_second``, ``details``, ``error`` (a run that did not finish), ``ok``.
    :raises ValueError: a negative count, or a workdir that cannot be used.
    """
    if cards < 1 or kills < 0 or reader_faults < 0 or restarts < 0:
        raise ValueError("need --cards >= 1 and no negative fault counts")
    t0 = time.monotonic()
    rng = random.Random(seed)
    hands = math.ceil(cards / CARDS_PER_HAND) + 1
    scripts = list(random_hands(seed, seats=range(1, 9), game="stud", rules="tda", count=hands))
    plan = _plan(rng, cards, reader_faults, restarts)
    points = set(rng.sample(range(5, max(cards, kills + 6)), kills))
    limit = timeout if timeout is not None else 180.0 + 0.5 * cards + 5.0 * (kills + reader_faults + restarts)
    rigs: list[ReaderShoe] = []

    def make(folder: Path, s: int, serial: str, secret: bytes) -> ReaderShoe:
        folder.mkdir(parents=True, exist_ok=True)
        rig = ReaderShoe(folder, serial=serial, secret=secret, seed=s, plan=plan).start()
        rigs.append(rig)
        return rig

    own = workdir is None

    tmp = Path(tempfile.mkdtemp(prefix="shoe-ctl-bridge-soak-")) if workdir is None else _workdir(workdir)
    try:
        plans: list[tuple[float, list[float]]] = [(rng.uniform(0.0, 0.02), []) for _ in points]
        run = CrashRun(scripts, tmp, "soak", seed, kill_points=points, kill_plans=plans, timeout=limit,
                       progress=progress, shoe_factory=make)
        rec = run.run()
        rig = rigs[0]
        got = read_journal(rec.journal, "tda")
        details: list[str] = []
        lost = sum(1 for seq in rec.shoe_cards if seq not in got.card_seqs)
        dup = sum(n - 1 for n in got.card_seqs.values() if n > 1)
        for k, picture in enumerate(rec.history):
            service = got.tables[k] if k < len(got.tables) else {}
            for seat, dealt in _seat_cards(picture).items():
                entry = service.get(seat, {})
                have = Counter([*entry.get("down", []), *entry.get("up", [])])
                lost += sum((dealt - have).values())
                dup += sum((have - dealt).values())
                if dealt != have and len(details) < 8:
                    details.append(f"hand {k + 1} seat {seat}: dealt {sorted(dealt.elements())}, "
                                   f"the service has {sorted(have.elements())}")
        alerts = _alerts(rec.journal)
        sent_reader = sum(1 for _seq, kind, cleared in rig.faults_sent if kind == fwc.FAULT_READER_ERROR and not cleared)
        done_faults = sum(1 for n, what in plan.items() if what != "restart" and n <= rig.pulls)
        done_restarts = rig.bridge_starts - 1
        res: dict[str, Any] = {
            "cards": rig.passes, "hands": len(got.hands), "kills": rec.kills, "reader_faults": done_faults,
            "bridge_restarts": done_restarts, "lost_cards": lost, "duplicated_cards": dup,
            "reader_error_faults": sent_reader, "reader_error_alerts": alerts["shoe-reader-error"],
            "restarts_seen": alerts["(shoe restarted)"], "restart_stops": alerts["shoe-restarted"],
            "seconds": round(time.monotonic() - t0, 1),
        }
        res["cards_per_second"] = round(rig.passes / max(rec.seconds, 1e-9), 1)
        if rec.error:
            res["error"] = rec.error
        if sent_reader < done_faults:
            details.append(f"{done_faults} reader faults made, the shoe reported {sent_reader}")
        if res["reader_error_alerts"] < sent_reader:
            details.append(f"{sent_reader} reader-error faults sent, {res['reader_error_alerts']} alerts journaled")
        if res["restarts_seen"] < done_restarts and not rec.kills:  # a service started after a
            # bridge restart compares with the boot its journal last knew, which may already be the new one
            details.append(f"{done_restarts} bridge restarts, {res['restarts_seen']} shoe restarts journaled")
        if rig.passes < cards and not rec.error:
            details.append(f"only {rig.passes} of {cards} cards pulled")
        res["details"] = details
        res["ok"] = (lost == 0 and dup == 0 and not rec.error and not details and len(got.hands) == len(scripts))
        return res
    finally:
        for rig in rigs:
            rig.close()
        if own:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


def main(args: argparse.Namespace) -> int:
    """Print the result (one JSON line with ``--json``); exit 0 only when nothing was lost or
    doubled, every fault was a stop the dealer saw, and every hand finished."""
    progress = sys.stderr if getattr(args, "progress", False) else None
    try:
        res = run_bridge_soak(args.cards, args.seed, kills=args.kills, reader_faults=args.reader_faults,
                              restarts=args.bridge_restarts, workdir=args.workdir, progress=progress)
    except (ValueError, ReaderLibraryError) as exc:
        print(f"shoe-ctl hil bridge-soak: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res, separators=(",", ":")))
    else:
        print(f"cards {res['cards']}  hands {res['hands']}  kills {res['kills']}  reader faults "
              f"{res['reader_faults']}  bridge restarts {res['bridge_restarts']}  lost {res['lost_cards']}  "
              f"doubled {res['duplicated_cards']}  reader-error stops {res['reader_error_alerts']}/"
              f"{res['reader_error_faults']}  restarts seen {res['restarts_seen']} (stops {res['restart_stops']})  "
              f"({res['seconds']} s, "
              f"{res['cards_per_second']} cards/s)")
        for line in res["details"]:
            print(f"  {line}")
        if res.get("error"):
            print(f"  error: {res['error']}")
    return 0 if res["ok"] else 1
