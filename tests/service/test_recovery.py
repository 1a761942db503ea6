"""Recovery: replaying the journal into a fresh machine gives the same state and signal."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from journal_table import Table, play_hand

from shoe_ctl import events as E
from shoe_ctl.export import default_machine_factory
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import HandMarks, recover


@dataclass
class Counter:
    """A tiny machine: counts cards per hand and says how many are still due."""

    hand_no: int = 0
    state: str = "idle"
    cards: list[str] = field(default_factory=list)
    hand: Any = None

    def handle(self, ev: Any) -> list[E.Command]:
        out: list[E.Command] = []
        if isinstance(ev, E.DealerInput) and ev.action is E.DealerAction.NEW_HAND:
            self.hand_no += 1
            self.state, self.cards = "dealing", []
        elif isinstance(ev, E.DealerInput) and ev.action is E.DealerAction.HAND_COMPLETE:
            self.state = "idle"
        elif isinstance(ev, E.CardRead):
            if self.state != "dealing":
                out.append(E.Alert("card-not-expected", f"read {ev.seq}"))
            self.cards.append(str(ev.card))
        out.append(E.Instruction(E.Signal.DEAL if self.state == "dealing" else E.Signal.IDLE,
                                 f"{len(self.cards)} dealt"))
        return out

    def summary(self) -> dict[str, Any]:
        return {"cards": len(self.cards)}


def run_live(journal: Journal, machine: Counter, evs: list[Any]) -> None:
    marks = HandMarks(journal, machine)
    for ev in evs:
        journal.append(ev)
        cmds = machine.handle(ev)
        journal.append_many([c for c in cmds if isinstance(c, E.Alert)])
        marks.after(machine)


def cards(first: int, n: int) -> list[E.CardRead]:
    from shoe_ctl.rules.cards import Card

    return [E.CardRead(s, Card(s % 52), "rfid", s) for s in range(first, first + n)]


NEW = E.DealerInput(E.DealerAction.NEW_HAND)
DONE = E.DealerInput(E.DealerAction.HAND_COMPLETE)


def test_recover_mid_hand_with_a_fake_machine(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    live = Counter()
    with Journal(path, table="t", profile="tda") as j:
        run_live(j, live, [NEW, *cards(1, 5), DONE, *cards(6, 1), NEW, *cards(7, 4)])
        assert [h.hand for h in j.hands(finished_only=True)] == [1]
    with Journal(path, table="t", profile="tda") as j:
        machine, last, report = recover(j, Counter)
        assert (machine.state, machine.cards, machine.hand_no) == (live.state, live.cards, 1)
        assert last == 10
        assert report.hand == 2 and report.replayed == 6 and report.clean  # stray card 6, new hand, 4 cards
        assert report.instruction == E.Instruction(E.Signal.DEAL, "4 dealt")
        marks = HandMarks(j, machine)
        # the resent card 10 is dropped by the link (resume_seq=last); the next one counts once
        for ev in [*cards(11, 1), DONE]:
            j.append(ev)
            machine.handle(ev)
            marks.after(machine)
        assert [h.hand for h in j.hands(finished_only=True)] == [1, 2]
        assert j.current_hand is None


def test_stop_between_event_and_its_mark(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        run_live(j, Counter(), [NEW, *cards(1, 3)])
        j.append(DONE)  # the process stopped before the machine handled it and before hand-end
    with Journal(path, table="t", profile="tda") as j:
        machine, _last, report = recover(j, Counter)
        assert machine.state == "idle" and report.hand == 1
        HandMarks(j, machine).after(machine)
        assert j.current_hand is None and [h.finished for h in j.hands()] == [True]
    with Journal(path, table="t", profile="tda") as j:
        j.append(NEW)  # stopped after a new hand's input, before its hand-start
    with Journal(path, table="t", profile="tda") as j:
        machine, _last, _report = recover(j, Counter)
        assert machine.state == "dealing"
        HandMarks(j, machine).after(machine)
        assert j.current_hand == 2


def test_mismatch_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        run_live(j, Counter(), [*cards(1, 1)])  # alert: card-not-expected
        j.append(E.Alert("duplicate-card", "invented"))
        j.append(NEW)
    with Journal(path, table="t", profile="tda") as j:
        _m, _last, report = recover(j, Counter)
        assert not report.clean
        assert any("duplicate-card" in m for m in report.mismatches)


def test_recover_the_real_machine_after_a_power_cut(tmp_path: Path) -> None:
    """The real dealing machine, stopped mid-hand: the replay gives the same display and signal."""
    t = Table(tmp_path / "live.journal")
    play_hand(t)
    t.inp(E.DealerAction.NEW_HAND, seats=[1, 4, 6, 8], game="stud8", rules="tda")
    t.cards(4 * 3 + 1 + 2)  # 3rd street, betting, burn and two 4th-street upcards
    shutil.copy(tmp_path / "live.journal", tmp_path / "cut.journal")
    shutil.copy(f"{tmp_path / 'live.journal'}-wal", f"{tmp_path / 'cut.journal'}-wal")
    live = t.machine
    with Journal(tmp_path / "cut.journal", table="t9", profile="tda") as j:
        machine, last, report = recover(j, lambda: default_machine_factory("tda"))
    assert last == t.seq
    assert machine.state == live.state
    assert machine.public_state() == live.public_state()
    assert machine.instruction() == live.instruction()
    assert report.instruction == live.instruction()
    assert machine.hand.stub_count() == live.hand.stub_count()
    assert report.clean, report.lines()


def hand_events(first_seq: int, seats: list[int]) -> list[Any]:
    """One short hand as the controller's queue sees it: cards with shoe sequences, dealer inputs."""
    from shoe_ctl.rules.cards import Card

    seq = iter(range(first_seq, first_seq + 100))
    dispense = iter(range(1, 100))
    deck = iter(Card(c) for c in range(51, -1, -1))

    def cards_(n: int) -> list[E.CardRead]:
        return [E.CardRead(next(seq), next(deck), "rfid", next(dispense)) for _ in range(n)]

    inp = E.DealerInput
    return [
        inp(E.DealerAction.NEW_HAND, None, {"seats": seats, "game": "stud", "rules": "tda"}),
        *cards_(3 * len(seats)),
        inp(E.DealerAction.BETTING_COMPLETE),
        *cards_(1 + len(seats)),
        inp(E.DealerAction.FOLD, seats[0]),
        inp(E.DealerAction.BETTING_COMPLETE),
        *cards_(len(seats)),
        inp(E.DealerAction.FOLD, seats[1]),
        inp(E.DealerAction.HAND_COMPLETE),
    ]


