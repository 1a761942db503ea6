"""Seeded random hands in every game and both profiles, dealt directly into the machine by the
simulated dealer: every hand ends, every card lands where the dealer put it, the stub count is
what is physically left, and the only alerts are the short-stub clauses the rules core chose; the
dealer asks a shoe which cards a pull dispensed only when the shoe can double-pull."""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import pytest
from rule_profiles import PROFILES

from hil.dealer import DirectShoe, SimulatedDealer, random_hands
from hil.replay import run_direct
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card, card_text

CLAUSES = {"RP-10-H-A", "RP-10-H-B", "RP-10-H-C", "house-16.18", "house-16.19", "house-16.20"}


@pytest.mark.parametrize("game", ["stud", "stud8", "razz"])
@pytest.mark.parametrize("rules", ["tda", "house"])
def test_random_hands_deal_cleanly(game: str, rules: str) -> None:
    seed = ["stud", "stud8", "razz"].index(game) * 10 + ["tda", "house"].index(rules)
    hands = list(random_hands(seed, game=game, rules=rules, fold_rate=0.08, all_in_rate=0.03, count=40))
    recorder, dealer = run_direct(hands, PROFILES, rules=rules, seed=seed, auto_ack=False)
    assert dealer.stalled is None
    assert len(recorder.hands) == len(dealer.history) == 40
    procedures = set()
    for hand, picture in zip(recorder.hands, dealer.history, strict=True):
        assert set(hand.alerts) <= CLAUSES, hand.alerts
        assert hand.summary["game"] == game and hand.summary["rules"] == rules
        for seat, cards in hand.cards.items():
            physical = picture.seats[seat]
            assert cards["down"] == [card_text(c) for f, c in physical if f == "down"]
            assert cards["up"] == [card_text(c) for f, c in physical if f == "up"]
        assert hand.stub == len(picture.stub())
        if hand.summary["seventh"]:
            procedures.add(hand.summary["seventh"]["procedure"])
    assert len(procedures) >= 2  # short stubs do occur with eight seats and few folds


def test_dealer_resyncs_after_a_restart_that_lost_its_inputs() -> None:
    """A service restarted from its journal shows the same instruction again; a dealer input that
    never reached the journal (here 4th street's fold and betting complete) is reported again
    after ``resync()`` — once, without a second pull and without refolding a folded seat."""
    import collections

    from hil.dealer import DirectShoe, HandScript, SimulatedDealer
    from hil.deck import Deck
    from shoe_ctl.events import Alert, DealerAction, DealerInput
    from shoe_ctl.machine import Dealing

    events: collections.deque = collections.deque()
    lost: list[object] = []

    def post(ev: object) -> None:
        if isinstance(ev, DealerInput) and machine.state == "hand_fourth_betting" and len(lost) < 2:
            lost.append(ev)  # 4th street's inputs never reach the service
            return
        events.append(ev)

    script = HandScript([1, 2, 3, 4, 5], "stud", "tda", Deck.seeded(3).cards(),
                        {"3rd": [("fold", 5)], "4th": [("fold", 4)]}, name="lossy")
    shoe = DirectShoe(events.append)
    dealer = SimulatedDealer(shoe, post, [script], threaded=False)
    machine = Dealing(PROFILES)
    journal: list[object] = []

    def run(m: Dealing, cmds: list) -> list:
        out = list(cmds)
        for c in cmds:
            dealer.handle(c)
        while events:
            ev = events.popleft()
            journal.append(ev)
            got = m.handle(ev)
            out.extend(got)
            for c in got:
                dealer.handle(c)
        return out

    run(machine, machine.start())
    assert machine.state == "hand_fourth_betting"
    assert lost == [DealerInput(DealerAction.FOLD, 4), DealerInput(DealerAction.BETTING_COMPLETE)]
    pulls = dealer.stats.pulls
    restarted = Dealing(PROFILES)
    for ev in journal:
        restarted.handle(ev)
    machine = restarted
    dealer.resync()
    out = run(restarted, restarted.start())
    assert dealer.stats.hands_done == 1 and restarted.state == "idle"
    assert restarted.hand is not None and restarted.hand.seats[3].folded
    assert [a.code for a in out if isinstance(a, Alert)] == []
    assert dealer.stats.pulls > pulls and dealer.stats.pulls == restarted.hand.pulled


