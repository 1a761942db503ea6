"""The controller's hand-over to a batch sink (``handle_all``, the dealer display): one call per
event with all of its commands, once the event is journaled and its hooks have run; every other
sink still takes each command as it comes, and nothing is lost or reordered
(docs/architecture.md, "The path of one card")."""

from __future__ import annotations

from typing import Any

from shoe_ctl.events import Alert, CardRead, Command, DisplayUpdate, Instruction, Signal
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.controller import Controller


class TwoCommands:
    """Stands in for the dealing machine: an instruction and a display update for each card."""

    state = "idle"

    def start(self) -> list[Command]:
        return [Instruction(Signal.IDLE, "No hand"), DisplayUpdate({"hand": None})]

    def handle(self, ev: Any) -> list[Command]:
        return [Instruction(Signal.DEAL, f"card {ev.seq}"), DisplayUpdate({"hand": 1, "seq": ev.seq})]

    def service_alert(self, code: str, message: str, *, latched: bool = False) -> list[Command]:
        return [Alert(code, message, latched=latched)]


class Each:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def handle(self, command: Command) -> None:
        self.log.append(("each", command))

    def close(self) -> None:
        pass


class Batch(Each):
    def handle(self, command: Command) -> None:  # never called while handle_all is there
        self.log.append(("one", command))

    def handle_all(self, commands: list[Command]) -> None:
        self.log.append(("batch", tuple(commands)))


class Journal:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def append(self, item: Any) -> int:
        self.log.append(("journal", item))
        return 0


def card(seq: int) -> CardRead:
    return CardRead(seq, Card(seq % 52), "rfid", seq)


def test_a_batch_sink_takes_each_events_commands_in_one_call_after_the_journal_and_hooks() -> None:
    log: list[Any] = []
    c = Controller(TwoCommands(), journal=Journal(log))  # type: ignore[arg-type]
    c.add_sink(Each(log))
    c.add_sink(Batch(log))
    c.add_sink(Each(log))
    c.add_hook(lambda ev, _cmds: log.append(("hook", ev)))
    for seq in (1, 2):
        log.clear()
        cmds = c.step(card(seq))
        assert [k for k, _ in log] == ["each", "each", "each", "each", "journal", "hook", "batch"]
        assert log[-1] == ("batch", tuple(cmds))
        assert [v for k, v in log if k == "each"] == [cmds[0], cmds[0], cmds[1], cmds[1]]  # as before, in order
    assert not any(k == "one" for k, _ in log)


def test_commands_given_outside_an_event_reach_a_batch_sink_at_once() -> None:
    log: list[Any] = []
    c = Controller(TwoCommands())  # type: ignore[arg-type]
    c.add_sink(Batch(log))
    c.start()
    try:
        assert log and log[0][0] == "batch" and isinstance(log[0][1][0], Instruction)  # the first instruction
        log.clear()
        c.call_soon(lambda: c.raise_alert("test-alert", "an alert outside any event"))
        assert c.wait_idle(5.0)
        batches = [v for k, v in log if k == "batch"]
        assert batches and any(isinstance(x, Alert) and x.code == "test-alert" for b in batches for x in b)
    finally:
        c.close()


def test_a_failing_batch_sink_is_counted_and_the_others_still_get_the_commands() -> None:
    log: list[Any] = []

    class Broken(Batch):
        def handle_all(self, commands: list[Command]) -> None:
            raise RuntimeError("broken sink")

    c = Controller(TwoCommands())  # type: ignore[arg-type]
    c.add_sink(Broken(log))
    c.add_sink(Batch(log))
    c.step(card(1))
    assert c.errors == 1
    assert [k for k, _ in log] == ["batch"]
