"""Stub accounting and the short-stub procedures: :func:`plan_street` gives the ordered steps of a
whole street (burn, deal, community, scramble, cut), decided at its start from the hand and the
rule profile, with the required number (RP-10-H) and the TDA or house procedure when the stub
falls short. Pure: no I/O. docs/rules.md, *Stub accounting and the short-stub procedures*.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.hand import STREETS, HandError, HandState, street_index
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.rules.steps import Step
from shoe_ctl.values import FrozenValue, frozen_value

__all__ = [
    "Procedure",
    "Step",
    "StreetPlan",
    "StubError",
    "forecast_by_play",
    "forecast_short",
    "plan_street",
    "required_number",
    "seventh_check",
]


class StubError(HandError):
    """The stub and every pile that may be gathered cannot serve the street at all (cannot occur
    with a 52-card deck and at most 8 players unless the record is inconsistent)."""


def required_number(players_remaining: int) -> int:
    """RP-10-H *required number*: players remaining + 1 burn card + 1 undealt last card.

    :param players_remaining: players still in the hand (all-in players included).
    :raises ValueError: for a negative count.
    """
    if players_remaining < 0:
        raise ValueError(f"players remaining must be >= 0, got {players_remaining}")
    return players_remaining + 2


class Procedure(StrEnum):
    """How a street is dealt: normally, by TDA RP-10-H A/B/C, or by house 16.18/16.19/16.20."""

    NORMAL = "normal"
    A = "A"
    B = "B"
    C = "C"
    H18 = "16.18"
    H19 = "16.19"
    H20 = "16.20"

    @property
    def community(self) -> bool:
        """True for the procedures that deal a community card (B, C, 16.20)."""
        return self in (Procedure.B, Procedure.C, Procedure.H20)


@frozen_value
class StreetPlan(FrozenValue):
    """The whole street, decided at its start.

    :param street: ``"3rd"`` .. ``"7th"``.
    :param procedure: how it is dealt.
    :param steps: every step from the street's first burn to its last card, in order.
    :param stub: cards in the stub when the street starts.
    :param required: the required number for the players in the hand.
    :param live: players in the hand (all-in included).
    :param new_stub: identities a scrambled new stub may hold, as known at the street's start
        (every burn was read); empty when there is no scramble. Under house 16.18/16.19 the cards
        dealt from the old stub before the scramble leave this set as they are read;
        :attr:`HandState.new_stub` is exact once the scramble is recorded.
    :param new_stub_unknown: unreadable cards gathered into that stub.
    :param first_to_act_rule: ``"RP-10-H-D"`` or ``"house-16.20"`` when a community card is
        dealt, else ``None``.
    :param clause: the clause applied: ``"normal"``, ``"RP-10-H-A"``, ``"RP-10-H-B"``,
        ``"RP-10-H-C"``, ``"house-16.18"``, ``"house-16.19"``, ``"house-16.20"``.
    """

    street: str
    procedure: Procedure
    steps: tuple[Step, ...]
    stub: int
    required: int
    live: int
    new_stub: frozenset[Card]
    new_stub_unknown: int
    first_to_act_rule: str | None
    clause: str

    def __init__(self, street: str, procedure: Procedure, steps: tuple[Step, ...], stub: int,
                 required: int, live: int, new_stub: frozenset[Card], new_stub_unknown: int,
                 first_to_act_rule: str | None, clause: str) -> None:
        put = self._put
        put[0](self, street)
        put[1](self, procedure)
        put[2](self, steps)
        put[3](self, stub)
        put[4](self, required)
        put[5](self, live)
        put[6](self, new_stub)
        put[7](self, new_stub_unknown)
        put[8](self, first_to_act_rule)
        put[9](self, clause)

    @property
    def cards_pulled(self) -> int:
        """Cards the street takes out of the shoe (burns, deals, community)."""
        return sum(1 for s in self.steps if s.pulls_card)

    @property
    def community(self) -> bool:
        """True when the street deals a community card."""
        return any(s.kind == "community" for s in self.steps)


_STEPS: dict[tuple[str, int | None, str | None, str | None], Step] = {}


def _step(kind: str, seat_index: int | None = None, face: str | None = None, street: str | None = None) -> Step:
    """``Step(kind, seat_index, face, street=street)``, the same value shared between plans (a step
    is immutable; a street's plan is built at every street start, some forty steps a hand)."""
    key = (kind, seat_index, face, street)
    step = _STEPS.get(key)
    if step is None:
        step = Step(kind, seat_index, face, street=street)
        if len(_STEPS) < 1024:  # eight seats, five streets, two faces: a few hundred at most
            _STEPS[key] = step
    return step


_NORMAL = Procedure.NORMAL  # looked up once: every street's plan compares with it

_NORMAL_PLANS: dict[tuple[Any, ...], StreetPlan] = {}
_NORMAL_PLANS_MAX = 4096
"""Normal street plans already made, by what decides them: the street, the players owed a card
(3rd: with the cards each holds and its hole cards; 4th-7th: with the face a
ruling set for their next card) and whether the burn is taken, the stub, the required number and
the players in the hand. A plan is immutable: the same value is handed out again (a table plans
the same few hundred normal streets hand after hand)."""


def _keep_normal(key: tuple[Any, ...], plan: StreetPlan) -> StreetPlan:
    if len(_NORMAL_PLANS) < _NORMAL_PLANS_MAX:
        _NORMAL_PLANS[key] = plan
    return plan

#: The clause each short-stub procedure implements, as alert codes name it (RP-10-H, house 16.18-16.20).
PROCEDURE_CLAUSE: dict[Procedure, str] = {
    Procedure.NORMAL: "normal",
    Procedure.A: "RP-10-H-A",
    Procedure.B: "RP-10-H-B",
    Procedure.C: "RP-10-H-C",
    Procedure.H18: "house-16.18",
    Procedure.H19: "house-16.19",
    Procedure.H20: "house-16.20",
}


def _face(street: str) -> str:
    return "down" if street == "7th" else "up"


def _gather_names(hand: HandState, extra_burn_street: str | None) -> tuple[str, ...]:
    names = ["stub"]
    streets = {s for s, _ in hand.burn_pile}
    if extra_burn_street is not None:
        streets.add(extra_burn_street)
    names.extend(f"burn {s}" for s in STREETS if s in streets)
    if hand.set_aside:
        names.append("set-aside")
    return tuple(names)


def _gathered_identities(hand: HandState) -> tuple[frozenset[Card], int]:
    gathered = [c for _, c in hand.burn_pile] + list(hand.set_aside)
    known = hand.stub_candidates() | frozenset(c for c in gathered if c is not None)
    prior = hand.new_stub_unknown if hand.new_stub is not None else 0
    return known, prior + sum(1 for c in gathered if c is None)


def plan_street(profile: RuleProfile, hand: HandState, street: str) -> StreetPlan:
    """The ordered steps of ``street`` for the hand as it stands at the street's start.

    A street already begun (its burn taken, some cards dealt: e.g. redealt after RP-5-D) is
    planned for what is still missing: no second burn, only the players still owed a card.

    :param profile: the rule profile (TDA RP-10-H or house 16.18-16.20).
    :param hand: the hand so far (not changed).
    :param street: ``"3rd"`` .. ``"7th"``.
    :raises HandError: for an unknown street.
    :raises StubError: when even every gatherable card cannot serve the street, or a second
        community card would be needed (no rule covers it).
    """
    street_index(street)
    stub = hand.stub_count()
    live = hand.live_count()
    required = required_number(live)
    players = hand.owed(street)

    def plan(proc: Procedure, steps: list[Step], new_stub: frozenset[Card] = frozenset(), unknown: int = 0) -> StreetPlan:
        ftr = None
        if proc is not _NORMAL and proc.community:
            ftr = "house-16.20" if profile.house else "RP-10-H-D"
        return StreetPlan(street, proc, tuple(steps), stub, required, live, new_stub, unknown, ftr, PROCEDURE_CLAUSE[proc])

    if street == "3rd":
        seats = hand.seats
        held = tuple([(i, seats[i].dealt_count, len(seats[i].down)) for i in players])
        key: tuple[Any, ...] = (street, held, stub, required, live)
        done = _NORMAL_PLANS.get(key)
        if done is not None:
            return done
        steps: list[Step] = []
        holes = {i: down for i, _dealt, down in held}
        for r in range(3):
            for i, dealt, _down in held:
                # Rounds 0 and 1 are downcards, round 2 the upcard: a seat's card is a downcard
                # while it holds fewer than two. So a hole card exposed on the initial deal, which
                # stands as the upcard, has the third card go down (RP-10-A, house 16.1), and a seat
                # that holds its upcard before its second hole card (its cards placed by the
                # dealer, docs/irregularities.md) is owed a downcard.
                if dealt <= r:
                    face = "down" if holes[i] < 2 else "up"
                    holes[i] += face == "down"
                    steps.append(_step("deal", i, face, street))
        if len(steps) + 1 > stub:
            raise StubError(f"3rd street needs {len(steps)} cards and the stub holds {stub}")
        return _keep_normal(key, plan(_NORMAL, steps))

    if not players:
        return plan(Procedure.NORMAL, [])
    burned = bool(hand.burns.get(street))
    n = len(players)
    if stub >= n + (0 if burned else 1) + 1:  # dealt normally: the same plan for the same seats
        seats = hand.seats
        key = (street, burned, tuple([(i, seats[i].next_face) for i in players]), stub, required, live)
        done = _NORMAL_PLANS.get(key)
        if done is not None:
            return done
    face = _face(street)
    burn = [] if burned else [_step("burn", street=street)]
    deals = [_step("deal", i, hand.seats[i].next_face or face, street) for i in players]
    if stub >= n + len(burn) + 1:
        return _keep_normal(key, plan(Procedure.NORMAL, burn + deals))

    cut = Step("cut", street=street)
    after_burn = Step("burn", street=street)
    community = Step("community", None, "up", street=street)
    pool = stub + len(hand.burn_pile) + len(hand.set_aside)
    ids, unknown = _gathered_identities(hand)

    def no_second_community() -> None:
        if hand.community_street is not None and hand.community_street != street:
            raise StubError(f"{street}: a second community card would be needed (one was dealt on "
                            f"{hand.community_street}); no rule covers it: call the floor")
        if n < live:
            # The street has begun with fresh cards (e.g. an extra burn, house 16.15): a community
            # card now would give those players two cards of the street and end it mixed.
            raise StubError(f"{street}: {live - n} player(s) already hold their {street} card and the "
                            f"rest cannot get a fresh one; a community card would mix the street: call the floor")

    if not profile.house:
        # RP-10-H: the stub is scrambled with the prior burns (and, never under TDA in practice,
        # set-aside cards), so a scrambled stub must reach the required number of this street.
        scramble = Step("scramble", gather=_gather_names(hand, None), street=street)
        if pool >= n + 2:
            return plan(Procedure.A, [scramble, cut, after_burn, *deals], ids, unknown)
        no_second_community()
        if stub >= 3:
            return plan(Procedure.B, [*burn, community])
        if pool >= 3:
            return plan(Procedure.C, [scramble, cut, after_burn, community], ids, unknown)
        raise StubError(f"{street}: stub {stub} and {pool - stub} gatherable cards cannot give a burn and a community card")

    # House 16.18-16.20: pool counts every card that can still be dealt, wherever it lies.
    # 16.18 keeps the new stub's last card undealt where it can (pool >= n + 2); 16.19 skips the
    # burn when that is what keeps the last card (pool == n + 1) or what gives every player a
    # fresh card at all (pool == n); without 16.19, 16.18 may have to deal the last card.
    use_18 = pool >= n + 2 or (pool == n + 1 and not profile.skip_burn)
    use_19 = not use_18 and profile.skip_burn and pool >= n
    if use_18 or use_19:
        take_burn = not burned and stub >= 2
        first = [Step("burn", street=street)] if take_burn else []
        k = max(stub - 1 - len(first), 0)
        k = min(k, n)
        from_stub = deals[:k]
        rest = deals[k:]
        names = _gather_names(hand, street if take_burn else None)
        scramble = Step("scramble", gather=names, street=street)
        if use_18:
            return plan(Procedure.H18, [*first, *from_stub, scramble, cut, after_burn, *rest], ids, unknown)
        return plan(Procedure.H19, [*first, *from_stub, scramble, cut, *rest], ids, unknown)
    no_second_community()
    if stub >= 3:
        return plan(Procedure.H20, [*burn, community])
    if pool >= 2:
        scramble = Step("scramble", gather=_gather_names(hand, None), street=street)
        return plan(Procedure.H20, [scramble, cut, after_burn, community], ids, unknown)
    raise StubError(f"{street}: stub {stub} and {pool - stub} gatherable cards cannot give a burn and a community card")


def forecast_short(profile: RuleProfile, hand: HandState) -> str | None:
    """The first street, from the street in progress (or the next one) on, that will not be dealt
    normally if every player now in the hand stays in; ``None`` when the hand can end normally.

    A street already dealt by a short-stub procedure (scramble or community card) counts as short.
    The hand is not changed. Without a scramble or community card in the hand the answer is
    counted: cards held per player, the stub, and which streets have had their burn (a normal
    street deals one card to each player still owed one, after its burn if not yet taken, and
    must leave the last card; 3rd street deals every missing card and must leave one). With
    either, a copy of the hand is played forward with unknown cards (:func:`forecast_by_play`,
    which gives the same answer in every case).
    """
    if hand.scrambles or hand.community_street is not None:
        return forecast_by_play(profile, hand)
    stub = hand.stub_count()
    have = [s.dealt_count for s in hand.seats if not (s.folded or s.killed or s.dead)]  # in hand
    burned = {st for st, cards in hand.burns.items() if cards}
    for k, st in enumerate(STREETS):
        owed = k + 3  # cards held once the street is complete (HandState.cards_on_street)
        while True:
            short = [i for i, h in enumerate(have) if h < owed]
            if not short:
                break  # the street is complete: the next one
            if k == 0:  # 3rd street: every missing card, the last card kept
                cards = sum(owed - have[i] for i in short)
                if cards + 1 > stub:
                    return st
                stub -= cards
                for i in short:
                    have[i] = owed
                continue
            burn = 0 if st in burned else 1
            if stub < len(short) + burn + 1:
                return st
            stub -= len(short) + burn
            burned.add(st)
            for i in short:
                have[i] += 1
    return None


def forecast_by_play(profile: RuleProfile, hand: HandState) -> str | None:
    """:func:`forecast_short` worked out by playing a copy of the hand forward, street by street,
    with unknown cards (every player staying in)."""
    h = hand.copy()
    st = h.next_street()
    while st is not None:
        if st in h.scrambles or h.community_street == st:
            return st
        try:
            p = plan_street(profile, h, st)
        except StubError:
            return st
        if p.procedure is not Procedure.NORMAL:
            return st
        for step in p.steps:
            h.record(step, None)
        st = h.next_street()
    return None


def seventh_check(profile: RuleProfile, hand_after_6th: HandState) -> tuple[int, int, int, Procedure]:
    """RP-10-H's check before 7th street (house: 16.18-16.20 applied to 7th).

    :returns: ``(live, stub, required, procedure)`` for 7th street.
    :raises StubError: see :func:`plan_street`.
    """
    p = plan_street(profile, hand_after_6th, "7th")
    return p.live, p.stub, p.required, p.procedure
