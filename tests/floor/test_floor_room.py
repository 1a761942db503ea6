"""The room map's model without a broker: floor words for every state of the chart, a tile's
colour, the page's updates of what changed only, the pits of the floor config (with errors naming
the file and the place), the signed-in supervisors, and a table gone silent."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_ctl.config import ConfigError
from shoe_ctl.floor.config import load_floor_config
from shoe_ctl.floor.consumer import SILENT_KEEPALIVES, FloorConsumer, open_floor_journal
from shoe_ctl.floor.page import SignIns, tiles
from shoe_ctl.floor.room import STATUSES, floor_words, layout_json, parse_pits, tile, tile_status
from shoe_ctl.machine.layout import leaves


def feed(c: FloorConsumer, table: str, leaf: str, data: dict[str, Any]) -> None:
    c.receive(f"r/tables/{table}/{leaf}", json.dumps(data).encode())


def born(c: FloorConsumer, table: str, keepalive: int | None = 5) -> None:
    msg: dict[str, Any] = {"online": True, "session": 1, "first": 1, "last": 0}
    if keepalive is not None:
        msg["keepalive"] = keepalive
    feed(c, table, "status", msg)


def state(c: FloorConsumer, table: str, st: str, hand: int = 7) -> None:
    feed(c, table, "state", {"session": 1, "seq": 0, "state": {"state": st, "hand": hand, "street": None,
                                                               "stub": {"count": 5, "required": 9}}})


def alert(c: FloorConsumer, table: str, seq: int, code: str, latched: bool = False) -> None:
    feed(c, table, "events", {"session": 1, "seq": seq, "time_us": int(time.time() * 1e6), "hand": 7, "kind": "Alert",
                              "code": code, "message": f"{code} message", "latched": latched})


@pytest.mark.parametrize("name", leaves())
def test_every_state_of_the_chart_has_floor_words(name: str) -> None:
    words = floor_words(name)
    assert words and "_" not in words and name not in words and words[0].isupper()
    assert words not in ("In a hand", "Unknown state")


def test_floor_words_examples_and_unknown_states() -> None:
    assert floor_words("hand_fifth_deal") == "Dealing 5th"
    assert floor_words("hand_seventh_betting") == "Betting 7th"
    assert floor_words("hand_seventh_scramble") == "Scrambling, 7th"
    assert floor_words("idle") == "Between hands"
    assert floor_words("hand_ninth_fold") == "In a hand"  # a chart this floor does not know
    assert floor_words("parked") == "Unknown state"
    assert floor_words(None) == "" and floor_words(["x"]) == ""


def test_tile_colours() -> None:
    base = {"online": True, "state": "hand_fourth_deal", "alerts": []}
    assert tile_status(base) == "dealing"
    assert tile_status({**base, "state": "hand_fourth_cut"}) == "dealing"
    assert tile_status({**base, "state": "hand_fourth_betting"}) == "betting"
    assert tile_status({**base, "state": "hand_showdown"}) == "showdown"
    assert tile_status({**base, "state": "idle"}) == "idle"
    assert tile_status({**base, "state": "attention"}) == "stop"
    stop = {"code": "card-not-expected", "severity": "critical", "latched": True}
    assert tile_status({**base, "alerts": [stop]}) == "stop"
    assert tile_status({**base, "alerts": [{"code": "misdeal", "severity": "warning", "latched": False}]}) == "dealing"
    assert tile_status({**base, "alerts": [stop, {"code": "software-mismatch", "severity": "critical"}]}) == "tilt"
    assert tile_status({**base, "alerts": [stop, {"code": "table-silent", "severity": "critical"}]}) == "silent"
    assert tile_status({**base, "online": False, "alerts": [stop]}) == "offline"
    assert set(STATUSES) == {"offline", "silent", "tilt", "stop", "dealing", "betting", "showdown", "idle"}


def test_a_tile_carries_no_card_and_its_alert_with_hand_and_time() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    born(c, "t1")
    feed(c, "t1", "state", {"session": 1, "seq": 0, "state": {"state": "hand_fourth_betting", "hand": 12,
                                                              "seats": [{"seat": 1, "up": ["Kd"], "down": ["As", "2c"]}],
                                                              "stub": {"count": 3, "required": 9}}})
    alert(c, "t1", 1, "duplicate-card", latched=True)
    alert(c, "t1", 2, "RP-10-H-C")
    t = tile(c.snapshot()["tables"][0])
    assert t["status"] == "stop" and t["words"] == "Betting 4th" and t["hand"] == 12
    assert t["stub"] == {"count": 3, "required": 9, "short": True}
    assert t["alerts"][0]["code"] == "duplicate-card" and t["alerts"][0]["hand"] == 7 and t["alerts"][0]["time_us"]
    assert t["open"] == {"critical": 1, "warning": 0, "info": 0} and t["notice"]["code"] == "RP-10-H-C"
    text = json.dumps(t)
    assert "As" not in text and "2c" not in text and "Kd" not in text


def test_updates_carry_only_the_tables_that_changed() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    for name in ("t1", "t2", "t3"):
        born(c, name)
        state(c, name, "hand_third_deal")
    first = tiles(c, 0)
    assert sorted(t["table"] for t in first["tiles"]) == ["t1", "t2", "t3"] and first["tables"] == 3
    assert tiles(c, first["version"])["tiles"] == []
    state(c, "t2", "hand_third_betting")
    alert(c, "t3", 1, "misdeal")
    later = tiles(c, first["version"])
    assert sorted(t["table"] for t in later["tiles"]) == ["t2", "t3"]
    assert later["alerts"] == {"critical": 0, "warning": 1, "info": 0}
    c.acknowledge("t3", 1, "pat")
    acked = tiles(c, later["version"])
    assert [t["table"] for t in acked["tiles"]] == ["t3"] and acked["alerts"]["warning"] == 0
    restarted = tiles(c, acked["version"] + 1000)  # the page followed an earlier run of the floor
    assert len(restarted["tiles"]) == 3 and restarted["since"] == 0


PITS = """
[floor]
room = "room-1"

