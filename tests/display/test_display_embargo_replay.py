"""Hole-card embargo on every real hand: replay each PHH hand in ``../shared/data/stud/phh`` through
the dealing machine (direct replay) and check what the display would stream, what the console
would print and what the machine publishes, for each seat's downcards.

- before showdown: no downcard of the hand anywhere (display snapshots, raw states, instruction
  texts, alert messages);
- at showdown: a folded, killed, dead or mucked hand's downcards never.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from paths import SHARED_PHH
from rule_profiles import PROFILES
from sinks import Collect

from drivers.leds import ConsoleLedSink
from shoe_ctl.display.model import DisplayModel
from shoe_ctl.embargo import CARD_TOKEN, MUCKED_STATUSES, is_showdown
from shoe_ctl.events import Alert, Command, DisplayUpdate, Instruction

PHH_DIR = SHARED_PHH
pytestmark = pytest.mark.shared


def cards_in(obj: Any) -> set[str]:
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return set(CARD_TOKEN.findall(text))




def by_hand(commands: list[Command]) -> Iterator[tuple[Any, list[Command]]]:
    """Commands grouped by the hand number of the next DisplayUpdate (an instruction or alert
    precedes the state it belongs to)."""
    pending: list[Command] = []
    current: Any = None
    group: list[Command] = []
    for cmd in commands:
        pending.append(cmd)
        if isinstance(cmd, DisplayUpdate):
            hand = cmd.state.get("hand")
            if hand != current and group:
                yield current, group
                group = []
            current = hand
            group.extend(pending)
            pending = []
    group.extend(pending)
    if group:
        yield current, group


@pytest.fixture(scope="module")
def replayed() -> tuple[list[Command], list[Any], list[Any]]:
    try:
        from hil.replay import run_direct, script_from_record
        from shoe_ctl.phh import read_phh
    except ImportError as exc:
        pytest.skip(f"the service's replay is not available yet ({exc})")
    files = sorted(PHH_DIR.rglob("*.phh"))
    scripts = [script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)]
    profiles = PROFILES
    sink = Collect()
    recorder, _dealer = run_direct(scripts, profiles, sinks=[sink])
    assert len(recorder.hands) == len(files), "every hand replays to its end"
    return sink.commands, recorder.hands, scripts


@pytest.fixture(scope="module")
def violations(replayed: tuple[list[Command], list[Any], list[Any]]) -> dict[str, list[str]]:
    """Every place a downcard showed: ``before`` showdown, or a mucked hand's ``at`` showdown."""
    commands, hands, scripts = replayed
    groups = [(h, g) for h, g in by_hand(commands) if h is not None]
    assert len(groups) == len(hands)
    model = DisplayModel()
    found: dict[str, list[str]] = {"before": [], "at": [], "shown": [], "states": []}
    for (hand_no, group), record, script in zip(groups, hands, scripts, strict=True):
        downs = {seat: set(info.get("down", [])) - {"??"} for seat, info in record.cards.items()}
        everything = set().union(*downs.values())
        assert everything, f"hand {hand_no}: the recorder saw no downcards"
        mucked = {seat for seat, info in record.cards.items() if info.get("status") in MUCKED_STATUSES}
        mucked |= set(script.muck)
        never = set().union(*(downs[s] for s in mucked)) if mucked else set()
        console = io.StringIO()
        printer = ConsoleLedSink(console, color=False)  # the lines the service prints

        def check(what: str, cards: set[str], showdown: bool, where: str,
                  never: set[str] = never, everything: set[str] = everything) -> None:
            if showdown:
                if cards & never:
                    found["at"].append(f"{where}: {what} shows mucked downcards {sorted(cards & never)}")
            elif cards & everything:
                found["before"].append(f"{where}: {what} shows downcards {sorted(cards & everything)}")

        for cmd in group:
            printer.handle(cmd)
            model.apply(cmd)
            where = f"hand {hand_no} ({script.name}), {type(cmd).__name__}"
            if isinstance(cmd, Instruction):
                check("instruction text", cards_in(cmd.text), False, where)
            if isinstance(cmd, Alert):
                check("alert message", cards_in(cmd.message), False, where)
            if not isinstance(cmd, DisplayUpdate):
                continue  # the display still shows the last state, possibly of the previous hand
            found["states"].append(where)
            check(f"the machine's state ({cmd.state.get('state')})", cards_in(cmd.state),
                  is_showdown(cmd.state), where)
            snap = model.snapshot()
            check("the display", cards_in(snap), is_showdown(snap), where)
            if is_showdown(snap) and cards_in(snap) & (everything - never):
                found["shown"].append(where)
        printer.close()  # writes every line queued
        check("the console", cards_in(console.getvalue()), False, f"hand {hand_no}")
    return found


def test_no_downcard_reaches_display_console_or_state_before_showdown(violations: dict[str, list[str]]) -> None:
    assert len(violations["states"]) > 208
    assert violations["before"] == []
    assert violations["shown"], "showdown shows the hands not mucked"


def test_mucked_hands_never_show_their_downcards(violations: dict[str, list[str]]) -> None:
    assert violations["at"] == [], f"{len(violations['at'])} leaks, first: {violations['at'][:2]}"
