"""What a table sends per event (real Mosquitto): each journal record once on ``events``, the
tile's fields on ``state`` only when they change (small, no seat), the whole public state on
``display`` far less often but at once for a new hand, street or alert list, and only when
configured, and its own state read back once per
connection, not per message. The floor's view still shows the table's last state (docs/floor.md,
"Topics")."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from floor_help import ROOM, Tap, dealt
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.config import ConfigError
from shoe_ctl.events import DisplayUpdate
from shoe_ctl.floor import publisher
from shoe_ctl.floor.broker import FLOOR_USER, MONITOR_USER, Mosquitto
from shoe_ctl.floor.config import parse_floor
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.publisher import DISPLAY_EVERY_S, FloorPublisher
from shoe_ctl.floor.topics import floor_state, floor_tile


def _leaf(topic: str) -> str:
    return topic.rsplit("/", 1)[-1]


def _display_key(state: Mapping[str, Any]) -> tuple[Any, ...]:
    """What sends the whole state at once when it changes: the hand, the street, the alert list
    (docs/floor.md, "Topics")."""
    alerts = state.get("alerts")
    return (state.get("hand"), state.get("street"),
            tuple((a.get("code"), a.get("seat")) for a in alerts if isinstance(a, Mapping))
            if isinstance(alerts, list) else None)


def _anew(items: Sequence[Any]) -> int:
    """How many of ``items`` differ from the one before."""
    return sum(1 for a, b in zip(items, items[1:], strict=False) if a != b)


def test_a_dealing_table_sends_small_states_on_change_and_the_whole_state_less_often(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    monitor = mosquitto.users[MONITOR_USER]
    tap = Tap(mosquitto.host, mosquitto.port, monitor.username, monitor.password, f"{ROOM}/tables/#")
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    began = time.monotonic()  # before the table's first message
    t = VirtualTable("t1", tmp_path / "tables", random_hands(5, count=3), room=ROOM, host=mosquitto.host,
                     port=mosquitto.port, credentials=mosquitto.users["t1"], pace=0.06, display=True)
    plain = VirtualTable("t2", tmp_path / "tables", random_hands(6, count=1), room=ROOM, host=mosquitto.host,
                         port=mosquitto.port, credentials=mosquitto.users["t2"], pace=0.02)
    updates: list[dict[str, object]] = []
    t.controller.add_sink(type("Keep", (), {"handle": lambda _s, c: updates.append(c.state)
                                            if isinstance(c, DisplayUpdate) else None})())
    try:
        assert tap.subscribed.wait(10) and floor.connected.wait(10)
        t.start()
        plain.start()
        lasts = dealt([t, plain])
        last = lasts["t1"]
        assert wait_for(lambda: floor.seqs("t1") == list(range(1, last + 1)), 30)
        final = updates[-1]
        # the floor's view ends on the table's last state (the last tile is sent when the interval ends)
        assert wait_for(lambda: floor.tables["t1"].state.get("hand") == final["hand"]
                        and floor.tables["t1"].state.get("state") == final["state"]
                        and (floor.tables["t1"].state.get("stub") or {}).get("count")
                        == final["stub"]["count"], 30), (floor.tables["t1"].state, final["state"])  # type: ignore[index]
        pub = t.publisher

        def heard(leaf: str, table: str = "t1") -> list[object]:  # what the tap, a subscriber of its own, has so far
            return [d["state"] if leaf != "events" else d["seq"] for topic, _r, d in tap.snapshot()
                    if topic == f"{ROOM}/tables/{table}/{leaf}"]

        # the tap hears the table on a connection of its own: the floor having it all says nothing of
        # what the tap has yet, so wait for the last record, tile and whole state to reach the tap too
        # (and t2's last record and a tile of its own)
        assert wait_for(lambda: heard("events")[-1:] == [last] and heard("state")[-1:] == [floor_tile(final)]
                        and heard("display")[-1:] == [floor_state(final)]
                        and heard("events", "t2")[-1:] == [lasts["t2"]] and bool(heard("state", "t2")), 30), \
            (heard("events")[-3:], heard("state")[-1:], floor_tile(final), heard("events", "t2")[-1:], lasts)
        messages = tap.snapshot()
        elapsed = time.monotonic() - began  # after its last one the tap has
        # each packet sent at once: Nagle's algorithm would hold a PUBLISH behind the peer's delayed ACK
        for client in (pub.client, floor.client):
            sock = client.socket()
            assert sock is not None and sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        t.close()
        plain.close()
        tap.close()
        floor.close()
    by_leaf: dict[str, list[dict[str, object]]] = {}
    sizes: dict[str, list[int]] = {}
    # a table not configured for it sends no whole state: its tiles only
    assert {_leaf(topic) for topic, _r, _d in messages if "/t2/" in topic} >= {"state", "events", "status"}
    assert not [topic for topic, _r, _d in messages if topic.endswith("/t2/display")]
    messages = [m for m in messages if "/t1/" in m[0]]
    for topic, raw, data in messages:
        by_leaf.setdefault(_leaf(topic), []).append(data)
        sizes.setdefault(_leaf(topic), []).append(len(raw))
    events = [d["seq"] for d in by_leaf["events"]]
    assert events == list(range(1, last + 1)), "every record once and in order"
    states, displays = by_leaf["state"], by_leaf["display"]
    tiles = [s["state"] for s in states]
    # a connection's birth (and the birth again once the shoe's hello names it) sends both anew
    births = sum(1 for d in by_leaf["status"] if d.get("online"))
    # the state carries the tile only, and a tile only when it changed; a heartbeat repeats one
    # when nothing went out for a keepalive, so there are no more repeats than keepalives passed
    assert all(set(tile) <= {"hand", "game", "state", "street", "stub", "shoe"} for tile in tiles)  # type: ignore[arg-type]
    repeats = len(tiles) - 1 - _anew(tiles)
    assert repeats <= elapsed / t.keepalive + births - 1, (repeats, elapsed, births)
    assert len(states) <= len(events)
    assert max(sizes["state"]) < 2 * min(sizes["display"]), "the tile is a fraction of the whole state"
    # the whole state far less often: at once for a new hand, street or alert list, else at most
    # every DISPLAY_EVERY_S, however the publisher's steps fell (each takes the newest state)
    keys = [_display_key(d["state"]) for d in displays]  # type: ignore[arg-type]
    assert displays and _anew(keys) <= _anew([_display_key(u) for u in updates]) + births - 1, \
        (_anew(keys), births)
    again = len(keys) - 1 - _anew(keys)
    assert again <= elapsed / DISPLAY_EVERY_S + births - 1, (again, elapsed, births)
    # and at once: a step takes the newest state (a state between two steps may be skipped), and
    # sends its tile when the tile changed and its whole state in the same step when its hand,
    # street or alert list is new; so every hand and street a tile told was told whole too
    told = {(d["state"].get("hand"), d["state"].get("street")) for d in displays}  # type: ignore[attr-defined]
    untold = {(tile.get("hand"), tile.get("street")) for tile in tiles} - told  # type: ignore[attr-defined]
    assert not untold, (sorted(untold, key=str), sorted(told, key=str))
    assert all("seats" in d["state"] for d in displays)  # type: ignore[operator]
    # what was published is what the embargo functions give for some state the table had
    assert tiles[-1] == floor_tile(final)
    assert displays[-1]["state"] == floor_state(final)
    # read back once for the connection, then unsubscribed: no state per message comes back
    assert pub.problem is None and pub._readback_done


def test_a_new_hand_street_or_alert_list_sends_the_whole_state_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The publisher's rule for ``display``, its steps timed by a clock of the test's: a state
    taken with a new hand, street or alert list is sent whole in that step; one that changes
    none of them waits until DISPLAY_EVERY_S passed since the last whole state."""
    now = [100.0]
    monkeypatch.setattr(publisher, "time", SimpleNamespace(monotonic=lambda: now[0], time=time.time))
    pub = FloorPublisher(None, table="t1", room=ROOM, host="127.0.0.1", port=1, display=True)
    sent: list[dict[str, Any]] = []
    pub.client.publish = (  # type: ignore[method-assign]
        lambda topic, payload=None, **_kw: sent.append(json.loads(payload)["state"])
        if topic == pub.topics.display else None)
    step = DISPLAY_EVERY_S / 10  # steps closer together than DISPLAY_EVERY_S (and past state_interval)
    alert = {"code": "RP-10-H-D", "seat": 2, "latched": False}

    def take(hand: int, street: str, count: int, alerts: list[dict[str, Any]] | None = None) -> bool:
        """One step taking this state: whether it sent the whole state."""
        now[0] += step
        before = len(sent)
        pub._latest = {"hand": hand, "game": "stud", "state": "hand_deal", "street": street,
                       "stub": {"count": count, "required": 10}, "alerts": alerts or [], "seats": []}
        pub._publish_state()
        return len(sent) > before

    assert take(1, "3rd", 40)  # the first
    assert not take(1, "3rd", 39)  # a card later: the count alone is not new
    assert take(1, "4th", 38)  # a new street
    assert take(1, "4th", 37, [alert])  # a new alert list
    assert take(1, "4th", 36, [])  # the alert gone: a new list
    assert not take(1, "4th", 35)
    assert take(2, "4th", 34)  # a new hand
    assert not take(2, "4th", 33)
    now[0] += DISPLAY_EVERY_S
    assert take(2, "4th", 32)  # nothing new but DISPLAY_EVERY_S passed
    assert [(d["hand"], d["street"], d["stub"]["count"]) for d in sent] == [
        (1, "3rd", 40), (1, "4th", 38), (1, "4th", 37), (1, "4th", 36), (2, "4th", 34), (2, "4th", 32)]


def test_the_tile_names_no_card() -> None:
    raw = {"hand": 7, "game": "stud", "state": "hand_fifth_deal", "street": "5th",
           "seats": [{"seat": 1, "status": "live", "up": ["Ah"], "down": ["Kd", "Qc"]}],
           "stub": {"count": 20, "required": 10, "forecast": "short after Kd", "drawn": 4},
           "shoe": {"status": "fault", "detail": "jam at Ah, tag 04a1b2c3d4", "auth": "x"},
           "instruction": {"text": "Deal Kd"}}
    tile = floor_tile(raw)
    assert tile == {"hand": 7, "game": "stud", "state": "hand_fifth_deal", "street": "5th",
                    "stub": {"count": 20, "required": 10, "forecast": "short after ??"},
                    "shoe": {"status": "fault", "detail": "jam at ??, tag ??"}}
    assert floor_tile({"state": "idle"}) == {"state": "idle"}


def test_the_whole_state_is_configured() -> None:
    assert parse_floor("table.toml", {}).display is False
    assert parse_floor("table.toml", {"display": True}).display is True
    with pytest.raises(ConfigError, match="floor.display"):
        parse_floor("table.toml", {"display": "yes"})
