"""``forecast_short`` counts cards where it can; ``forecast_by_play`` plays a copy of the hand
forward street by street. On any hand state — odd ones too: players holding more or fewer cards
than the street (premature cards, a missed card), burns taken or not, folds, kills and all-ins,
a short stub, a scramble or a community card already dealt — the two give the same street,
under both profiles (docs/rules.md, *Forecast*)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from stubhelp import HOUSE, TDA

from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import STREETS, HandError, HandState
from shoe_ctl.rules.stub import Step, forecast_by_play, forecast_short

OPS = st.lists(st.one_of(
    st.tuples(st.just("deal"), st.integers(0, 7), st.sampled_from(["up", "down"]), st.sampled_from(STREETS)),
    st.tuples(st.just("burn"), st.sampled_from(STREETS)),
    st.tuples(st.just("community"), st.sampled_from(STREETS[1:])),
    st.tuples(st.just("scramble"), st.sampled_from(STREETS[1:])),
    st.tuples(st.sampled_from(["fold", "kill", "all_in"]), st.integers(0, 7)),
), max_size=60)


def _build(n: int, ops: list[tuple[object, ...]], deck: int) -> HandState:
    hand = HandState.new(Game.STUD, list(range(1, n + 1)))
    hand.deck_size = deck
    for op in ops:
        kind = op[0]
        try:
            if kind == "deal":
                i, face, street = op[1], op[2], op[3]
                hand.record(Step("deal", int(i) % n, str(face), street=str(street)), None)
            elif kind == "burn":
                hand.record(Step("burn", street=str(op[1])), None)
            elif kind == "community" and hand.community_street is None:
                hand.record(Step("community", None, "up", street=str(op[1])), None)
            elif kind == "scramble":
                burns = tuple(f"burn {s}" for s in STREETS if hand.burns.get(s))
                hand.scramble(("stub", *burns), street=str(op[1]))
            elif kind in ("fold", "kill", "all_in") and hand.live_count() > 2:
                getattr(hand, str(kind))(int(op[1]) % n)
        except HandError:
            pass  # an operation the hand refuses (an empty stub, a folded player): skipped
    return hand


@given(st.integers(2, 8), OPS, st.integers(8, 52))
@settings(max_examples=1500, deadline=None)
def test_counting_and_playing_forward_name_the_same_short_street(n: int, ops: list[tuple[object, ...]],
                                                                 deck: int) -> None:
    hand = _build(n, ops, deck)
    for profile in (TDA, HOUSE):
        assert forecast_short(profile, hand) == forecast_by_play(profile, hand)
