"""The dealing machine when the shoe is not heard, after a sequence gap, with a latched STOP at a
new hand, and under a flood of refused inputs (docs/service.md *The signals*,
docs/irregularities.md *Sequence gap*, docs/display.md *Alerts*)."""

from __future__ import annotations

from shoe_ctl.config import load_profile
from shoe_ctl.events import (
    Alert,
    CardRead,
    DealerAction,
    DealerInput,
    Instruction,
    LinkChanged,
    LinkStatus,
    SequenceGap,
    ShoeInfo,
    Signal,
)
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.progress import MAX_INFO_ALERTS
from shoe_ctl.rules.cards import full_deck

PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}
INFO = ShoeInfo(1, "fw", "S1", ("rfid",))
A = DealerAction


class Shoe:
    """Feeds a machine on a shoe link (``await_counter_reset``) as the link and a dealer would."""

    def __init__(self) -> None:
        self.m = Dealing(PROFILES, await_counter_reset=True)
        self.m.start()
        self.deck = full_deck()
        self.seq = 0
        self.out: list[object] = []

    def send(self, ev: object) -> list[object]:
        cmds = self.m.handle(ev)
        self.out += cmds
        return cmds

    def connect(self) -> None:
        self.send(LinkChanged(LinkStatus.CONNECTED, "shoe S1", INFO))

    def new_hand(self, **args: object) -> list[object]:
        cmds = self.send(DealerInput(A.NEW_HAND, args={"seats": [1, 2, 3, 4], **args}))
        if self.m.link.wait:
            from shoe_ctl.events import CounterReset
            self.send(CounterReset(1))
        return cmds

    def card(self) -> list[object]:
        self.seq += 1
        return self.send(CardRead(self.seq, self.deck.pop(), "rfid", self.seq, 1))

    def ins(self) -> Instruction:
        return self.m.instruction()


def codes(cmds: list[object]) -> list[str]:
    return [c.code for c in cmds if isinstance(c, Alert)]


def test_no_shoe_at_start_is_shown_and_refuses_a_new_hand() -> None:
    t = Shoe()
    assert t.ins().signal is Signal.IDLE and t.ins().text.startswith("Connecting to the shoe")
    t.send(LinkChanged(LinkStatus.DISCONNECTED, "cannot open /dev/ttyUSB0: no such file"))
    assert t.ins().signal is Signal.SHOE_FAULT and t.ins().text.startswith("Shoe not connected")
    cmds = t.new_hand()
    assert codes(cmds) == ["input-wrong-time"] and "not connected: check the cable" in cmds[0].message
    assert t.m.hand is None and t.ins().signal is Signal.SHOE_FAULT
    t.connect()
    assert t.ins().signal is Signal.IDLE
    t.new_hand()
    assert t.m.hand is not None and t.ins().signal is Signal.DEAL


def test_a_degraded_link_never_says_deal_and_the_same_card_comes_back() -> None:
    t = Shoe()
    t.connect()
    t.new_hand()
    t.card()
    before = t.ins()
    assert before.signal is Signal.DEAL
    cmds = t.send(LinkChanged(LinkStatus.DEGRADED, "no frame from the shoe for 3.0 s"))
    assert codes(cmds) == ["shoe-link-degraded"]
    signals = [c.signal for c in cmds if isinstance(c, Instruction)]
    assert signals == [Signal.DEGRADED]
    assert t.m.public_state()["instruction"]["signal"] == "degraded"
    t.send(LinkChanged(LinkStatus.CONNECTED, "link recovered", INFO))
    assert t.ins() == before  # the same card, the same number
    # idle: a degraded link holds the next hand back too
    t.m.machine.set_state("idle", model=t.m)
    t.send(LinkChanged(LinkStatus.DEGRADED, "noisy line"))
    assert t.ins().signal is Signal.DEGRADED


