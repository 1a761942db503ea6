"""The NO HAND screen after a hand dealt through the real machine: the previous hand's
information alerts are gone, also a refusal that answered the page's own input at the showdown
(shown then in the REFUSED band only): it came back as a band on the NO HAND screen once the
next update cleared the replies (docs/display.md, "The page")."""

from __future__ import annotations

import pytest
from rule_profiles import PROFILES

from shoe_ctl.display.model import DisplayModel
from shoe_ctl.events import CardRead, DealerAction, DealerInput, ShoeCommand, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import full_deck


class Table:
    """A machine dealt as the shoe and the page would, its commands folded into the display's model."""

    def __init__(self, rules: str, game: str, seats: list[int]) -> None:
        self.m = Dealing(PROFILES, default_rules=rules)
        self.model = DisplayModel()
        self.deck = full_deck()
        self.seq = self.dispense = self.ref = 0
        self.fold_in(self.m.start())
        self.page(DealerAction.NEW_HAND, args={"seats": seats, "game": game, "rules": rules})

    def fold_in(self, commands: list[object]) -> None:
        for c in commands:
            if isinstance(c, ShoeCommand) and c.name == "reset-counter":
                self.dispense = 0
            self.model.apply(c)  # type: ignore[arg-type]

    def page(self, action: DealerAction, seat: int | None = None, args: dict[str, object] | None = None) -> None:
        self.ref += 1
        self.fold_in(self.m.handle(DealerInput(action, seat, {**(args or {}), "ref": self.ref})))

    def to_showdown(self) -> None:
        while (sig := self.m.instruction().signal) is not Signal.SHOWDOWN:
            if sig in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY):
                self.seq += 1
                self.dispense += 1
                self.fold_in(self.m.handle(CardRead(self.seq, self.deck.pop(), "rfid", self.dispense)))
            else:
                assert sig is Signal.BETTING, self.m.instruction()
                self.page(DealerAction.BETTING_COMPLETE)


@pytest.mark.parametrize(("rules", "game", "seats"), [("tda", "stud", [1, 2, 3]), ("house", "razz", [2, 5]),
                                                      ("tda", "stud8", [4, 8])])
def test_a_refusal_answering_the_page_at_the_showdown_is_not_shown_on_the_no_hand_screen(
        rules: str, game: str, seats: list[int]) -> None:
    t = Table(rules, game, seats)
    t.to_showdown()
    t.page(DealerAction.SHOW, seats[0])
    t.page(DealerAction.UNDO)
    t.page(DealerAction.UNDO)  # refused: the show was undone already
    snap = t.model.snapshot()
    assert snap["reply"]["refused"] and snap["reply"]["alerts"][0]["code"] == "undo-refused"
    assert "undo-refused" not in [a["code"] for a in snap["alerts"]]  # the REFUSED band only
    for s in seats:
        t.page(DealerAction.SHOW, s)
    t.page(DealerAction.HAND_COMPLETE)
    snap = t.model.snapshot()
    assert snap["state"] == "idle"
    assert snap["alerts"] == []  # before: the undo-refused of the showdown, as a band


def test_what_the_model_keeps_of_past_hands_alerts_stays_bounded() -> None:
    """Each hand leaves information alerts (refusals, an undo) and an acknowledged one; what the
    display's model remembers to hide them (ids hidden with their hand, ids acknowledged) keeps to
    the alerts the machine still lists, not one more per hand for as long as the service runs."""
    t = Table("tda", "stud", [1, 2, 3])
    kept = []
    for _ in range(40):
        t.page(DealerAction.FOLD, 2)  # refused: the street is being dealt
        t.to_showdown()
        t.page(DealerAction.SHOW, 1)
        t.page(DealerAction.UNDO)
        t.page(DealerAction.UNDO)
        shown = t.model.alerts()
        assert shown, "the hand left no alert to acknowledge"
        t.model.acknowledge(shown[0]["id"])
        for s in (1, 2, 3):
            t.page(DealerAction.SHOW, s)
        t.page(DealerAction.HAND_COMPLETE)
        assert t.model.snapshot()["alerts"] == []
        kept.append(len(t.model._stale) + len(t.model._acked))
        t.deck = full_deck()
        t.page(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]})
    assert max(kept) <= 10, kept  # before: 3 more each hand (120 after 40)


def test_a_band_of_an_input_without_a_ref_is_no_later_answer_of_the_page() -> None:
    """An input on the dealer port (no ref) refused while the instruction stays the same: the
    machine sends no ``Instruction`` for it, and its band was taken into the reply to the page's
    next input and hidden with it (the dealer never acknowledged it)."""
    t = Table("tda", "stud", [1, 2, 3])
    t.page(DealerAction.MISDEAL, args={"confirm": True})
    for seat in (5, 6):
        t.fold_in(t.m.handle(DealerInput(DealerAction.FOLD, seat, {})))  # the dealer port's: no ref
    before = [(a["code"], a["seat"]) for a in t.model.snapshot()["alerts"] if a["code"] == "input-wrong-time"]
    assert before == [("input-wrong-time", 5), ("input-wrong-time", 6)]
    t.page(DealerAction.UNDO)
    snap = t.model.snapshot()
    assert [a["code"] for a in snap["reply"]["alerts"]] == ["undo-refused"]
    assert [(a["code"], a["seat"]) for a in snap["alerts"] if a["code"] == "input-wrong-time"] == before
