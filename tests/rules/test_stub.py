"""Stub accounting and the short-stub procedures (RP-10-H, house 16.18, 16.19, 16.20)."""

from __future__ import annotations

import pytest
from stubhelp import CASES, HOUSE, TDA, Shoe, deal, kinds, scenario, walk

from shoe_ctl.rules.cards import Card, full_deck
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.stub import (
    Procedure,
    Step,
    StubError,
    forecast_short,
    plan_street,
    required_number,
    seventh_check,
)


def test_RP_10_H_required_number_is_players_plus_burn_plus_last_card():
    assert required_number(8) == 10
    assert required_number(2) == 4
    with pytest.raises(ValueError):
        required_number(-1)


def test_third_street_order_down_down_up_no_burn():
    hand = HandState.new(Game.STUD, [1, 3, 5])
    p = plan_street(TDA, hand, "3rd")
    assert [(s.kind, s.seat_index, s.face) for s in p.steps] == [
        ("deal", 0, "down"), ("deal", 1, "down"), ("deal", 2, "down"),
        ("deal", 0, "down"), ("deal", 1, "down"), ("deal", 2, "down"),
        ("deal", 0, "up"), ("deal", 1, "up"), ("deal", 2, "up"),
    ]
    assert p.stub == 52 and p.procedure is Procedure.NORMAL


def test_normal_streets_burn_then_one_each_seventh_down():
    hand, _, plans = deal(5, TDA, "7th", folds={"4th": [2]})
    assert kinds(plans["5th"]) == ["burn"] + ["deal"] * 4
    assert [s.seat_index for s in plans["5th"].steps[1:]] == [0, 1, 3, 4]
    assert {s.face for s in plans["6th"].steps[1:]} == {"up"}
    assert {s.face for s in plans["7th"].steps[1:]} == {"down"}
    assert [len(s.down) for s in hand.seats] == [3, 3, 2, 3, 3]
    assert hand.stub_count() == 52 - 15 - 5 - 4 * 4


# ----------------------------------------------------------------- worked cases


def test_worked_case_8_dealt_none_fold_tda_RP_10_H_C():
    """8 dealt, none fold: stub 1, required 10, RP-10-H-C (scramble, cut, burn, community)."""
    hand, _, _ = deal(8, TDA, "6th")
    assert seventh_check(TDA, hand) == (8, 1, 10, Procedure.C)
    p = plan_street(TDA, hand, "7th")
    assert kinds(p) == ["scramble", "cut", "burn", "community"]
    assert p.steps[0].gather == ("stub", "burn 4th", "burn 5th", "burn 6th")
    assert p.first_to_act_rule == "RP-10-H-D" and p.clause == "RP-10-H-C"
    # The new stub is the unseen last card plus the three burns, by identity.
    assert len(p.new_stub) == 4 and set(hand.burn_cards()) < p.new_stub


def test_worked_case_8_dealt_none_fold_house_16_20():
    """8 dealt, none fold: house 16.20, scramble stub + burns, cut, burn, community card."""
    hand, _, _ = deal(8, HOUSE, "6th")
    assert seventh_check(HOUSE, hand) == (8, 1, 10, Procedure.H20)
    p = plan_street(HOUSE, hand, "7th")
    assert kinds(p) == ["scramble", "cut", "burn", "community"]
    assert p.first_to_act_rule == "house-16.20"


def test_worked_case_8_dealt_one_folds_on_3rd_tda_RP_10_H_B():
    """8 dealt, one folds on 3rd: stub 4, required 9, RP-10-H-B (burn, community)."""
    hand, _, _ = deal(8, TDA, "6th", folds={"3rd": [4]})
    assert seventh_check(TDA, hand) == (7, 4, 9, Procedure.B)
    p = plan_street(TDA, hand, "7th")
    assert kinds(p) == ["burn", "community"]
    assert p.new_stub == frozenset()


