"""A STOP stops: while a latched alert is open every dealer input that moves the hand on (betting
complete, hand complete, new hand, the next stub) is refused with the reason and changes nothing,
except what the alert itself asks for; no hand starts on a shoe not yet answered or refused
(docs/state-machine.md, *Dealer inputs*). Every street, both profiles, the three games, heads-up
and eight seats."""

from __future__ import annotations

import pytest

from shoe_ctl.config import load_profile
from shoe_ctl.events import (
    Alert,
    CardRead,
    CounterReset,
    DealerAction,
    DealerInput,
    LinkChanged,
    LinkStatus,
    SequenceGap,
    ShoeInfo,
    Signal,
)
from shoe_ctl.input_spec import SPECS, STOP_REFUSAL, stop_refusal
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import full_deck

PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}
INFO = ShoeInfo(1, "fw", "S1", ("rfid",))
A = DealerAction
STREETS = ("3rd", "4th", "5th", "6th", "7th")
RESET = LinkChanged(LinkStatus.CONNECTED, "shoe S1 again", INFO, sequence_reset=True)  # a latched STOP


class Table:
    """A machine on a shoe link, fed as the link and a dealer would."""

    def __init__(self, rules: str = "tda", game: str = "stud", seats: tuple[int, ...] = (1, 2, 3, 4)) -> None:
        self.m = Dealing(PROFILES, await_counter_reset=True)
        self.m.start()
        self.deck = full_deck()
        self.seq = 0
        self.rules, self.game, self.seats = rules, game, list(seats)
        self.stub_steps: list[DealerAction] = []
        self.burns: list[object] = []

    def send(self, ev: object) -> list[object]:
        return self.m.handle(ev)

    def connect(self) -> None:
        self.send(LinkChanged(LinkStatus.CONNECTED, "shoe S1", INFO))

    def new_hand(self, **args: object) -> list[object]:
        cmds = self.send(DealerInput(A.NEW_HAND, args={"seats": self.seats, "rules": self.rules,
                                                       "game": self.game, **args}))
        if self.m.link.wait:
            cmds += self.send(CounterReset(1))
        return cmds

    def card(self) -> list[object]:
        self.seq += 1
        card = self.deck.pop()
        if self.m.instruction().signal is Signal.BURN:
            self.burns.append(card)
        return self.send(CardRead(self.seq, card, "rfid", self.seq, 1))

    def stub(self, signal: Signal) -> None:
        """The short-stub step on screen (scramble, then cut), refused under a STOP first."""
        self.send(RESET)
        action = A.SCRAMBLE_DONE if signal is Signal.SCRAMBLE else A.CUT_DONE
        before = self.m.state
        [why] = refusals(self.send(DealerInput(action)))
        assert STOP_REFUSAL in why and self.m.state == before
        self.send(DealerInput(A.ACK_ALERT))
        assert refusals(self.send(DealerInput(action))) == [] and self.m.state != before
        self.stub_steps.append(action)
        if action is A.SCRAMBLE_DONE:  # the burns go into the new stub
            self.deck[:0], self.burns = self.burns, []

    def to_betting(self, street: str) -> None:
        """Deal (and bet through) the streets before ``street``, then deal ``street``."""
        for _ in range(200):
            ins = self.m.instruction()
            if ins.signal is Signal.BETTING and ins.street == street:
                return
            if ins.signal in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY):
                self.card()
            elif ins.signal is Signal.BETTING:
                self.send(DealerInput(A.BETTING_COMPLETE))
            elif ins.signal in (Signal.SCRAMBLE, Signal.CUT):
                self.stub(ins.signal)
            else:
                raise AssertionError(f"unexpected instruction on the way to {street}: {ins}")
        raise AssertionError(f"never reached the betting on {street}")


def refusals(cmds: list[object]) -> list[str]:
    return [c.message for c in cmds if isinstance(c, Alert) and c.code == "input-wrong-time"]


@pytest.mark.parametrize("rules", ["tda", "house"])
@pytest.mark.parametrize("street", STREETS)
def test_betting_complete_is_refused_on_every_street_while_a_stop_is_up(rules: str, street: str) -> None:
    t = Table(rules)
    t.connect()
    t.new_hand()
    t.to_betting(street)
    t.send(RESET)
    before = t.m.state
    cmds = t.send(DealerInput(A.BETTING_COMPLETE))
    [why] = refusals(cmds)
    assert f"{STOP_REFUSAL} (shoe-sequence-reset)" in why
    assert t.m.state == before and t.m.instruction().signal is Signal.STOP
    t.send(DealerInput(A.ACK_ALERT, args={"code": "shoe-sequence-reset"}))
    assert refusals(t.send(DealerInput(A.BETTING_COMPLETE))) == []
    assert t.m.state != before


