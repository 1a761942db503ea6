"""Property tests of the stub accounting on random hands with irregularities, both profiles.

Random hands of 2 to 8 players with folds, all-ins and kills after any street, premature cards
(RP-5-D under TDA, house 16.16 set-aside cards under house), unreadable burns and exposed 7th
cards replaced under RP-10-B. A *truth* record (every card read) and the *read* record (the
machine's view, unreadable burns as ``None``) are kept side by side; a physical shoe holds the
stub's real cards. Invariants (RP-10-H, house 16.18, 16.19, 16.20):

- every card is accounted for: seats (mucked too) + burn pile + set-aside + dead cards +
  community card + stub = 52, and the physical shoe holds exactly ``stub_count()`` cards, none
  of them anywhere else;
- the stub's candidate identities always include the cards really in it (no false alarm);
- no card is pulled from a stub of one card (the last card), except by house 16.19 when the pool
  equals the players to serve;
- every street ends with every player in the hand holding the street's card count (a community
  card counting for all): never some with a fresh card and others with a community card;
- ``forecast_short`` at a street's start names the first street actually dealt short when no one
  folds (and nothing irregular happens) from there on.
"""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st
from stubhelp import HOUSE, TDA, Shoe

from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import STREETS, HandState
from shoe_ctl.rules.irregular import aside_after_betting, exposed_seventh, premature_cards
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.rules.stub import Procedure, forecast_by_play, forecast_short, plan_street


class _Table:
    def __init__(self, n: int, rnd: random.Random) -> None:
        self.rnd = rnd
        self.read = HandState.new(Game.STUD, list(range(1, n + 1)))
        self.truth = self.read.copy()
        self.shoe = Shoe()
        rnd.shuffle(self.shoe.cards)

    def record(self, step, hide: bool = False) -> None:
        if step.pulls_card:
            card = self.shoe.pull()
            self.truth.record(step, card)
            self.read.record(step, None if hide else card)
        else:
            self.truth.record(step)
            self.read.record(step)
            if step.kind == "scramble":
                assert self.truth.new_stub is not None
                self.shoe.cards = sorted(self.truth.new_stub)
                self.rnd.shuffle(self.shoe.cards)

    def both(self, name: str, *args: object) -> None:
        getattr(self.truth, name)(*args)
        getattr(self.read, name)(*args)

    def check(self) -> None:
        for h in (self.read, self.truth):
            assert len(h.outside_stub()) + h.stub_count() == 52
        assert len(self.shoe.cards) == self.read.stub_count() == self.truth.stub_count()
        known = [c for c in self.truth.outside_stub() if c is not None] + self.shoe.cards
        assert len(known) == len(set(known)) == 52
        assert set(self.shoe.cards) <= self.read.stub_candidates()


def _premature(t: _Table, profile: RuleProfile, street: str) -> bool:
    rnd, read = t.rnd, t.read
    p = plan_street(profile, read, street)
    pulls = [s for s in p.steps if s.pulls_card]
    if p.procedure is not Procedure.NORMAL or len(pulls) < 2 or pulls[0].kind != "burn":
        return False
    early = pulls[: rnd.randint(2, len(pulls))]
    for step in early:
        t.record(step)
    ruling = premature_cards(profile, read, street, [(s.seat_index, s.face) for s in early[1:]])
    ruling.apply(t.read)
    ruling.apply(t.truth)
    if ruling.stub_delta > 0:  # RP-5-D: back into the stub, reshuffled
        t.shoe.cards = sorted(t.truth.stub_candidates())
        rnd.shuffle(t.shoe.cards)
    for _ in range(rnd.randint(0, 2)):  # the betting round that was still going on
        if read.live_count() > 2:
            t.both("fold", rnd.choice(read.in_hand()))
    if ruling.aside_per_active:  # house 16.16
        for _ in range(aside_after_betting(read)):
            card = t.shoe.pull()
            t.truth.put_aside(card)
            t.read.put_aside(card)
    t.check()
    return True


_EVENTS = st.lists(st.tuples(st.sampled_from(STREETS), st.sampled_from(["fold", "fold", "all_in", "kill"]),
                             st.integers(0, 7)), max_size=7)


_PAIR_SHORT = [("3rd", "fold", 7), ("6th", "fold", 6)]  # 8 dealt: stub 4, pool 7, 6 players


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(2, 8), st.integers(7, 8)), st.sampled_from(["tda", "house"]), _EVENTS,
       st.randoms(use_true_random=False), st.sampled_from([0.0, 0.3, 0.9]), st.sampled_from([0.0, 0.3]),
       st.booleans())
@example(8, "tda", _PAIR_SHORT, random.Random(0), 0.0, 0.0, False)
@example(8, "house", _PAIR_SHORT, random.Random(0), 0.0, 0.0, False)
def test_stub_accounting_RP_10_H_house_16_18_16_19_16_20_invariants(n, name, events, rnd, p_premature, p_unread,
                                                                     expose):
    profile = TDA if name == "tda" else HOUSE
    t = _Table(n, rnd)
    read = t.read
    forecasts: list[tuple[str, str | None]] = []
    procedures: dict[str, Procedure] = {}
    quiet_since: int = 0  # index into forecasts from which nothing irregular happened
    for street in STREETS:
        if read.live_count() < 2:
            break
        if street != "3rd" and rnd.random() < p_premature and _premature(t, profile, street):
            quiet_since = len(forecasts) + 1
        forecasts.append((street, forecast_short(profile, read)))
        plan = plan_street(profile, read, street)
        procedures[street] = plan.procedure
        players = read.live_count()
        pool = plan.stub + len(read.burn_pile) + len(read.set_aside)
        for step in plan.steps:
            if step.pulls_card and read.stub_count() < 2:
                assert plan.procedure is Procedure.H19 and pool == players
            t.record(step, hide=step.kind == "burn" and rnd.random() < p_unread)
            t.check()
            # counting answers as playing the hand forward does
            assert forecast_short(profile, read) == forecast_by_play(profile, read)
        assert read.street_complete(street)
        held = {read.seats[i].card_count + (read.community_street is not None) for i in read.in_hand()}
        assert held == {read.cards_on_street(street)}
        if street == "7th" and profile is TDA and not plan.community and expose:
            i = rnd.choice(read.in_hand())
            ruling = exposed_seventh(profile, read, i, action_remains=True)  # RP-10-B
            ruling.apply(t.read)
            ruling.apply(t.truth)
            for step in plan_street(profile, read, "7th").steps:
                assert read.stub_count() >= 2
                t.record(step)
            t.check()
            assert read.street_complete("7th")
        for when, kind, k in events:
            if when == street and read.live_count() > 2:
                players_in = read.in_hand()
                t.both(kind, players_in[k % len(players_in)])
                if kind != "all_in":
                    quiet_since = len(forecasts)
                assert forecast_short(profile, read) == forecast_by_play(profile, read)
    for k in range(quiet_since, len(forecasts)):
        street, forecast = forecasts[k]
        later = [s for s, _ in forecasts[k:] if procedures[s] is not Procedure.NORMAL]
        dealt_all = forecasts[-1][0] == "7th" or read.live_count() < 2
        if later:
            assert forecast == later[0], (street, forecasts, procedures)
        elif dealt_all and forecasts[-1][0] == "7th":
            assert forecast is None, (street, forecasts, procedures)
