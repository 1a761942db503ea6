"""The replay requests a table's publisher takes (``shoe_ctl.floor.replay_gate.ReplayGate``, and
the publisher's steps over a journal, without a broker): a request the replay under way covers is
folded into it, one from further back or after a replay waits for the cooldown, and a request that
waited is still served (docs/floor.md, "Replay requests")."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.floor.replay_gate import REPLAY_GAP_MAX_S, REPLAY_GAP_S, Asked, ReplayGate
from shoe_ctl.service.journal.records import Record


def test_a_first_request_starts_a_replay_and_its_repeats_fold_into_it() -> None:
    gate = ReplayGate()
    assert gate.ask(1, next_seq=101, in_flight=False, now=0.0) is Asked.WANTED
    assert gate.ask(1, next_seq=101, in_flight=False, now=0.0) is Asked.FOLDED  # joins the waiting one
    assert gate.take(next_seq=101, high=100, now=0.0) == 1
    for n in range(1000):
        assert gate.ask(1 + n % 50, next_seq=10, in_flight=False, now=0.1) is Asked.FOLDED
    assert gate.take(next_seq=60, high=100, now=0.2) is None
    assert gate.started == 1 and gate.folded == 1001 and gate.deferred == 0


def test_records_on_their_way_are_not_asked_again() -> None:
    gate = ReplayGate()
    assert gate.ask(101, next_seq=101, in_flight=False, now=0.0) is Asked.FOLDED  # not yet published
    assert gate.ask(90, next_seq=101, in_flight=True, now=0.0) is Asked.FOLDED  # paho delivers it
    assert gate.take(next_seq=101, high=100, now=0.0) is None and gate.started == 0


def test_a_request_from_further_back_takes_the_replay_back_once_then_waits_for_the_cooldown() -> None:
    """A second floor or the central store asking from before the replay under way is served at
    once (the central store gives up on a hole after a few asks); a third request from further
    back still waits for the end and the cooldown, so a flood gains at most one replay a cycle."""
    gate = ReplayGate()
    gate.ask(50, next_seq=101, in_flight=False, now=0.0)
    assert gate.take(next_seq=101, high=100, now=0.0) == 50
    assert gate.ask(10, next_seq=70, in_flight=False, now=0.5) is Asked.WANTED
    assert gate.take(next_seq=70, high=110, now=0.6) == 10  # taken back at the next step
    assert gate.ask(20, next_seq=30, in_flight=False, now=0.7) is Asked.FOLDED  # the replay sends it
    assert gate.ask(5, next_seq=30, in_flight=False, now=0.8) is Asked.DEFERRED
    assert gate.take(next_seq=80, high=120, now=0.9) is None and gate.due() is None  # under way
    gate.sent(101, now=2.0)
    assert gate.take(next_seq=105, high=120, now=2.1) is None  # the widened replay runs to 110
    gate.sent(111, now=3.0)  # 3 s from its first start: so long its cooldown
    assert gate.due() == 6.0
    assert gate.take(next_seq=121, high=120, now=5.9) is None
    assert gate.take(next_seq=121, high=120, now=6.0) == 5
    assert gate.ask(1, next_seq=50, in_flight=False, now=6.1) is Asked.WANTED  # a new replay may widen once
    gate.sent(130, now=6.2)
    assert gate.started == 3 and gate.deferred == 1


@pytest.mark.parametrize(("took", "cooldown"), [(0.1, REPLAY_GAP_S), (4.0, 4.0), (500.0, REPLAY_GAP_MAX_S)])
def test_the_cooldown_is_as_long_as_the_replay_within_its_bounds(took: float, cooldown: float) -> None:
    gate = ReplayGate()
    gate.ask(1, next_seq=11, in_flight=False, now=0.0)
    gate.take(next_seq=11, high=10, now=0.0)
    gate.sent(11, now=took)
    assert gate.ask(1, next_seq=11, in_flight=False, now=took) is Asked.DEFERRED
    assert gate.due() == pytest.approx(took + cooldown)


def test_a_waiting_request_already_published_meanwhile_starts_nothing() -> None:
    gate = ReplayGate()
    gate.ask(1, next_seq=11, in_flight=False, now=0.0)
    gate.take(next_seq=11, high=10, now=0.0)
    gate.sent(11, now=0.1)
    gate.ask(5, next_seq=11, in_flight=False, now=0.2)
    assert gate.take(next_seq=5, high=10, now=5.0) is None and gate.started == 1  # the journal replaced


class _Journal:
    def __init__(self, n: int) -> None:
        self.rows = [Record(seq, 1_000 + seq, "note", None, None, f'{{"n": {seq}}}') for seq in range(1, n + 1)]

    def records(self, since: int | None) -> Any:
        return iter([r for r in self.rows if r.seq > (since or 0)])


class _Client:
    """Stands for paho: every publication is taken at once and acknowledged at the next step."""

    def __init__(self, pub: FloorPublisher) -> None:
        self.pub = pub
        self.events: list[int] = []
        self.births = 0
        self.mid = 0

    def publish(self, topic: str, payload: bytes, **_kw: Any) -> Any:
        self.mid += 1
        if topic == self.pub.topics.events:
            self.events.append(int(payload.split(b'"seq":')[1].split(b",")[0]))
            self.pub._acks.append(self.mid)
        elif topic == self.pub.topics.status and b'"online":true' in payload:
            self.births += 1
        return type("Info", (), {"rc": 0, "mid": self.mid})()


def _replay_msg(pub: FloorPublisher, data: bytes) -> None:
    msg = type("Msg", (), {"topic": pub.topics.replay, "payload": data})()
    pub._on_message(pub.client, None, msg)  # type: ignore[arg-type]


def test_a_flood_of_requests_is_one_replay_and_a_few_log_lines(monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """Before, every ``{"from": 1}`` sent the journal's records again from the first and a birth:
    a thousand requests, a thousand births and as many restarts from the first record."""
    pub = FloorPublisher(_Journal(300), table="t1", room="r", host="127.0.0.1", port=1, window=50)
    client = _Client(pub)
    monkeypatch.setattr(pub.client, "publish", client.publish)
    pub.connected = True
    while pub.acked < 300:
        pub._step()
    assert client.events == list(range(1, 301))
    births = client.births
    pub.replays.gap_s = pub.replays.gap_max_s = 600.0  # no cooldown ends within the test, however slow
    with caplog.at_level(logging.INFO, logger="shoe_ctl.floor"):
        for n in range(1000):
            _replay_msg(pub, b'{"from": 1}')
            if n % 10 == 0:
                pub._step()  # the steps come between the messages
        pub._step()
        while pub.replays.under_way:
            pub._step()
    replayed = client.events[300:]
    assert replayed == list(range(1, 301)), "the journal once more, from the first record, not restarted"
    assert pub.replays.started == 1 and client.births == births + 1
    assert pub.replay_requests == 1000 and pub.replays.folded + pub.replays.deferred == 999
    lines = [r.getMessage() for r in caplog.records if "replay request" in r.getMessage()]
    assert 1 <= len(lines) <= 2, lines
    assert pub.replays.deferred > 0 and pub.replays.due() is not None  # those after the replay: waiting


def test_a_request_after_a_replay_is_served_after_the_cooldown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A floor that asks again (it reconnected) gets what it asked for, once the cooldown is over."""
    pub = FloorPublisher(_Journal(40), table="t1", room="r", host="127.0.0.1", port=1)
    client = _Client(pub)
    monkeypatch.setattr(pub.client, "publish", client.publish)
    pub.connected = True
    pub._step()
    pub._step()
    _replay_msg(pub, b'{"from": 1}')
    pub._step()
    assert client.events == [*range(1, 41), *range(1, 41)]
    _replay_msg(pub, b'{"from": 30}')
    pub._step()
    assert len(client.events) == 80 and pub.replays.deferred == 1
    due = pub.replays.due()
    assert due is not None and pub._due <= due  # a timed step is asked for at the cooldown's end
    monkeypatch.setattr(pub.replays, "_open_at", 0.0)  # the cooldown over
    pub._step()
    assert client.events[80:] == list(range(30, 41))
