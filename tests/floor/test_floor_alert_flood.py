"""One table floods the floor with open alerts (without a broker: the consumer's folding as paho
hands it the messages): 10,000 alerts keep that table's row bounded (repeats merged with a count,
past the bound joined to their code or ``more-alerts``), the whole count kept, ``/state`` small,
another table's events applied in their turn and complete, and one *Acknowledge all* clears the
table (docs/floor.md, "The floor page")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shoe_ctl.floor.consumer import MAX_OPEN, FloorConsumer

FLOOD = 10_000


@dataclass
class Msg:
    topic: str
    payload: bytes


class Journal:
    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []

    def append_record(self, kind: str, body: dict[str, Any]) -> None:
        self.records.append((kind, body))


def feed(c: FloorConsumer, table: str, seq: int, **fields: Any) -> None:
    ev = {"v": 1, "table": table, "session": 1, "seq": seq, "time_us": seq, "hand": 1, **fields}
    c._on_message(c.client, None, Msg(f"r/tables/{table}/events", json.dumps(ev).encode()))  # type: ignore[arg-type]


def test_ten_thousand_alerts_from_one_table() -> None:
    applied: list[tuple[str, int]] = []
    journal = Journal()
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", journal=journal,
                      on_event=lambda table, ev, _t: applied.append((table, ev["seq"])))
    b_seq = 0
    for i in range(1, FLOOD + 1):
        if i % 3 == 0:  # a bouncing sensor: the same alert naming another read each time
            feed(c, "t1", i, kind="Alert", code="card-not-expected", latched=True, severity="critical",
                 message=f"read {i}: a card left the shoe with no hand running")
        else:  # a different alert every time
            feed(c, "t1", i, kind="Alert", code=f"code-{i % 400}", message=f"forged {i}", severity="warning")
        if i % 100 == 0:
            b_seq += 1
            feed(c, "t2", b_seq, kind="CardRead", dispense=b_seq)
    feed(c, "t2", b_seq + 1, kind="Alert", code="dispense-gap", message="one alert", severity="critical", latched=True)
    # the other table: every event applied, in its order, each right after the flood's event before it
    b_applied = [seq for table, seq in applied if table == "t2"]
    assert b_applied == list(range(1, b_seq + 2))
    positions = [k for k, (table, _s) in enumerate(applied) if table == "t2"]
    assert [positions[n] - n for n in range(b_seq)] == [100 * (n + 1) for n in range(b_seq)]
    snap = c.snapshot()
    rows = {r["table"]: r for r in snap["tables"]}
    t1 = rows["t1"]
    assert len(t1["alerts"]) <= MAX_OPEN + 1
    assert sum(a["count"] for a in t1["alerts"]) == FLOOD  # merged, none lost from the count
    stray = [a for a in t1["alerts"] if a["code"] == "card-not-expected"]
    assert len(stray) == 1 and stray[0]["latched"] and stray[0]["count"] >= FLOOD // 3
    assert t1["counts"]["critical"] >= 1
    assert [a["code"] for a in rows["t2"]["alerts"]] == ["dispense-gap"]
    assert len(json.dumps(snap)) < 100_000
    # one acknowledgement clears the flooding table, each entry journaled with its count
    done = c.acknowledge_all("t1", "Pat Floor", "test")
    assert len(done) == len(t1["alerts"]) and sum(a["count"] for a in done) == FLOOD
    assert [r for r in c.snapshot()["tables"] if r["table"] == "t1"][0]["alerts"] == []
    assert len(journal.records) == len(done) and all(k == "floor-ack" for k, _b in journal.records)
    assert sum(b["count"] for _k, b in journal.records) == FLOOD
    assert c.acknowledge_all("t1", "Pat Floor") == []
    # the other table's alert is untouched, and the flood may start again
    assert [a["code"] for a in [r for r in c.snapshot()["tables"] if r["table"] == "t2"][0]["alerts"]] == [
        "dispense-gap"]
    feed(c, "t1", FLOOD + 1, kind="Alert", code="code-1", message="again", severity="warning")
    assert [a["count"] for a in [r for r in c.snapshot()["tables"] if r["table"] == "t1"][0]["alerts"]] == [1]


def test_the_page_acknowledges_all_of_a_tables_alerts_in_one_request(tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    from argon2 import PasswordHasher

    from shoe_ctl.floor.page import FloorPage
    from shoe_ctl.users import Authenticator, Role, User, UserStore

    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    for i in range(1, 301):
        feed(c, "t1", i, kind="Alert", code=f"code-{i}", message="m", severity="warning")
    users = UserStore(tmp_path / "users.toml", hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    users.save([User("pat", Role.FLOOR, users.hash_pin("246810"))])
    page = FloorPage(c, port=0, authenticator=Authenticator(users)).start()
    pat = {"user": "pat", "pin": "246810"}

    def post(body: dict[str, Any]) -> int:
        req = urllib.request.Request(f"http://127.0.0.1:{page.port}/ack", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        try:
            return int(urllib.request.urlopen(req, timeout=5).status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    try:
        assert post({"table": "t1", "all": True}) == 400  # who acknowledges
        assert post({"table": "t1", "id": True, **pat}) == 400  # not an alert id, not "all"
        assert post({"table": "t1", "all": True, **pat}) == 200
        assert post({"table": "t1", "all": True, **pat}) == 404  # nothing open any more
        assert c.snapshot()["alerts"] == {"critical": 0, "warning": 0, "info": 0}
    finally:
        page.close()
