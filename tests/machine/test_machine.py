"""The dealing state machine on its own: every card read to its role or an alert, dealer inputs at
the right and the wrong time, the hole-card embargo, the attention state, timers."""

from __future__ import annotations

import json
import re

import pytest
from rule_profiles import PROFILES

from shoe_ctl.events import (
    Alert,
    CardRead,
    DealerAction,
    DealerInput,
    DisplayUpdate,
    Instruction,
    LinkChanged,
    LinkStatus,
    SequenceGap,
    ShoeCommand,
    Signal,
    TimerFired,
)
from shoe_ctl.machine import Dealing, layout
from shoe_ctl.machine.deck_order import RANKS_CODE
from shoe_ctl.rules.cards import Card, full_deck


class Table:
    """Feeds a Dealing machine like a shoe and a dealer would."""

    def __init__(self, rules: str = "tda", seats: tuple[int, ...] = (1, 2, 3, 4), deck: list[Card] | None = None):
        self.m = Dealing(PROFILES, default_rules=rules)
        self.deck = list(deck) if deck is not None else full_deck()  # pops As, Ks, ... 2c last
        self.seq = 0
        self.dispense = 0
        self.out: list[object] = []
        self.m.start()
        self.send(DealerInput(DealerAction.NEW_HAND, args={"seats": list(seats)}))

    def send(self, ev: object) -> list[object]:
        cmds = self.m.handle(ev)
        self.out.extend(cmds)
        return cmds

    def card(self, card: Card | None = None, *, skip: int = 0) -> list[object]:
        self.seq += 1
        self.dispense += 1 + skip
        c = card if card is not None else self.deck.pop()
        if card is not None and card in self.deck:
            self.deck.remove(card)
        return self.send(CardRead(self.seq, c, "rfid", self.dispense))

    def deal_street(self) -> None:
        while self.m.instruction().signal in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY):
            self.card()

    def alerts(self, cmds: list[object] | None = None) -> list[str]:
        """The codes of the alerts raised, but the ranks check's: the default deck, dealt from the
        end of the code order (As Ah Ad Ac Ks ...), is sorted by rank (tests/machine/test_deck_order.py)."""
        return [c.code for c in (self.out if cmds is None else cmds) if isinstance(c, Alert) and c.code != RANKS_CODE]


def test_machine_configuration_and_state_names() -> None:
    """send_event, queued, no auto transitions, one on_exception, no underscore in state names."""
    m = Dealing(PROFILES)
    mach = m.machine
    assert mach.send_event and mach.has_queue and not mach.auto_transitions
    assert len(mach.on_exception) == 1
    names = []

    def walk(defs: list, prefix: str = "") -> None:
        for d in defs:
            name = d if isinstance(d, str) else d["name"]
            assert "_" not in name
            names.append(prefix + name)
            if isinstance(d, dict) and "children" in d:
                walk(d["children"], prefix + name + "_")

    walk(layout.states())
    assert "hand_seventh_scramble" in names and "hand_fourth_cut" in names and "hand_showdown" in names
    assert not hasattr(m, "to_idle")


def test_third_street_order_and_bring_in() -> None:
    """3rd street: no burn, down to each, second down to each, up to each; then betting with
    the bring-in (lowest upcard, stud) named."""
    t = Table(seats=(2, 4, 6))
    words = []
    while t.m.instruction().signal is Signal.DEAL:
        ins = t.m.instruction()
        words.append((ins.seat, ins.face))
        if len(words) == 7:
            t.card(Card.parse("2c"))  # seat 2's door card: the bring-in
        else:
            t.card()
    assert words == [(2, "down"), (4, "down"), (6, "down")] * 2 + [(2, "up"), (4, "up"), (6, "up")]
    assert t.m.state == "hand_third_betting"
    ins = t.m.instruction()
    assert ins.signal is Signal.BETTING and ins.seat == 2 and "bring-in seat 2" in ins.text
    state = t.m.public_state()
    assert [s["bring_in"] for s in state["seats"]] == [True, False, False]
    assert state["stub"]["count"] == 52 - 9


