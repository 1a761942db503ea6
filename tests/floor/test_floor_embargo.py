"""The hole-card embargo on the floor's broker: recorded hands with every card known are dealt by
a table publishing to a real Mosquitto while a monitor subscribes to ``#``; no downcard of a hand
appears in any message of that hand, on any topic (state, display, events, alerts, status), not even the
downcards tabled at showdown. Upcards do appear: the search would see a card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from floor_help import ROOM, Tap
from paths import EXAMPLES
from waiting import wait_for

from hil.floor_rig import VirtualTable
from hil.replay import script_from_record
from shoe_ctl.embargo import CARD_TOKEN
from shoe_ctl.floor.broker import MONITOR_USER, Mosquitto
from shoe_ctl.phh import read_phh


def message_hand(topic: str, data: Any) -> Any:
    if topic.endswith(("/state", "/display")):
        return (data.get("state") or {}).get("hand")
    return data.get("hand")


def test_no_downcard_on_any_topic(mosquitto: Mosquitto, tmp_path: Path) -> None:
    files = sorted(EXAMPLES.glob("*.phh"))
    assert len(files) >= 3
    scripts = [script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)] * 2
    monitor = mosquitto.users[MONITOR_USER]
    tap = Tap(mosquitto.host, mosquitto.port, monitor.username, monitor.password, "#")
    # paced: the publisher sends the table's state at most every 50 ms, and an unpaced deal ends a
    # hand in a few of those (the states in between, upcards and all, are then never published)
    table = VirtualTable("t1", tmp_path / "tables", scripts, room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"], record=True, pace=0.005, display=True)
    try:
        assert tap.subscribed.wait(10)
        table.start()
        assert wait_for(lambda: table.done, 60) and table.dealer.stalled is None
        table.controller.wait_idle(5)
        last = table.last_seq()
        assert wait_for(lambda: any(d and d.get("seq") == last for t, _r, d in tap.snapshot()
                                    if t.endswith("/events")), 20)
    finally:
        table.close()
        tap.close()
    assert table.recorder is not None
    hands = table.recorder.hands
    assert len(hands) == len(scripts)
    downs = {i + 1: {c for info in h.cards.values() for c in info["down"]} - {"??"} for i, h in enumerate(hands)}
    assert all(len(d) >= 4 for d in downs.values())
    messages = tap.snapshot()
    topics = {t.rsplit("/", 1)[-1] for t, _r, _d in messages}
    assert {"state", "display", "events", "alerts", "status"} <= topics, topics
    leaks: list[str] = []
    seen_cards: set[str] = set()
    current: Any = None
    for topic, raw, data in messages:
        assert isinstance(data, dict), f"{topic}: not JSON"
        hand = message_hand(topic, data)
        if hand is not None:
            current = hand
        cards = set(CARD_TOKEN.findall(raw.decode()))
        seen_cards |= cards
        if current in downs and cards & downs[current]:
            leaks.append(f"{topic} hand {current}: {sorted(cards & downs[current])} in {json.dumps(data)[:200]}")
        assert '"down":' not in raw.decode(), "no downcard list under any key"
    assert leaks == []
    assert len(seen_cards) > 10, "the upcards are published: the search sees cards"
