"""Edge cases of the rules core: dead and killed hands on 3rd street, short stubs at their limits."""

from __future__ import annotations

from stubhelp import HOUSE, TDA, Shoe, walk

from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.games import Game, bring_in, first_to_act_third
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.irregular import absent_player, exposed_downcard
from shoe_ctl.rules.stub import plan_street


def _cards(text: str) -> list[Card]:
    return [Card.parse(c) for c in text.split()]


def _third_with_dead_hand() -> HandState:
    """Four players; player 0's two hole cards are dealt face up (house 16.2: dead hand)."""
    hand = HandState.new(Game.STUD, [1, 2, 3, 4])
    shoe = Shoe(_cards("Ah Kh Qh Jh Ac Kc Qc Jc 9s 5d 7d") + _cards("2c 3c 4c 5c"))
    plan = plan_street(HOUSE, hand, "3rd")
    for step in plan.steps[:8]:
        hand.record(step, shoe.pull())
    exposed_downcard(HOUSE, hand, 0, both=True).apply(hand)
    walk(hand, plan_street(HOUSE, hand, "3rd"), shoe)
    return hand


def test_house_16_2_dead_hand_takes_no_part_in_the_bring_in_house_16_3():
    """house 16.2 with house 16.3: the dead hand gets no upcard; the bring-in is the lowest upcard
    among the others (5d), not unknown."""
    hand = _third_with_dead_hand()
    assert hand.seats[0].up == [] and hand.seats[0].dead
    counts = hand.bring_in_counts()
    assert counts == [False, True, True, True]
    assert bring_in(Game.STUD, hand.upcards("3rd"), counts) == 2
    assert first_to_act_third(Game.STUD, hand.upcards("3rd"), hand.can_act(), counts) == 2


def test_house_16_2_dead_hand_upcard_shown_does_not_bring_in():
    """A dead hand whose upcard is showing (2c) does not bring in: it is out of the hand."""
    ups = _cards("2c 9s 5d 7d")
    counts = [False, True, True, True]
    assert bring_in(Game.STUD, ups) == 0
    assert bring_in(Game.STUD, ups, counts) == 2
    assert first_to_act_third(Game.STUD, ups, [False, True, True, True], counts) == 2


def test_RP_10_C_rule_30_killed_bring_in_still_posts_then_left_acts():
    """RP-10-C with Rule 30: a killed absent player holding the low card still posts the bring-in
    (counts), and the betting starts with the next player to the left who can act."""
    hand = HandState.new(Game.STUD, [1, 2, 3, 4])
    shoe = Shoe(_cards("Ah Kh Qh Jh Ac Kc Qc Jc 9s 2c 7d 8d") + _cards("3c 4c 5c"))
    walk(hand, plan_street(TDA, hand, "3rd"), shoe)
    r = absent_player(TDA, hand, 1, action_reached=False, bring_in=True)
    r.apply(hand)
    assert r.posts_bring_in and hand.seats[1].killed
    counts = hand.bring_in_counts()
    assert counts == [True, True, True, True]
    assert bring_in(Game.STUD, hand.upcards("3rd"), counts) == 1
    assert first_to_act_third(Game.STUD, hand.upcards("3rd"), hand.can_act(), counts) == 2


def test_hand_copy_is_independent_in_every_mutable_field():
    """HandState.copy (used by forecast_short) shares no list, dict or set with the original."""
    from dataclasses import fields

    from stubhelp import deal

    from shoe_ctl.rules.irregular import premature_cards

    hand, shoe, _ = deal(5, HOUSE, "4th")
    plan = plan_street(HOUSE, hand, "5th")
    for step in plan.steps[:2]:
        hand.record(step, shoe.pull())
    premature_cards(HOUSE, hand, "5th", [(0, "up")]).apply(hand)
    hand.put_aside(shoe.pull())
    hand.dead_cards.append(None)
    hand.scrambles.append("5th")
    twin = hand.copy()
    assert twin == hand
    for obj, other in [(hand, twin), *zip(hand.seats, twin.seats, strict=True)]:
        for f in fields(obj):
            a, b = getattr(obj, f.name), getattr(other, f.name)
            if isinstance(a, (list, dict, set)):
                assert a is not b, f.name
    for key in hand.burns:
        assert hand.burns[key] is not twin.burns[key]
    twin.fold(1)
    twin.seats[0].down.append(None)
    assert hand.seats[1].in_hand and len(hand.seats[0].down) != len(twin.seats[0].down)


def test_house_16_16_aside_after_betting_never_takes_the_stub_last_card():
    """house 16.16 with house 16.18: one card aside per active player, but a stub too small for
    that gives what it can and keeps its last card (a second premature deal late in the hand)."""
    from stubhelp import deal

    from shoe_ctl.rules.irregular import aside_after_betting

    hand, shoe, _ = deal(8, HOUSE, "5th")  # stub 52 - 24 - 2 * 9 = 10
    assert aside_after_betting(hand) == 8
    for _ in range(5):
        hand.put_aside(shoe.pull())
    assert hand.stub_count() == 5 and aside_after_betting(hand) == 4
    for _ in range(4):
        hand.put_aside(shoe.pull())
    assert hand.stub_count() == 1 and aside_after_betting(hand) == 0
    p = plan_street(HOUSE, hand, "6th")  # the pool: last card, 2 burns, 9 set-aside cards
    assert p.procedure.value == "16.18" and p.steps[0].kind == "scramble"


def test_RP_10_H_B_no_community_card_once_a_street_has_begun_with_fresh_cards():
    """RP-10-H / house 16.20: a street decided as fresh cards that runs short half-way (cards lost
    to irregularities) must not end with a community card for the rest: that is the floor's."""
    from stubhelp import deal

    from shoe_ctl.rules.stub import StubError

    for profile in (TDA, HOUSE):
        hand, shoe, _ = deal(5, profile, "6th")
        p7 = plan_street(profile, hand, "7th")
        for step in p7.steps[:2]:  # burn, player 0's 7th card
            hand.record(step, shoe.pull())
        hand.burn_pile.clear()  # nothing left to gather
        hand.pulled = 52 - 5 + hand.returned  # five cards left: four players owed, last card kept
        assert plan_street(profile, hand, "7th").procedure.value == "normal"
        # Cards lost until the rest cannot be served fresh (house 16.19 deals a pool equal to the
        # players owed, so it takes one more); the stub still holds 3 or more.
        hand.pulled += 1 if profile is TDA else 2
        assert hand.stub_count() >= 3
        try:
            plan = plan_street(profile, hand, "7th")
        except StubError as exc:
            assert "mix" in str(exc)
        else:
            raise AssertionError(f"planned {plan.procedure} with a community card on a begun street")
