"""The controller's two lanes (docs/security.md, "Floods and connections"): a card never waits
behind more than a few dealer inputs, shoe events keep their order, and the dealer inputs that
wait are bounded."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from waiting import wait_for

from shoe_ctl.events import CardRead, DealerAction, DealerInput, LinkChanged, LinkStatus
from shoe_ctl.rules.cards import Card
from shoe_ctl.service import controller as ctl
from shoe_ctl.service.controller import Controller, EventQueue


def inp(n: int) -> DealerInput:
    return DealerInput(DealerAction.UNDO, args={"ref": n})


def card(seq: int) -> CardRead:
    return CardRead(seq, Card(seq % 52), "rfid", seq)


class SlowMachine:
    """Stands in for the dealing machine: a dealer input costs ``input_s`` (as one did under a
    flood of alerts); records what it was given, with the time."""

    state = "idle"

    def __init__(self, input_s: float) -> None:
        self.input_s = input_s
        self.seen: list[tuple[Any, float]] = []

    def start(self) -> list[Any]:
        return []

    def handle(self, ev: Any) -> list[Any]:
        if isinstance(ev, DealerInput):
            time.sleep(self.input_s)
        self.seen.append((ev, time.monotonic()))
        return []


def drain(q: EventQueue) -> list[Any]:
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out


def test_few_inputs_keep_the_posting_order() -> None:
    q = EventQueue()
    items = [inp(1), card(1), inp(2), inp(3), card(2), LinkChanged(LinkStatus.CONNECTED)]
    for it in items:
        q.put(it)
    assert drain(q) == items


def test_a_card_waits_behind_at_most_a_few_inputs() -> None:
    q = EventQueue()
    for n in range(100):
        q.put(inp(n))
    q.put(card(1))
    out = drain(q)
    assert out.index(card(1)) <= ctl.MAX_INPUTS_AHEAD  # a backlog: the card goes ahead of it
    assert [e for e in out if isinstance(e, DealerInput)] == [inp(n) for n in range(100)]


@given(st.lists(st.booleans(), max_size=60))
def test_each_lane_keeps_its_order(kinds: list[bool]) -> None:
    q = EventQueue()
    posted = [card(i) if is_card else inp(i) for i, is_card in enumerate(kinds)]
    for it in posted:
        q.put(it)
    out = drain(q)
    assert sorted(out, key=posted.index) == posted  # nothing lost or duplicated
    assert [e for e in out if isinstance(e, CardRead)] == [e for e in posted if isinstance(e, CardRead)]
    assert [e for e in out if isinstance(e, DealerInput)] == [e for e in posted if isinstance(e, DealerInput)]
    run = 0  # dealer inputs taken since the last card: a card never waits behind more
    for ev in out:
        if isinstance(ev, CardRead):
            run = 0
        else:
            run += 1
            if any(isinstance(e, CardRead) for e in out[out.index(ev):]):
                assert run <= ctl.MAX_INPUTS_AHEAD


def test_card_handling_does_not_wait_behind_a_flood_of_inputs() -> None:
    """A card posted while the controller works through a flood of slow inputs is handled right
    after the input in progress, ahead of the inputs still waiting (more than
    ``MAX_INPUTS_AHEAD`` of them)."""
    inside, release = threading.Event(), threading.Event()

    class Held(SlowMachine):
        def handle(self, ev: Any) -> list[Any]:
            if ev == inp(20):  # the input in progress when the card comes
                inside.set()
                release.wait(10)
            return super().handle(ev)

    m = Held(input_s=0.02)
    c = Controller(m)  # type: ignore[arg-type]
    with c:
        for n in range(100):  # 2 s of inputs
            assert c.post(inp(n))
        assert inside.wait(10)  # 79 inputs wait behind the one in progress
        assert c.post(card(1))
        release.set()
        assert c.wait_idle(10)
    seen = [e for e, _ in m.seen]
    assert seen.index(card(1)) == 21  # behind inputs 0-20 only, not behind the 79 still queued
    assert seen[:21] == [inp(n) for n in range(21)]
    assert [e for e in seen if isinstance(e, DealerInput)] == [inp(n) for n in range(100)]


def test_inputs_beyond_the_bound_are_refused_once_logged(caplog: pytest.LogCaptureFixture) -> None:
    m = SlowMachine(input_s=0.5)
    c = Controller(m)  # type: ignore[arg-type]
    gate = threading.Event()
    c.call_soon(gate.wait)  # hold the controller thread while posting
    with c, caplog.at_level(logging.WARNING):
        answers = [c.post(inp(n)) for n in range(ctl.MAX_DEALER_INPUTS + 50)]
        assert answers.count(True) == ctl.MAX_DEALER_INPUTS and answers.count(False) == 50
        assert c.post(card(1))  # a shoe event is always taken
        assert c.inputs_refused == 50
        assert sum("refusing more" in r.getMessage() for r in caplog.records) == 1
        m.input_s = 0.0
        gate.set()
        assert c.wait_idle(10)
    assert len(m.seen) == ctl.MAX_DEALER_INPUTS + 1


def test_close_still_handles_what_was_queued() -> None:
    m = SlowMachine(input_s=0.0)
    c = Controller(m).start()  # type: ignore[arg-type]
    for n in range(5):
        c.post(inp(n))
    c.post(card(1))
    c.close()
    assert [e for e, _ in m.seen] == [inp(n) for n in range(5)] + [card(1)]


@given(st.lists(st.sampled_from(["card", "input", "step", "step"]), max_size=80))
@example(["input"] * 17 + ["step", "card"])  # 8 taken ahead, 8 more older than the card
def test_inputs_taken_ahead_keep_the_order_and_the_bound(ops: list[str]) -> None:
    """The controller's loop with ``take_inputs``: after a dealer input it takes the inputs queued
    right behind it (their records then share a commit). What it handles is what ``get`` alone
    would give (each lane in order, nothing lost), and a card waits behind at most
    ``MAX_INPUTS_AHEAD`` inputs handled after it was posted, the ones taken ahead included."""
    q = EventQueue()
    ahead: list[Any] = []
    posted: list[Any] = []
    handled: list[Any] = []
    waiting_since: dict[int, int] = {}  # card seq -> number of events handled when it was posted

    def step() -> None:
        if ahead:
            ev = ahead.pop(0)
            q.handled_held()
        elif not q.empty():
            ev = q.get_nowait()
            if isinstance(ev, DealerInput):
                ahead.extend(q.take_inputs(ctl.MAX_INPUTS_AHEAD))
        else:
            return
        handled.append(ev)

    for i, op in enumerate(ops):
        if op == "card":
            posted.append(card(i))
            waiting_since[i] = len(handled)
            q.put(card(i))
        elif op == "input":
            posted.append(inp(i))
            q.put(inp(i))
        else:
            step()
    while ahead or not q.empty():
        step()
    assert sorted(handled, key=posted.index) == posted
    assert [e for e in handled if isinstance(e, CardRead)] == [e for e in posted if isinstance(e, CardRead)]
    assert [e for e in handled if isinstance(e, DealerInput)] == [e for e in posted if isinstance(e, DealerInput)]
    last_card_at = 0
    for at, ev in enumerate(handled):
        if isinstance(ev, CardRead):
            start = max(waiting_since[ev.seq], last_card_at)
            assert sum(isinstance(e, DealerInput) for e in handled[start:at]) <= ctl.MAX_INPUTS_AHEAD
            last_card_at = at + 1


def test_a_burst_of_inputs_shares_a_commit_and_each_answer_waits_for_its_record(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dealer inputs queued back to back are journaled in one commit (not one fsync each), and
    the machine's answer to each reaches the sinks only once that input's record is on disk (the
    machine may work it out meanwhile)."""
    from shoe_ctl.events import Instruction, Signal
    from shoe_ctl.service.journal import Journal

    journal = Journal(tmp_path / "t.journal", table="t", profile="tda")
    unwritten: list[int] = []
    answered: list[int] = []

    class Answering(SlowMachine):
        def handle(self, ev: Any) -> list[Any]:
            super().handle(ev)
            return [Instruction(Signal.BETTING, f"answer {ev.args['ref']}")] if isinstance(ev, DealerInput) else []

    class Checking:
        def handle(self, command: Any) -> None:
            ref = int(command.text.split()[-1])
            answered.append(ref)
            if ref not in {json_ref(r.body) for r in journal.records() if r.kind == "DealerInput"}:
                unwritten.append(ref)

        def close(self) -> None:
            return None

    committed: list[int] = []  # appends in each commit
    inside, release = threading.Event(), threading.Event()
    write_groups = journal.store.write_groups

    def held_write(groups: Any, **kw: Any) -> Any:
        committed.append(len(groups))
        if not release.is_set():  # the writer stays inside its first commit until released
            inside.set()
            release.wait(10)
        return write_groups(groups, **kw)

    m = Answering(input_s=0.05)
    try:
        c = Controller(m, journal=journal)  # type: ignore[arg-type]
        c.add_sink(Checking())
        c.INPUT_WAIT_S = 30.0  # the writer is held below: the answers wait for it, however long
        gate = threading.Event()
        with c:
            assert journal.flush(5)
            monkeypatch.setattr(journal.store, "write_groups", held_write)
            c.call_soon(gate.wait)  # hold the controller thread while posting
            journal.submit([LinkChanged(LinkStatus.CONNECTED)])
            assert inside.wait(5)  # the writer is busy with a commit of its own
            for n in range(8):
                assert c.post(inp(n))
            gate.set()  # the first input is taken; the seven behind it are taken with it
            deadline = time.monotonic() + 5
            while journal.pending < 9 and time.monotonic() < deadline:
                time.sleep(0.002)
            assert journal.pending == 9  # the held record and the eight inputs
            assert answered == []  # no answer before its record is written
            release.set()
            assert c.wait_idle(10)
        assert [ev.args["ref"] for ev, _ in m.seen] == list(range(8))
        assert answered == list(range(8))
        assert unwritten == []
        assert committed == [1, 8]  # the held record, then the eight inputs in one commit (was 8: one each)
    finally:
        release.set()
        journal.close()


