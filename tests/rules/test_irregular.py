"""Irregularity decisions, one test (at least) per clause; the clause id is in each test's name."""

from __future__ import annotations

from dataclasses import replace

import pytest
from stubhelp import HOUSE, TDA, Shoe, deal, kinds, walk

from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import HandError, HandState
from shoe_ctl.rules.irregular import (
    Action,
    absent_player,
    aside_after_betting,
    burn_error,
    card_count,
    card_off_table,
    clause_without_code,
    exposed_downcard,
    exposed_seventh,
    open_pair_fourth,
    premature_cards,
    wrong_bring_in,
)
from shoe_ctl.rules.stub import Step, plan_street

HOUSE_T = replace(HOUSE, tournament=True)


def _third_partial(n: int, profile, upto: int):
    """A hand with the first ``upto`` steps of 3rd street recorded."""
    hand = HandState.new(Game.STUD, list(range(1, n + 1)))
    shoe = Shoe()
    plan = plan_street(profile, hand, "3rd")
    for step in plan.steps[:upto]:
        hand.record(step, shoe.pull())
    return hand, shoe


# ----------------------------------------------------------------- RP-10-A, 16.1, 16.2


def test_RP_10_A_exposed_downcard_becomes_upcard_third_card_down():
    hand, shoe = _third_partial(4, TDA, 1)  # first hole card of player 0 exposed
    exposed = hand.seats[0].down[-1]
    r = exposed_downcard(TDA, hand, 0)
    assert r.code == "RP-10-A" and r.action is Action.UPCARD_STANDS
    r.apply(hand)
    assert hand.seats[0].up == [exposed] and hand.seats[0].down == []
    walk(hand, plan_street(TDA, hand, "3rd"), shoe)
    assert len(hand.seats[0].down) == 2 and hand.seats[0].up == [exposed]
    assert all(len(s.down) == 2 and len(s.up) == 1 for s in hand.seats)
    assert hand.stub_count() == 52 - 12  # no change to the stub


def test_RP_10_A_both_exposed_is_a_misdeal_for_the_floor():
    hand, _ = _third_partial(4, TDA, 5)
    r = exposed_downcard(TDA, hand, 0, both=True)
    assert r.action is Action.MISDEAL and r.floor


def test_house_16_1_cash_third_card_down_to_compensate():
    hand, shoe = _third_partial(3, HOUSE, 4)  # player 0's second hole card exposed
    r = exposed_downcard(HOUSE, hand, 0)
    assert r.clauses == ("house-16.1",) and r.action is Action.UPCARD_STANDS
    r.apply(hand)
    p = plan_street(HOUSE, hand, "3rd")
    assert [(s.seat_index, s.face) for s in p.steps] == [(1, "down"), (2, "down"), (0, "down"), (1, "up"), (2, "up")]


def test_house_16_1_tournament_misdeal():
    hand, _ = _third_partial(3, HOUSE_T, 1)
    r = exposed_downcard(HOUSE_T, hand, 0)
    assert r.action is Action.MISDEAL and r.code == "house-16.1"


@pytest.mark.parametrize("profile", [HOUSE, HOUSE_T], ids=["cash", "tournament"])
def test_house_16_2_both_exposed_dead_hand_ante_returned(profile):
    hand, shoe = _third_partial(3, profile, 6)
    r = exposed_downcard(profile, hand, 1, both=True)
    assert r.code == "house-16.2" and r.refund_ante and r.action is Action.DEAD_HAND
    r.apply(hand)
    assert hand.seats[1].dead and 1 not in hand.in_hand()
    assert [s.seat_index for s in plan_street(profile, hand, "3rd").steps] == [0, 2]


def test_house_16_13_card_off_the_table_is_exposed():
    hand, _ = _third_partial(3, HOUSE, 1)
    r = card_off_table(HOUSE, hand, 0, "3rd")
    assert r.clauses == ("house-16.13", "house-16.1")
    hand2, _, _ = deal(3, HOUSE, "4th")
    r2 = card_off_table(HOUSE, hand2, 1, "4th")
    assert r2.action is Action.CARD_STANDS and r2.code == "house-16.13"


