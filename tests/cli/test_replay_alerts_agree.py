"""``analyze`` and ``replay`` count alerts the same way for the same hand: the record's departures
from what was decided (docs/service.md, *Replaying hands*). On examples/ (a house-rules
departure) and on the real hands in ../shared when present."""

from __future__ import annotations

import io
import json
from argparse import Namespace

import pytest
from paths import EXAMPLES, SHARED_PHH

from shoe_ctl.analyze import analyze_file, analyze_hand, iter_phh_files
from shoe_ctl.cli import analyze as cmd_analyze
from shoe_ctl.cli import replay as cmd_replay
from shoe_ctl.cli.replay import record_departures
from shoe_ctl.config import load_profile
from shoe_ctl.phh import STREETS, PhhError, read_phh

PHH = SHARED_PHH


def _key(alerts: list[dict]) -> list[tuple]:
    return sorted((a["code"], a["street"], a.get("player"), a.get("expected")) for a in alerts)


@pytest.mark.parametrize("rules", ["tda", "house"])
@pytest.mark.parametrize("direct", [True, False])
def test_examples_same_alerts_in_analyze_and_replay(rules: str, direct: bool) -> None:
    files = sorted(iter_phh_files([EXAMPLES]))
    reports = cmd_replay.replay_reports(files, rules, direct=direct)
    profile = load_profile(rules)
    total = 0
    for f, rep in zip(files, reports, strict=True):
        want = analyze_file(f, profile).as_json()["alerts"]
        assert _key(rep["alerts"]) == _key(want), f
        total += len(want)
    # house 16.20 names P5 on the community-card hand the record dealt under TDA: one alert
    assert total == (1 if rules == "house" else 0)
    # the machine's short-stub procedure is its decision (``seventh``), not an alert
    community = next(r for r in reports if r["file"].endswith("eight-players-community-card.phh"))
    assert community["seventh"]["clause"] == ("RP-10-H-C" if rules == "tda" else "house-16.20")


def test_summary_lines_count_the_same_alerts() -> None:
    lines = []
    for module, extra in ((cmd_analyze, {"detail": False}), (cmd_replay, {"direct": True, "seed": 0})):
        out = io.StringIO()
        module.run(Namespace(paths=[str(EXAMPLES)], rules="house", json=False, **extra), out=out)
        lines.append(out.getvalue().strip().splitlines()[-1])
    assert lines[0] == lines[1] == "3 hand(s), 1 alert(s), 0 unreadable file(s)"


@pytest.mark.shared
@pytest.mark.parametrize("rules", ["tda", "house"])
def test_real_hands_same_alerts_per_hand(rules: str) -> None:
    files = sorted(iter_phh_files([PHH]))[::4]
    reports = cmd_replay.replay_reports(files, rules, direct=True)
    profile = load_profile(rules)
    for f, rep in zip(files, reports, strict=True):
        if rep["error"]:
            continue
        want = analyze_file(f, profile).as_json()["alerts"]
        assert _key(rep["alerts"]) == _key(want), (f, json.dumps(rep["alerts"]))


def _hands_for_departures() -> list:
    files = sorted(iter_phh_files([EXAMPLES]))
    if PHH.is_dir():
        files += sorted(iter_phh_files([PHH]))
    hands = []
    for f in files:
        try:
            hands.append(read_phh(f))
        except PhhError:
            continue
    return hands


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_departures_decide_a_street_as_the_analysis_does(rules: str) -> None:
    """``record_departures`` asks the rules core about a street only where the machine named
    another first actor than the record's; its first-to-act alerts are those the whole analysis
    (``analyze_hand(..., firsts_only=True)``) gives for every first the machine could name: each
    player on each street, a street whose deciding upcards the record lacks (``??``) included.
    On the examples and, where ``../shared`` is, the real hands."""
    profile = load_profile(rules)
    compared = alerted = unknown = 0
    for hand in _hands_for_departures():
        views = {v.street: v for v in analyze_hand(hand, profile, firsts_only=True).streets if v.betting}
        for first in range(1, hand.n + 1):
            summary = {"first_to_act": {st: first for st in STREETS}, "seventh": None}
            want = [{"code": "first-to-act", "street": st, "player": v.recorded + 1, "expected": first,
                     "message": f"P{v.recorded + 1} acted first; the {profile.name} rules give P{first}"}
                    for st, v in views.items()
                    if v.recorded is not None and v.first is not None and first != v.recorded + 1]
            assert record_departures(hand, summary, profile) == want, (hand.path, first)
            compared += 1
            alerted += len(want)
        unknown += sum(v.first is None and v.recorded is not None for v in views.values())
    assert compared > 0 and alerted > 0
    if PHH.is_dir():
        assert unknown > 0  # the real hands have streets decided by unknown upcards
