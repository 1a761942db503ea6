"""HIL, through the virtual shoe on a real pty and ``ShoeLink``, the shoe offering names-foreign
(docs/protocol.md section 16): after an unreadable card the signal holds until the shoe's next
word on it (docs/state-machine.md, *Card checks*; docs/service.md, the controller's one wait).
FOREIGN next: one latched STOP, no notice and no signal to go on before it; the misread FAULT
next: the unreadable card's notice; nothing next: the controller ends the wait with a journaled
``TimerFired`` (``unread-card``), the notice and the next instruction, and a replay of the journal
reaches the same table. Every wait is on an event, none on a time."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hil_dealer_stops import PROFILES, SEATS, Dealer, Screen, record_equals_felt

from drivers.leds import MockLedSink
from hil.deck import Deck
from hil.faults import Faults
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.config import TableConfig
from shoe_ctl.events import Alert, DealerAction, ForeignCard, ForeignWhat, Instruction, Signal, TimerFired
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.foreign import FOREIGN_CODES, UNREAD_TIMER
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import recover
from shoe_ctl.table import Table

pytestmark = pytest.mark.faults
PULL = 3
"""The pull the fault spec makes unreadable or foreign: seat 3's first downcard."""
HOLD = (Signal.SHOE_FAULT, Signal.STOP)
"""The signals that tell the dealer not to go on."""


class Tape:
    """A sink keeping every instruction and alert in the order the dealer meets them."""

    def __init__(self) -> None:
        self.commands: list[Instruction | Alert] = []
        self._cond = threading.Condition()

    def handle(self, cmd: Any) -> None:
        if isinstance(cmd, Instruction | Alert):
            with self._cond:
                self.commands.append(cmd)
                self._cond.notify_all()

    def close(self) -> None:
        pass

    def wait(self, pred: Callable[[Instruction | Alert], bool], since: int, timeout: float = 15.0) -> int:
        """The index of the first command from ``since`` on that satisfies ``pred``."""
        def found() -> int | None:
            return next((i for i in range(since, len(self.commands)) if pred(self.commands[i])), None)

        with self._cond:
            assert self._cond.wait_for(lambda: found() is not None, timeout), self.commands[since:]
            index = found()
            assert index is not None
            return index


def _machine() -> Dealing:
    return Dealing(PROFILES, await_counter_reset=True)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[tuple[Table, Screen, Tape, Journal, VirtualShoe]]:
    screen, tape = Screen(), Tape()
    journal = Journal(tmp_path / "table.sqlite3", table="t", profile="tda")
    shoe = VirtualShoe(Deck.seeded(21), transport="pty", seed=3, names_foreign=True).start()
    try:
        t = Table.from_config(TableConfig(), profiles=PROFILES, shoe_url=shoe.url, device=shoe, machine=_machine(),
                              journal=journal, dealer_io=False, sinks=[MockLedSink(), screen, tape],
                              wait_connected=10.0)
        with t:
            yield t, screen, tape, journal, shoe
    finally:
        shoe.close()
        journal.close()


@pytest.fixture
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """The controller's wait on an unreadable card made long: where the shoe's next word comes, the
    test then does not depend on it arriving within the product's 0.5 s on a stalled machine."""
    monkeypatch.setattr("shoe_ctl.service.controller.UNREAD_WAIT_S", 60.0)


def _deal_to_the_pull(rig: Any, spec: dict[int, list[str]]) -> tuple[Dealer, int]:
    """A hand of four seats dealt up to :data:`PULL`, pulled with the fault ``spec``; returns the
    dealer and the tape's length before that pull."""
    t, screen, tape, _journal, shoe = rig
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    assert t.controller.machine.link.names_foreign  # the shoe offered it: the host took it
    shoe.faults = Faults(schedule=spec)
    dealer = Dealer(t, screen, shoe)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS)
    dealer.deal(PULL - 1)
    ins = dealer.next_card()
    before = len(tape.commands)
    dealer.pull(ins)
    return dealer, before


def _alerts(tape: Tape, code: str) -> list[Alert]:
    return [c for c in tape.commands if isinstance(c, Alert) and c.code == code]


def _go_on(commands: list[Instruction | Alert]) -> list[Instruction]:
    return [c for c in commands if isinstance(c, Instruction) and c.signal not in HOLD]


