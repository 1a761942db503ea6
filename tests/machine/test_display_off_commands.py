"""A machine without a display (``display=False``: bulk replays nobody watches) emits the same
commands, in the same order, as one with a display, less its display updates: it keeps a shorter
key of its state between events (docs/performance.md, *A machine without a display keeps a
shorter key*). Random hands with folds and all-ins, hands with irregularities (undo, a
premature card, a misdeal, exposed cards, absent players), and the real hands."""

from __future__ import annotations

import random
from typing import Any

import pytest
from paths import SHARED_PHH
from rule_profiles import PROFILES

from hil.dealer import HandScript, Irregularity, random_hands
from hil.replay import run_direct, script_from_record
from shoe_ctl.analyze import iter_phh_files
from shoe_ctl.events import DisplayUpdate
from shoe_ctl.machine import Dealing
from shoe_ctl.phh import read_phh

KINDS = ("expose", "expose-both", "off-table", "premature", "burn-two", "no-burn", "absent", "wrong-bring-in",
         "card-count", "misdeal", "undo")
STREETS = ("3rd", "4th", "5th", "6th", "7th")


def both(scripts: list[HandScript], rules: str = "tda") -> tuple[list[Any], list[Any]]:
    """The events of one direct replay of ``scripts`` handed to a machine with a display and to
    one without: the first's commands (its display updates left out) and the second's."""
    events: list[Any] = []
    run_direct(scripts, PROFILES, rules=rules, display=True, log=events)
    out = []
    for display in (True, False):
        machine = Dealing(PROFILES, default_rules=rules, display=display)
        cmds = machine.start()
        for event in events:
            cmds += machine.handle(event)
        out.append([c for c in cmds if not isinstance(c, DisplayUpdate)])
    return out[0], out[1]


@pytest.mark.parametrize("seed", [1, 2])
def test_random_hands_emit_the_same_commands(seed: int) -> None:
    hands = list(random_hands(seed, fold_rate=0.25, all_in_rate=0.05, count=25))
    shown, bare = both(hands)
    assert len(bare) > 25 * 20
    assert bare == shown


@pytest.mark.parametrize("seed", range(6))
def test_irregular_hands_emit_the_same_commands(seed: int) -> None:
    rng = random.Random(seed)
    for k, hand in enumerate(random_hands(seed + 40, count=8)):
        rules = "house" if k % 2 else "tda"
        for _ in range(rng.choice((1, 2))):
            kind = rng.choice(KINDS)
            street = rng.choice(STREETS[:4]) if kind in ("premature", "undo") else rng.choice(STREETS)
            args: dict[str, Any] = {"cards": rng.choice((6, 8))} if kind == "card-count" else {}
            hand.irregular.append(Irregularity(kind, "3rd" if kind == "wrong-bring-in" else street,
                                               rng.choice(hand.seats), rng.choice((0, 1, 2)), rng.choice((1, 2, 3)),
                                               args))
        shown, bare = both([hand], rules)
        assert bare == shown, (seed, k, hand.irregular)


@pytest.mark.shared
def test_real_hands_emit_the_same_commands() -> None:
    files = list(iter_phh_files([SHARED_PHH]))
    scripts = [script_from_record(read_phh(f), seed=k, path=f) for k, f in enumerate(files[:60])]
    shown, bare = both(scripts)
    assert bare == shown
