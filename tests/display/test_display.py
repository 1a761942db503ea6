"""The dealer display: embargo filter, snapshot model, HTTP API and event stream (no browser)."""

from __future__ import annotations

import json
import queue
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from display_feed import DOWNCARDS, all_downcards, feed, seat, state

from shoe_ctl.display import DisplayModel, public_state
from shoe_ctl.display.server import DisplayError, DisplaySink, input_event, parse_display, start_display
from shoe_ctl.embargo import downcards_in
from shoe_ctl.events import Alert, DealerAction, DealerInput, DisplayUpdate, Instruction, Signal


# --------------------------------------------------------------------------- embargo filter
def test_filter_strips_downcards_before_showdown() -> None:
    raw = state("3rd", [seat(n, ["5h"] if n == 1 else []) for n in range(1, 5)])
    raw["burns"] = {"4th": "Qs"}
    out = public_state(raw)
    assert list(downcards_in(out)) == []
    text = json.dumps(out)
    for card in all_downcards() | {"Qs"}:
        assert card not in text
    assert out["seats"][0]["up"] == ["5h"] and out["seats"][0]["down_count"] == 2
    assert "down" in raw["seats"][0]  # the input is not changed


def test_filter_redacts_hidden_cards_in_words_but_keeps_public_ones() -> None:
    raw = state("4th", [seat(1, ["5h", "5d"]), seat(2, ["2c"])])
    raw["instruction"] = {"signal": "stop", "text": "Duplicate Ah (seat 1 shows 5h)", "seat": 1, "face": None}
    raw["alerts"] = [{"id": 1, "code": "duplicate-card", "message": "Kd read twice; 10d and 2c seen",
                      "street": "4th", "seat": 2, "latched": True}]
    out = public_state(raw)
    assert out["instruction"]["text"] == "Duplicate ?? (seat 1 shows 5h)"
    assert out["alerts"][0]["message"] == "?? read twice; ?? and 2c seen"
    assert out["alerts"][0]["code"] == "duplicate-card"


def test_filter_shows_downcards_at_showdown_only_for_hands_not_mucked() -> None:
    seats = [seat(1, ["5h"]), seat(2, ["2c"], status="folded"), seat(3, ["Jd"], status="all-in"),
             seat(4, ["8s"], status="killed")]
    out = public_state(state("7th", seats, machine="online_showdown"))
    shown = {s["seat"]: s.get("down") for s in out["seats"]}
    assert shown == {1: DOWNCARDS[1], 2: None, 3: DOWNCARDS[3], 4: None}
    assert "hole_cards" not in json.dumps(out)
    text = json.dumps(out)
    for card in DOWNCARDS[2] + DOWNCARDS[4]:
        assert card not in text


# --------------------------------------------------------------------------- model
def test_model_follows_the_feed_and_keeps_folded_upcards() -> None:
    model = DisplayModel()
    versions = []
    for command in feed():
        assert model.apply(command)
        versions.append(model.version)
        assert not set(downcards_in(model.snapshot()))
        assert all_downcards().isdisjoint(json.dumps(model.snapshot()).split('"'))
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    snap = model.snapshot()
    assert snap["street"] == "4th"
    assert snap["instruction"]["signal"] == "burn"
    assert snap["instruction"]["led"]["leds"] == ["amber"]
    seat2 = next(s for s in snap["seats"] if s["seat"] == 2)
    assert seat2["status"] == "folded" and seat2["up"] == ["2c"]  # kept until the hand ends
    assert snap["stub"] == {"count": 36, "required": 5, "forecast": "7th"}
    # a new hand forgets the kept upcards
    model.apply(DisplayUpdate(state("3rd", [seat(2, [], status="folded")], hand=8)))
    assert model.snapshot()["seats"][0]["up"] == []