def run_controller(journal: Journal, machine: Any, evs: list[Any]) -> None:
    from shoe_ctl.service.controller import Controller

    ctl = Controller(machine, journal=journal)
    marks = HandMarks(journal, machine)
    ctl.add_hook(marks.after_event)
    marks.after(machine)
    for ev in evs:
        ctl.step(ev)
    assert journal.flush(5.0)  # the writer thread has committed every queued append


def exported(journal: Journal, out: Path) -> list[str]:
    from shoe_ctl.export import export_hands

    texts = [p.read_text() for p in export_hands(journal, out)]
    return ["\n".join(x for x in t.splitlines() if not x.startswith(("_started_utc", "_chain_head"))) for t in texts]


def test_a_stop_anywhere_resumes_to_the_same_hands(tmp_path: Path) -> None:
    """Stop the controller after any event, restart from the files on disk: recovery plus the rest
    of the events (the shoe resends only what was never journaled) export the same hands as an
    uninterrupted run."""
    evs = hand_events(1, [2, 4, 6]) + hand_events(100, [1, 3, 5])
    make = lambda: default_machine_factory("tda")  # noqa: E731
    with Journal(tmp_path / "whole.journal", table="t", profile="tda", synchronous="NORMAL") as j:
        run_controller(j, make(), evs)
        want = exported(j, tmp_path / "whole")
    assert len(want) == 2
    for k in range(len(evs) + 1):
        live = tmp_path / f"live{k}.journal"
        with Journal(live, table="t", profile="tda", synchronous="NORMAL") as j:
            run_controller(j, make(), evs[:k])
            cut = tmp_path / f"cut{k}.journal"
            shutil.copy(live, cut)  # what the disk holds at the stop (the log is not checkpointed)
            shutil.copy(f"{live}-wal", f"{cut}-wal")
        with Journal(cut, table="t", profile="tda", synchronous="NORMAL") as j:
            machine, last, report = recover(j, make)
            assert report.clean, (k, report.lines())
            journaled = {e.seq for e in evs[:k] if isinstance(e, E.CardRead)}
            assert last == (max(journaled) if journaled else None)
            rest = [e for e in evs[k:] if not (isinstance(e, E.CardRead) and last is not None and e.seq <= last)]
            run_controller(j, machine, rest)
            assert exported(j, tmp_path / f"out{k}") == want, k


def test_marks_queued_without_waiting_are_written_in_order(tmp_path: Path) -> None:
    """The service's hand marks (``wait=False``) do not wait for their commit, and still land in
    the journal in order: before every record queued after them, in the hand they open."""
    path = tmp_path / "t.journal"
    machine = Counter()
    with Journal(path, table="t", profile="tda") as j:
        marks = HandMarks(j, machine, wait=False)
        waits: list[Any] = []
        real_mark = j._mark
        j._mark = waits.append  # type: ignore[method-assign]  # any wait for a commit is noted
        for ev in [NEW, *cards(1, 2), DONE, NEW, *cards(3, 1)]:
            machine.handle(ev)
            marks.after(machine)
            j.append(ev)
        j._mark = real_mark  # type: ignore[method-assign]
        assert waits == []
        kinds = [(r.kind, r.hand) for r in j.records()]
    assert kinds == [("hand-start", 1), ("DealerInput", 1), ("CardRead", 1), ("CardRead", 1),
                     ("hand-end", 1), ("DealerInput", None),
                     ("hand-start", 2), ("DealerInput", 2), ("CardRead", 2)]
