"""Property tests of the street plans on random hands (folds, all-ins, kills), both profiles."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from stubhelp import HOUSE, TDA, Shoe

from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import STREETS, HandState
from shoe_ctl.rules.stub import Procedure, plan_street, required_number


@st.composite
def hands(draw):
    n = draw(st.integers(2, 8))
    events = draw(st.lists(st.tuples(st.sampled_from(STREETS[:4]), st.sampled_from(["fold", "all-in", "kill"]),
                                     st.integers(0, 7)), max_size=6))
    return n, events


@settings(max_examples=150, deadline=None)
@given(hands(), st.sampled_from(["tda", "house"]))
def test_RP_10_H_and_house_16_18_plans_hold_on_random_hands(spec, name):
    """RP-10-H and house 16.18, 16.19, 16.20: every plan serves each player once or gives one
    community card; no duplicate card is ever dealt from a scrambled stub (its identities are
    exact); every player in the hand ends with seven cards."""
    profile = TDA if name == "tda" else HOUSE
    n, events = spec
    hand = HandState.new(Game.STUD, list(range(1, n + 1)))
    shoe = Shoe()
    dealt: list = []
    for street in STREETS:
        p = plan_street(profile, hand, street)
        players = [i for i in hand.in_hand()]
        assert p.required == required_number(len(players))
        if street != "3rd":
            normal = p.stub >= len(players) + 2
            assert (p.procedure is Procedure.NORMAL) == normal
            if profile is TDA and street != "7th":
                assert p.procedure is Procedure.NORMAL
        deals = [s.seat_index for s in p.steps if s.kind == "deal"]
        if p.community:
            assert deals == [] and p.first_to_act_rule in ("RP-10-H-D", "house-16.20")
        elif street != "3rd":
            assert sorted(deals) == players
        for step in p.steps:
            if step.pulls_card:
                card = shoe.pull()
                dealt.append(card)
                hand.record(step, card)
            else:
                hand.record(step)
                if step.kind == "scramble":
                    assert hand.new_stub is not None and len(hand.new_stub) == hand.stub_count()
                    shoe.reload(hand.new_stub)
        assert len(shoe.cards) == hand.stub_count() >= 0
        if p.procedure in (Procedure.A, Procedure.B, Procedure.C, Procedure.H18, Procedure.H20):
            assert hand.stub_count() >= 1
        for s_, kind, k in events:
            if s_ == street and hand.live_count() > 2:
                able = hand.in_hand()
                i = able[k % len(able)]
                {"fold": hand.fold, "all-in": hand.all_in, "kill": hand.kill}[kind](i)
    seen = hand.seen_cards()  # a gathered burn may be dealt again, but no card is in two places
    assert len(seen) == len(set(seen)) == len(dealt) - hand.returned
    for i in hand.in_hand():
        assert hand.seats[i].card_count + (1 if hand.community_street else 0) == 7


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 8), st.data())
def test_owed_players_are_those_who_need_the_street_s_card(n, data):
    """``HandState.owed(street)`` lists, in order, the players in the hand for whom
    ``needs_card`` holds, and ``street_complete`` says none does, on hands with seats folded,
    killed, dead or all-in, any number of cards each, and a community card on any street."""
    hand = HandState.new(Game.STUD, list(range(1, n + 1)))
    for s in hand.seats:
        s.folded, s.killed, s.dead, s.all_in = (data.draw(st.booleans()) for _ in range(4))
        s.down.extend([None] * data.draw(st.integers(0, 4)))
        s.up.extend([None] * data.draw(st.integers(0, 4)))
    hand.community_street = data.draw(st.sampled_from([None, *STREETS]))
    for street in STREETS:
        want = [i for i in hand.in_hand() if hand.needs_card(i, street)]
        assert hand.owed(street) == want
        assert hand.street_complete(street) is (not want)