[[floor.pits]]
name = "Pit 1"
rows = [["t1", "t2", "t3"], ["t6", "", "t4"]]

[[floor.pits]]
name = "Pit 2"
rows = [["t7"]]
"""


def test_pits_from_the_floor_config(tmp_path: Path) -> None:
    path = tmp_path / "floor.toml"
    path.write_text(PITS)
    cfg = load_floor_config(path)
    assert [p.name for p in cfg.pits] == ["Pit 1", "Pit 2"]
    assert list(cfg.pits[0].places()) == [("t1", 1, 1), ("t2", 1, 2), ("t3", 1, 3), ("t6", 2, 1), ("t4", 2, 3)]
    lay = layout_json(cfg.pits)
    assert lay["pits"][0]["columns"] == 3 and lay["pits"][0]["rows"] == 2 and lay["pits"][0]["places"]["t4"] == [2, 3]
    path.write_text("[floor]\n")
    assert load_floor_config(path).pits == ()


@pytest.mark.parametrize(("pits", "key", "says"), [
    ('pits = "Pit 1"', "floor.pits", "not a list"),
    ('[[floor.pits]]\nrows = [["t1"]]', "floor.pits[0].name", "no pit name"),
    ('[[floor.pits]]\nname = "A"\nrows = [["t1"]]\n[[floor.pits]]\nname = "A"\nrows = [["t2"]]',
     "floor.pits[1].name", "names two pits"),
    ('[[floor.pits]]\nname = "A"\nrows = [["t1", "t 2"]]', "floor.pits[0].rows[0][1]", "cannot be a table's name"),
    ('[[floor.pits]]\nname = "A"\nrows = [["t1"]]\n[[floor.pits]]\nname = "B"\nrows = [["t2", "t1"]]',
     "floor.pits[1].rows[0][1]", "placed twice (also at floor.pits[0].rows[0][0])"),
    ('[[floor.pits]]\nname = "A"\nrows = ["t1"]', "floor.pits[0].rows[0]", "not a list"),
    ('[[floor.pits]]\nname = "A"\nrows = []', "floor.pits[0].rows", "not a list of 1-60 rows"),
    ('[[floor.pits]]\nname = "A"\nrows = [[1]]', "floor.pits[0].rows[0][0]", "cannot be a table's name"),
    ('[[floor.pits]]\nname = "A"\nrows = [["t1"]]\ncolour = "red"', "floor.pits[0].colour", "unknown key"),
])
def test_a_broken_pit_is_an_error_naming_the_file_and_the_place(tmp_path: Path, pits: str, key: str,
                                                                says: str) -> None:
    path = tmp_path / "floor.toml"
    path.write_text(f"[floor]\n{pits}\n")
    with pytest.raises(ConfigError) as exc:
        load_floor_config(path)
    text = str(exc.value)
    assert str(path) in text and key in text and says in text, text


def test_too_many_pits_or_tables() -> None:
    with pytest.raises(ConfigError, match="at most 400"):
        parse_pits("f.toml", [{"name": f"p{i}", "rows": [[f"t{i}"]]} for i in range(401)])
    with pytest.raises(ConfigError, match="at most 10000"):
        parse_pits("f.toml", [{"name": f"p{p}", "rows": [[f"t{p}-{r}-{c}" for c in range(60)] for r in range(60)]}
                              for p in range(3)])
    one = parse_pits("f.toml", [{"name": "p", "rows": [[f"t{r}-{c}" for c in range(60)] for r in range(60)]}])
    assert len(list(one[0].places())) == 3600


def test_signed_in_supervisors_expire_and_are_bounded() -> None:
    now = [1000.0]
    s = SignIns(idle_s=60, limit=3, clock=lambda: now[0])
    a = s.open("pat")
    assert s.user(a) == "pat" and s.user("forged") is None
    now[0] += 59
    assert s.user(a) == "pat"  # used: its idle time starts again
    now[0] += 61
    assert s.user(a) is None  # idle too long
    ids = [s.open(f"u{i}") for i in range(4)]
    assert s.user(ids[0]) is None and [s.user(i) for i in ids[1:]] == ["u1", "u2", "u3"]
    s.close(ids[1])
    assert s.user(ids[1]) is None
    here = s.open("pat", "10.0.0.5")
    assert s.user(here, "10.0.0.9") is None and s.user(here, "10.0.0.5") == "pat"  # carried elsewhere: refused


def test_a_silent_table_is_a_critical_alert_cleared_when_it_speaks(tmp_path: Path) -> None:
    journal = open_floor_journal(tmp_path / "floor.sqlite3", "r")
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", journal=journal)
    born(c, "t1", keepalive=5)
    born(c, "old", keepalive=None)  # a table that announced no keepalive sends no heartbeat: never silent
    born(c, "gone", keepalive=5)
    feed(c, "gone", "status", {"online": False, "session": 1, "clean": True})
    state(c, "t1", "idle")
    now = time.time()
    assert c.check_silent(now + SILENT_KEEPALIVES * 5 - 1) == []
    assert c.check_silent(now + SILENT_KEEPALIVES * 5 + 1) == ["t1"]
    assert c.check_silent(now + 100) == []  # raised once
    row = {r["table"]: r for r in c.snapshot()["tables"]}["t1"]
    assert [a["code"] for a in row["alerts"]] == ["table-silent"] and row["alerts"][0]["severity"] == "critical"
    assert "Last Will" in row["alerts"][0]["message"] and tile_status(row) == "silent"
    assert c.snapshot()["alerts"]["critical"] == 1
    state(c, "t1", "hand_third_deal")  # it speaks again
    row = {r["table"]: r for r in c.snapshot()["tables"]}["t1"]
    assert row["alerts"] == [] and tile_status(row) == "dealing"
    cleared = row["acknowledged"][-1]
    assert cleared["code"] == "table-silent" and cleared["acked"]["by"] is None and cleared["acked"]["cleared"]
    assert c.snapshot()["alerts"]["critical"] == 0
    # the floor journal keeps the floor's own alert and its clearing (no person cleared it)
    assert c.flush_notes() == 2 and c.flush_notes() == 0
    records = [(r.kind, r.data) for r in journal.records() if r.kind in ("floor-alert", "floor-clear")]
    journal.close()
    assert [k for k, _ in records] == ["floor-alert", "floor-clear"]
    assert records[0][1]["code"] == "table-silent" and records[0][1]["table"] == "t1"
    assert records[0][1]["severity"] == "critical" and records[1][1]["why"] == "the table spoke again"
    assert records[0][1]["alert"] == records[1][1]["alert"] == cleared["id"]


_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8)
                       | st.sampled_from(["t1", "t2", "", "Pit 1"]),
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                           st.sampled_from(["name", "rows", "x"]), inner, max_size=3), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_any_layout_is_pits_or_an_error_naming_the_file(data: object) -> None:
    """Whatever ``[[floor.pits]]`` holds: pits, or a ConfigError naming the file; never a traceback."""
    try:
        pits = parse_pits("floor.toml", data)
    except ConfigError as exc:
        assert "floor.toml" in str(exc) and "floor.pits" in str(exc)
    else:
        assert all(isinstance(name, str) for p in pits for name, _r, _c in p.places())


def test_the_header_says_connected_while_any_broker_is() -> None:
    """With two brokers (``FloorConsumer.follow``) the page's header says the broker is connected
    while the floor is on either of them, as ``/state`` does."""
    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    other = FloorConsumer(host="127.0.0.1", port=2, room="r")
    c.follow(other)
    assert tiles(c)["connected"] is False
    other.connected.set()
    assert tiles(c)["connected"] is True and c.snapshot()["connected"] is True
