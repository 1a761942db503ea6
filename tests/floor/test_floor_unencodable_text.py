"""Text UTF-8 cannot encode (a lone surrogate, ``"\\ud800"``, which a Python text can hold) on its
way to the floor (real Mosquitto): the payload is written with each such code point replaced by
U+FFFD and nothing else changed, one log line (at most one a minute per topic) names the table,
the topic and the place in the payload, and what comes after it is published as before (docs/floor.md,
"Text UTF-8 cannot encode"). A record whose body cannot be made into a payload at all (nested
hundreds deep) is published without it, ``withheld``. Before, for either, the publisher tried the
same record at every step, with a traceback each time, and published nothing of the table again:
no record, no state."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from floor_help import ROOM, Tap
from waiting import wait_for

from shoe_ctl import utf8
from shoe_ctl.events import DisplayUpdate
from shoe_ctl.floor import topics
from shoe_ctl.floor.broker import FLOOR_USER, MONITOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.floor.topics import dumps
from shoe_ctl.service.journal import Journal

ODD = "\ud800"


@pytest.fixture(autouse=True)
def _fresh_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """No line held back by an earlier test of the process."""
    monkeypatch.setattr(topics, "_REPORTS", utf8.Reports(topics.log))


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "U+FFFD" in r.getMessage()]


def _hand(number: int, message: str) -> dict[str, Any]:
    return {"hand": number, "game": "stud", "rules": "tda", "seats": [1, 2], "started": "10:00:00.000Z",
            "finished": False, "more": 0,
            "entries": [{"t": "x", "kind": "card", "street": "third", "role": "up", "seat": 1, "card": "Kh"},
                        {"t": "x", "kind": "alert", "code": "c", "message": message, "latched": False}]}


class Floor:
    """A table's journal and publisher, the floor's consumer and a tap of every message of the table."""

    def __init__(self, mosquitto: Mosquitto, tmp_path: Path, **publisher: Any) -> None:
        self.journal = Journal(tmp_path / "t2.journal", table="t2", profile="tda", retention_days=0)
        monitor = mosquitto.users[MONITOR_USER]
        self.tap = Tap(mosquitto.host, mosquitto.port, monitor.username, monitor.password, f"{ROOM}/tables/t2/#")
        self.floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                                   credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
        self.pub = FloorPublisher(self.journal, table="t2", room=ROOM, host=mosquitto.host, port=mosquitto.port,
                                  credentials=mosquitto.users["t2"], **publisher).start()
        assert self.floor.connected.wait(10) and self.tap.subscribed.wait(10)

    def write_odd(self, message: str, body: str | None = None) -> int:
        """A record whose body, as JSON text, escapes a lone surrogate (or is ``body``): a journal
        row written by another program (its checksum right); the journal's own writer never
        writes one."""
        text = body or json.dumps({"code": "operator-note", "message": message, "latched": False})
        [seq] = self.journal.store.write([("Alert", text, None)], None, True)
        return seq

    def heard(self, leaf: str) -> list[tuple[bytes, Any]]:
        return [(raw, d) for topic, raw, d in self.tap.snapshot() if topic == f"{ROOM}/tables/t2/{leaf}"]

    def close(self) -> None:
        self.pub.close()
        self.floor.close()
        self.tap.close()
        self.journal.close()


@pytest.fixture
def rig(mosquitto: Mosquitto, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Floor]:
    floor = Floor(mosquitto, tmp_path, **getattr(request, "param", {}))
    try:
        yield floor
    finally:
        floor.close()


def test_a_record_with_a_lone_surrogate_is_published_replaced_and_the_next_one_too(
        rig: Floor, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(utf8, "REPORT_EVERY_S", 3600.0)  # every later line of the test is held back
    with caplog.at_level(logging.WARNING, logger="shoe_ctl.floor"):
        before = rig.journal.append_record("note", {"n": 1})
        odd = rig.write_odd(f"seat 2 {ODD} As {ODD}")
        after = rig.journal.append_record("note", {"n": 2})
        assert wait_for(lambda: rig.floor.seqs("t2") == [before, odd, after], 20), rig.floor.seqs("t2")
        assert wait_for(lambda: [d["seq"] for _r, d in rig.heard("events")] == [before, odd, after], 10)
        raw = dict((d["seq"], r) for r, d in rig.heard("events"))[odd]
        # replaced, one U+FFFD each, the rest as it was (the card still redacted)
        assert json.loads(raw.decode("utf-8"))["message"] == "seat 2 \ufffd ?? \ufffd"
        assert [json.loads(r)["message"] for r, _d in rig.heard("alerts")] == ["seat 2 \ufffd ?? \ufffd"]
        [line] = _lines(caplog)  # one line for the record, though it went on two topics
        assert f"{ROOM}/tables/t2/events" in line and "table t2" in line and f"seq {odd}" in line
        assert "kind Alert" in line and "2 code point(s)" in line and "at message" in line
        assert "As" not in line  # the line names the place, never the text
        # more of the same on the topic within the minute: published, and not logged again
        odd2 = rig.write_odd(ODD)
        last = rig.journal.append_record("note", {"n": 3})
        assert wait_for(lambda: rig.floor.seqs("t2") == [before, odd, after, odd2, last], 20)
        assert len(_lines(caplog)) == 1


def test_the_held_back_lines_are_counted_in_the_next(caplog: pytest.LogCaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(utf8.time, "monotonic", lambda: clock[0])
    with caplog.at_level(logging.WARNING, logger="shoe_ctl.floor"):
        for _ in range(4):
            assert dumps({"table": "t9", "seq": 1, "x": [ODD]}, "r/tables/t9/events") == b'{"table":"t9","seq":1,"x":["\xef\xbf\xbd"]}'
        dumps({"x": ODD}, "r/tables/t9/state")  # another topic: a line of its own
        clock[0] += utf8.REPORT_EVERY_S
        dumps({"x": {ODD: 1}}, "r/tables/t9/events")
    lines = _lines(caplog)
    assert len(lines) == 3, lines
    assert "r/tables/t9/state" in lines[1] and "no table named" in lines[1]
    assert "3 more since the last such line" in lines[2] and "at x.\\ud800:" in lines[2]  # a key, escaped


@pytest.mark.parametrize("rig", [{"display": True, "recall": lambda: [_hand(7, f"seat 1 Kh {ODD} As")]}],
                         indirect=True)
def test_the_state_the_whole_state_and_the_recall_are_published_replaced(rig: Floor) -> None:
    """The shoe's detail on the tile and the whole state (a device path from the command line,
    decoded with ``surrogateescape``), an instruction, and the recall's texts."""
    state = {"hand": 7, "game": "stud", "rules": "tda", "state": "dealing", "street": "third",
             "stub": {"count": 40, "required": 10, "forecast": "ok"}, "instruction": f"deal {ODD}",
             "shoe": {"status": "disconnected", "detail": "cannot open /dev/ttyUSB\udcff: no such file"},
             "seats": [{"seat": 1, "status": "in", "up": ["Kh"], "down_count": 2}], "alerts": []}
    rig.pub.handle(DisplayUpdate(state))
    assert wait_for(lambda: rig.heard("state") and rig.heard("display") and rig.heard("recall"), 20)
    [(tile, _d)] = rig.heard("state")[:1]
    assert json.loads(tile.decode("utf-8"))["state"]["shoe"]["detail"] == "cannot open /dev/ttyUSB\ufffd: no such file"
    whole = json.loads(rig.heard("display")[0][0].decode("utf-8"))["state"]
    assert whole["instruction"] == "deal \ufffd" and whole["seats"][0]["up"] == ["Kh"]
    recall = json.loads(rig.heard("recall")[0][0].decode("utf-8"))
    assert recall["hands"][0]["entries"][1]["message"] == "seat 1 Kh \ufffd ??"
    # the next state, with nothing odd in it, is published too
    rig.pub.handle(DisplayUpdate({**state, "shoe": {"status": "connected", "detail": "v2"}}))
    assert wait_for(lambda: any(d["state"].get("shoe") == {"status": "connected", "detail": "v2"}
                                for _r, d in rig.heard("state")), 20)