def test_worked_case_8_dealt_one_folds_on_3rd_house_16_19():
    """8 dealt, one folds on 3rd: house 16.19: no community card, the burn after the cut skipped."""
    hand, shoe, _ = deal(8, HOUSE, "6th", folds={"3rd": [4]})
    assert seventh_check(HOUSE, hand) == (7, 4, 9, Procedure.H19)
    p = plan_street(HOUSE, hand, "7th")
    assert kinds(p) == ["burn", "deal", "deal", "scramble", "cut"] + ["deal"] * 5
    assert p.steps[3].gather == ("stub", "burn 4th", "burn 5th", "burn 6th", "burn 7th")
    assert not p.community
    walk(hand, p, shoe)
    assert all(len(hand.seats[i].down) == 3 for i in hand.in_hand())
    assert hand.community_street is None


def test_worked_case_8_dealt_two_fold_on_3rd_tda_RP_10_H_A():
    """8 dealt, two fold on 3rd: stub 7, required 8, RP-10-H-A (scramble, cut, burn, deal)."""
    hand, shoe, _ = deal(8, TDA, "6th", folds={"3rd": [1, 6]})
    assert seventh_check(TDA, hand) == (6, 7, 8, Procedure.A)
    p = plan_street(TDA, hand, "7th")
    assert kinds(p) == ["scramble", "cut", "burn"] + ["deal"] * 6
    walk(hand, p, shoe)
    assert hand.stub_count() == 7 + 3 - 7


def test_worked_case_8_dealt_two_fold_on_3rd_house_16_18():
    """House 16.18: burn, deal 5 from the stub, merge the last card with the 4 burns, scramble,
    cut, burn, deal 1."""
    hand, shoe, _ = deal(8, HOUSE, "6th", folds={"3rd": [1, 6]})
    assert seventh_check(HOUSE, hand) == (6, 7, 8, Procedure.H18)
    p = plan_street(HOUSE, hand, "7th")
    assert kinds(p) == ["burn"] + ["deal"] * 5 + ["scramble", "cut", "burn", "deal"]
    assert p.steps[6].gather == ("stub", "burn 4th", "burn 5th", "burn 6th", "burn 7th")
    assert [s.seat_index for s in p.steps if s.kind == "deal"] == [0, 2, 3, 4, 5, 7]
    last = shoe.cards[-1]
    walk(hand, p, shoe)
    # The old stub's last card was never dealt to a seat before the scramble...
    assert hand.new_stub is not None and last in hand.new_stub
    assert len(hand.new_stub) == 5
    assert hand.stub_count() == 5 - 2


def test_worked_case_7_dealt_none_fold_tda_RP_10_H_A():
    """7 dealt, none fold: stub 7, required 9, RP-10-H-A."""
    hand, _, _ = deal(7, TDA, "6th")
    assert seventh_check(TDA, hand) == (7, 7, 9, Procedure.A)


def test_worked_case_7_dealt_none_fold_house_16_18():
    """7 dealt, none fold, house: pool 7 + 4 burns = 11 >= 8, house 16.18."""
    hand, _, _ = deal(7, HOUSE, "6th")
    p = plan_street(HOUSE, hand, "7th")
    assert p.procedure is Procedure.H18
    assert kinds(p) == ["burn"] + ["deal"] * 5 + ["scramble", "cut", "burn", "deal", "deal"]


# ----------------------------------------------------------------- invariants


@pytest.mark.parametrize("profile", [TDA, HOUSE], ids=["tda", "house"])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("fold_pattern", [0, 1, 2, 3])
def test_every_street_serves_all_players_alike_and_keeps_the_last_card(profile, n, fold_pattern):
    """No street ends with some players holding a fresh card and others a community card; a
    short stub's last card is never dealt to a seat before the scramble."""
    folds = {"3rd": list(range(fold_pattern)) if fold_pattern < n - 1 else []}
    hand, shoe, plans = deal(n, profile, "7th", folds=folds)
    for st, p in plans.items():
        if st == "3rd":
            continue
        if p.community:
            assert not any(s.kind == "deal" for s in p.steps)
        else:
            dealt = [s.seat_index for s in p.steps if s.kind == "deal"]
            assert sorted(dealt) == sorted(set(dealt))
        if any(s.kind == "scramble" for s in p.steps):
            before = [s for s in p.steps[: kinds(p).index("scramble")] if s.pulls_card]
            assert len(before) <= p.stub - 1
        else:
            assert p.cards_pulled <= p.stub - 1
    for i in hand.in_hand():
        total = hand.seats[i].card_count + (1 if hand.community_street else 0)
        assert total == 7
    if profile is TDA:
        for st in ("4th", "5th", "6th"):
            assert plans[st].procedure is Procedure.NORMAL


