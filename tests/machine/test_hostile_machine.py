"""The dealing machine against what a careless dealer or a bad shoe can do: each mistake is an
alert with a cause code, never an internal fault, and changes nothing it should not."""

from __future__ import annotations

import json
import re

import pytest
from rule_profiles import PROFILES

from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, ShoeCommand, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card, card_text, full_deck


class Table:
    """A Dealing machine fed like a shoe and a dealer would."""

    def __init__(self, rules: str = "tda", seats: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)) -> None:
        self.m = Dealing(PROFILES, default_rules=rules)
        self.m.start()
        self.deck = full_deck()
        self.seq = 0
        self.dispense = 0
        self.send(DealerInput(DealerAction.NEW_HAND, args={"seats": list(seats)}))

    def send(self, ev: object) -> list[str]:
        """Hand ``ev`` to the machine; the shoe's counter restarts when the machine says so."""
        out = self.m.handle(ev)
        if any(isinstance(c, ShoeCommand) and c.name == "reset-counter" for c in out):
            self.dispense = 0
        return [a.code for a in out if isinstance(a, Alert)]

    def card(self, card: Card | None = None) -> list[str]:
        self.seq += 1
        self.dispense += 1
        c = card if card is not None else self.deck.pop()
        return self.send(CardRead(self.seq, c, "rfid", self.dispense))

    def play_until(self, stop: Signal) -> None:
        """Deal as told and complete every betting round until the instruction is ``stop``."""
        while (sig := self.m.instruction().signal) is not stop:
            if sig in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY):
                self.card()
            elif sig is Signal.BETTING:
                self.send(DealerInput(DealerAction.BETTING_COMPLETE))
            else:
                raise AssertionError(f"unexpected {self.m.instruction()}")


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_cards_pulled_while_scrambling_past_the_stub_alert_not_fault(rules: str) -> None:
    """RP-10-H-C / house 16.20: the dealer loads the new stub and pulls before reporting the
    scramble. The stub's last card is a card not expected; the next ones (beyond the count) are
    ``card-beyond-stub`` — never the attention state — and each read is kept."""
    t = Table(rules)
    t.play_until(Signal.SCRAMBLE)
    assert t.m.hand is not None and t.m.hand.stub_count() == 1
    state = t.m.state
    assert "card-not-expected" in t.card()
    reads = len(t.m.reads)
    for _ in range(2):
        t.send(DealerInput(DealerAction.ACK_ALERT, args={"code": "card-not-expected"}))
        codes = t.card(full_deck()[0])  # the whole deck is out: any card is beyond the count
        assert "card-beyond-stub" in codes and "machine-fault" not in codes
        assert t.m.state == state
    assert len(t.m.reads) == reads + 2
    assert t.m.hand.stub_count() == 0


@pytest.mark.parametrize("args", [
    {"seats": [1, 2], "all_in": [9]},
    {"seats": [1, 2], "all_in": [3]},
    {"seats": [1, 2], "all_in": ["x"]},
    {"seats": [1, 2], "all_in": 5},
    {"seats": [0, 1]},
    {"seats": [2, 9]},
    {"seats": "12"},
    {"seats": [1.7, 2]},
    {"seats": [True, 2]},
    {"seats": [1, 2], "button": 9},
])
def test_new_hand_with_bad_seats_is_refused_and_changes_nothing(args: dict[str, object]) -> None:
    """A new hand naming seats that are not table seats 1..8 (or all-in seats not dealt in) is an
    ``input-invalid`` alert; the machine stays idle with no hand (was: a seat 0 dealt in, or an
    internal fault with the hand half set up)."""
    m = Dealing(PROFILES)
    m.start()
    before = m.public_state()
    out = m.handle(DealerInput(DealerAction.NEW_HAND, args=args))
    codes = [a.code for a in out if isinstance(a, Alert)]
    assert codes == ["input-invalid"]
    assert m.state == "idle" and m.hand is None and m.hand_no == 0
    after = m.public_state()
    assert after["seats"] == before["seats"] == [] and after["hand"] is None


def test_new_stub_pulled_out_during_the_cut_then_a_card_to_deal_is_beyond_the_stub() -> None:
    """RP-10-H-C: the new stub's cards come out while the machine waits for the cut (each a card
    not expected, counted out of the new stub); after the cut a card to deal is beyond the count:
    ``card-beyond-stub``, kept, no internal fault."""
    t = Table("tda")
    t.play_until(Signal.SCRAMBLE)
    t.send(DealerInput(DealerAction.SCRAMBLE_DONE))
    assert t.m.instruction().signal is Signal.CUT
    hand = t.m.hand
    assert hand is not None and hand.new_stub
    stub = sorted(c for c in hand.new_stub if c is not None)
    for c in stub:
        assert "card-not-expected" in t.card(c)
        t.send(DealerInput(DealerAction.ACK_ALERT))
    assert hand.stub_count() == 0
    t.send(DealerInput(DealerAction.CUT_DONE))
    reads = len(t.m.reads)
    codes = t.card(stub[0])
    assert "card-beyond-stub" in codes and "machine-fault" not in codes
    assert t.m.state != "attention" and len(t.m.reads) == reads + 1


