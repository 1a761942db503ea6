"""Reader and card health on a real Mosquitto (docs/floor.md, "Reader and card health"): a table
whose 9c of deck D17 needs a retry at every read publishes its counts with each hand's end; the
floor keeps them with rates per 1,000 and raises ``card-retries-floor`` naming the card once its
tag passes the table's limits. No message names the card before that hand has ended, and none
puts a tag beside a card."""

from __future__ import annotations

import json
from pathlib import Path

from floor_help import ROOM, Tap
from test_card_health import HAND, KEY, Shoe
from waiting import wait_for

from shoe_ctl.floor.broker import FLOOR_USER, MONITOR_USER, Mosquitto
from shoe_ctl.floor.card_health import RETRIES_CODE, CardHealth, HealthLimits
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.service.journal import Journal


def test_the_floor_names_the_worn_card_after_the_hand(mosquitto: Mosquitto, tmp_path: Path) -> None:
    journal = Journal(tmp_path / "t1.sqlite3", table="t1", profile="tda", retention_days=0)
    monitor = mosquitto.users[MONITOR_USER]
    tap = Tap(mosquitto.host, mosquitto.port, monitor.username, monitor.password, f"{ROOM}/#")
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    pub = FloorPublisher(journal, table="t1", room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"],
                         health=CardHealth(KEY, HealthLimits(per_1000=500, min_reads=4))).start()
    shoe = Shoe(journal)
    try:
        assert floor.connected.wait(10) and tap.subscribed.wait(10)
        for n in range(5):
            shoe.hand(HAND + ([None] if n == 0 else []), retried=["9c"])
        last = max(r.seq for r in journal.records())
        assert wait_for(lambda: floor.seqs("t1") == list(range(1, last + 1)), 20), floor.seqs("t1")
        assert wait_for(lambda: any(d and d.get("seq") == last for t, _r, d in tap.snapshot()), 10)
        row = next(r for r in floor.snapshot()["tables"] if r["table"] == "t1")
        ends = {r.hand: r.seq for r in journal.records() if r.kind == "hand-end"}
    finally:
        pub.close()
        floor.close()
        tap.close()
        journal.close()
    health = row["health"]
    assert (health["cards"], health["unreadable"], health["retries"]) == (36, 1, 5)
    assert health["per_1000"]["retries"] == round(5 * 1000 / 36, 1)
    assert [(t["deck"], t["reads"], t["retries"], t["per_1000"]) for t in health["tags"]] == [("D17", 5, 5, 1000.0)]
    worn = [a for a in row["alerts"] if a["code"] == RETRIES_CODE]
    assert len(worn) == 1 and worn[0]["severity"] == "warning"
    assert worn[0]["message"].startswith("replace the 9c of deck D17: 4 of its 4 reads needed a retry")
    assert worn[0]["hand"] == 4
    for topic, raw, data in tap.snapshot():
        if "9c" in raw.decode():
            assert topic.endswith("/events") and data["kind"] == "hand-end" and data["seq"] == ends[4], topic
            assert data["health"]["replace"] == [{"deck": "D17", "card": "9c", "reads": 4, "retries": 4}]
            assert all("card" not in t for t in data["health"]["tags"]), json.dumps(data)