def test_every_card_assigned_and_streets_follow() -> None:
    t = Table()
    t.deal_street()
    t.send(DealerInput(DealerAction.BETTING_COMPLETE))
    assert t.m.state == "hand_fourth_deal"
    assert t.m.instruction().signal is Signal.BURN
    t.deal_street()
    hand = t.m.hand
    assert hand is not None
    assert [len(s.up) for s in hand.seats] == [2, 2, 2, 2]
    assert len(hand.burns["4th"]) == 1
    assert [r.role for r in t.m.reads[-5:]] == ["burn", "up", "up", "up", "up"]
    assert t.alerts() == []


def test_wrong_time_input_alerts_and_changes_nothing() -> None:
    t = Table()
    before = (t.m.state, t.m.p.step_i, json.dumps(t.m.public_state()["seats"]))
    for ev in (DealerInput(DealerAction.BETTING_COMPLETE), DealerInput(DealerAction.FOLD, 3),
               DealerInput(DealerAction.HAND_COMPLETE), DealerInput(DealerAction.CUT_DONE),
               DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]})):
        cmds = t.send(ev)
        assert t.alerts(cmds) == ["input-wrong-time"]
    assert (t.m.state, t.m.p.step_i, json.dumps(t.m.public_state()["seats"])) == before


def test_duplicate_card_marks_both_reads_suspect_and_stops() -> None:
    t = Table()
    t.card(Card.parse("Ah"))
    t.card()
    cmds = t.card(Card.parse("Ah"))
    assert "duplicate-card" in t.alerts(cmds)
    assert t.m.reads[0].suspect and t.m.reads[2].suspect and not t.m.reads[1].suspect
    ins = [c for c in cmds if isinstance(c, Instruction)]
    assert ins and ins[-1].signal is Signal.STOP
    # The card is still counted where it was dealt (the stub stays right).
    assert t.m.hand is not None and t.m.hand.stub_count() == 49
    # Acknowledged: dealing resumes at the next step.
    cmds = t.send(DealerInput(DealerAction.ACK_ALERT))
    assert [c.signal for c in cmds if isinstance(c, Instruction)] == [Signal.DEAL]


def test_card_when_none_expected_is_counted_and_alerted() -> None:
    t = Table()
    t.deal_street()
    assert t.m.state == "hand_third_betting"
    cmds = t.card()
    assert "card-not-expected" in t.alerts(cmds)
    assert t.m.hand is not None and t.m.hand.stub_count() == 52 - 13
    assert t.m.reads[-1].role == "stray"
    # Idle: a card with no hand at all.
    m = Dealing(PROFILES)
    cmds = m.handle(CardRead(1, Card.parse("2c"), "rfid", 1))
    assert [c.code for c in cmds if isinstance(c, Alert)] == ["card-not-expected"]


def test_cards_in_a_betting_round_reported_premature_rp_5_d() -> None:
    """Cards read in a betting round stop the dealer; reported as premature (RP-5-D) they become
    the next street's burn and cards, go back into the stub (the burn stays) and the stub is
    reshuffled; the street is then dealt without a second burn."""
    t = Table(seats=(1, 2))
    t.deal_street()
    burn = t.card()
    seat1 = t.card()
    assert t.alerts(burn + seat1) == ["card-not-expected", "card-not-expected"]
    hand = t.m.hand
    assert hand is not None and hand.stub_count() == 52 - 8
    cmds = t.send(DealerInput(DealerAction.PREMATURE_DONE))
    assert t.alerts(cmds) == ["RP-5-D"] and t.m.state == "hand_third_reshuffle"
    assert hand.stub_count() == 52 - 7 and len(hand.burns["4th"]) == 1 and hand.set_aside == []
    assert [len(s.up) for s in hand.seats] == [1, 1]
    ins = t.m.instruction()
    assert ins.signal is Signal.SCRAMBLE and ins.cards == ("stub", "premature 4th")
    cmds = t.send(DealerInput(DealerAction.SCRAMBLE_DONE))
    assert ShoeCommand("reset-counter") in cmds and t.m.state == "hand_third_betting"
    t.send(DealerInput(DealerAction.BETTING_COMPLETE))
    assert [i.signal for i in [t.m.instruction()]] == [Signal.DEAL]  # no second burn