@pytest.mark.parametrize("before_hand", [1, 2])
def test_a_new_hand_refused_behind_a_stop_is_posted_again_once_the_stop_is_acknowledged(before_hand: int) -> None:
    """A service alert (here the journal's) comes in just before the dealer's *New hand* (of the
    first hand, or of the second, when the display still shows the last hand's seats): the
    machine shows the stop and refuses the new hand (``input-wrong-time``). The simulated dealer
    acknowledges the stop and, waiting for a new hand again, taps *New hand* again — the hands
    are dealt instead of the dealer waiting for ever."""
    import collections

    from hil.dealer import DirectShoe, HandScript, SimulatedDealer
    from hil.deck import Deck
    from shoe_ctl.events import DealerAction, DealerInput
    from shoe_ctl.machine import Dealing

    events: collections.deque = collections.deque()
    scripts = [HandScript([1, 2, 3], "stud", "tda", Deck.seeded(4 + k).cards(), {}, name=f"hand {k + 1}")
               for k in range(2)]
    dealer = SimulatedDealer(DirectShoe(events.append), events.append, scripts, threaded=False, auto_ack=True)
    machine = Dealing(PROFILES)
    posted: list[object] = []

    def deliver(cmds: list) -> None:
        for c in cmds:
            dealer.handle(c)

    deliver(machine.start())
    alerted = False
    while events and len(posted) < 400:
        ev = events.popleft()
        new_hand = isinstance(ev, DealerInput) and ev.action is DealerAction.NEW_HAND
        if new_hand and not alerted and machine.hand_no == before_hand - 1:
            alerted = True  # the journal's alert reaches the machine just ahead of this new hand
            deliver(machine.service_alert("journal-write-failed", "the journal cannot be written", latched=True))
        posted.append(ev)
        deliver(machine.handle(ev))
    new_hands = [e for e in posted if isinstance(e, DealerInput) and e.action is DealerAction.NEW_HAND]
    assert alerted and len(new_hands) == 3  # one refused behind the stop, then taken; and the other hand's
    assert "input-wrong-time" in dealer.stats.alerts  # the refusal was said
    assert dealer.stalled is None
    assert machine.hand_no == 2 and len(dealer.history) == 2  # both scripted hands dealt to their end


class _CountingShoe(DirectShoe):
    """A direct shoe that counts how often the dealer asks which cards its last pull dispensed."""

    def __init__(self, post: Callable[[Any], object], single: bool) -> None:
        super().__init__(post)
        self.single_pulls = single
        self.asked = 0

    @property
    def last_dispensed(self) -> tuple[Card, ...]:
        self.asked += 1
        return ()


@pytest.mark.parametrize("single", [True, False])
def test_the_dealer_asks_which_cards_left_only_a_shoe_that_can_double_pull(single: bool) -> None:
    events: collections.deque[Any] = collections.deque()
    shoe = _CountingShoe(events.append, single)
    machine = Dealing(PROFILES, default_rules="tda", display=False)
    dealer = SimulatedDealer(shoe, events.append, random_hands(3, count=3), threaded=False, auto_ack=True)
    for cmd in machine.start():
        dealer.handle(cmd)
    while events:
        for cmd in machine.handle(events.popleft()):
            dealer.handle(cmd)
    assert dealer.done.is_set() and dealer.stalled is None and dealer.stats.hands_done == 3
    assert dealer.stats.pulls > 3 * 20
    assert shoe.asked == (0 if single else dealer.stats.pulls)