@pytest.mark.parametrize("wait", ["scramble", "cut", "reload"])
@pytest.mark.parametrize(("rules", "action", "args", "code"), [
    ("house", DealerAction.ABSENT_PLAYER, {"action_reached": True}, "house-16.9"),
    ("house", DealerAction.CARD_COUNT, {"cards": 9}, "house-16.25"),
    ("tda", DealerAction.ABSENT_PLAYER, {"action_reached": True}, "RP-10-C"),
])
def test_seat_out_of_the_hand_while_the_stub_is_scrambled(
        wait: str, rules: str, action: DealerAction, args: dict[str, object], code: str) -> None:
    """Eight dealt, seats 7 and 8 fold on 3rd: 7th street scrambles (house 16.18, RP-10-H-A) and
    one seat's card is still to come from the new stub. That seat is ruled out of the hand (killed,
    Rule 30 / house 16.9; dead, house 16.25) while the dealer scrambles, cuts or reloads: its card
    is not dealt, everyone else gets theirs, and the hand reaches its 7th-street betting (was: an
    internal fault on every following card)."""
    t = Table(rules)
    while not (t.m.p.street == "7th" and t.m.state.endswith("scramble")):
        sig = t.m.instruction().signal
        if sig is Signal.BETTING:
            if t.m.p.street == "3rd":
                t.send(DealerInput(DealerAction.FOLD, seat=7))
                t.send(DealerInput(DealerAction.FOLD, seat=8))
            t.send(DealerInput(DealerAction.BETTING_COMPLETE))
        else:
            assert sig in (Signal.DEAL, Signal.BURN), t.m.instruction()
            t.card()
    hand = t.m.hand
    assert hand is not None and t.m.p.plan is not None
    if wait != "scramble":
        t.send(DealerInput(DealerAction.SCRAMBLE_DONE))
        t.deck = sorted(c for c in hand.new_stub if c is not None)
    if wait == "reload":
        t.send(DealerInput(DealerAction.CUT_DONE))
    assert t.m.state.endswith(wait)
    left = [hand.seats[s.seat_index].seat for s in t.m.p.plan.steps[t.m.p.step_i:]
            if s.kind == "deal" and s.seat_index is not None]
    assert left, "a seat's 7th card must still be due"
    out = left[0]
    assert code in t.send(DealerInput(action, seat=out, args=args))
    if wait == "scramble":
        t.send(DealerInput(DealerAction.SCRAMBLE_DONE))
        t.deck = sorted(c for c in hand.new_stub if c is not None)
    if wait != "reload":
        t.send(DealerInput(DealerAction.CUT_DONE))
    codes: list[str] = []
    while t.m.instruction().signal in (Signal.DEAL, Signal.BURN, Signal.STOP):
        if t.m.instruction().signal is Signal.STOP:
            codes += t.send(DealerInput(DealerAction.ACK_ALERT))
        else:
            codes += t.card()
    assert "machine-fault" not in codes and t.m.state != "attention"
    assert t.m.state in ("hand_seventh_betting", "showdown", "uncontested")
    for s in hand.seats:
        if s.seat == out:
            assert not s.in_hand and s.card_count == 6
        elif s.in_hand:
            assert s.card_count == 7, (s.seat, s.card_count)


def test_an_upcard_read_with_a_hole_cards_identity_is_not_shown() -> None:
    """Hole-card embargo: seat 2's door card is read with the identity of seat 1's hole card (a
    misread, or a card of a second deck). The duplicate is alerted, and the display shows that
    upcard as ``??``: never the hole card's identity before showdown (was: shown as seat 2's
    upcard). A card first read face up and later again as a hole card keeps showing."""
    t = Table("tda", seats=(1, 2, 3, 4))
    for _ in range(8):
        t.card()
    hand = t.m.hand
    assert hand is not None
    hole = hand.seats[0].down[0]
    assert hole is not None
    t.card()  # seat 1's door card
    assert "duplicate-card" in t.card(hole)  # seat 2's door card, read as seat 1's hole card
    state = t.m.public_state()
    seats = {s["seat"]: s for s in state["seats"]}
    assert seats[2]["up"] == ["??"] and seats[2]["down_count"] == 2
    text = json.dumps(state)
    assert re.search(rf"(?<![A-Za-z0-9]){card_text(hole)}(?![A-Za-z0-9])", text) is None
    door = hand.seats[0].up[0]
    assert door is not None and seats[1]["up"] == [card_text(door)]