def test_dispense_gap_counts_the_missing_cards() -> None:
    t = Table()
    t.card()
    cmds = t.card(skip=2)  # two cards left unreported
    assert "dispense-gap" in t.alerts(cmds)
    assert t.m.p.step_i == 4
    assert t.m.hand is not None and t.m.hand.stub_count() == 48
    assert [r.card is None for r in t.m.reads] == [False, True, True, False]


def test_sequence_gap_and_unreadable_card() -> None:
    t = Table()
    assert t.alerts(t.send(SequenceGap(5, 9))) == ["sequence-gap"]
    t.send(DealerInput(DealerAction.ACK_ALERT))
    assert t.m.instruction().signal is Signal.STOP  # the gap stays open until the count closes it
    t.send(DealerInput(DealerAction.GAP_CARDS, args={"cards": 0}))
    t.seq += 1
    t.dispense += 1
    cmds = t.send(CardRead(t.seq, None, "none", t.dispense))
    assert t.alerts(cmds) == ["unreadable-card"]
    assert t.m.hand is not None and t.m.hand.seats[0].down == [None]


def test_shoe_disconnected_mid_hand() -> None:
    t = Table()
    t.send(LinkChanged(LinkStatus.CONNECTED))
    t.card()
    cmds = t.send(LinkChanged(LinkStatus.DISCONNECTED, "EIO"))
    assert t.alerts(cmds) == ["shoe-disconnected"]
    assert t.m.instruction().signal is Signal.SHOE_FAULT
    cmds = t.send(LinkChanged(LinkStatus.CONNECTED))
    ins = [c for c in cmds if isinstance(c, Instruction)]
    assert ins[-1].signal is Signal.DEAL and ins[-1].seat == 2


def _to_seventh(t: Table, folds: list[int]) -> None:
    t.deal_street()
    for s in folds:
        t.send(DealerInput(DealerAction.FOLD, s))
    t.send(DealerInput(DealerAction.BETTING_COMPLETE))
    for _ in range(3):
        t.deal_street()
        t.send(DealerInput(DealerAction.BETTING_COMPLETE))


def test_scramble_then_cards_checked_against_the_new_stub() -> None:
    """TDA RP-10-H-A with 7 seats: the stub is scrambled with the 4th-6th burns; after the
    reload every card must come from that new stub."""
    t = Table(seats=(1, 2, 3, 4, 5, 6, 7))
    _to_seventh(t, [])
    assert t.m.state == "hand_seventh_scramble"
    ins = t.m.instruction()
    assert ins.signal is Signal.SCRAMBLE and ins.cards == ("stub", "burn 4th", "burn 5th", "burn 6th")
    assert t.alerts(t.send(DealerInput(DealerAction.CUT_DONE))) == ["input-wrong-time"]
    t.send(DealerInput(DealerAction.SCRAMBLE_DONE))
    assert t.m.instruction().signal is Signal.CUT
    cmds = t.send(DealerInput(DealerAction.CUT_DONE))
    assert ShoeCommand("reset-counter") in cmds
    assert t.m.state == "hand_seventh_reload"
    ins = t.m.instruction()
    assert ins.signal is Signal.BURN and ins.text.startswith("Load the new stub into the shoe")
    assert t.alerts(t.send(DealerInput(DealerAction.CUT_DONE))) == ["input-wrong-time"]
    hand = t.m.hand
    assert hand is not None and hand.new_stub is not None and len(hand.new_stub) == 10
    burn = sorted(hand.new_stub)[0]
    t.dispense = 0
    assert t.alerts(t.card(burn)) == []  # a gathered burn may come out again
    assert t.m.state == "hand_seventh_deal"  # the first card out of the new stub: reloaded
    outsider = hand.seats[0].up[0]
    assert outsider is not None
    cmds = t.card(outsider)
    assert "card-not-in-stub" in t.alerts(cmds)
    assert t.m.reads[-1].suspect


