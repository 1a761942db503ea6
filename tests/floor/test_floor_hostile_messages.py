"""Forged and malformed messages on the floor's topics, without a broker: whatever a table (or a
program holding its broker user) publishes, the floor consumer keeps folding the other tables and
its page's snapshot stays drawable, and the table's publisher keeps running whatever arrives on
its ``replay`` topic or lies in its outbox file. Before, one alert with a list as ``severity``
made every ``GET /state`` of the floor page a 500, and one nesting bomb ended paho's network
thread: the floor deaf to every table until restarted (docs/floor.md, "Forged messages")."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.publisher import FloorPublisher


@dataclass
class Msg:
    topic: str
    payload: bytes


def feed(c: FloorConsumer, leaf: str, data: Any, table: str = "t1") -> None:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    c._on_message(c.client, None, Msg(f"r/tables/{table}/{leaf}", raw))  # type: ignore[arg-type]


def alert(seq: int, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "table": "t1", "session": 1, "seq": seq, "time_us": 0, "hand": 1, "kind": "Alert", **fields}


DEEP = json.loads("[" * 600 + "]" * 600)  # the JSON reader takes it; encoding it again may not

FORGED_EVENTS = [
    alert(1, code="a", message="m", severity=["critical"]),
    alert(2, code={"nodeType": 1}, message=DEEP, severity={"x": 1}, seat="3", street=[1], latched="yes"),
    alert(3, code="b", message="x" * 100_000, severity="critical", hand=10**40, time_us=DEEP),
    {"seq": 4, "kind": "ShoeFault", "fault": DEEP, "hand": "h"},
    {"seq": 5, "kind": "LinkChanged", "status": {"a": DEEP}, "detail": 7},
]


def test_forged_events_leave_the_page_drawable_and_the_other_tables_followed() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    for ev in FORGED_EVENTS:
        feed(c, "events", ev)
    feed(c, "state", {"session": 1, "seq": 5, "state": {"state": DEEP, "hand": "x", "stub": {"count": DEEP},
                                                        "shoe": {"status": DEEP, "detail": "d" * 5000}}})
    feed(c, "events", alert(1, code="ok", message="fine", severity="warning"), table="t2")
    snap = c.snapshot()
    text = json.dumps(snap)  # what the page's GET /state sends
    assert len(text) < 20_000
    rows = {r["table"]: r for r in snap["tables"]}
    assert c.seqs("t1") == [1, 2, 3, 4, 5]
    assert {a["severity"] for a in rows["t1"]["alerts"]} <= {"critical", "warning", "info"}
    assert all(a["code"] is None or isinstance(a["code"], str) for a in rows["t1"]["alerts"])
    assert all(isinstance(a["latched"], bool) for a in rows["t1"]["alerts"])
    assert rows["t1"]["state"] is None and rows["t1"]["hand"] is None
    assert rows["t2"]["alerts"][0]["code"] == "ok"
    assert snap["alerts"]["warning"] >= 1


@pytest.mark.parametrize("payload", [
    b"[" * 50_000 + b"]" * 50_000,
    b'{"seq": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    b'{"seq": ' + b"9" * 5000 + b"}",
    b"\xff\xfe",
    b"null",
])
def test_an_unreadable_message_is_dropped_without_an_exception(payload: bytes) -> None:
    """An exception out of ``_on_message`` ends paho's network thread (paho re-raises it)."""
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    for leaf in ("events", "state", "status"):
        feed(c, leaf, payload)
    feed(c, "events", alert(1, code="ok", message="m", severity="info"))
    assert c.seqs("t1") == [1]