def test_house_short_before_7th_with_set_aside_cards():
    """House 16.16 set-aside cards make 6th short; the pool gathers them (house 16.18)."""
    hand, shoe, _ = deal(8, HOUSE, "4th")
    for _ in range(9):  # nine premature/aside cards out of play
        hand.put_aside(shoe.pull())
    p = plan_street(HOUSE, hand, "5th")
    assert p.procedure is Procedure.NORMAL
    walk(hand, p, shoe)
    assert forecast_short(HOUSE, hand) == "6th"
    p6 = plan_street(HOUSE, hand, "6th")
    assert p6.stub == 1 and p6.procedure is Procedure.H18
    assert kinds(p6)[:3] == ["scramble", "cut", "burn"]
    assert p6.steps[0].gather == ("stub", "burn 4th", "burn 5th", "set-aside")
    walk(hand, p6, shoe)
    assert hand.set_aside == [] and hand.burn_pile == [("6th", hand.burns["6th"][0])]
    assert all(hand.seats[i].card_count == 6 for i in hand.in_hand())


def test_tda_rp_10_h_d_community_first_to_act_rule_named():
    """RP-10-H-D: a community card names the first-to-act rule for 7th."""
    hand, _, _ = deal(8, TDA, "6th", folds={"3rd": [4]})
    assert plan_street(TDA, hand, "7th").first_to_act_rule == "RP-10-H-D"
    hand2, _, _ = deal(6, TDA, "6th")
    assert plan_street(TDA, hand2, "7th").first_to_act_rule is None


def test_house_skip_burn_disabled_gives_community_16_20():
    from dataclasses import replace

    strict = replace(HOUSE, skip_burn=False)
    hand, _, _ = deal(8, strict, "6th", folds={"3rd": [4]})
    p = plan_street(strict, hand, "7th")
    assert p.procedure is Procedure.H20 and kinds(p) == ["burn", "community"]


def test_forecast_from_the_start_and_after_folds():
    hand = HandState.new(Game.STUD, list(range(1, 9)))
    assert forecast_short(TDA, hand) == "7th"
    hand, _, _ = deal(6, TDA, "5th")
    assert forecast_short(TDA, hand) is None
    hand, _, _ = deal(8, HOUSE, "5th")
    assert forecast_short(HOUSE, hand) == "7th"
    hand.fold(0)
    hand.fold(1)
    hand.fold(2)
    # 5 remain: stub 10 - 6 = 4 before 7th, below 7; 4 + 3 burns >= 5 + 1: house 16.18.
    assert forecast_short(HOUSE, hand) == "7th"


def test_all_in_players_still_need_cards():
    hand, _, _ = deal(8, TDA, "6th", all_ins={"4th": [2, 5]})
    assert seventh_check(TDA, hand)[3] is Procedure.C


def test_killed_hands_take_no_cards_and_lower_required():
    hand, _, _ = deal(8, TDA, "3rd")
    hand.kill(7)
    p = plan_street(TDA, hand, "4th")
    assert 7 not in [s.seat_index for s in p.steps]
    assert p.required == 9


def test_new_stub_flags_a_foreign_card():
    hand, shoe, _ = deal(8, TDA, "6th", folds={"3rd": [1, 6]})
    p = plan_street(TDA, hand, "7th")
    for card in hand.seen_cards():
        assert card not in p.new_stub or card in hand.burn_cards()
    dealt = hand.seats[0].down[0]
    assert dealt is not None and dealt not in p.new_stub