def test_an_answer_waits_for_a_slow_commit_the_machine_does_not(tmp_path: Any) -> None:
    """The machine works out a dealer input's answer while the input's commit runs; the answer
    goes to the sinks after the commit."""
    from shoe_ctl.events import Instruction, Signal

    order: list[str] = []

    class SlowJournal:
        def submit(self, items: Any, **kw: Any) -> Any:
            order.append("submitted")
            return object()

        def wait_written(self, entry: Any, timeout: float | None) -> bool:
            time.sleep(0.05)  # the fsync
            order.append("written")
            return True

        def append(self, item: Any) -> int:
            return 0

        def append_many(self, items: Any) -> list[int]:
            return [0 for _ in items]

        def add_state_listener(self, fn: Any) -> None:
            return None

    class Machine(SlowMachine):
        def handle(self, ev: Any) -> list[Any]:
            order.append("machine")
            return [Instruction(Signal.BETTING, "answer")]

    class Sink:
        def handle(self, command: Any) -> None:
            order.append("sink")

        def close(self) -> None:
            return None

    c = Controller(Machine(input_s=0), journal=SlowJournal())  # type: ignore[arg-type]
    c.add_sink(Sink())
    c.step(inp(1))
    assert order == ["submitted", "machine", "written", "sink"]