def test_an_error_while_folding_is_logged_not_raised(caplog: pytest.LogCaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r")

    def broken(*_a: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(c, "_event", broken)
    with caplog.at_level(logging.ERROR):
        feed(c, "events", alert(1))
    assert "could not be applied" in caplog.text


def test_forged_sequence_numbers_are_ignored() -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    feed(c, "status", {"online": True, "session": True, "first": 10**30, "last": 10**30})
    feed(c, "events", {**alert(True), "seq": True})
    feed(c, "events", alert(10**30))
    feed(c, "events", alert(1, code="ok", message="m", severity="info"))
    assert c.seqs("t1") == [1]
    assert c.tables["t1"].known_last == 1


@pytest.fixture
def publisher(tmp_path: Path) -> FloorPublisher:
    return FloorPublisher(None, table="t1", room="r", host="127.0.0.1", port=1)


@pytest.mark.parametrize("payload", [
    b'{"from": Infinity}', b'{"from": 1e400}', b'{"from": true}', b'{"from": -3}', b'{"from": "5"}',
    b"[" * 50_000 + b"]" * 50_000, b'{"from": ' + b"9" * 5000 + b"}", b"[1]", b"\xff",
])
def test_a_bad_replay_request_is_dropped_without_an_exception(publisher: FloorPublisher, payload: bytes) -> None:
    """Before, ``{"from": Infinity}`` (OverflowError) or a nesting bomb ended the table's paho
    thread: its publisher stopped sending to the floor."""
    publisher._on_message(publisher.client, None, Msg("r/tables/t1/replay", payload))  # type: ignore[arg-type]
    assert list(publisher._signals) == []
    publisher._on_message(publisher.client, None, Msg("r/tables/t1/replay", b'{"from": 7}'))  # type: ignore[arg-type]
    assert list(publisher._signals) == [("replay", 7)]


@pytest.mark.parametrize("outbox", [
    '{"acked": "x"}', '{"acked": [1]}', '{"session": 1e300}', '{"acked": -4}', '{"acked": true}',
    "[" * 50_000 + "]" * 50_000,
])
def test_a_damaged_outbox_file_means_publishing_the_journal_again(tmp_path: Path, outbox: str) -> None:
    path = tmp_path / "j.sqlite3.floor"
    path.write_text(outbox)
    pub = FloorPublisher(None, table="t1", room="r", host="127.0.0.1", port=1, outbox=path)
    assert pub.acked == 0 and pub.session == 1


def _http(port: int, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> int:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path, body=body or None, headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()


def test_the_floor_page_refuses_a_foreign_host_or_origin(tmp_path: Path) -> None:
    """DNS rebinding: a page of attacker.example whose name resolves to the floor PC's address is
    same-origin to the browser; only the Host header tells. Before, it read the room's alerts and
    acknowledged them in any name."""
    from argon2 import PasswordHasher

    from shoe_ctl.floor.page import FloorPage
    from shoe_ctl.users import Authenticator, Role, User, UserStore

    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    feed(c, "events", alert(1, code="x", message="m", severity="critical"))
    users = UserStore(tmp_path / "users.toml", hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    users.save([User("fay", Role.FLOOR, users.hash_pin("864200"))])
    page = FloorPage(c, port=0, authenticator=Authenticator(users)).start()
    try:
        own = f"127.0.0.1:{page.port}"
        ack = json.dumps({"table": "t1", "id": 1, "user": "fay", "pin": "864200"}).encode()
        post = {"Content-Type": "application/json"}
        assert _http(page.port, "GET", "/state", {"Host": f"attacker.example:{page.port}"}) == 403
        assert _http(page.port, "POST", "/ack", {**post, "Host": f"attacker.example:{page.port}"}, ack) == 403
        assert _http(page.port, "POST", "/ack", {**post, "Host": own, "Origin": "http://attacker.example"}, ack) == 403
        assert c.tables["t1"].alerts[0]["acked"] is None
        nested = b'{"table": ' + b"[" * 1500 + b"]" * 1500 + b"}"
        assert _http(page.port, "POST", "/ack", {**post, "Host": own}, nested[:4000]) in (400, 413)
        assert _http(page.port, "GET", "/state", {"Host": own}) == 200
        assert _http(page.port, "POST", "/ack", {**post, "Host": own, "Origin": f"http://{own}"}, ack) == 200
        assert c.tables["t1"].alerts[0]["acked"]["by"] == "fay"
    finally:
        page.close()


@pytest.mark.parametrize(("listen", "named"), [
    ("abc", "--listen 'abc': expected HOST:PORT"),  # was: invalid literal for int()
    ("127.0.0.1:99999", "--listen '127.0.0.1:99999'"),  # was: an OverflowError traceback
    ("127.0.0.1:-1", "--listen '127.0.0.1:-1'"),
])
def test_floor_listen_is_checked_and_named(listen: str, named: str, capsys: pytest.CaptureFixture[str]) -> None:
    from shoe_ctl.cli import main

    assert main(["floor", "--broker", "mqtt://127.0.0.1:1", "--room", "r", "--listen", listen]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err


def test_floor_listen_forms() -> None:
    from shoe_ctl.floor.cli import parse_listen

    assert parse_listen("[::1]:8090") == ("::1", 8090)  # was "[::1]": not loopback, a token asked for
    assert parse_listen(":8090") == ("127.0.0.1", 8090)
    assert parse_listen("0.0.0.0:0") == ("0.0.0.0", 0)


def test_a_short_floor_token_is_refused() -> None:
    """As the dealer display's."""
    from shoe_ctl.floor.page import FloorPage

    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    with pytest.raises(ValueError, match="the token has 1 characters, at least 16"):
        FloorPage(c, host="0.0.0.0", port=0, token="x")


def test_the_floor_command_stops_on_sigterm_without_a_traceback() -> None:
    import signal
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "shoe_ctl.cli", "floor", "--broker", "mqtt://127.0.0.1:1",
                             "--room", "r", "--listen", f"127.0.0.1:{port}"],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        assert "floor page:" in proc.stderr.readline()
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=20)[1]
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert "Traceback" not in rest and "Invalid file descriptor" not in rest, rest


def test_wrong_floor_tokens_lock_the_client_out() -> None:
    """Before, a client could try tokens without end; now 5 wrong ones within 60 s lock it out
    for 60 s (429), the right token not even compared meanwhile -- as the dealer display."""
    from shoe_ctl.floor.page import FloorPage

    token = "a-long-enough-floor-token"
    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    feed(c, "events", alert(1, code="x", message="m", severity="critical"))
    page = FloorPage(c, port=0, token=token).start()
    try:
        own = {"Content-Type": "application/json", "Host": f"127.0.0.1:{page.port}"}
        ack = json.dumps({"table": "t1", "id": 1, "who": "floor"}).encode()
        assert [_http(page.port, "POST", "/ack", {**own, "X-Floor-Token": f"guess-{i}"}, ack)
                for i in range(6)] == [401] * 5 + [429]
        assert _http(page.port, "POST", "/ack", {**own, "X-Floor-Token": token}, ack) == 429
        assert c.tables["t1"].alerts[0]["acked"] is None
    finally:
        page.close()


def test_a_named_pipe_as_the_outbox_does_not_hold_the_start(tmp_path: Path) -> None:
    """Reading the outbox waited for a writer: the table's start hung on a FIFO there."""
    import os
    import threading

    fifo = tmp_path / "j.sqlite3.floor"
    os.mkfifo(fifo)
    made: list[FloorPublisher] = []
    t = threading.Thread(target=lambda: made.append(
        FloorPublisher(None, table="t1", room="r", host="127.0.0.1", port=1, outbox=fifo)), daemon=True)
    t.start()
    t.join(5)
    if not made:  # unblock the reader so the thread can end
        with open(fifo, "w"):
            pass
    assert made and made[0].acked == 0


@pytest.mark.parametrize("alias", [False, True])
@pytest.mark.parametrize("end", ["", "-wal", "-shm", ".lock"])
def test_an_outbox_naming_the_journal_is_refused(tmp_path: Path, end: str, alias: bool) -> None:
    """``[floor] outbox`` set to the journal's path by a slip: the publisher's first save renamed
    its JSON over the journal, and every hand was gone (``journal check``: not an SQLite file).
    With the journal given through a symlink, its files are those beside the file it leads to
    (SQLite's ``-wal`` and ``-shm``, the owner's ``.lock``)."""
    from shoe_ctl.floor.config import FloorConfig
    from shoe_ctl.floor.publisher import attach_floor

    real = tmp_path / "j.sqlite3"
    journal_path = tmp_path / "alias.sqlite3" if alias else real
    if alias:
        journal_path.symlink_to(real.name)
    cfg = FloorConfig(enabled=True, broker="mqtt://127.0.0.1:1", outbox=f"{real}{end}")

    class NoSinks:
        def add_sink(self, _sink: object) -> None:
            raise AssertionError("no publisher may be attached")

    with pytest.raises(ValueError, match="is the journal's own file"):
        attach_floor(NoSinks(), object(), cfg, table="t1", journal_path=journal_path)


def test_a_table_name_that_cannot_be_a_topic_is_named_with_file_and_key(tmp_path: Path) -> None:
    """With the floor on, ``table = "a/b#"`` was refused without the file or the key."""
    from shoe_ctl.config import ConfigError
    from shoe_ctl.floor.config import doctor_floor, load_floor_config

    path = tmp_path / "t.toml"
    path.write_text('table = "a/b#"\n[floor]\nenabled = true\n')
    with pytest.raises(ConfigError) as info:
        load_floor_config(path)
    assert info.value.source == str(path) and info.value.key == "table"
    assert doctor_floor(path)[0] == "fail"
    path.write_text('table = "a/b#"\n[floor]\nenabled = false\n')
    assert not load_floor_config(path).enabled  # the floor off: any table name


def test_a_name_allowed_on_the_command_line_opens_the_floor_page() -> None:
    from shoe_ctl.floor.page import FloorPage

    c = FloorConsumer(host="127.0.0.1", port=1, room="r")
    page = FloorPage(c, port=0, allowed_hosts=("floor.example",)).start()
    try:
        assert _http(page.port, "GET", "/state", {"Host": f"floor.example:{page.port}"}) == 200
        assert _http(page.port, "GET", "/state", {"Host": f"other.example:{page.port}"}) == 403
    finally:
        page.close()


def test_the_floors_own_requests_make_no_table_and_do_not_count_as_one_heard() -> None:
    """``replay``, ``verify`` and ``clock`` are the floor's words to a table (a floor user writes
    them, the consumer's own come back to it): one under any table name made a table of it on the
    floor page (2,000 names, 2,000 tiles), and one to a real table counted as that table heard."""
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    feed(c, "events", alert(1, code="a", message="m", severity="info"))
    heard = c.tables["t1"].last_seen
    for i in range(2000):
        for leaf in ("replay", "verify", "clock"):
            feed(c, leaf, {"from": 1}, table=f"ghost{i}")
    for leaf in ("replay", "verify", "clock"):
        feed(c, leaf, {"from": 1}, table="t1")
    assert sorted(c.tables) == ["t1"]
    assert [r["table"] for r in c.snapshot()["tables"]] == ["t1"]
    assert c.tables["t1"].last_seen == heard


def test_unreadable_messages_are_logged_once_per_flood(caplog: pytest.LogCaptureFixture) -> None:
    c = FloorConsumer(host="127.0.0.1", port=1, room="r", keep_seqs=True)
    with caplog.at_level(logging.WARNING, logger="shoe_ctl.floor"):
        for _ in range(3000):
            feed(c, "events", b"\xff not json")
        feed(c, "events", b"[" * 100_000, table="t2")
    lines = [r.getMessage() for r in caplog.records if "unreadable" in r.getMessage()]
    assert 2 <= len(lines) <= 6, lines  # each table's first, then one per thousand (was: one per message)
    assert any("t2" in line for line in lines)
    feed(c, "events", alert(1, code="ok", message="fine", severity="warning"))
    assert c.seqs("t1") == [1]


def test_a_flood_of_bad_replay_requests_is_a_few_log_lines(publisher: FloorPublisher,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """Whoever may write the table's ``replay`` topic (a floor user) cannot fill the table's log:
    the first bad request is said, then one line per thousand (was: one per message)."""
    with caplog.at_level(logging.WARNING, logger="shoe_ctl.floor"):
        for _ in range(2500):
            publisher._on_message(publisher.client, None, Msg("r/tables/t1/replay", b"\xff"))  # type: ignore[arg-type]
    lines = [r.getMessage() for r in caplog.records if "bad replay request" in r.getMessage()]
    assert len(lines) == 3 and "2001 so far" in lines[-1]
    assert publisher.bad_replays == 2500 and list(publisher._signals) == []