def test_embargo_no_downcard_before_showdown_and_mucks_stay_hidden() -> None:
    t = Table(seats=(1, 2, 3))
    downs: set[str] = set()
    while t.m.state != "hand_showdown":
        sig = t.m.instruction().signal
        if sig is Signal.BETTING:
            t.send(DealerInput(DealerAction.BETTING_COMPLETE))
        else:
            t.card()
    assert t.m.hand is not None
    for s in t.m.hand.seats:
        downs.update(str(c) for c in s.down)
    before = [c for c in t.out if isinstance(c, DisplayUpdate)][:-1]
    for upd in before:
        text = json.dumps(upd.state)
        assert all("down" not in seat for seat in upd.state["seats"])
        assert not any(re.search(rf'"{d}"', text) for d in downs)
    for c in t.out:
        if isinstance(c, (Instruction, Alert)):
            assert not any(d in (c.text if isinstance(c, Instruction) else c.message) for d in downs)
    assert all("down" not in seat for seat in t.m.public_state()["seats"])  # nothing tabled yet
    t.send(DealerInput(DealerAction.SHOW, 1))
    t.send(DealerInput(DealerAction.FOLD, 2))  # seat 2 mucks at showdown
    assert t.alerts(t.send(DealerInput(DealerAction.SHOW, 2))) == ["input-wrong-time"]
    seats = t.m.public_state()["seats"]
    assert "down" in seats[0] and "down" not in seats[1] and "down" not in seats[2]
    assert len(seats[0]["down"]) == 3
    t.send(DealerInput(DealerAction.HAND_COMPLETE))
    assert t.m.state == "idle" and t.m.instruction().signal is Signal.IDLE


def test_all_fold_to_one_ends_the_hand_without_showdown() -> None:
    t = Table(seats=(1, 2, 3))
    t.deal_street()
    t.send(DealerInput(DealerAction.FOLD, 1))
    t.send(DealerInput(DealerAction.FOLD, 3))
    assert t.m.state == "hand_uncontested"
    ins = t.m.instruction()
    assert ins.signal is Signal.SHOWDOWN and ins.seat == 2
    assert all("down" not in s for s in t.m.public_state()["seats"])


def test_all_in_players_have_no_betting_round_but_confirm_each_street() -> None:
    """With fewer than two players able to bet, a dealt street has no betting round: nobody acts
    first, and the dealer confirms the street complete (one input) before the next card."""
    t = Table(seats=(1, 2))
    t.deal_street()
    t.send(DealerInput(DealerAction.ALL_IN, 1))
    t.send(DealerInput(DealerAction.BETTING_COMPLETE))
    signals = []
    confirms = 0
    while t.m.state != "hand_showdown":
        ins = t.m.instruction()
        signals.append(ins.signal)
        if ins.signal is Signal.BETTING:
            assert "confirm the street complete" in ins.text and t.m.p.first_idx is None
            confirms += 1
            t.send(DealerInput(DealerAction.BETTING_COMPLETE))
        else:
            t.card()
    assert signals.count(Signal.BURN) == 4 and confirms == 4
    assert set(t.m.p.first_by_street) == {"3rd"}


def test_internal_fault_goes_to_attention_and_ack_resumes(monkeypatch: pytest.MonkeyPatch) -> None:
    import shoe_ctl.machine.progress as progress

    t = Table()
    t.deal_street()

    def broken(*_a: object) -> None:
        raise RuntimeError("plan failed")

    monkeypatch.setattr(progress, "plan_street", broken)
    hand_before = t.m.hand.copy() if t.m.hand is not None else None
    cmds = t.send(DealerInput(DealerAction.BETTING_COMPLETE))
    assert t.m.state == "attention"
    assert "machine-fault" in t.alerts(cmds)
    assert t.m._fault_from == "hand_fourth_deal"  # where the failing callback left it
    assert t.m.hand == hand_before  # nothing dealt or recorded after the fault
    assert t.m.instruction().signal is Signal.STOP
    # Inputs other than an acknowledgement are refused while stopped.
    assert t.alerts(t.send(DealerInput(DealerAction.BETTING_COMPLETE))) == ["input-wrong-time"]
    monkeypatch.undo()
    t.send(DealerInput(DealerAction.ACK_ALERT))
    assert t.m.state == "hand_fourth_deal"
    assert t.m.instruction().signal is Signal.BURN  # 4th street planned now, dealt from its burn
    t.deal_street()
    assert t.m.state == "hand_fourth_betting"