def test_house_16_13_door_card_off_the_table_stands():
    """house 16.13: the 3rd-street upcard dealt off the table is face up anyway: it stands, no
    floor, and the seat's cards are unchanged (it is not a hole card for house 16.1 / RP-10-A)."""
    for profile in (HOUSE, TDA):
        hand, _ = _third_partial(3, profile, 7)  # player 0 has just been dealt the door card
        assert len(hand.seats[0].up) == 1
        r = card_off_table(profile, hand, 0, "3rd")
        assert r.action is Action.CARD_STANDS and not r.floor and r.effects == ()
        assert r.clauses == ("house-16.13",)
        hole = card_off_table(profile, hand, 1, "3rd", face="down")
        assert hole.clauses[0] == "house-16.13" and len(hole.clauses) == 2


# ----------------------------------------------------------------- RP-10-B, 16.21-16.24


def _seventh_partial(n: int, profile, dealt: int, all_in=()):
    hand, shoe, _ = deal(n, profile, "6th", all_ins={"4th": list(all_in)})
    p = plan_street(profile, hand, "7th")
    for step in p.steps[: 1 + dealt]:
        hand.record(step, shoe.pull())
    return hand, shoe


def test_RP_10_B_exposed_seventh_replaced_when_action_remains():
    hand, shoe = _seventh_partial(4, TDA, 2)
    exposed = hand.seats[1].down[-1]
    stub = hand.stub_count()
    r = exposed_seventh(TDA, hand, 1, action_remains=True)
    assert r.action is Action.REPLACE and r.stub_delta == -1 and r.code == "RP-10-B"
    r.apply(hand)
    assert exposed in hand.dead_cards and exposed not in hand.seats[1].down
    p = plan_street(TDA, hand, "7th")
    assert [(s.kind, s.seat_index, s.face) for s in p.steps] == [("deal", 1, "down"), ("deal", 2, "down"), ("deal", 3, "down")]
    walk(hand, p, shoe)
    assert all(len(s.down) == 3 for s in hand.seats)
    assert hand.stub_count() == stub - 3
    assert exposed not in hand.stub_candidates()


def test_RP_10_B_no_action_remains_card_stands():
    hand, _ = _seventh_partial(3, TDA, 1)
    r = exposed_seventh(TDA, hand, 0, action_remains=False)
    assert r.action is Action.CARD_STANDS and not r.floor
    r.apply(hand)
    assert len(hand.seats[0].up) == 5 and len(hand.seats[0].down) == 2


def test_RP_10_B_replacement_never_takes_the_last_card():
    hand2, shoe, _ = deal(6, TDA, "6th", folds={"3rd": [0, 1]})
    # Trim the stub to exactly the required number of the four players left (4 + 2).
    hand2.pulled += hand2.stub_count() - 6
    p = plan_street(TDA, hand2, "7th")
    assert p.procedure.value == "normal"
    for step in p.steps[:2]:
        hand2.record(step, shoe.pull())
    r = exposed_seventh(TDA, hand2, 2, action_remains=True)
    assert r.action is Action.CARD_STANDS and r.floor


def test_house_16_21_all_in_exposed_seventh_stands():
    hand, _ = _seventh_partial(4, HOUSE, 1, all_in=[0])
    r = exposed_seventh(HOUSE, hand, 0, action_remains=True)
    assert "house-16.21" in r.clauses and r.action is Action.CARD_STANDS and not r.all_in_option
    r.apply(hand)
    assert len(hand.seats[0].up) == 5


def test_house_16_22_and_16_23_three_players_others_down_all_in_option():
    hand, shoe = _seventh_partial(3, HOUSE, 1)
    r = exposed_seventh(HOUSE, hand, 0, action_remains=True)
    assert r.clauses == ("house-16.22", "house-16.23")
    assert r.first_to_act_rule == "house-16.22" and r.all_in_option
    r.apply(hand)
    p = plan_street(HOUSE, hand, "7th")
    assert [(s.seat_index, s.face) for s in p.steps] == [(1, "down"), (2, "down")]


def test_house_16_24_two_players_other_card_up_too():
    hand, shoe = _seventh_partial(2, HOUSE, 1)
    r = exposed_seventh(HOUSE, hand, 0, action_remains=True)
    assert "house-16.24" in r.clauses and not r.all_in_option
    r.apply(hand)
    p = plan_street(HOUSE, hand, "7th")
    assert [(s.seat_index, s.face) for s in p.steps] == [(1, "up")]
    walk(hand, p, shoe)
    assert len(hand.seats[1].up) == 5 and hand.seats[1].next_face is None


def test_house_16_24_two_players_other_already_down_all_in_option():
    hand, _ = _seventh_partial(2, HOUSE, 2)
    r = exposed_seventh(HOUSE, hand, 1, action_remains=True)
    assert "house-16.24" in r.clauses and r.all_in_option


