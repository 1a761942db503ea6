"""The placement of a street's cards by the dealer (docs/irregularities.md, *Placing a street's
cards*): the consistency check on plain values (hypothesis over seats, faces and pull orders), and
the machine's side: the STOP stands until a placement the counts agree with, a placement they
contradict changes nothing, the sheet never shows a downcard, the input is undone and rebuilt
from its events like any other."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rule_profiles import PROFILES

from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, DisplayUpdate, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.irregular_place import PlacementError, SeatCount, check_placement, parse_place
from shoe_ctl.rules.cards import Card, card_text, full_deck
from shoe_ctl.users import FLOOR_ROLES, required_role

# ------------------------------------------------------------------ the check on plain values


def _layout(draw: st.DrawFn) -> tuple[list[int], dict[int, list[str]], list[str]]:
    """Seats, each seat's 3rd-street cards by face as they lie, and the pulls' places in order."""
    seats = draw(st.lists(st.integers(1, 8), min_size=2, max_size=8, unique=True))
    faces: dict[int, list[str]] = {}
    for s in seats:
        mine = draw(st.permutations(["down", "down", "up"]))
        faces[s] = mine[:draw(st.integers(0, 3))]
    places = [f"seat {s} {f}" for s in seats for f in faces[s]]
    return seats, faces, draw(st.permutations(places))


layouts = st.composite(_layout)()


@settings(max_examples=200, deadline=None)
@given(layouts)
def test_the_placement_as_the_cards_lie_is_accepted_and_books_each_face(
        lay: tuple[list[int], dict[int, list[str]], list[str]]) -> None:
    seats, faces, places = lay
    counts = [SeatCount(s, 0, 0, len(faces[s]), True) for s in seats]
    out = check_placement("3rd", False, counts, places, len(places))
    for s in seats:
        got = [b.role for b in out if b.seat == s]
        assert sorted(got) == sorted(faces[s]) and "extra" not in got


@settings(max_examples=200, deadline=None)
@given(layouts, st.data())
def test_a_card_placed_on_another_seat_than_counted_is_refused(
        lay: tuple[list[int], dict[int, list[str]], list[str]], data: st.DataObject) -> None:
    seats, faces, places = lay
    if not places:
        return
    k = data.draw(st.integers(0, len(places) - 1))
    _, seat, face = parse_place(places[k])
    other = data.draw(st.sampled_from([s for s in seats if s != seat]))
    moved = [*places[:k], f"seat {other} {face}", *places[k + 1:]]
    counts = [SeatCount(s, 0, 0, len(faces[s]), True) for s in seats]
    with pytest.raises(PlacementError, match=f"seat ({seat}|{other}): the placement gives it"):
        check_placement("3rd", False, counts, moved, len(moved))


def test_a_fourth_card_on_third_is_a_card_too_many_and_three_downcards_are_the_floors() -> None:
    seat = [SeatCount(3, 0, 0, 4, True), SeatCount(4, 0, 3, None, True)]
    four = ["seat 3 down", "seat 4 down", "seat 3 down", "seat 3 down", "seat 4 down", "seat 3 up", "seat 4 up"]
    roles = [b.role for b in check_placement("3rd", False, seat, four, 7) if b.seat == 3]
    assert roles == ["down", "down", "extra", "up"]
    with pytest.raises(PlacementError, match="seat 3: 3 card"):
        check_placement("3rd", False, [SeatCount(3, 0, 0, 3, True)], ["seat 3 down"] * 3, 3)


@pytest.mark.parametrize("places, why", [
    (["seat 3 down", "seat 4 down"], "2 place"),
    (["seat 3 down", "seat 4 down", "seat 9 up"], "no place"),
    (["seat 3 down", "seat 4 down", "seat 6 down"], "not dealt"),
    (["seat 3 down", "seat 3 up", "seat 3 down"], "seat 3: the placement gives it 3 card\\(s\\), the dealer counted 2"),
    (["seat 3 down", "seat 4 down", "centre"], "no community card"),
    (["seat 3 down", "seat 4 down", 7], "no place"),
])
def test_what_a_placement_may_not_say(places: list[object], why: str) -> None:
    seats = [SeatCount(3, 0, 1, 2, True), SeatCount(4, 0, 1, None, True), SeatCount(5, 0, 0, None, False)]
    with pytest.raises(PlacementError, match=why):
        check_placement("3rd", False, seats, places, 3)


def test_on_a_community_street_one_read_lies_in_the_centre_and_a_seat_card_is_a_card_too_many() -> None:
    seats = [SeatCount(1, 6, 0, 7, True), SeatCount(2, 6, 0, None, True)]
    out = check_placement("7th", True, seats, ["burn", "seat 1 down", "centre"], 3)
    assert [(b.kind, b.role) for b in out] == [("burn", None), ("seat", "extra"), ("community", None)]
    with pytest.raises(PlacementError, match="centre"):
        check_placement("7th", True, seats, ["burn", "seat 1 down", "muck"], 3)


# ------------------------------------------------------------------ the machine's side


class Table:
    """A Dealing machine fed like a shoe and a dealer would; every event kept for a rebuild."""

    def __init__(self, rules: str = "tda", seats: tuple[int, ...] = (1, 2, 3, 4)) -> None:
        self.m = Dealing(PROFILES, default_rules=rules)
        self.m.start()
        self.deck = full_deck()
        self.seq = 0
        self.events: list[object] = []
        self.out: list[object] = []
        self.send(DealerInput(DealerAction.NEW_HAND, args={"seats": list(seats)}))

    def send(self, ev: object) -> list[str]:
        self.events.append(ev)
        cmds = self.m.handle(ev)
        self.out.extend(cmds)
        return [a.code for a in cmds if isinstance(a, Alert)]

    def card(self) -> Card:
        self.seq += 1
        c = self.deck.pop()
        self.send(CardRead(self.seq, c, "rfid", self.seq))
        return c


def _two_to_seat_two(t: Table) -> list[Card]:
    """3rd street, four seats: seat 2 gets two cards in the first round (read as seats 2 and 3's)."""
    return [t.card() for _ in range(3)]


def test_the_stop_stands_until_a_placement_the_counts_agree_with() -> None:
    t = Table()
    _two_to_seat_two(t)
    assert t.send(DealerInput(DealerAction.CARD_COUNT, 2, {"cards": 2})) == ["card-placement"]
    assert t.m.instruction().signal is Signal.STOP
    # a card pulled would be the next place's: the dealer is stopped, a wrong placement changes nothing
    before = t.m.hand.copy()
    codes = t.send(DealerInput(DealerAction.PLACE_CARDS, args={"places": ["seat 1 down", "seat 2 down",
                                                                          "seat 2 down"]}))
    assert codes == ["input-invalid"]
    refused = next(a for a in reversed(t.out) if isinstance(a, Alert) and a.code == "input-invalid")
    assert "seat 3: the placement gives it 0 card(s), the record 1: count the seat" in refused.message
    assert [s.down for s in t.m.hand.seats] == [s.down for s in before.seats]
    assert t.m.instruction().signal is Signal.STOP
    t.send(DealerInput(DealerAction.CARD_COUNT, 3, {"cards": 0}))
    codes = t.send(DealerInput(DealerAction.PLACE_CARDS, args={"places": ["seat 1 down", "seat 2 down",
                                                                          "seat 2 down"]}))
    assert "street-placed" in codes and "input-invalid" not in codes
    ins = t.m.instruction()
    assert (ins.signal, ins.seat, ins.face) == (Signal.DEAL, 3, "down")
    assert [len(s.down) for s in t.m.hand.seats] == [1, 2, 0, 0]


def test_a_placement_with_no_stop_is_refused() -> None:
    t = Table()
    _two_to_seat_two(t)
    assert t.send(DealerInput(DealerAction.PLACE_CARDS, args={"places": ["seat 1 down"] * 3})) == \
        ["input-wrong-time"]


def test_the_betting_waits_for_the_placement() -> None:
    """A count in the 3rd-street betting that disagrees: *betting complete* is refused under the
    STOP (nothing moves the hand on) until the street is placed."""
    t = Table(seats=(1, 2, 3))
    for _ in range(9):
        t.card()
    assert t.m.instruction().signal is Signal.BETTING
    t.send(DealerInput(DealerAction.CARD_COUNT, 1, {"cards": 4}))
    assert t.send(DealerInput(DealerAction.BETTING_COMPLETE)) == ["input-wrong-time"]
    assert t.m.state.endswith("third_betting")


def test_the_sheet_shows_upcards_only_and_the_placement_is_undone_and_rebuilt() -> None:
    t = Table(seats=(1, 2))
    dealt = [t.card() for _ in range(6)]  # down, down, down, down, up, up
    t.send(DealerInput(DealerAction.CARD_COUNT, 1, {"cards": 4}))
    state = next(c.state for c in reversed(t.out) if isinstance(c, DisplayUpdate))
    sheet = state["placement"]
    assert [r["face"] for r in sheet["reads"]] == ["down"] * 4 + ["up"] * 2
    assert [r["card"] for r in sheet["reads"][4:]] == [card_text(c) for c in dealt[4:]]
    text = json.dumps(sheet)
    assert not any(card_text(c) in text for c in dealt[:4])
    t.send(DealerInput(DealerAction.CARD_COUNT, 2, {"cards": 2}))
    # the dealer gave seat 1 the second round's first card too: seat 2's second hole card
    places = ["seat 1 down", "seat 2 down", "seat 1 down", "seat 1 down", "seat 1 up", "seat 2 up"]
    assert "street-placed" in t.send(DealerInput(DealerAction.PLACE_CARDS, args={"places": places}))
    assert len(t.m.hand.seats[0].extra) == 1 and len(t.m.hand.seats[1].down) == 1
    t.send(DealerInput(DealerAction.UNDO))
    assert not t.m.hand.seats[0].extra and len(t.m.hand.seats[1].down) == 2
    assert t.m.instruction().signal is Signal.STOP
    t.send(DealerInput(DealerAction.PLACE_CARDS, args={"places": places}))
    again = Dealing(PROFILES, default_rules="tda")
    again.start()
    for ev in t.events:
        again.handle(ev)
    assert again.hand is not None and t.m.hand is not None
    assert [(s.down, s.up, s.extra) for s in again.hand.seats] == [(s.down, s.up, s.extra) for s in t.m.hand.seats]
    assert again.instruction() == t.m.instruction()


def test_the_placement_is_the_floors() -> None:
    """It lifts a latched STOP, which only the floor may clear: a floor supervisor's credential."""
    assert required_role(DealerAction.PLACE_CARDS, {"places": ["seat 1 down"]}, []) == FLOOR_ROLES


def test_a_seat_folded_before_the_count_keeps_its_cards_as_placed() -> None:
    """3rd-street betting, three seats: seat 1 got seat 2's second hole card and seat 2 seat 3's;
    seat 3 folds, then seat 1 is counted at four. Seat 3 is out of the hand: no count applies to it,
    its cards stay as placed; seat 1 has a card too many."""
    t = Table(seats=(1, 2, 3))
    for _ in range(9):
        t.card()
    t.send(DealerInput(DealerAction.FOLD, 3))
    t.send(DealerInput(DealerAction.CARD_COUNT, 1, {"cards": 4}))
    places = ["seat 1 down", "seat 2 down", "seat 3 down", "seat 1 down", "seat 1 down", "seat 2 down",
              "seat 1 up", "seat 2 up", "seat 3 up"]
    assert "street-placed" in t.send(DealerInput(DealerAction.PLACE_CARDS, args={"places": places}))
    one, two, three = t.m.hand.seats
    assert (len(one.down), len(one.up), len(one.extra)) == (2, 1, 1)
    assert (len(two.down), len(two.up), len(three.down), len(three.up)) == (2, 1, 1, 1)
    assert three.folded and t.m.instruction().signal is not Signal.STOP


PLACES = st.sampled_from(["seat 1 down", "seat 1 up", "seat 2 down", "seat 2 up", "seat 3 down", "seat 3 up",
                          "burn", "muck", "off", "centre"])


@st.composite
def _counted_shape(draw: st.DrawFn) -> tuple[int, list[str]]:
    """A placement that gives seat 1 ``count`` cards and seats 2 and 3 three each (two downcards
    and an upcard, a card swapped for the other face now and then; the rest off the seats), in
    any order: the counts agree, the faces mostly."""
    count = draw(st.integers(0, 3))
    places = []
    for seat, n in ((1, count), (2, 3), (3, 3)):
        faces = list(draw(st.permutations(["down", "down", "up"])))[:n]
        if faces and draw(st.integers(0, 5)) == 0:
            faces[0] = "up" if faces[0] == "down" else "down"
        places += [f"seat {seat} {f}" for f in faces]
    places += [draw(st.sampled_from(["burn", "muck", "off"])) for _ in range(9 - len(places))]
    return count, draw(st.permutations(places))


@settings(max_examples=80, deadline=None)
@given(st.one_of(st.tuples(st.integers(0, 9), st.lists(PLACES, min_size=9, max_size=9)), _counted_shape()))
def test_any_placement_is_refused_with_nothing_changed_or_booked_as_counted(case: tuple[int, list[str]]) -> None:
    """Whatever the dealer taps: a placement is refused with its reason and changes nothing, or
    it is booked and every seat holds what it was counted (or what the record gave it); never an
    internal fault."""
    count, places = case
    t = Table(seats=(1, 2, 3))
    for _ in range(9):
        t.card()
    t.send(DealerInput(DealerAction.CARD_COUNT, 1, {"cards": count}))
    hand = t.m.hand
    assert hand is not None
    before = [(list(s.down), list(s.up), list(s.extra)) for s in hand.seats]
    codes = t.send(DealerInput(DealerAction.PLACE_CARDS, args={"places": places}))
    assert "machine-fault" not in codes and t.m.state != "attention"
    if "input-invalid" in codes or count == 3:  # a count that agrees raises no placement STOP
        assert [(s.down, s.up, s.extra) for s in hand.seats] == before
        assert "street-placed" not in codes
    else:
        assert "street-placed" in codes
        assert [s.card_count for s in hand.seats] == [count, 3, 3]
        assert hand.stub_count() == 52 - 9