def test_timer_of_a_left_state_is_ignored() -> None:
    t = Table()
    assert t.send(TimerFired("dealer-silent", "idle")) == []
    cmds = t.send(TimerFired("dealer-silent", t.m.state))
    assert t.alerts(cmds) == ["timer-dealer-silent"]


def test_timer_armed_before_the_state_was_left_and_entered_again_is_ignored() -> None:
    """A timer is tagged with the state entry it was armed in: idle left for a hand and entered
    again after a misdeal is a new entry, and the old timer raises nothing."""
    t = Table()
    armed = TimerFired("dealer-silent", t.m.state, t.m.entries)
    t.send(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    t.send(DealerInput(DealerAction.MISDEAL))
    assert t.m.state == "idle"
    assert t.alerts(t.send(armed)) == []
    again = TimerFired("dealer-silent", t.m.state, t.m.entries)
    assert t.alerts(t.send(again)) == ["timer-dealer-silent"]


def test_new_hand_with_bad_arguments_is_refused() -> None:
    m = Dealing(PROFILES)
    cmds = m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1]}))
    assert [c.code for c in cmds if isinstance(c, Alert)] == ["input-invalid"]
    cmds = m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2], "game": "holdem"}))
    assert [c.code for c in cmds if isinstance(c, Alert)] == ["input-invalid"]
    assert m.state == "idle"
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [3, 5, 7], "button": 5, "game": "razz"}))
    assert m.hand is not None and [s.seat for s in m.hand.seats] == [7, 3, 5]
    assert m.p.game.value == "razz"


def test_every_dealer_input_refreshes_the_display() -> None:
    t = Table(seats=(1, 2, 3))
    t.deal_street()
    cmds = t.send(DealerInput(DealerAction.FOLD, 3))
    updates = [c for c in cmds if isinstance(c, DisplayUpdate)]
    assert len(updates) == 1
    assert [s["status"] for s in updates[0].state["seats"]] == ["live", "live", "folded"]
    assert updates[0].state["seats"][2]["up"]  # a folded seat keeps its upcards until the hand ends
    cmds = t.send(DealerInput(DealerAction.ALL_IN, 2))
    assert [c for c in cmds if isinstance(c, DisplayUpdate)][0].state["seats"][1]["status"] == "all-in"


def test_commands_read_back_from_a_journal_change_nothing() -> None:
    t = Table()
    key = (t.m.state, t.m.p.step_i, len(t.m.alerts))
    assert t.send(Alert("duplicate-card", "from the journal")) == []
    assert t.send(Instruction(Signal.BURN, "from the journal")) == []
    assert (t.m.state, t.m.p.step_i, len(t.m.alerts)) == key


def test_last_card_exposed_on_seventh_rp_10_b_replaced_house_16_22_stands() -> None:
    """RP-10-B with betting action left: the exposed card goes out of play and the seat is dealt a
    replacement face down (the machine goes back from betting to deal). House 16.22/16.24: the
    card stands face up and is public from then on."""
    for rules, code in (("tda", "RP-10-B"), ("house", "house-16.22")):
        t = Table(rules=rules, seats=(1, 2))
        assert t.alerts(t.send(DealerInput(DealerAction.LAST_CARD_EXPOSED, 1))) == ["input-wrong-time"]
        _to_seventh(t, [])
        t.deal_street()
        assert t.m.state == "hand_seventh_betting"
        hand = t.m.hand
        assert hand is not None
        seventh = hand.seats[0].down[-1]
        stub = hand.stub_count()
        cmds = t.send(DealerInput(DealerAction.LAST_CARD_EXPOSED, 1))
        assert t.alerts(cmds) == [code]
        if rules == "tda":
            alert = next(c for c in cmds if isinstance(c, Alert))
            assert alert.moves == ("seat 1 up -> out",)
            assert t.m.state == "hand_seventh_deal" and hand.dead_cards == [seventh]
            ins = t.m.instruction()
            assert (ins.signal, ins.seat, ins.face) == (Signal.DEAL, 1, "down")
            t.card()
            assert t.m.state == "hand_seventh_betting" and hand.stub_count() == stub - 1
            assert len(hand.seats[0].down) == 3 and hand.seats[0].down[-1] != seventh
            assert str(seventh) not in json.dumps(t.m.public_state()["seats"])
        else:
            assert hand.seats[0].up[-1] == seventh and len(hand.seats[0].down) == 2
            assert t.m.public_state()["seats"][0]["up"][-1] == str(seventh)
            assert hand.stub_count() == stub