def test_model_keeps_the_richer_instruction() -> None:
    model = DisplayModel()
    model.apply(Instruction(Signal.SCRAMBLE, "Scramble", street="7th", cards=("stub", "burn 4th")))
    st = state("7th", [seat(1, ["5h"])])
    st["instruction"] = {"signal": "scramble", "text": "Scramble", "seat": None, "face": None}
    model.apply(DisplayUpdate(st))
    assert model.snapshot()["instruction"]["cards"] == ["stub", "burn 4th"]
    st["instruction"] = {"signal": "cut", "text": "Cut", "seat": None, "face": None}
    model.apply(DisplayUpdate(st))
    ins = model.snapshot()["instruction"]
    assert ins["signal"] == "cut" and "cards" not in ins and ins["led"]["leds"] == ["blue"]


def test_model_alerts_until_acknowledged() -> None:
    model = DisplayModel()
    model.apply(Alert("duplicate-card", "Duplicate card", street="4th", seat=3, latched=True))
    model.apply(Alert("RP-10-H-B", "Short stub: scramble"))
    alerts = model.snapshot()["alerts"]
    assert [a["code"] for a in alerts] == ["duplicate-card", "RP-10-H-B"]
    model.apply(DisplayUpdate(state("4th", [seat(1, ["5h"])])))  # an update without alerts keeps them
    assert len(model.snapshot()["alerts"]) == 2
    acked = model.acknowledge(alerts[0]["id"])
    assert acked is not None and acked["code"] == "duplicate-card"
    assert [a["code"] for a in model.snapshot()["alerts"]] == ["RP-10-H-B"]
    assert model.acknowledge(alerts[0]["id"]) is None


def test_model_machine_alerts_dedupe_and_ack() -> None:
    model = DisplayModel()
    model.apply(Alert("duplicate-card", "Duplicate card", seat=3))
    st = state("4th", [seat(1, ["5h"])])
    st["alerts"] = [{"id": 4, "code": "duplicate-card", "message": "Duplicate card", "street": None,
                     "seat": 3, "latched": True}]
    model.apply(DisplayUpdate(st))
    assert [a["id"] for a in model.snapshot()["alerts"]] == [4]
    assert model.acknowledge(4) is not None
    model.apply(DisplayUpdate(st))  # the machine still lists it: acknowledged here stays hidden
    assert model.snapshot()["alerts"] == []


# --------------------------------------------------------------------------- server
@pytest.fixture
def posted() -> queue.Queue[Any]:
    return queue.Queue()


