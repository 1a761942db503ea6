"""Two properties' floors replicated to one central NATS JetStream (a real ``nats-server``,
JetStream on, its own store, loopback): each table's events arrive once and in order, a restarted
replicator resumes from what the stream holds (asking the table for what it missed), a resent
event is a no-op (its ``Nats-Msg-Id`` is in the duplicate window), and the central view lists
every property, table and open alert."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from floor_help import FLOORS, ROOM, TABLES, dealt
from nats_help import NatsServer, find_nats_server
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import VirtualTable
from shoe_ctl.cli import main
from shoe_ctl.floor import central as central_mod
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto, find_mosquitto
from shoe_ctl.floor.central import STREAM, Replicator, central_view, event_subject, msg_id, view_subject
from shoe_ctl.floor.consumer import open_consumer

PROPERTIES = {"casino-a": ["t1", "t2"], "casino-b": ["t1", "t3"]}
"""Two properties; both have a table ``t1`` (the central store keeps them apart)."""


@pytest.fixture
def central(tmp_path: Path) -> Iterator[NatsServer]:
    if find_nats_server() is None:
        pytest.skip("nats-server is not installed (scripts/setup.sh test installs it)")
    server = NatsServer(tmp_path / "nats").start()
    try:
        yield server
    finally:
        server.stop()


async def _stored(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every message of the central stream, by subject, in the stream's order."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        last = (await js.stream_info(STREAM)).state.last_seq
        out: dict[str, list[dict[str, Any]]] = {}
        for seq in range(1, last + 1):
            msg = await js.get_msg(STREAM, seq)
            assert msg.subject is not None and msg.data is not None
            out.setdefault(msg.subject, []).append(json.loads(msg.data))
        return out
    finally:
        await nc.close()


async def _publish_again(url: str, subject: str, data: bytes, mid: str) -> bool:
    nc = await nats.connect(url)
    try:
        ack = await nc.jetstream().publish(subject, data, stream=STREAM, headers={"Nats-Msg-Id": mid})
        return bool(ack.duplicate)
    finally:
        await nc.close()


class Property:
    """One property: its broker, tables, floor consumer and replicator (restartable)."""

    def __init__(self, name: str, tables: list[str], root: Path, central_url: str, seed: int) -> None:
        self.name, self.url = name, central_url
        self.broker = Mosquitto(root / name / "broker", room=ROOM, tables=TABLES, floors=FLOORS).start()
        self.offered: list[tuple[str, dict[str, Any]]] = []
        self.floor = open_consumer([self.broker.url], room=ROOM, credentials=self.broker.users[FLOOR_USER],
                                   keep_seqs=True, on_event=self._hook(), on_resent=self._hook())
        self.replicator = self._replicator()
        self.tables = [VirtualTable(n, root / name / "tables", random_hands(seed + i, count=6), room=ROOM,
                                    host=self.broker.host, port=self.broker.port,
                                    credentials=self.broker.users[n], pace=0.01, seed=seed + i)
                       for i, n in enumerate(tables)]

    def _hook(self) -> Callable[[str, dict[str, Any], float], None]:
        def offer(table: str, event: dict[str, Any], now: float) -> None:
            self.offered.append((table, event))
            self.replicator.offer(table, event, now)
        return offer

    def _replicator(self) -> Replicator:
        return Replicator(self.url, prop=self.name, room=ROOM, ask_replay=self.floor.ask_replay,
                          rows=lambda: self.floor.snapshot()["tables"]).start()

    def stop_replicator(self) -> None:
        """The replicator stops (what it had queued is lost with it; the floor goes on)."""
        self.replicator.close()

    def start_replicator(self) -> None:
        self.replicator = self._replicator()

    def close(self) -> None:
        for t in self.tables:
            t.close()
        self.replicator.close()
        self.floor.close()
        self.broker.stop()


def test_two_properties_once_in_order_across_a_replicator_restart_and_a_resend(
        central: NatsServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed (scripts/setup.sh test installs it)")
    props = [Property(name, tables, tmp_path, central.url, seed=50 + 10 * i)
             for i, (name, tables) in enumerate(PROPERTIES.items())]
    try:
        for p in props:
            p.floor.start()
            assert p.floor.connected.wait(10) and p.replicator.ready.wait(10)
            for t in p.tables:
                t.start()
        a = props[0]
        assert wait_for(lambda: all(a.replicator.positions.get(t.name, 0) > 20 for t in a.tables), 30)
        a.stop_replicator()                                 # mid-deal; the floor applies events meanwhile
        held = {t.name: len(a.floor.seqs(t.name)) for t in a.tables}
        assert wait_for(lambda: all(len(a.floor.seqs(n)) > k + 20 for n, k in held.items()), 30)
        a.start_replicator()
        assert not all(t.done for t in a.tables), "the replicator restarted during the deal"
        lasts = {(p.name, name): last for p in props for name, last in dealt(p.tables, 90).items()}

        def stored_all() -> bool:
            return all(next(r.positions.get(t, 0) for r in [p.replicator]) == last
                       for p in props for (prop, t), last in lasts.items() if prop == p.name)

        assert wait_for(stored_all, 60), {p.name: p.replicator.positions for p in props}
        stored = asyncio.run(_stored(central.url))
        for (prop, table), last in lasts.items():
            seqs = [m["seq"] for m in stored[event_subject(prop, ROOM, table)]]
            assert seqs == list(range(1, last + 1)), f"{prop}/{table}: every event once, in order"
            assert all(m["table"] == table for m in stored[event_subject(prop, ROOM, table)])
        assert a.replicator.asked >= 1, "the restarted replicator asked the tables for what it missed"
        assert min(a.replicator.resumed_from.values()) > 20, "and resumed from what the stream held"

        # a resend is a no-op: the same message id within the duplicate window
        table, event = next((t, e) for t, e in a.offered if t == "t1" and e["seq"] == 5)
        assert asyncio.run(_publish_again(central.url, event_subject(a.name, ROOM, "t1"), b"{}",
                                          msg_id(a.name, ROOM, "t1", 5))) is True
        # and a replicator that forgot its position sends again what the stream has: no duplicate
        before = a.replicator.duplicates
        a.replicator.positions["t1"] = 4
        for seq in range(5, 9):
            a.replicator.offer("t1", next(e for t, e in a.offered if t == "t1" and e["seq"] == seq))
        assert wait_for(lambda: a.replicator.duplicates == before + 4, 10), a.replicator.duplicates
        again = asyncio.run(_stored(central.url))
        assert {s: len(m) for s, m in again.items()} == {s: len(m) for s, m in stored.items()}

        # the central view: both properties, their tables, the floor's rows
        def rows_in() -> bool:
            view = central_view(central.url)["properties"]
            return all(view.get(p.name, {}).get(ROOM, {}).get(t.name, {}).get("state") == "idle"
                       for p in props for t in p.tables)

        assert wait_for(rows_in, 20)
        view = central_view(central.url)["properties"]
        assert set(view) == set(PROPERTIES)
        for (prop, table), last in lasts.items():
            entry = view[prop][ROOM][table]
            assert entry["stored"] == last and entry["seq"] == last and entry["online"] is True
        assert main(["floor", "central", "--nats", central.url]) == 0
        out = capsys.readouterr().out
        assert "casino-a" in out and "casino-b" in out and f"{ROOM}/t3" in out
        assert view_subject("casino-a", "r.1", "t.2") == "floorview.casino-a.r%2E1.t%2E2"
    finally:
        for p in props:
            p.close()


def test_a_hole_is_asked_from_the_table_then_given_up(central: NatsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the earlier events the replicator asks the table (at most every 2 s, 5 times),
    then takes the hole as the table's and goes on."""
    asked: list[tuple[str, int]] = []
    rep = Replicator(central.url, prop="p", room="r", ask_replay=lambda t, s: asked.append((t, s)))
    rep.start()
    try:
        assert rep.ready.wait(10)
        rep.offer("t9", {"seq": 1, "kind": "hand-start", "table": "t9"})
        assert wait_for(lambda: rep.positions.get("t9") == 1, 10)
        rep.offer("t9", {"seq": 3, "kind": "Alert", "table": "t9", "message": "seat 2 shows Ah"})
        assert wait_for(lambda: asked == [("t9", 2)], 10)
        assert rep.positions["t9"] == 1, "the later event waits for the hole"
        rep.offer("t9", {"seq": 2, "kind": "CardRead", "table": "t9"})
        rep.offer("t9", {"seq": 3, "kind": "Alert", "table": "t9", "message": "seat 2 shows Ah"})
        assert wait_for(lambda: rep.positions.get("t9") == 3, 10)
        stored = asyncio.run(_stored(central.url))[event_subject("p", "r", "t9")]
        assert [m["seq"] for m in stored] == [1, 2, 3]
        assert stored[2]["message"] == "seat 2 shows ??", "no card leaves the floor in a text"

        # a hole the table cannot fill (its journal no longer holds it): asked MAX_ASKS times, then passed
        monkeypatch.setattr(central_mod, "ASK_EVERY_S", 0.05)
        for _ in range(200):
            rep.offer("t9", {"seq": 6, "kind": "CardRead", "table": "t9"})
            if wait_for(lambda: rep.positions.get("t9") == 6 or rep.backlog == 0, 2, poll=0.01) \
                    and rep.positions.get("t9") == 6:
                break
            time.sleep(0.06)
        assert rep.positions["t9"] == 6 and rep.holes == 1
        assert asked[1:] == [("t9", 4)] * central_mod.MAX_ASKS
        assert [m["seq"] for m in asyncio.run(_stored(central.url))[event_subject("p", "r", "t9")]] == [1, 2, 3, 6]
    finally:
        rep.close()


