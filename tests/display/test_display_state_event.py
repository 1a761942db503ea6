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


def test_a_lone_surrogate_is_sent_replaced_and_the_next_state_too(caplog: Any, monkeypatch: Any) -> None:
    """A text UTF-8 cannot encode (``"\\ud800"``: a path decoded with ``surrogateescape``, a JSON
    escape read back) in an alert and an instruction, through the real server: the page gets the
    state with U+FFFD in their place, one warning says where, and the states after it, to a page
    already reading and to one that connects then, come as before (before, orjson refused the
    snapshot: the page kept the last state while the table moved on)."""
    import logging

    from test_display import SseReader, get

    from shoe_ctl.display.server import DisplaySink
    from shoe_ctl.events import Instruction, Signal
    from shoe_ctl.utf8 import Reports

    monkeypatch.setattr(server, "_REPORTS", Reports(server.log))  # no line held back by an earlier test
    sink = DisplaySink(lambda _event: None, host="127.0.0.1", port=0).start()
    reader = SseReader(sink.url)
    try:
        reader.until(lambda e: True)  # the snapshot at connect
        with caplog.at_level(logging.WARNING, logger="shoe_ctl.display"):
            sink.handle(Alert("shoe-lost", "cannot open /dev/ttyUSB\udcff: no such file"))
            seen = reader.until(lambda e: bool(e.get("alerts")))
            assert [a["message"] for a in seen["alerts"]] == ["cannot open /dev/ttyUSB\ufffd: no such file"]
            sink.handle(Instruction(Signal.DEAL, "Deal \ud800 up", seat=1, face="up"))
            seen = reader.until(lambda e: (e.get("instruction") or {}).get("text") == "Deal \ufffd up")
        lines = [r.getMessage() for r in caplog.records if "U+FFFD" in r.getMessage()]
        assert len(lines) == 1 and "alerts[0].message" in lines[0], lines  # the next within the minute: held back
        late = SseReader(sink.url)  # a page that connects now gets the snapshot too
        try:
            first = late.until(lambda e: True)
            assert first["instruction"]["text"] == "Deal \ufffd up"
        finally:
            late.close()
        sink.handle(Instruction(Signal.DEAL, "Deal card 2", seat=2, face="up"))
        assert reader.until(lambda e: (e.get("instruction") or {}).get("text") == "Deal card 2")
        assert get(sink.url + "state")["instruction"]["text"] == "Deal card 2"
    finally:
        reader.close()
        sink.close()