# ----------------------------------------------------------------- RP-10-C, Rule 30, 16.9-16.11


def test_RP_10_C_rule_30_absent_player_killed_no_4th_card():
    hand, _, _ = deal(5, TDA, "3rd")
    r = absent_player(TDA, hand, 2, action_reached=False, bring_in=True)
    assert r.clauses == ("RP-10-C", "Rule 30") and r.posts_bring_in
    r.apply(hand)
    assert hand.seats[2].killed and hand.seats[2].card_count == 3
    assert 2 not in [s.seat_index for s in plan_street(TDA, hand, "4th").steps]


def test_house_16_10_tournament_kills_after_deal():
    hand, _, _ = deal(5, HOUSE_T, "3rd")
    r = absent_player(HOUSE_T, hand, 2, action_reached=False)
    assert r.code == "house-16.10" and r.action is Action.KILL


def test_house_16_11_cash_deals_to_empty_seat_until_killed_then_16_9():
    hand, shoe, _ = deal(5, HOUSE, "3rd")
    r = absent_player(HOUSE, hand, 2, action_reached=False)
    assert r.code == "house-16.11" and r.action is Action.DEAL_TO_EMPTY_SEAT
    r.apply(hand)
    p = plan_street(HOUSE, hand, "4th")
    assert 2 in [s.seat_index for s in p.steps]
    walk(hand, p, shoe)
    r2 = absent_player(HOUSE, hand, 2, action_reached=True)
    assert r2.code == "house-16.9" and r2.action is Action.KILL
    r2.apply(hand)
    assert hand.seats[2].killed and hand.seats[2].card_count == 4
    assert 2 not in [s.seat_index for s in plan_street(HOUSE, hand, "5th").steps]


# ----------------------------------------------------------------- RP-5-D, RP-10-G, 16.16, 16.17


def test_RP_5_D_RP_10_G_premature_back_into_stub_redeal_without_burn():
    hand, shoe, _ = deal(4, TDA, "4th")
    p5 = plan_street(TDA, hand, "5th")
    pulled = []
    for step in p5.steps[:3]:  # burn + two premature upcards
        c = shoe.pull()
        pulled.append(c)
        hand.record(step, c)
    stub = hand.stub_count()
    r = premature_cards(TDA, hand, "5th", [(0, "up"), (1, "up")])
    assert r.clauses == ("RP-5-D", "RP-10-G") and r.no_burn and r.stub_delta == 2
    r.apply(hand)
    assert hand.stub_count() == stub + 2
    assert set(pulled[1:]) <= hand.stub_candidates()
    assert hand.new_stub == hand.stub_candidates() and hand.dealt_since_load == 0
    assert len(hand.new_stub) == hand.stub_count()
    assert hand.burns["5th"] == [pulled[0]]
    hand.fold(3)  # betting on 4th completes with a fold
    p = plan_street(TDA, hand, "5th")
    assert kinds(p) == ["deal", "deal", "deal"]
    walk(hand, p, shoe)
    assert all(hand.seats[i].card_count == 5 for i in hand.in_hand())


def test_house_16_16_premature_cards_set_aside_plus_one_per_active_player():
    hand, shoe, _ = deal(4, HOUSE, "4th")
    p5 = plan_street(HOUSE, hand, "5th")
    for step in p5.steps[:3]:
        hand.record(step, shoe.pull())
    r = premature_cards(HOUSE, hand, "5th", [(0, "up"), (1, "up")])
    assert r.code == "house-16.16" and r.aside_per_active
    r.apply(hand)
    assert len(hand.set_aside) == 3 and "5th" not in [s for s, _ in hand.burn_pile]
    hand.fold(3)
    extra = aside_after_betting(hand)
    assert extra == 3
    for _ in range(extra):
        hand.put_aside(shoe.pull())
    p = plan_street(HOUSE, hand, "5th")
    assert kinds(p) == ["burn", "deal", "deal", "deal"]
    walk(hand, p, shoe)
    assert len(hand.set_aside) == 6
    assert hand.stub_count() == 52 - 12 - 5 - 3 - 3 - 4


def test_house_16_17_merged_final_downcard_stands_no_bet():
    """House 16.17 ("exception to Rule 16.6" read as 16.16)."""
    hand, shoe, _ = deal(3, HOUSE, "6th")
    p7 = plan_street(HOUSE, hand, "7th")
    for step in p7.steps[:3]:
        hand.record(step, shoe.pull())
    r = premature_cards(HOUSE, hand, "7th", [(0, "down"), (1, "down")], merged=[0])
    assert r.clauses == ("house-16.16", "house-16.17")
    r.apply(hand)
    assert hand.seats[0].no_bet and len(hand.seats[0].down) == 3
    assert len(hand.seats[1].down) == 2 and len(hand.set_aside) == 2


