"""A snapshot's ``state`` event on an ``/events`` stream (``server.state_event``): the snapshot as
one line of compact JSON with its version as the event's id, the same value whichever encoder the
environment has (orjson, or the standard library's), texts outside ASCII included."""

from __future__ import annotations

import json
from typing import Any

from rule_profiles import PROFILES
from sinks import Collect

from hil.dealer import random_hands
from hil.replay import run_direct
from shoe_ctl.display import DisplayModel, server
from shoe_ctl.events import Alert


def _parse(event: bytes) -> tuple[list[str], Any]:
    text = event.decode("utf-8")
    assert text.endswith("\n\n") and text.count("\n") == 4  # id, event, one data line, the blank line
    lines = text.split("\n")[:3]
    assert lines[1] == "event: state" and lines[2].startswith("data: ")
    return lines, json.loads(lines[2][len("data: "):])


def test_every_snapshot_of_dealt_hands_reads_back_as_itself() -> None:
    tape = Collect()
    run_direct(random_hands(4, count=3), PROFILES, seed=4, sinks=[tape])
    model = DisplayModel()
    seen = 0
    for command in [*tape.commands, Alert("note", "seat 3 — «As» naïve \u2028 line")]:
        if not model.apply(command):
            continue
        snap = model.snapshot()
        lines, value = _parse(server.state_event(snap))
        assert lines[0] == f"id: {snap['version']}"
        assert value == json.loads(json.dumps(snap)) == json.loads(server._json_stdlib(snap))
        seen += 1
    assert seen > 100
    assert "naïve" in json.dumps(value, ensure_ascii=False)