def test_unreadable_burn_counted_in_new_stub_unknown():
    hand = HandState.new(Game.STUD, list(range(1, 9)))
    shoe = Shoe()
    for st in ("3rd", "4th", "5th", "6th"):
        p = plan_street(TDA, hand, st)
        for step in p.steps:
            c = shoe.pull()
            hand.record(step, None if (step.kind == "burn" and st == "5th") else c)
    p = plan_street(TDA, hand, "7th")
    assert p.procedure is Procedure.C and p.new_stub_unknown == 1


def test_partly_dealt_street_is_planned_without_a_second_burn():
    hand, shoe, _ = deal(5, TDA, "4th")
    hand.record(Step("burn", street="5th"), shoe.pull())
    hand.record(Step("deal", 0, "up", street="5th"), shoe.pull())
    p = plan_street(TDA, hand, "5th")
    assert kinds(p) == ["deal"] * 4 and p.steps[0].seat_index == 1


def test_empty_stub_and_impossible_street_raise():
    hand = HandState.new(Game.STUD, list(range(1, 9)))
    hand.pulled = 50
    with pytest.raises(StubError):
        plan_street(TDA, hand, "3rd")


def test_stub_candidates_exact_when_everything_read():
    hand, shoe, _ = deal(4, TDA, "5th")
    assert hand.stub_candidates() == frozenset(shoe.cards)
    assert len(shoe.cards) == hand.stub_count()
    assert set(full_deck()) == set(shoe.cards) | set(hand.seen_cards())
    assert Card.parse("2c") in hand.seen_cards()


@pytest.mark.parametrize("spec", CASES)
def test_house_16_18_keeps_the_new_stub_last_card_16_19_only_when_pool_equals_players(spec):
    """house 16.18 leaves a card in the new stub; house 16.19 deals it out only when the pool is
    exactly the players to serve; TDA RP-10-H-A always leaves one."""
    for profile in (TDA, HOUSE):
        after: dict[str, int] = {}
        _, plans = scenario(spec, profile, after)
        for st, p in plans.items():
            if p.procedure in (Procedure.H18, Procedure.A, Procedure.B, Procedure.C, Procedure.H20):
                assert after[st] >= 1, (st, p.procedure)
            if p.procedure is Procedure.H19 and after[st] == 0:
                served = sum(1 for s in p.steps if s.kind == "deal")
                assert served == p.live


def test_house_16_20_community_card_before_7th_counts_in_every_hand():
    """house 16.20 on 6th: the community card is one of every player's cards, so 7th is one
    downcard each and the hand ends with seven cards per player."""
    hand, shoe, _ = deal(8, HOUSE, "5th")
    for _ in range(hand.stub_count() - 1):
        hand.put_aside(shoe.pull())
    hand.set_aside.clear()  # the pool: the last card and the 4th, 5th street burns
    p6 = plan_street(HOUSE, hand, "6th")
    assert p6.procedure is Procedure.H20 and kinds(p6) == ["scramble", "cut", "burn", "community"]
    for step in p6.steps:
        hand.record(step, None)
    assert hand.street_complete("6th") and hand.next_street() == "7th"
    assert [hand.needs_card(i, "7th") for i in range(8)] == [True] * 8
    hand.returned += 10  # a later reload (e.g. set-aside cards) large enough for 7th
    p7 = plan_street(HOUSE, hand, "7th")
    assert kinds(p7) == ["burn"] + ["deal"] * 8
    for step in p7.steps:
        hand.record(step, None)
    assert hand.next_street() is None
    assert all(hand.seats[i].card_count == 6 for i in hand.in_hand())


def test_second_community_card_is_refused_house_16_20():
    """house 16.20 gives one community card; a second shortage is no rule's case: StubError."""
    hand, shoe, _ = deal(8, HOUSE, "5th")
    for _ in range(hand.stub_count() - 1):
        hand.put_aside(shoe.pull())
    hand.set_aside.clear()
    for step in plan_street(HOUSE, hand, "6th").steps:
        hand.record(step, None)
    with pytest.raises(StubError, match="second community card"):
        plan_street(HOUSE, hand, "7th")
