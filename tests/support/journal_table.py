"""A table driver for journal and export tests: a real dealing machine whose every event is
journaled first, as the controller does, and one short three-seat hand played on it."""

from __future__ import annotations

from pathlib import Path

from shoe_ctl import events as E
from shoe_ctl.export import default_machine_factory
from shoe_ctl.rules.cards import parse_cards
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import HandMarks

DECK = parse_cards("AsKd2c7h8h9sQsJd3cTc4d5d6d7c8c9cTdJcQcKcAc")


class Table:
    """Drives a real dealing machine and journals every event first, as the controller does."""

    def __init__(self, path: Path, profile: str = "tda", *, marks: bool = False) -> None:
        self.journal = Journal(path, table="t9", profile=profile)
        self.machine = default_machine_factory(profile)
        self.marks = HandMarks(self.journal, self.machine) if marks else None
        self.seq = 0
        self.dispense = 0
        self.deck = list(DECK)

    def post(self, ev: E.Event) -> list[E.Command]:
        self.journal.append(ev)
        cmds = self.machine.handle(ev)
        self.journal.append_many([c for c in cmds if isinstance(c, E.Alert)])
        if self.marks is not None:
            self.marks.after(self.machine)
        return cmds

    def cards(self, n: int) -> None:
        for _ in range(n):
            self.seq += 1
            self.dispense += 1
            self.post(E.CardRead(self.seq, self.deck.pop(0), "rfid", self.dispense))

    def inp(self, action: E.DealerAction, seat: int | None = None, **args: object) -> None:
        if action is E.DealerAction.NEW_HAND:
            self.deck, self.dispense = list(DECK), 0
        self.post(E.DealerInput(action, seat, dict(args)))


def play_hand(t: Table, *, finish: bool = True) -> None:
    t.inp(E.DealerAction.NEW_HAND, seats=[2, 5, 7], game="stud", rules="tda", antes=1, bring_in=1,
          small_bet=2, big_bet=4, stacks=[100, 80, 60])
    t.cards(9)
    t.inp(E.DealerAction.BETTING_COMPLETE)
    t.cards(1 + 3)  # burn, three upcards
    t.inp(E.DealerAction.FOLD, 5)
    t.inp(E.DealerAction.BETTING_COMPLETE)
    t.cards(1 + 2)
    t.inp(E.DealerAction.FOLD, 2)
    if finish:
        t.inp(E.DealerAction.HAND_COMPLETE)