@pytest.mark.parametrize("rules", ["tda", "house"])
@pytest.mark.parametrize(("game", "seats"), [("stud", (1, 2)), ("stud8", (1, 2, 3, 4, 5, 6, 7, 8)),
                                             ("razz", (2, 5, 7))])
def test_hand_complete_and_the_next_hand_wait_for_the_stop_at_the_showdown(rules: str, game: str,
                                                                           seats: tuple[int, ...]) -> None:
    t = Table(rules, game, seats)
    t.connect()
    t.new_hand()
    t.to_betting("7th")
    t.send(DealerInput(A.BETTING_COMPLETE))
    assert t.m.state == "hand_showdown"
    if len(seats) == 8:  # the short stub on 7th: the scramble and the cut waited for their stops
        assert t.stub_steps == [A.SCRAMBLE_DONE, A.CUT_DONE]
    t.send(RESET)
    [why] = refusals(t.send(DealerInput(A.HAND_COMPLETE)))
    assert STOP_REFUSAL in why and t.m.state == "hand_showdown"
    # what the hand's record holds does not move under the stop either: a show still may
    assert refusals(t.send(DealerInput(A.SHOW, seats[0]))) == []
    t.send(DealerInput(A.ACK_ALERT))
    assert refusals(t.send(DealerInput(A.HAND_COMPLETE))) == [] and t.m.state == "idle"


@pytest.mark.parametrize("street", STREETS[:4])
def test_the_input_a_stop_asks_for_is_taken_under_it(street: str) -> None:
    """A card read during the betting: ``card-not-expected`` asks for *premature done* (the next
    street's burn came early), which the STOP lets through; *betting complete* it does not."""
    t = Table("house")
    t.connect()
    t.new_hand()
    t.to_betting(street)
    t.card()
    assert any(a["code"] == "card-not-expected" and a["latched"] for a in t.m.alerts)
    assert refusals(t.send(DealerInput(A.BETTING_COMPLETE)))
    cmds = t.send(DealerInput(A.PREMATURE_DONE))
    assert refusals(cmds) == []
    assert [c.code for c in cmds if isinstance(c, Alert)], "the premature cards were ruled"


def test_a_sequence_gap_holds_every_progress_input_until_its_count_even_after_its_acknowledgement() -> None:
    t = Table()
    t.connect()
    t.new_hand()
    t.to_betting("4th")
    t.send(SequenceGap(t.seq + 1, t.seq + 2))
    t.send(DealerInput(A.ACK_ALERT))
    [why] = refusals(t.send(DealerInput(A.BETTING_COMPLETE)))
    assert "sequence-gap" in why and t.m.state == "hand_fourth_betting"
    assert refusals(t.send(DealerInput(A.GAP_CARDS, args={"cards": 0}))) == []
    assert refusals(t.send(DealerInput(A.BETTING_COMPLETE))) == [] and t.m.state != "hand_fourth_betting"


def test_no_hand_starts_on_a_shoe_not_yet_answered() -> None:
    t = Table()  # the link has not said connected: the shoe is being challenged
    assert t.m.instruction().text.startswith("Connecting to the shoe")
    [why] = refusals(t.new_hand())
    assert "has not answered yet" in why and t.m.hand is None
    t.connect()
    assert refusals(t.new_hand()) == [] and t.m.hand is not None


@pytest.mark.parametrize("code", ["forged", "auth-failed", "replay", "unpaired"])
def test_no_hand_starts_on_a_refused_shoe_not_even_on_the_floors_override(code: str) -> None:
    t = Table()
    t.connect()
    t.send(LinkChanged(LinkStatus.CONNECTED, "a frame failed authentication", INFO, refused=code))
    for args in ({}, {"override": True}):
        [why] = refusals(t.new_hand(**args))
        assert f"shoe-{code}" in why and t.m.hand is None
    t.send(DealerInput(A.ACK_ALERT))
    assert refusals(t.new_hand()) == [] and t.m.hand is not None


def test_the_rule_is_one_function_of_the_spec_for_every_input() -> None:
    """Every input that moves the hand on is refused under any STOP but the one asking for it;
    every other input passes it."""
    for action, spec in SPECS.items():
        why = stop_refusal(action, {}, ["duplicate-card"])
        assert (why is not None) == spec.progress, action
        for code in spec.asked_by:
            assert stop_refusal(action, {}, ["duplicate-card", code]) is None
        assert stop_refusal(action, {}, []) is None
    assert stop_refusal(A.NEW_HAND, {"override": True}, ["duplicate-card"]) is None