def test_a_foreign_card_after_the_unreadable_one_is_one_stop_with_no_go_on_before_it(patient: None, rig: Any) -> None:
    t, _screen, tape, journal, shoe = rig
    _dealer, before = _deal_to_the_pull(rig, {PULL: ["foreign"]})
    code = FOREIGN_CODES[ForeignWhat.UNKNOWN]
    at = tape.wait(lambda c: isinstance(c, Alert) and c.code == code, before)
    stop = tape.commands[at]
    assert isinstance(stop, Alert) and stop.latched and f"read {shoe.events[-3].seq}" in stop.message
    tape.wait(lambda c: isinstance(c, Instruction) and c.signal is Signal.STOP, before)
    assert t.controller.wait_idle(5)
    assert _go_on(tape.commands[before:]) == []  # from the card's CARD on, nothing said go on
    assert _alerts(tape, "unreadable-card") == []  # the STOP names the card: no notice before it
    assert shoe.wait_acked(5)  # acked once journaled
    foreign = [r.item for r in journal.records() if r.kind == "ForeignCard"]
    assert len(foreign) == 1 and isinstance(foreign[0], ForeignCard)
    assert foreign[0].tag == shoe.events[-2].tag.hex()  # the tag the shoe named, journaled
    assert [r.kind for r in journal.records()].count("TimerFired") == 0


def test_the_shoes_misread_after_the_unreadable_card_gives_the_usual_notice(patient: None, rig: Any) -> None:
    t, _screen, tape, _journal, shoe = rig
    dealer, before = _deal_to_the_pull(rig, {PULL: ["unreadable", "misread"]})
    told = tape.wait(lambda c: isinstance(c, Alert) and c.code == "unreadable-card", before)
    deal = tape.wait(lambda c: isinstance(c, Instruction) and c.signal is Signal.DEAL and c.card_no == PULL + 1,
                     before)
    assert told < deal and _go_on(tape.commands[before:told]) == []  # held until the shoe's word
    assert t.controller.wait_idle(5)
    assert len(_alerts(tape, "unreadable-card")) == 1 and len(_alerts(tape, "shoe-misread")) == 1
    assert not [c for c in tape.commands if isinstance(c, Alert) and c.latched]  # a notice, no STOP
    record_equals_felt(t.controller.machine, dealer.felt, unknown={"seat 3 down"})
    assert shoe.wait_acked(5)


def test_a_silent_shoe_ends_the_wait_by_the_journaled_timer_and_a_replay_reaches_the_same_table(
        rig: Any) -> None:
    t, _screen, tape, journal, shoe = rig
    dealer, before = _deal_to_the_pull(rig, {PULL: ["unreadable"]})
    told = tape.wait(lambda c: isinstance(c, Alert) and c.code == "unreadable-card", before)
    deal = tape.wait(lambda c: isinstance(c, Instruction) and c.signal is Signal.DEAL and c.card_no == PULL + 1,
                     before)
    assert told < deal
    held = [c.signal for c in tape.commands[before:told] if isinstance(c, Instruction)]
    assert held and set(held) == {Signal.SHOE_FAULT}  # the signal held, nothing to go on, until the wait ended
    assert t.controller.wait_idle(5)
    assert shoe.wait_acked(5)
    timers = [r.item for r in journal.records() if r.kind == "TimerFired"]
    assert len(timers) == 1 and isinstance(timers[0], TimerFired) and timers[0].name == UNREAD_TIMER
    assert len(_alerts(tape, "unreadable-card")) == 1 and _alerts(tape, "shoe-misread") == []
    live = t.controller.machine
    record_equals_felt(live, dealer.felt, unknown={"seat 3 down"})
    replayed, _seq, report = recover(journal, _machine)
    assert report.clean and report.mismatches == [], report.lines()
    assert report.instruction is not None and report.instruction.signal is Signal.DEAL
    assert report.instruction.card_no == PULL + 1
    assert replayed.state == live.state and replayed.link.unread is None
    assert replayed.hand is not None and live.hand is not None
    assert [(s.seat, s.down, s.up) for s in replayed.hand.seats] == [(s.seat, s.down, s.up) for s in live.hand.seats]
    record_equals_felt(replayed, dealer.felt, unknown={"seat 3 down"})