def test_a_record_nested_too_deeply_is_published_withheld_and_the_next_one_too(
        rig: Floor, caplog: pytest.LogCaptureFixture) -> None:
    """A body 700 deep: the journal reads it, the redaction's walk runs out of stack. (Deeper
    still, the journal's reader skips the record as damaged, and the floor asks for it again.)"""
    with caplog.at_level(logging.WARNING, logger="shoe_ctl.floor"):
        before = rig.journal.append_record("note", {"n": 1})
        deep = rig.write_odd("", '{"code":"x","message":' + "[" * 700 + "]" * 700 + "}")
        after = rig.journal.append_record("note", {"n": 2})
        assert wait_for(lambda: rig.floor.seqs("t2") == [before, deep, after], 20), rig.floor.seqs("t2")
        assert wait_for(lambda: [d["seq"] for _r, d in rig.heard("events")] == [before, deep, after], 10)
    got = dict((d["seq"], d) for _r, d in rig.heard("events"))[deep]
    assert got["withheld"] is True and "message" not in got and got["kind"] == "Alert"
    assert any(f"record {deep} (Alert)" in r.getMessage() and "withheld" in r.getMessage() for r in caplog.records)


def test_a_body_nested_deeper_than_the_reader_reads_as_none() -> None:
    """``record_body`` on a text the standard library's reader runs out of stack on: no body, no
    exception out of the publisher's step."""
    from types import SimpleNamespace

    from shoe_ctl.floor.card_health import record_body

    text = '{"message":' + "[" * 5000 + "]" * 5000 + "}"
    assert record_body(SimpleNamespace(body=text)) == {}  # type: ignore[arg-type]