def test_a_latched_stop_blocks_a_new_hand_until_acknowledged_or_overridden() -> None:
    t = Shoe()
    t.connect()
    t.card()  # a card with no hand running: card-not-expected, latched
    assert t.ins().signal is Signal.STOP
    cmds = t.new_hand()
    assert codes(cmds) == ["input-wrong-time"] and "a STOP alert is up (card-not-expected)" in cmds[0].message
    assert t.m.hand is None
    # the floor overrides: the hand starts, the stop is cleared, the override is an alert (journaled)
    cmds = t.new_hand(override=True)
    assert "floor-override" in codes(cmds)
    assert t.m.hand is not None and t.ins().signal is Signal.DEAL
    assert not any(a["latched"] for a in t.m.alerts)
    # an unacknowledged stop left from a hand holds the next one as well
    t2 = Shoe()
    t2.connect()
    t2.send(SequenceGap(3, 5))  # no hand: a latched alert only
    assert t2.ins().signal is Signal.STOP and "before the next hand" in t2.ins().text
    assert codes(t2.new_hand()) == ["input-wrong-time"]
    t2.send(DealerInput(A.ACK_ALERT))
    t2.new_hand()
    assert t2.m.hand is not None


def test_a_sequence_gap_stops_the_hand_until_the_cards_found_are_reported() -> None:
    t = Shoe()
    t.connect()
    t.new_hand()
    t.card()
    t.card()
    cmds = t.send(SequenceGap(3, 5))
    assert codes(cmds) == ["sequence-gap"]
    ins = t.ins()
    assert ins.signal is Signal.STOP and ins.card_no == 3
    assert ins.cards[:2] == ("seat 3 down", "seat 4 down")
    t.send(DealerInput(A.ACK_ALERT))
    assert t.ins().signal is Signal.STOP  # the acknowledgement alone does not ask for the card again
    # more cards than the next places hold: the floor decides
    cmds = t.send(DealerInput(A.GAP_CARDS, args={"cards": 30}))
    assert codes(cmds) == ["input-invalid"] and t.m.link.gap is not None
    cmds = t.send(DealerInput(A.GAP_CARDS, args={"cards": 2}))
    assert codes(cmds) == ["sequence-gap-closed"] and t.m.link.gap is None
    hand = t.m.hand
    assert hand is not None and hand.pulled == 4 and hand.stub_count() == 48
    assert [len(s.down) for s in hand.seats] == [1, 1, 1, 1] and hand.seats[2].down == [None]
    ins = t.ins()
    assert ins.signal is Signal.DEAL and ins.seat == 1 and ins.card_no == 5
    assert not any(a["code"] == "sequence-gap" for a in t.m.alerts)


def test_a_gap_declared_burned_or_dead_and_a_card_pulled_during_the_gap() -> None:
    t = Shoe()
    t.connect()
    t.new_hand()
    t.card()
    t.send(SequenceGap(2, 3))
    cmds = t.card()  # pulled while the gap is open: held aside, the dealer stopped
    assert codes(cmds) == ["card-not-expected"]
    t.send(DealerInput(A.ACK_ALERT, args={"code": "card-not-expected"}))
    t.send(DealerInput(A.GAP_CARDS, args={"cards": 1, "burned": True}))
    hand = t.m.hand
    assert hand is not None and hand.stub_count() == 49 and hand.pulled == 3
    assert [len(s.down) for s in hand.seats] == [1, 0, 0, 0]
    assert t.ins().signal is Signal.DEAL and t.ins().seat == 2
    # the floor declares the next hand dead after a gap: the misdeal input ends it
    t.send(SequenceGap(4, 6))
    t.send(DealerInput(A.MISDEAL, args={"confirm": True}))
    assert t.m.state == "idle"
    refused = t.send(DealerInput(A.GAP_CARDS, args={"cards": 0}))
    assert codes(refused) == ["input-wrong-time"]


def test_refused_inputs_are_merged_and_information_alerts_capped() -> None:
    t = Shoe()
    t.connect()
    t.new_hand()
    t.m.display = True
    for _ in range(3000):
        t.send(DealerInput(A.BETTING_COMPLETE))
    refused = [a for a in t.m.alerts if a["code"] == "input-wrong-time"]
    assert len(refused) == 1 and refused[0]["count"] == 3000
    assert sum(1 for c in t.out if isinstance(c, Alert) and c.code == "input-wrong-time") == 3000  # each journaled
    for seat in range(1, 9):
        for action in (A.FOLD, A.ALL_IN, A.SHOW):
            t.send(DealerInput(action, seat))
    assert sum(1 for a in t.m.alerts if not a["latched"]) <= MAX_INFO_ALERTS
    # a latched alert is never dropped by the cap
    t.card()
    t.send(SequenceGap(9, 10))
    for seat in range(1, 9):
        t.send(DealerInput(A.FOLD, seat, {"x": seat}))
    assert any(a["code"] == "sequence-gap" for a in t.m.alerts)