@pytest.mark.parametrize("seat", [5, "3", None])
def test_a_muck_at_showdown_naming_a_seat_not_dealt_in_is_refused(seat: object) -> None:
    """At showdown a fold (muck) naming a seat that is not dealt in is an ``input-invalid``
    alert and changes nothing (was: an internal fault)."""
    t = Table("tda", seats=(1, 2, 3, 4))
    t.play_until(Signal.SHOWDOWN)
    before = t.m.public_state()["seats"]
    codes = t.send(DealerInput(DealerAction.FOLD, seat=seat))  # type: ignore[arg-type]
    assert codes == ["input-invalid"]
    assert t.m.state == "hand_showdown" and t.m.public_state()["seats"] == before


def _deal_to_fourth_betting(t: Table, chosen: dict[tuple[int, str, str], Card]) -> None:
    """Deal 3rd and 4th street as instructed, each card ``chosen`` for its (seat, street, face)
    if named there (its first downcard for a ``down`` key), else the next unused card; the
    latched alerts acknowledged; the machine stops in 4th street's betting round."""
    spare = [c for c in full_deck() if c not in chosen.values()]
    while t.m.state != "hand_fourth_betting":
        ins = t.m.instruction()
        if ins.signal is Signal.BETTING:
            t.send(DealerInput(DealerAction.BETTING_COMPLETE))
        elif ins.signal is Signal.STOP:
            t.send(DealerInput(DealerAction.ACK_ALERT, args={"code": t.m.alerts[0]["code"]}))
        else:
            key = (ins.seat or 0, ins.street or "", ins.face or "")
            card = chosen.pop(key) if key in chosen else spare.pop()
            t.card(card)
    while t.m.instruction().signal is Signal.STOP:
        t.send(DealerInput(DealerAction.ACK_ALERT, args={"code": t.m.alerts[0]["code"]}))


@pytest.mark.parametrize(("fourth", "pair_named"), [("9h", True), ("9c", False), ("2h", False)])
def test_the_open_pair_on_fourth_counts_a_masked_upcard_as_unknown(fourth: str, pair_named: bool) -> None:
    """RP-10-F on 4th street: seat 2 shows the 9d; its 4th street upcard the 9h is an open pair,
    named in the betting instruction. Read as the 9c, seat 1's hole card (a duplicate), that
    upcard is masked on the display (hole-card embargo) and counts as unknown: no open pair is
    named, though the cards recorded pair. A 2h pairs nothing."""
    t = Table("tda", seats=(1, 2, 3, 4))
    _deal_to_fourth_betting(t, {(1, "3rd", "down"): Card.parse("9c"), (2, "3rd", "up"): Card.parse("9d"),
                                (2, "4th", "up"): Card.parse(fourth)})
    hand = t.m.hand
    assert hand is not None and hand.seats[1].up == [Card.parse("9d"), Card.parse(fourth)]
    text = t.m.instruction().text
    assert text.startswith("Betting on 4th")
    assert ("open pair on 4th" in text.lower()) is pair_named, text
    seats = {s["seat"]: s for s in t.m.public_state()["seats"]}
    assert seats[2]["up"] == ["9d", "??" if fourth == "9c" else fourth]


@pytest.mark.parametrize("rules", ["tda", "house"])
@pytest.mark.parametrize("game", ["stud", "stud8", "razz"])
@pytest.mark.parametrize("seats", [[1, 2, 3, 4], [3, 6]])
@pytest.mark.parametrize(("action", "args"), [(DealerAction.EXPOSED_CARD, {"which": 0}),
                                              (DealerAction.CARD_OFF_TABLE, {"face": "down"}),
                                              (DealerAction.CARD_OFF_TABLE, {})])
