"""Helpers for the stub tests: deal a hand street by street through plan_street and record."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from rule_profiles import HOUSE, TDA

from shoe_ctl.rules.cards import Card, full_deck
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import STREETS, HandState
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.rules.stub import StreetPlan, plan_street


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


def _parse_spec(spec: str) -> tuple[int, dict[str, dict[str, int]]]:
    """``"8; fold 3rd:2; all-in 4th:1; kill 3rd:1; premature 5th:3"`` -> (8, {kind: {street: n}})."""
    parts = [p.strip() for p in spec.split(";") if p.strip()]
    n = int(parts[0])
    events: dict[str, dict[str, int]] = {}
    for part in parts[1:]:
        kind, rest = part.split(" ", 1)
        street, count = rest.split(":")
        events.setdefault(kind, {})[street] = int(count)
    return n, events


def scenario(
    spec: str, profile: RuleProfile, after: dict[str, int] | None = None
) -> tuple[HandState, dict[str, StreetPlan]]:
    """Deal a whole hand described by ``spec`` (see :func:`_parse_spec`): after each street's deal
    the given number of players fold / go all-in / are killed (highest indices first among those
    still able to act); ``premature S:k`` means the burn and ``k`` cards of street S were dealt
    before the betting ended (RP-5-D or house 16.16, per profile). Returns the hand and its plans;
    ``after`` (if given) receives the stub left after each street."""
    from shoe_ctl.rules.irregular import aside_after_betting, premature_cards

    n, ev = _parse_spec(spec)
    hand = HandState.new(Game.STUD, list(range(1, n + 1)))
    shoe = Shoe()
    plans: dict[str, StreetPlan] = {}
    for st in STREETS:
        k = ev.get("premature", {}).get(st, 0)
        if k:
            early = plan_street(profile, hand, st)
            steps = [s for s in early.steps if s.pulls_card][: k + 1]
            for step in steps:
                hand.record(step, shoe.pull())
            ruling = premature_cards(profile, hand, st, [(s.seat_index, s.face or "up") for s in steps[1:]
                                                         if s.seat_index is not None])
            ruling.apply(hand)
            if ruling.stub_delta > 0:  # RP-5-D: back into the stub, reshuffled
                shoe.reload(hand.stub_candidates())
            if ruling.aside_per_active:
                for _ in range(aside_after_betting(hand)):
                    hand.put_aside(shoe.pull())
        plans[st] = p = plan_street(profile, hand, st)
        walk(hand, p, shoe)
        if after is not None:
            after[st] = hand.stub_count()
        for kind, act in (("all-in", hand.all_in), ("kill", hand.kill), ("fold", hand.fold)):
            for _ in range(ev.get(kind, {}).get(st, 0)):
                able = [i for i in hand.in_hand() if hand.seats[i].can_act]
                act(able[-1])
    return hand, plans


def summary(plan: StreetPlan) -> str:
    """The plan's steps in short: ``burn, deal 5, scramble (stub + burn 4th ...), cut, burn, deal 1``."""
    out: list[str] = []
    for step in plan.steps:
        if step.kind == "deal" and out and out[-1].startswith("deal "):
            out[-1] = f"deal {int(out[-1][5:]) + 1}"
        elif step.kind == "deal":
            out.append("deal 1")
        elif step.kind == "scramble":
            out.append("scramble (" + " + ".join(step.gather) + ")")
        else:
            out.append(step.kind)
    return ", ".join(out)


def case_row(spec: str) -> list[str]:
    """One row of the worked-case table in docs/rules.md for ``spec``."""
    hand_t, plans_t = scenario(spec, TDA)
    hand_h, plans_h = scenario(spec, HOUSE)
    t7, h7 = plans_t["7th"], plans_h["7th"]
    short_h = [st for st, p in plans_h.items() if p.procedure.value != "normal"]
    hp = plans_h[short_h[0]] if short_h else h7
    return [
        spec,
        str(t7.live),
        str(t7.stub),
        str(t7.required),
        t7.procedure.value,
        "; ".join(f"{st}: {plans_h[st].procedure.value}" for st in short_h) or "normal",
        summary(hp),
    ]


CASES = (
    "8", "8; fold 3rd:1", "8; fold 3rd:2", "7",
    "8; fold 3rd:3", "8; fold 4th:1", "8; fold 5th:1", "8; fold 6th:1", "8; fold 6th:2",
    "8; fold 4th:1; fold 5th:1", "8; all-in 4th:2", "8; kill 3rd:1", "7; fold 3rd:1", "7; fold 5th:1",
    "6", "5", "8; premature 5th:3", "8; premature 4th:8", "7; premature 6th:2", "6; premature 4th:6",
    "8; fold 3rd:1; premature 5th:2", "8; fold 3rd:2; premature 6th:1",
)


def table() -> str:
    """The worked-case table of docs/rules.md (markdown rows)."""
    head = ("| case | live on 7th | stub before 7th | required | TDA (RP-10-H) | house, short streets "
            "| house steps on the first short street |\n|---|---|---|---|---|---|---|")
    return "\n".join([head] + ["| " + " | ".join(f"`{c}`" if k == 0 else c for k, c in enumerate(case_row(s))) + " |"
                               for s in CASES])