# ----------------------------------------------------------------- 16.15


def test_house_16_15_two_burns_corrected():
    hand, _, _ = deal(3, HOUSE, "4th")
    r = burn_error(HOUSE, hand, "5th", burns=2, first=0)
    assert r.action is Action.MOVE_CARDS and r.code == "house-16.15" and not r.effects


def test_house_16_15_two_burns_on_final_card_stands():
    hand, shoe, _ = deal(3, HOUSE, "6th")
    p7 = plan_street(HOUSE, hand, "7th")
    for step in p7.steps[:2]:  # burn, then the card recorded for player 0 went to the burn pile
        hand.record(step, shoe.pull())
    r = burn_error(HOUSE, hand, "7th", burns=2, first=0, final_card_stands=True)
    assert r.action is Action.CARD_STANDS and r.stub_delta == -1
    r.apply(hand)
    assert len(hand.burns["7th"]) == 2 and len(hand.seats[0].down) == 2
    p = plan_street(HOUSE, hand, "7th")
    assert [(s.kind, s.seat_index) for s in p.steps] == [("deal", 0), ("deal", 1), ("deal", 2)]


def test_house_16_15_two_burns_noticed_after_the_next_card_stands_where_dealt():
    """house 16.15: two burns on 7th, then the next card went to player 0 (it was player 1's) and
    merged: it stands; the record moves to what was dealt and player 1 is owed a card."""
    hand, shoe, _ = deal(3, HOUSE, "6th")
    p7 = plan_street(HOUSE, hand, "7th")
    cards = []
    for step in p7.steps[:3]:  # recorded: burn c1, p0 c2, p1 c3; dealt: burns c1 c2, p0 c3
        c = shoe.pull()
        cards.append(c)
        hand.record(step, c)
    r = burn_error(HOUSE, hand, "7th", burns=2, first=0, final_card_stands=True)
    r.apply(hand)
    assert hand.burns["7th"] == cards[:2]
    assert hand.seats[0].down[-1] == cards[2] and len(hand.seats[0].down) == 3
    assert len(hand.seats[1].down) == 2 and cards[2] not in hand.seats[1].down
    p = plan_street(HOUSE, hand, "7th")
    assert [(s.kind, s.seat_index) for s in p.steps] == [("deal", 1), ("deal", 2)]
    walk(hand, p, shoe)
    assert hand.street_complete("7th") and len(hand.outside_stub()) + hand.stub_count() == 52


def test_house_16_15_no_burn_on_final_card_stands_reseats():
    hand, shoe, _ = deal(3, HOUSE, "6th")
    p7 = plan_street(HOUSE, hand, "7th")
    cards = []
    for step in p7.steps[:2]:  # recorded: burn c1, p0 c2; dealt: p0 c1, p1 c2
        c = shoe.pull()
        cards.append(c)
        hand.record(step, c)
    r = burn_error(HOUSE, hand, "7th", burns=0, first=0, final_card_stands=True)
    r.apply(hand)
    assert hand.seats[0].down[-1] == cards[0] and hand.seats[1].down[-1] == cards[1]
    assert "7th" not in [s for s, _ in hand.burn_pile]
    p = plan_street(HOUSE, hand, "7th")
    assert kinds(p) == ["burn", "deal"] and p.steps[1].seat_index == 2
    walk(hand, p, shoe)
    assert hand.street_complete("7th") and hand.stub_count() == 52 - 9 - 4 * 3 - 4


def test_house_16_15_bad_count_raises():
    hand, _, _ = deal(3, HOUSE, "4th")
    with pytest.raises(HandError):
        burn_error(HOUSE, hand, "5th", burns=1, first=0)


# ----------------------------------------------------------------- 16.25, 16.26


def test_house_16_25_eight_cards_dead():
    hand, shoe, _ = deal(3, HOUSE, "7th")
    hand.seats[0].down.append(shoe.pull())
    r = card_count(HOUSE, hand, 0, showdown=False)
    assert r.code == "house-16.25" and r.action is Action.DEAD_HAND
    r.apply(hand)
    assert hand.seats[0].dead
    assert card_count(TDA, hand, 0, showdown=False).floor


