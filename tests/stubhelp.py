"""Helpers for the stub tests: deal a hand street by street through plan_street and record."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from shoe_ctl.config import load_profile
from shoe_ctl.rules.cards import Card, full_deck
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import STREETS, HandState
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.rules.stub import StreetPlan, plan_street

TDA = load_profile("tda")
HOUSE = load_profile("house")


class Shoe:
    """A stub of known cards in a fixed order; a scramble reloads the candidate set in order."""

    def __init__(self, cards: Sequence[Card] | None = None) -> None:
        self.cards: list[Card] = list(cards if cards is not None else full_deck())

    def pull(self) -> Card:
        return self.cards.pop(0)

    def reload(self, identities: frozenset[Card]) -> None:
        self.cards = sorted(identities)


def walk(hand: HandState, plan: StreetPlan, shoe: Shoe) -> list[Card | None]:
    """Apply every step of ``plan`` with cards from ``shoe``; returns the cards pulled."""
    pulled: list[Card | None] = []
    for step in plan.steps:
        if step.pulls_card:
            card = shoe.pull()
            pulled.append(card)
            hand.record(step, card)
        else:
            hand.record(step)
            if step.kind == "scramble":
                assert hand.new_stub is not None
                shoe.reload(hand.new_stub)
    return pulled


def deal(
    n: int,
    profile: RuleProfile,
    through: str,
    folds: Mapping[str, Sequence[int]] | None = None,
    all_ins: Mapping[str, Sequence[int]] | None = None,
    shoe: Shoe | None = None,
) -> tuple[HandState, Shoe, dict[str, StreetPlan]]:
    """Deal an ``n``-player hand through street ``through``; after each street's deal the players
    in ``folds[street]`` fold and ``all_ins[street]`` go all-in."""
    hand = HandState.new(Game.STUD, list(range(1, n + 1)))
    shoe = shoe or Shoe()
    plans: dict[str, StreetPlan] = {}
    for st in STREETS:
        plans[st] = p = plan_street(profile, hand, st)
        walk(hand, p, shoe)
        for i in (all_ins or {}).get(st, ()):
            hand.all_in(i)
        for i in (folds or {}).get(st, ()):
            hand.fold(i)
        if st == through:
            break
    return hand, shoe, plans


def kinds(plan: StreetPlan) -> list[str]:
    return [s.kind for s in plan.steps]


def profiles() -> Iterator[RuleProfile]:
    yield TDA
    yield HOUSE