def test_names_cannot_escape_their_subject() -> None:
    assert event_subject("p.1", "room", "t-1") == "floor.p%2E1.room.t-1"
    for bad in ("a b", "a*", "a>", "", "x/y"):
        with pytest.raises(ValueError):
            event_subject("p", "room", bad)


def test_a_new_journal_file_is_stored_as_the_tables_next_journal(central: NatsServer, tmp_path: Path) -> None:
    """A table whose journal file is replaced starts at sequence 1 again: the floor tells the
    replicator, which stores the new file's events after the old ones (journal 1) instead of taking
    them as already held; a replicator started afterwards resumes in the new file."""
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed (scripts/setup.sh test installs it)")
    broker = Mosquitto(tmp_path / "broker", room=ROOM, tables=TABLES, floors=FLOORS).start()
    reps: list[Replicator] = []

    def replicator() -> Replicator:
        reps.append(Replicator(central.url, prop="casino-c", room=ROOM, ask_replay=floor.ask_replay,
                               known_last=floor.known_last).start())
        return reps[-1]

    floor = open_consumer([broker.url], room=ROOM, credentials=broker.users[FLOOR_USER], keep_seqs=True,
                          on_event=lambda t, e, n: reps[-1].offer(t, e, n),
                          on_resent=lambda t, e, n: reps[-1].offer(t, e, n),
                          on_reset=lambda t: reps[-1].new_journal(t))
    folder = tmp_path / "tables"

    def deal(hands: int) -> int:
        t = VirtualTable("t1", folder, random_hands(hands, count=hands), room=ROOM, host=broker.host,
                         port=broker.port, credentials=broker.users["t1"]).start()
        try:
            return dealt([t], 60)["t1"]
        finally:
            t.close()

    try:
        rep = replicator()
        floor.start()
        assert floor.connected.wait(10) and rep.ready.wait(10)
        first = deal(3)
        assert wait_for(lambda: rep.positions.get("t1") == first, 30)
        for f in folder.glob("t1.sqlite3*"):
            if not f.name.endswith(".floor"):
                f.unlink()  # a new journal file; the outbox stays
        second = deal(1)
        assert second < first
        assert wait_for(lambda: rep.journals.get("t1") == 1 and rep.positions.get("t1") == second, 30), \
            (rep.journals, rep.positions, floor.tables["t1"].journal_resets)
        stored = asyncio.run(_stored(central.url))[event_subject("casino-c", ROOM, "t1")]
        assert [(m["journal"], m["seq"]) for m in stored] == \
            [*((0, s) for s in range(1, first + 1)), *((1, s) for s in range(1, second + 1))]

        rep.close()
        again = replicator()                                # resumes in the new file: nothing sent twice
        assert again.ready.wait(10)
        again.offer("t1", {"seq": second, "kind": "hand-end", "table": "t1"})
        assert wait_for(lambda: again.skipped == 1, 10)
        assert again.journals["t1"] == 1 and again.published == 0
    finally:
        for r in reps:
            r.close()
        floor.close()
        broker.stop()