def test_shoe_fault_shows_until_cleared_or_acknowledged() -> None:
    from shoe_ctl.events import FaultKind, ShoeFault

    t = Table()
    cmds = t.send(ShoeFault(1, FaultKind.JAM))
    assert t.alerts(cmds) == ["shoe-jam"] and t.m.instruction().signal is Signal.SHOE_FAULT
    t.send(ShoeFault(2, FaultKind.JAM, cleared=True))
    assert t.m.instruction().signal is Signal.DEAL
    t.send(ShoeFault(3, FaultKind.COVER_OPEN))
    assert t.m.instruction().signal is Signal.SHOE_FAULT and "cover" in t.m.instruction().text
    t.send(DealerInput(DealerAction.ACK_ALERT, args={"code": "shoe-cover-open"}))
    assert t.m.instruction().signal is Signal.DEAL
    # A double pull does not stop the deal: both cards are read, counted and placed by the plan.
    cmds = t.send(ShoeFault(4, FaultKind.DOUBLE_PULL))
    assert t.alerts(cmds) == ["shoe-double-pull"] and t.m.instruction().signal is Signal.DEAL


def test_stub_reloaded_confirms_the_reload_or_the_cut_and_reload() -> None:
    for reports, states in (([DealerAction.CUT_DONE, DealerAction.STUB_RELOADED],
                             ["hand_seventh_reload", "hand_seventh_deal"]),
                            ([DealerAction.STUB_RELOADED], ["hand_seventh_deal"])):
        t = Table(seats=(1, 2, 3, 4, 5, 6, 7))
        _to_seventh(t, [])
        t.send(DealerInput(DealerAction.SCRAMBLE_DONE))
        seen = []
        for action in reports:
            t.send(DealerInput(action))
            seen.append(t.m.state)
        assert seen == states
        assert t.m.instruction().signal is Signal.BURN and t.alerts() == ["RP-10-H-A"]


def test_unread_community_card_leaves_the_first_to_act_to_the_floor_house_16_20() -> None:
    """House 16.20 with eight players: the 7th-street community card leaves the shoe unreadable.
    The machine passes ``community_unknown`` to the rules core, so it names no first to act (the
    floor decides) where a wrong seat would otherwise be named, and says so; the public state
    marks it and no seat is shown as first to act."""
    from shoe_ctl.rules.games import first_to_act

    t = Table("house", seats=(1, 2, 3, 4, 5, 6, 7, 8))
    _to_seventh(t, [])
    assert t.m.state == "hand_seventh_scramble"
    t.send(DealerInput(DealerAction.SCRAMBLE_DONE))
    t.send(DealerInput(DealerAction.CUT_DONE))
    hand = t.m.hand
    assert hand is not None and hand.new_stub is not None
    stub = sorted(hand.new_stub)
    t.dispense = 0
    t.card(stub[0])                                      # burn
    assert t.m.instruction().signal is Signal.COMMUNITY
    t.seq += 1
    t.dispense += 1
    t.send(CardRead(t.seq, None, "none", t.dispense))     # the community card, unreadable
    assert t.m.state == "hand_seventh_betting"
    assert hand.community_street == "7th" and hand.community is None
    in_hand = [s.in_hand for s in hand.seats]
    can = hand.can_act()
    boards = hand.boards()
    # Without the flag the rules core would name a seat from the boards alone; some identity of
    # the unread card changes who acts first, so the honest answer is "unknown".
    named = first_to_act(t.m.p.game, boards, in_hand, can, t.m.p.profile.tie, None)
    assert named is not None
    assert first_to_act(t.m.p.game, boards, in_hand, can, t.m.p.profile.tie, None, community_unknown=True) is None
    assert t.m.p.first_idx is None
    ins = t.m.instruction()
    assert ins.signal is Signal.BETTING and ins.seat is None
    assert "floor decides" in ins.text and "house 16.20" in ins.text
    state = t.m.public_state()
    assert state["first_to_act_unknown"] is True
    assert not any(s["first_to_act"] for s in state["seats"])
    assert state["community"] == "??"