@pytest.fixture
def sink(posted: queue.Queue[Any]) -> Iterator[DisplaySink]:
    s = start_display("127.0.0.1", 0, posted.put)
    yield s
    s.close()


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def post(url: str, body: Any, headers: dict[str, str] | None = None,
         content_type: str = "application/json") -> tuple[int, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": content_type, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class SseReader:
    """Reads ``state`` events from /events over a plain socket on a thread."""

    def __init__(self, url: str) -> None:
        host, port = url.split("//")[1].rstrip("/").rsplit(":", 1)
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.raw: list[str] = []
        self._sock = socket.create_connection((host, int(port)), timeout=10)
        self._sock.sendall(f"GET /events HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode())
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        buf = b""
        kind = "state"
        try:
            while chunk := self._sock.recv(65536):
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    text = line.decode().rstrip("\r")
                    self.raw.append(text)
                    if text.startswith("event: "):
                        kind = text[7:]
                    elif text.startswith("data: ") and kind == "state":  # not a beat or bye
                        self.events.put(json.loads(text[6:]))
        except OSError:  # closed by the test
            pass

    def until(self, pred: Any, timeout: float = 5.0) -> dict[str, Any]:
        while True:
            ev = self.events.get(timeout=timeout)
            if pred(ev):
                return ev

    def close(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # already closed by the server
            pass
        self._sock.close()
        self._thread.join(timeout=2)


def test_state_and_events_follow_the_feed_without_downcards(sink: DisplaySink) -> None:
    reader = SseReader(sink.url)
    try:
        first = reader.until(lambda e: True)
        assert first["version"] == 0 and first["seats"] == []
        for command in feed():
            sink.handle(command)
        last = reader.until(lambda e: e["street"] == "4th" and e["stub"]["count"] == 36)
        sink.sync()
        snap = get(sink.url + "state")
        assert snap == last
        assert [s["seat"] for s in snap["seats"]] == [1, 2, 3, 4]
        assert snap["seats"][0]["open_pair"] and snap["seats"][0]["first_to_act"]
        assert snap["seats"][1]["up"] == ["2c"]
    finally:
        reader.close()
    stream = "".join(reader.raw)
    assert "event: state" in stream
    for card in all_downcards():
        assert f'"{card}"' not in stream


def test_handle_never_blocks_and_close_is_idempotent(posted: queue.Queue[Any]) -> None:
    s = start_display("127.0.0.1", 0, posted.put)
    for i in range(2000):
        s.handle(Instruction(Signal.DEAL, f"Deal {i}", seat=1, face="up"))
    s.sync()
    assert s.model.snapshot()["instruction"]["text"] == "Deal 1999"
    s.close()
    s.close()
    s.handle(Instruction(Signal.STOP, "after close"))  # ignored, no error


def test_post_inputs_reach_the_queue(sink: DisplaySink, posted: queue.Queue[Any]) -> None:
    code, body = post(sink.url + "input", {"action": "fold", "seat": 3})
    assert code == 202 and body["posted"]["action"] == "fold" and body["ref"] == 1
    assert posted.get(timeout=2) == DealerInput(DealerAction.FOLD, 3, {"ref": 1})
    code, body = post(sink.url + "input", {"action": "betting-complete"})
    assert code == 202 and body["ref"] == 2 and posted.get(timeout=2).action is DealerAction.BETTING_COMPLETE
    code, body = post(sink.url + "input", {"action": "undo", "args": {"ref": 77}})
    assert code == 202 and body["ref"] == 77 and posted.get(timeout=2).args == {"ref": 77}
    for bad, field in [({"action": "shuffle"}, "action"), ({"action": "fold"}, "seat"),
                       ({"action": "fold", "seat": 0}, "seat"), ({"action": "undo", "args": [1]}, "args")]:
        code, body = post(sink.url + "input", bad)
        assert code == 400 and body["error"].startswith(field)
    code, _ = post(sink.url + "input", {"action": "undo"}, content_type="text/plain")
    assert code == 415
    assert posted.empty()


def test_ack_clears_alert_and_posts_input(sink: DisplaySink, posted: queue.Queue[Any]) -> None:
    sink.handle(Alert("duplicate-card", "Duplicate card", seat=2, latched=True))
    sink.sync()
    alerts = get(sink.url + "state")["alerts"]
    assert [a["code"] for a in alerts] == ["duplicate-card"]
    code, _ = post(sink.url + "ack", {"id": alerts[0]["id"]})
    assert code == 202
    event = posted.get(timeout=2)
    assert event.action is DealerAction.ACK_ALERT and event.args["code"] == "duplicate-card"
    assert get(sink.url + "state")["alerts"] == []
    assert post(sink.url + "ack", {"id": alerts[0]["id"]})[0] == 404


def test_token_required_off_loopback_and_checked_on_posts(posted: queue.Queue[Any]) -> None:
    with pytest.raises(DisplayError, match="token"):
        DisplaySink(posted.put, host="0.0.0.0", port=0)
    with DisplaySink(posted.put, host="127.0.0.1", port=0, token="s3cret-s3cret-s3cret").start() as s:
        assert post(s.url + "input", {"action": "undo"})[0] == 401
        assert post(s.url + "input", {"action": "undo"}, {"X-Shoe-Token": "wrong"})[0] == 401
        assert post(s.url + "input", {"action": "undo"}, {"X-Shoe-Token": "s3cret-s3cret-s3cret"})[0] == 202
        assert post(s.url + "input", {"action": "undo"}, {"Authorization": "Bearer s3cret-s3cret-s3cret"})[0] == 202
        assert get(s.url + "state")["version"] == 0  # reading needs no token
    assert [posted.get(timeout=1).action for _ in range(2)] == [DealerAction.UNDO] * 2


def test_page_is_served_and_needs_no_cdn(sink: DisplaySink) -> None:
    with urllib.request.urlopen(sink.url, timeout=5) as r:
        html = r.read().decode()
    assert "/static/app.js" in html
    for asset in ("static/app.js", "static/style.css"):
        with urllib.request.urlopen(sink.url + asset, timeout=5) as r:
            text = r.read().decode()
        assert "http://" not in text and "https://" not in text
    assert "https://" not in html and "http://" not in html


def test_parse_display_and_input_event() -> None:
    assert parse_display("off") is None
    assert parse_display("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_display("[::1]:9000") == ("::1", 9000)
    with pytest.raises(DisplayError, match="HOST:PORT"):
        parse_display("localhost")
    assert input_event({"action": "all-in", "seat": 4}) == DealerInput(DealerAction.ALL_IN, 4, {})
    with pytest.raises(ValueError, match="seat"):
        input_event({"action": "absent-player"})


GOOD_INPUTS = [
    ("exposed-card", 3, {"street": "3rd", "which": 0}), ("exposed-card", 3, {"both": True}),
    ("exposed-card", 2, {"street": "7th"}), ("absent-player", 5, {"action_reached": False}),
    ("card-off-table", 1, {"face": "up"}), ("card-off-table", 1, {}),
    ("premature-done", None, {"merged": [1, 4]}), ("premature-done", None, {}),
    ("burn-error", None, {"burns": 2, "stands": True}), ("burn-error", None, {"burns": 0}),
    ("wrong-bring-in", 2, {"next_acted": True}), ("card-count", 6, {"cards": 8}),
    ("misdeal", None, {"confirm": True}), ("show", 4, {}), ("scramble-done", None, {}),
    ("cut-done", None, {}), ("stub-reloaded", None, {}), ("hand-complete", None, {}),
    ("last-card-exposed", 2, {}), ("stub-mixed", None, {"piles": ["muck", "burns"], "cards": 6}),
    ("stub-mixed", None, {}),
]
BAD_INPUTS = [
    ("exposed-card", 3, {"which": 2}, "args.which"), ("exposed-card", 3, {"which": True}, "args.which"),
    ("exposed-card", 3, {"both": "yes"}, "args.both"), ("exposed-card", 3, {"street": "8th"}, "args.street"),
    ("absent-player", 5, {"action_reached": 1}, "args.action_reached"),
    ("card-off-table", 1, {"face": "left"}, "args.face"),
    ("premature-done", None, {"merged": [0]}, "args.merged"), ("premature-done", None, {"merged": 3}, "args.merged"),
    ("burn-error", None, {}, "args.burns"), ("burn-error", None, {"burns": 1}, "args.burns"),
    ("burn-error", None, {"burns": 2, "stands": "no"}, "args.stands"),
    ("wrong-bring-in", 2, {"next_acted": None}, "args.next_acted"),
    ("card-count", 6, {}, "args.cards"), ("card-count", 6, {"cards": -1}, "args.cards"),
    ("card-count", 6, {"cards": "7"}, "args.cards"),
    ("misdeal", None, {}, "args.confirm"), ("misdeal", None, {"confirm": 1}, "args.confirm"),
    ("fold", 3, {"ref": "a"}, "args.ref"),
    ("stub-mixed", None, {"piles": ["table"]}, "args.piles"), ("stub-mixed", None, {"cards": 60}, "args.cards"),
    ("card-off-table", None, {}, "seat"), ("wrong-bring-in", None, {}, "seat"),
    ("card-count", None, {"cards": 7}, "seat"), ("show", None, {}, "seat"),
]


@pytest.mark.parametrize("action, seat, args", GOOD_INPUTS)
def test_every_dealer_report_is_accepted_with_its_arguments(action: str, seat: int | None,
                                                           args: dict[str, Any]) -> None:
    event = input_event({"action": action, "seat": seat, "args": args})
    assert event == DealerInput(DealerAction(action), seat, args)


@pytest.mark.parametrize("action, seat, args, field", BAD_INPUTS)
def test_a_report_with_bad_arguments_is_refused_naming_the_field(action: str, seat: int | None,
                                                                args: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError) as err:
        input_event({"action": action, "seat": seat, "args": args})
    assert str(err.value).startswith(field), str(err.value)


def test_a_misdeal_without_confirmation_never_reaches_the_machine(sink: DisplaySink,
                                                                  posted: queue.Queue[Any]) -> None:
    code, body = post(sink.url + "input", {"action": "misdeal"})
    assert code == 400 and "confirm" in body["error"]
    assert posted.empty()
    code, _ = post(sink.url + "input", {"action": "misdeal", "args": {"confirm": True}})
    assert code == 202 and posted.get(timeout=2).action is DealerAction.MISDEAL


def test_model_reply_says_whether_the_input_was_refused() -> None:
    """The machine answers an input with ref N by the instruction with ref N, after the alerts
    the input caused: a refusal alert makes the reply refused; moves are kept on alerts."""
    model = DisplayModel()
    model.apply(Alert("input-wrong-time", "'betting-complete' refused in state hand_third_deal: no betting "
                      "round is open; nothing changed"))
    model.apply(Instruction(Signal.DEAL, "Deal down to seat 2 (3rd)", seat=2, face="down", street="3rd",
                            card_no=6, ref=4))
    reply = model.snapshot()["reply"]
    assert reply["ref"] == 4 and reply["refused"] is True
    assert reply["alerts"][0]["code"] == "input-wrong-time"
    assert model.snapshot()["instruction"]["card_no"] == 6
    model.apply(Alert("RP-10-B", "the exposed card is replaced", seat=2, moves=("seat 2 up -> out",)))
    model.apply(Instruction(Signal.DEAL, "Deal down to seat 2 (7th)", seat=2, face="down", ref=5))
    snap = model.snapshot()
    assert snap["reply"] == {"ref": 5, "refused": False,
                             "alerts": [{"code": "RP-10-B", "message": "the exposed card is replaced"}]}
    assert snap["alerts"][-1]["moves"] == ["seat 2 up -> out"]
    model.apply(Instruction(Signal.BURN, "Burn one card"))  # no ref: the last reply stays
    assert model.snapshot()["reply"]["ref"] == 5


def test_busy_port_is_an_os_error(sink: DisplaySink, posted: queue.Queue[Any]) -> None:
    with pytest.raises(OSError):
        start_display("127.0.0.1", sink.port, posted.put)


def test_display_update_with_downcards_never_reaches_state_or_events(sink: DisplaySink) -> None:
    """Defence in depth: a faulty publisher sends downcards before showdown."""
    reader = SseReader(sink.url)
    try:
        reader.until(lambda e: True)
        leaky = state("3rd", [seat(n, []) for n in range(1, 5)])
        leaky["instruction"] = {"signal": "deal", "text": "Deal seat 1 down: Ah", "seat": 1, "face": "down"}
        sink.handle(DisplayUpdate(leaky))
        ev = reader.until(lambda e: e["version"] >= 1)
        sink.sync()
        snap = get(sink.url + "state")
    finally:
        reader.close()
    for doc in (json.dumps(ev), json.dumps(snap), "".join(reader.raw)):
        for card in all_downcards():
            assert card not in doc.replace("down_count", ""), card


def test_close_ends_open_event_streams(posted: queue.Queue[Any]) -> None:
    s = start_display("127.0.0.1", 0, posted.put)
    reader = SseReader(s.url)
    try:
        reader.until(lambda e: True)
        s.close()
        assert s._thread is not None and not s._thread.is_alive()
        reader._thread.join(timeout=2)
        assert not reader._thread.is_alive()  # the server ended the stream
    finally:
        reader.close()