def test_an_exposed_hole_card_reported_again_before_the_next_is_dealt_is_refused(
        rules: str, game: str, seats: list[int], action: DealerAction, args: dict[str, object]) -> None:
    """RP-10-A / house 16.1 (16.13: a hole card off the table is an exposed one): the first seat's
    first hole card is dealt face up and reported; the dealer reports it again (a second tap, a
    report repeated, or as the card off the table) before that seat's next card. The seat holds no
    hole card then, so the report is refused and changes nothing (was: taken as the second of two
    exposed hole cards — a misdeal under TDA, a dead hand under house 16.2)."""
    m = Dealing(PROFILES, default_rules=rules)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": seats, "game": game, "rules": rules}))
    deck = full_deck()
    m.handle(CardRead(1, deck.pop(), "rfid", 1))
    report = DealerInput(DealerAction.EXPOSED_CARD, seats[0], {"which": 0})
    first = [a.code for a in m.handle(report) if isinstance(a, Alert)]
    assert first == ["RP-10-A" if rules == "tda" else "house-16.1"]
    assert m.hand is not None
    seat = m.hand.seats[0]
    assert (len(seat.down), len(seat.up)) == (0, 1)
    before, state = m.public_state(), m.state
    again = [a for a in m.handle(DealerInput(action, seats[0], dict(args))) if isinstance(a, Alert)]
    assert [a.code for a in again] == ["input-wrong-time"]
    assert "no hole card" in again[0].message
    assert m.state == state == "hand_third_deal" and seat.in_hand
    assert (len(seat.down), len(seat.up)) == (0, 1)
    assert {k: v for k, v in m.public_state().items() if k != "alerts"} == {
        k: v for k, v in before.items() if k != "alerts"}
    # the deal goes on: the seat's second hole card, and only then is a second exposure both
    for seq in range(2, len(seats) + 2):
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    assert (len(seat.down), len(seat.up)) == (1, 1)
    both = [a.code for a in m.handle(DealerInput(DealerAction.EXPOSED_CARD, seats[0], {"which": 0}))
            if isinstance(a, Alert)]
    assert both[:1] == ["RP-10-A" if rules == "tda" else "house-16.2"]


def _downcards_named(m: Dealing) -> set[str]:
    assert m.hand is not None
    text = json.dumps(m.public_state())
    return {card_text(c) for s in m.hand.seats for c in s.down
            if c is not None and re.search(rf"(?<![A-Za-z0-9]){card_text(c)}(?![A-Za-z0-9])", text)}


@pytest.mark.parametrize("rules", ["tda", "house"])
@pytest.mark.parametrize("game", ["stud", "stud8", "razz"])
@pytest.mark.parametrize(("seats", "all_in"), [([1, 2, 3, 4], []), ([3, 6], []), ([2, 5], [2, 5])])
@pytest.mark.parametrize("action", [DealerAction.EXPOSED_CARD, DealerAction.LAST_CARD_EXPOSED,
                                    DealerAction.CARD_OFF_TABLE])
def test_a_seventh_street_card_reported_again_once_it_stands_face_up_is_refused(
        rules: str, game: str, seats: list[int], all_in: list[int], action: DealerAction) -> None:
    """RP-10-B (no action left) / house 16.21-16.24: seat's 7th-street card was dealt face up and
    reported; it stands face up. The same report again finds no 7th-street card face down: it is
    refused and nothing moves (was: the seat's last hole card was turned up as if it were the 7th
    card, and the display named it before showdown)."""
    m = Dealing(PROFILES, default_rules=rules)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": seats, "game": game, "rules": rules}))
    deck, seq = full_deck(), 0
    for s in all_in:
        m.handle(DealerInput(DealerAction.ALL_IN, s))
    while m.state != "hand_seventh_betting":
        sig = m.instruction().signal
        if sig in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY):
            seq += 1
            m.handle(CardRead(seq, deck.pop(), "rfid", seq))
        else:
            assert sig is Signal.BETTING, m.instruction()
            if m.state == "hand_third_betting":
                for s in all_in:
                    m.handle(DealerInput(DealerAction.ALL_IN, s))
            m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
    assert m.hand is not None
    seat = m.hand.seats[0]
    args = {} if action is DealerAction.LAST_CARD_EXPOSED else {"street": "7th"}
    report = DealerInput(action, seats[0], args)
    first = [a.code for a in m.handle(report) if isinstance(a, Alert)]
    assert not _downcards_named(m)
    if (len(seat.down), len(seat.up)) == (2, 4):  # RP-10-B, action left: out of play, the next card replaces it
        assert first == ["RP-10-B" if action is not DealerAction.CARD_OFF_TABLE else "house-16.13"]
        seq += 1
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
        assert (len(seat.down), len(seat.up)) == (3, 4)
        again_codes = [a.code for a in m.handle(report) if isinstance(a, Alert)]
        assert again_codes and "input-wrong-time" not in again_codes  # the replacement's own exposure: ruled
        return
    assert (len(seat.down), len(seat.up)) == (2, 5), first
    before = (m.state, [list(s.down) for s in m.hand.seats], [list(s.up) for s in m.hand.seats],
              list(m.hand.dead_cards), m.hand.stub_count())
    again = [a for a in m.handle(report) if isinstance(a, Alert)]
    assert [a.code for a in again] == ["input-wrong-time"], again
    assert "face up already" in again[0].message
    assert (m.state, [list(s.down) for s in m.hand.seats], [list(s.up) for s in m.hand.seats],
            list(m.hand.dead_cards), m.hand.stub_count()) == before
    assert not _downcards_named(m)