def test_public_state_marks_absent_seats_no_bet_seats_and_alert_moves() -> None:
    """New public keys (beyond the contract's): a seat reported absent during the initial deal is
    ``absent`` until ruled on; a seat whose premature final downcard merged and stands may not
    bet (house 16.17, ``no_bet``); a ruling's alert lists its card moves."""
    t = Table("house")
    t.card()
    t.send(DealerInput(DealerAction.ABSENT_PLAYER, 2))
    seats = t.m.public_state()["seats"]
    assert [s["absent"] for s in seats] == [False, True, False, False]
    assert not any(s["no_bet"] for s in seats)
    t.deal_street()  # house 16.11: the empty seat is dealt to until the action reaches it
    t.send(DealerInput(DealerAction.BETTING_COMPLETE))
    for _ in range(3):
        t.deal_street()
        if t.m.p.street == "6th":
            break
        t.send(DealerInput(DealerAction.BETTING_COMPLETE))
    assert t.m.state == "hand_sixth_betting"
    t.card()  # the 7th-street burn and seat 1's final downcard, dealt too soon
    t.card()
    cmds = t.send(DealerInput(DealerAction.PREMATURE_DONE, args={"merged": [1]}))
    alert = next(c for c in cmds if isinstance(c, Alert) and c.code == "house-16.16")
    state = t.m.public_state()
    listed = next(a for a in state["alerts"] if a["code"] == "house-16.16")
    assert listed["moves"] == list(alert.moves) == ["burn 7th -> set-aside"]
    assert [s["no_bet"] for s in state["seats"]] == [True, False, False, False]
    assert all(isinstance(a["moves"], list) for a in state["alerts"])


def test_forecast_is_null_once_seventh_is_dealt() -> None:
    """RP-10-H-A with 7 seats: 7th is forecast short until its cards are out; during 7th-street
    betting (no fold yet) nothing is left to deal, so the public state's forecast is null."""
    t = Table(seats=(1, 2, 3, 4, 5, 6, 7))
    _to_seventh(t, [])
    assert t.m.state == "hand_seventh_scramble"
    assert t.m.public_state()["stub"]["forecast"] == "7th"
    t.send(DealerInput(DealerAction.SCRAMBLE_DONE))
    t.send(DealerInput(DealerAction.CUT_DONE))
    hand = t.m.hand
    assert hand is not None and hand.new_stub is not None
    t.deck = sorted(hand.new_stub, reverse=True)
    t.dispense = 0
    t.deal_street()
    assert t.m.state == "hand_seventh_betting"
    assert t.m.public_state()["stub"]["forecast"] is None


def test_a_refused_shoe_is_a_latched_alert_and_the_auth_mode_is_in_the_state() -> None:
    """an unpaired, swapped or forged shoe is a latched alert (docs/security.md)."""
    from shoe_ctl.events import LinkChanged, LinkStatus

    m = Table().m
    m.handle(LinkChanged(LinkStatus.CONNECTED, "shoe SH-1", auth="off"))
    assert m.public_state()["shoe"]["auth"] == "off"
    m.handle(LinkChanged(LinkStatus.CONNECTED, "HELLO from shoe 'SH-9', not the table's shoe", refused="unknown-shoe",
                         auth="hmac"))
    alert = m.alerts[-1]
    assert alert["code"] == "shoe-unknown-shoe" and alert["latched"] and "SH-9" in alert["message"]
    assert m.public_state()["shoe"]["auth"] == "hmac"
