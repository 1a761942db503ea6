"""The floor consumer's folding without a broker: events applied once and in journal order
(duplicates dropped, early ones held back until the hole is filled), a birth's ``first`` moving
a new table's start, a late Will of an older session not believed, and a replay asked only when
a table is ahead with no progress."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from shoe_ctl.floor import consumer as consumer_mod
from shoe_ctl.floor.consumer import FloorConsumer


@dataclass
class Msg:
    topic: str
    payload: bytes


def feed(c: FloorConsumer, leaf: str, data: dict[str, Any], table: str = "t1") -> None:
    c._on_message(c.client, None, Msg(f"r/tables/{table}/{leaf}", json.dumps(data).encode()))  # type: ignore[arg-type]


def ev(seq: int, kind: str = "CardRead", session: int = 1, **extra: Any) -> dict[str, Any]:
    return {"v": 1, "table": "t1", "session": session, "seq": seq, "time_us": 0, "hand": 1, "kind": kind, **extra}


def test_once_and_in_order() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    for seq in (1, 2, 2, 5, 4, 1, 3, 6, 5, 7):
        feed(c, "events", ev(seq))
    view = c.tables["t1"]
    assert c.seqs("t1") == [1, 2, 3, 4, 5, 6, 7]
    assert view.duplicates == 3 and view.held == {}
    feed(c, "events", ev(8, "Alert", code="house-16.2", message="dead hand", severity="warning"))
    assert c.snapshot()["tables"][0]["alerts"][0]["code"] == "house-16.2"
    assert c.snapshot()["alerts"] == {"critical": 0, "warning": 1, "info": 0}
    feed(c, "events", {"seq": "x"})  # malformed: ignored
    feed(c, "weird", ev(9))
    assert c.seqs("t1")[-1] == 8


def test_birth_first_and_stale_wills() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    feed(c, "events", ev(41, session=3))
    assert c.seqs("t1") == []  # held: 1..40 missing
    feed(c, "status", {"online": True, "session": 3, "first": 40, "last": 41})
    assert c.seqs("t1") == []
    feed(c, "events", ev(40, session=3))
    assert c.seqs("t1") == [40, 41]
    feed(c, "status", {"online": False, "session": 2})  # a Will of an older connection, late
    view = c.tables["t1"]
    assert view.online and view.stale_wills == 1
    feed(c, "status", {"online": False, "session": 3})
    assert not view.online
    feed(c, "state", {"session": 4, "seq": 41, "state": {"state": "idle"}})
    assert view.online and view.session == 4 and view.state == {"state": "idle"}


def test_replay_asked_only_without_progress() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    feed(c, "events", ev(1))
    feed(c, "status", {"online": True, "session": 1, "first": 1, "last": 3})  # ahead by its birth only
    ahead, hole = consumer_mod.AHEAD_GRACE_S, consumer_mod.GAP_GRACE_S
    t = 1000.0
    assert c.check_gaps(t) == []                      # behind from now on
    feed(c, "events", ev(2))
    assert c.check_gaps(t + ahead - 0.1) == []        # progress: the clock starts again
    assert c.check_gaps(t + ahead + 0.1) == []
    assert c.check_gaps(t + 2 * ahead) == [("t1", 3)]  # no progress for the grace time: ask
    assert c.check_gaps(t + 2 * ahead + 0.1) == []     # not again at once
    assert c.check_gaps(t + 3 * ahead + 0.1) == [("t1", 3)]
    feed(c, "events", ev(3))
    assert c.check_gaps(t + 10 * ahead) == []          # caught up
    assert c.tables["t1"].replays_asked == 2
    # a hole behind a later event is asked for sooner
    feed(c, "events", ev(5))
    t = 2000.0
    assert c.check_gaps(t) == []
    assert c.check_gaps(t + hole + 0.01) == [("t1", 4)]
    assert hole < ahead


def test_a_new_journal_counts_again_but_a_retained_birth_is_not_one() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    feed(c, "status", {"online": True, "session": 2, "first": 1, "last": 0})
    for seq in range(1, 11):
        feed(c, "events", ev(seq, session=2))
    feed(c, "status", {"online": True, "session": 2, "first": 1, "last": 0})  # the retained birth again
    assert c.tables["t1"].expected == 11 and c.tables["t1"].journal_resets == 0
    feed(c, "status", {"online": True, "session": 3, "first": 1, "last": 4})  # a new journal file
    view = c.tables["t1"]
    assert view.journal_resets == 1 and view.expected == 1
    for seq in range(1, 5):
        feed(c, "events", ev(seq, session=3))
    assert c.seqs("t1") == [*range(1, 11), 1, 2, 3, 4]


def test_a_retained_state_after_the_will_leaves_the_table_offline() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    feed(c, "status", {"online": False, "session": 5})             # the Will, retained
    feed(c, "state", {"session": 5, "seq": 9, "state": {"state": "idle"}})  # the last state, retained
    assert not c.tables["t1"].online
    feed(c, "events", ev(1, session=6))                             # a newer connection's event
    assert c.tables["t1"].online and c.tables["t1"].session == 6


def test_a_new_journal_is_told_even_when_its_events_come_before_its_birth() -> None:
    """MQTT keeps the order within a topic only: a new journal's first events (seq 1, 2 of session
    2) may arrive before its birth. They first look like duplicates; the birth still tells the new
    journal (its last is behind what was applied) and the hole is asked for again."""
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    feed(c, "status", {"online": True, "session": 1, "first": 1, "last": 5})
    for seq in range(1, 6):
        feed(c, "events", ev(seq, session=1))
    feed(c, "events", ev(1, session=2))  # the new journal's events, ahead of its birth
    feed(c, "events", ev(2, session=2))
    view = c.tables["t1"]
    assert view.session == 2 and view.duplicates == 2
    feed(c, "status", {"online": True, "session": 2, "first": 1, "last": 2})
    assert view.journal_resets == 1 and view.expected == 1 and view.known_last == 2
    assert c.check_gaps(100.0) == []  # behind: the grace time starts
    assert c.check_gaps(100.0 + consumer_mod.AHEAD_GRACE_S + 0.1) == [("t1", 1)]  # asked again
    feed(c, "events", ev(1, session=2))
    feed(c, "events", ev(2, session=2))
    assert c.seqs("t1") == [1, 2, 3, 4, 5, 1, 2]


def test_routine_procedures_are_shown_not_queued() -> None:
    """A short-stub procedure (RP-10-H-C) is a notice on the table's tile: no open alert, nothing to
    acknowledge, the header's counts unchanged; the newest few are kept. A latched one is a STOP."""
    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    for seq in range(1, 9):
        feed(c, "events", ev(seq, "Alert", code="RP-10-H-C", message=f"community card {seq}", severity="critical"))
    row = c.snapshot()["tables"][0]
    assert row["alerts"] == [] and c.snapshot()["alerts"] == {"critical": 0, "warning": 0, "info": 0}
    assert [n["message"] for n in row["notices"]] == [f"community card {s}" for s in range(4, 9)]
    assert all(n["severity"] == "info" and n["hand"] == 1 for n in row["notices"])
    assert c.acknowledge_all("t1", "pat") == []
    feed(c, "events", ev(9, "Alert", code="RP-10-H-C", message="stop", latched=True))
    assert [a["severity"] for a in c.snapshot()["tables"][0]["alerts"]] == ["critical"]


def test_a_late_birth_of_the_same_journal_file_is_no_new_journal() -> None:
    """A birth that reaches the floor after events published behind it (a broker restart, a
    subscription made again) says a `last` behind what was applied; naming the same journal file,
    it is no new journal: nothing is counted twice. A birth naming another file is one."""
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    feed(c, "status", {"online": True, "session": 2, "first": 1, "last": 0, "journal": 111})
    for seq in range(1, 21):
        feed(c, "events", ev(seq, session=3))
    feed(c, "status", {"online": True, "session": 3, "first": 1, "last": 12, "journal": 111})  # late
    view = c.tables["t1"]
    assert view.journal_resets == 0 and view.expected == 21
    for seq in range(13, 21):
        feed(c, "events", ev(seq, session=3))  # the replay of what followed the birth
    assert c.seqs("t1") == list(range(1, 21)) and view.duplicates == 8
    feed(c, "status", {"online": True, "session": 4, "first": 1, "last": 3, "journal": 222})  # a new file
    assert view.journal_resets == 1 and view.expected == 1 and view.journal == 222
    for seq in range(1, 4):
        feed(c, "events", ev(seq, session=4))
    assert c.seqs("t1") == [*range(1, 21), 1, 2, 3]