def json_ref(body: str) -> Any:
    import json

    return json.loads(body).get("args", {}).get("ref")


def test_get_after_inputs_taken_ahead_waits_for_the_next_event() -> None:
    """Inputs taken ahead leave their wake-up tokens behind: a later ``get`` finds the lanes empty,
    takes those tokens and waits (it never returns nothing), and returns the next event put, once,
    whether it was put before or while ``get`` waits."""
    import queue

    q = EventQueue()
    for n in range(3):
        q.put(inp(n))
    assert [i.args["ref"] for i in q.take_inputs(ctl.MAX_INPUTS_AHEAD)] == [0, 1, 2]
    with pytest.raises(queue.Empty):
        q.get(timeout=0.05)  # three stale tokens, no event: still Empty
    with pytest.raises(queue.Empty):
        q.get_nowait()
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.append(q.get()))
    waiter.start()
    waiter.join(0.05)
    assert waiter.is_alive() and not got  # blocked: nothing to take
    q.put(card(7))
    waiter.join(5.0)
    assert not waiter.is_alive() and got == [card(7)]
    assert q.empty() and q.qsize() == 0
    with pytest.raises(queue.Empty):
        q.get(timeout=0.01)


def test_urgent_call_is_taken_before_waiting_events_and_wakes_a_waiting_get() -> None:
    """``put_urgent`` goes ahead of both lanes, and a ``get`` waiting on an empty queue wakes for it."""
    q = EventQueue()
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.append(q.get()))
    waiter.start()
    q.put_urgent("urgent-1")
    waiter.join(5.0)
    assert got == ["urgent-1"]
    q.put(card(1))
    q.put(inp(1))
    q.put_urgent("urgent-2")
    assert drain(q) == ["urgent-2", card(1), inp(1)]


def test_wait_idle_waits_for_events_the_shoe_link_puts_straight_on_the_queue() -> None:
    """The shoe link puts its events on the controller's queue itself (not through ``post``): each
    still counts until handled, so handling one never makes ``wait_idle`` see an event posted
    after it as done (a call queued behind a link event was once taken for handled)."""
    m = SlowMachine(input_s=0.0)
    first, second = threading.Event(), threading.Event()
    ran: list[str] = []
    with Controller(m) as c:  # type: ignore[arg-type]
        c.call_soon(lambda: first.wait(10))
        c.queue.put(LinkChanged(LinkStatus.CONNECTED, "the link's own put"))  # as ShoeLink does
        c.call_soon(lambda: (second.wait(10), ran.append("second")))
        first.set()
        assert wait_for(lambda: len(m.seen) == 1, 10)  # the link event is handled
        assert [type(e) for e, _ in m.seen] == [LinkChanged]
        assert not c.wait_idle(0.2) and ran == []  # the second call is held: not idle
        second.set()
        assert c.wait_idle(10)
        assert ran == ["second"]
