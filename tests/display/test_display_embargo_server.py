"""Hole-card embargo through the real display server: every real hand in
``../shared/data/stud/phh`` is dealt through the dealing machine with the display server running
on 127.0.0.1 (a free port), and what a client reads — every ``GET /events`` snapshot and samples
of ``GET /state`` — is checked seat by seat:

- a seat's downcard appears nowhere (any key, any text) before that seat's hand is shown at the
  showdown (``show``);
- a hand mucked at the showdown, folded, killed or dead never shows its downcards.

All hands go through one server; the stream is read without gaps (it carries as many snapshots
as the server published, their ids rising), so every state the page could have shown is checked.
"""

from __future__ import annotations

import http.client
import json
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from paths import SHARED_PHH
from rule_profiles import PROFILES

from shoe_ctl.display.server import DisplaySink, start_display
from shoe_ctl.embargo import CARD_TOKEN, MUCKED_STATUSES, is_showdown
from shoe_ctl.events import Command

PHH_DIR = SHARED_PHH
pytestmark = pytest.mark.shared
READ_EVERY = 100    # commands published before the test waits for the stream reader to catch up
                    # (below the server's per-client backlog of 256 snapshots)
STATE_EVERY = 400   # one GET /state per this many commands


class StreamReader:
    """Reads ``GET /events`` on its own thread and keeps every snapshot with its id."""

    def __init__(self, host: str, port: int) -> None:
        self.snapshots: list[tuple[int, dict[str, Any]]] = []
        self.latest = -1
        self._cond = threading.Condition()
        self._conn = http.client.HTTPConnection(host, port, timeout=30)
        self._conn.request("GET", "/events")
        self._resp = self._conn.getresponse()
        assert self._resp.status == 200
        assert self._resp.getheader("Content-Type", "").startswith("text/event-stream")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        ident: int | None = None
        data: list[str] = []
        kind = "message"
        try:
            for raw in self._resp:
                line = raw.decode().rstrip("\n")
                if line.startswith("id: "):
                    ident = int(line[4:])
                elif line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data and kind != "state":  # a beat or bye: no snapshot
                    ident, data, kind = None, [], "message"
                elif line == "" and data:
                    assert ident is not None
                    with self._cond:
                        self.snapshots.append((ident, json.loads("\n".join(data))))
                        self.latest = ident
                        self._cond.notify_all()
                    ident, data, kind = None, [], "message"
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # the connection closed

    def wait_for(self, version: int, timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: self.latest >= version, timeout):
                raise TimeoutError(f"the stream stopped at {self.latest}, expected {version}")

    def close(self) -> None:
        self._conn.close()


class Paced:
    """A sink in front of the display server: after every command it waits until the server has
    applied it (so each command is published on its own, not folded with the next: every state
    the machine passes through reaches the stream); every ``STATE_EVERY`` commands it samples
    ``GET /state``."""

    def __init__(self, display: DisplaySink, reader: StreamReader) -> None:
        self.display = display
        self.reader = reader
        self.count = 0
        self.states: list[dict[str, Any]] = []

    def handle(self, command: Command) -> None:
        self.display.handle(command)
        self.count += 1
        self.display.sync(10.0)
        if self.count % READ_EVERY == 0:
            self.reader.wait_for(self.display.model.version)
        if self.count % STATE_EVERY == 0:
            with urllib.request.urlopen(self.display.url + "state", timeout=10) as r:
                self.states.append(json.load(r))

    def catch_up(self) -> None:
        self.display.sync(10.0)
        if self.count % READ_EVERY == 0:
            self.reader.wait_for(self.display.model.version)
        self.reader.wait_for(self.display.model.version)

    def close(self) -> None:
        return None


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[list[tuple[int, dict[str, Any]]], list[dict[str, Any]], list[Any], list[Any], int]]:
    files = sorted(PHH_DIR.rglob("*.phh"))
    from hil.replay import run_direct, script_from_record
    from shoe_ctl.phh import read_phh

    scripts = [script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)]
    profiles = PROFILES
    display = start_display("127.0.0.1", 0, lambda _event: None)
    reader = StreamReader(display.host, display.port)
    try:
        reader.wait_for(0)
        paced = Paced(display, reader)
        recorder, _dealer = run_direct(scripts, profiles, sinks=[paced])
        paced.catch_up()
        with urllib.request.urlopen(display.url + "state", timeout=10) as r:
            paced.states.append(json.load(r))
        published = display.published
    finally:
        display.close()  # ends the stream
        reader._thread.join(5.0)
        reader.close()
    assert len(recorder.hands) == len(files), "every hand replays to its end"
    yield reader.snapshots, paced.states, recorder.hands, scripts, published


def _leaks(snap: dict[str, Any], downs: dict[int, set[str]], mucked: set[int]) -> list[str]:
    """Each seat whose downcards appear in ``snap`` without that seat's hand shown."""
    found = set(CARD_TOKEN.findall(json.dumps(snap)))
    shown = {s["seat"] for s in snap.get("seats", []) if isinstance(s.get("down"), list)}
    out = []
    for seat, cards in downs.items():
        seen = found & cards
        if not seen:
            continue
        if seat in mucked or seat not in shown or not is_showdown(snap):
            out.append(f"seat {seat}: {sorted(seen)} (state {snap.get('state')}, shown {sorted(shown)})")
    return out


def test_no_downcard_through_the_real_server_before_its_hand_is_shown(
        served: tuple[list[tuple[int, dict[str, Any]]], list[dict[str, Any]], list[Any], list[Any], int]) -> None:
    snapshots, states, hands, scripts, published = served
    ids = [i for i, _ in snapshots]
    assert ids == sorted(set(ids)), "the snapshot ids rise"
    assert len(snapshots) == published + 1, "the stream skipped snapshots"  # + the one at connect
    assert len(snapshots) > 20 * len(hands)
    assert len(states) > 10
    by_hand: dict[int, list[dict[str, Any]]] = {}
    for _, snap in snapshots:
        if isinstance(snap.get("hand"), int):
            by_hand.setdefault(snap["hand"], []).append(snap)
    for snap in states:
        if isinstance(snap.get("hand"), int):  # idle: no hand (the last one is ``last_hand``)
            by_hand.setdefault(snap["hand"], []).append(snap)
    assert sorted(by_hand) == list(range(1, len(hands) + 1))
    leaks: list[str] = []
    shown_hands = 0
    for number, snaps in sorted(by_hand.items()):
        record, script = hands[number - 1], scripts[number - 1]
        downs = {seat: set(info.get("down", [])) - {"??"} for seat, info in record.cards.items()}
        assert any(downs.values()), f"hand {number}: no downcards recorded"
        mucked = {seat for seat, info in record.cards.items() if info.get("status") in MUCKED_STATUSES}
        mucked |= set(script.muck)
        for snap in snaps:
            leaks += [f"hand {number} ({script.name}) v{snap.get('version')}: {x}" for x in _leaks(snap, downs, mucked)]
        if any(is_showdown(s) and any("down" in seat for seat in s["seats"]) for s in snaps):
            shown_hands += 1
    assert leaks == [], f"{len(leaks)} leaks, first: {leaks[:3]}"
    assert shown_hands > 0, "no hand was ever shown at showdown: the check could not see a downcard"