def test_house_16_26_six_cards_at_showdown_dead_community_counts():
    hand, _, _ = deal(3, HOUSE, "7th")
    hand.seats[1].down.pop()
    r = card_count(HOUSE, hand, 1, showdown=True)
    assert r.code == "house-16.26" and r.action is Action.DEAD_HAND
    assert card_count(HOUSE, hand, 1, showdown=False).action is Action.CONTINUE
    hand.community_street = "7th"
    assert card_count(HOUSE, hand, 1, showdown=True).action is Action.CONTINUE


# ----------------------------------------------------------------- RP-10-F, 16.8, 16.6, rest


def test_RP_10_F_and_house_16_8_open_pair_on_4th():
    hand = HandState.new(Game.STUD, [1, 2, 3])
    for i, ups in enumerate([["9c", "9d"], ["2c", "Kd"], ["3h", "4h"]]):
        hand.seats[i].up = [Card.parse(u) for u in ups]
        hand.seats[i].down = [None, None]
    t = open_pair_fourth(TDA, hand)
    assert t.code == "RP-10-F" and t.seat_index == 0 and "not doubled" in t.instruction
    h = open_pair_fourth(HOUSE, hand)
    assert h.code == "house-16.8" and "larger bet" in h.instruction
    assert h.big_bet_option and not t.big_bet_option
    hand.seats[0].up[1] = Card.parse("8d")
    assert open_pair_fourth(HOUSE, hand).seat_index is None


@pytest.mark.parametrize("game", [Game.STUD8, Game.RAZZ])
def test_house_16_8_open_pair_gives_no_larger_bet_in_stud8_and_razz(game):
    """house 16.8 is a 7 Card Stud (high) rule: in stud-8 and razz a pair showing on 4th does not
    change the limit."""
    hand = HandState.new(game, [1, 2])
    for i, ups in enumerate([["9c", "9d"], ["2c", "Kd"]]):
        hand.seats[i].up = [Card.parse(u) for u in ups]
        hand.seats[i].down = [None, None]
    r = open_pair_fourth(HOUSE, hand)
    assert r.code == "house-16.8" and r.seat_index == 0
    assert not r.big_bet_option and "larger bet may be made" not in r.instruction


def test_house_16_6_wrong_bring_in():
    hand, _, _ = deal(3, HOUSE, "3rd")
    assert wrong_bring_in(HOUSE, hand, 0, 2, next_acted=False).action is Action.RETURN_BET
    assert wrong_bring_in(HOUSE, hand, 0, 2, next_acted=True).action is Action.BET_STANDS


@pytest.mark.parametrize("clause", ["RP-10-G", "house-16.3", "house-16.5", "house-16.7", "house-16.12",
                                    "house-16.14", "house-16.27"])
def test_clauses_without_code_RP_10_G_16_3_16_5_16_7_16_12_16_14_16_27(clause):
    r = clause_without_code(clause)
    assert r.action is Action.NO_CODE and r.code == clause and len(r.instruction) > 20


def test_rulings_are_frozen():
    r = clause_without_code("house-16.27")
    with pytest.raises(AttributeError):
        r.action = Action.KILL  # type: ignore[misc]


def test_step_and_plan_helpers():
    assert Step("burn").pulls_card and not Step("cut").pulls_card


def test_RP_10_A_first_hole_card_exposed_noticed_after_the_second():
    hand, shoe = _third_partial(2, TDA, 3)  # p0 down, p1 down, p0 down: p0's first card exposed
    first = hand.seats[0].down[0]
    exposed_downcard(TDA, hand, 0, which=0).apply(hand)
    assert hand.seats[0].up == [first] and len(hand.seats[0].down) == 1
    walk(hand, plan_street(TDA, hand, "3rd"), shoe)
    assert hand.upcards("3rd")[0] == first and len(hand.seats[0].down) == 2


@pytest.mark.parametrize("profile", [TDA, HOUSE], ids=["RP-10-A", "house-16.1"])
def test_RP_10_A_house_16_1_exposed_after_the_upcard_goes_to_the_floor(profile):
    hand, _ = _third_partial(2, profile, 6)
    r = exposed_downcard(profile, hand, 0, which=0)
    assert r.floor and r.effects == ()


def test_house_16_22_exposed_seventh_is_the_last_upcard():
    hand, _ = _seventh_partial(3, HOUSE, 1)
    card = hand.seats[0].down[-1]
    exposed_seventh(HOUSE, hand, 0, action_remains=True).apply(hand)
    assert hand.seats[0].up[-1] == card and len(hand.seats[0].up) == 5
    assert not hand.seats[0].exposed_hole
