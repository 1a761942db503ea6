"""The undo point shares the live hand's seats until one changes (``shoe_ctl/machine/undo.py``,
``HandState.change_seat``; docs/performance.md "The replay's machine path"): random dealer
inputs, card reads and undos on a 4-seat hand, each undo checked against the public state before
the undone input; and on the real hands and the irregular ones, before and after every event,
the point's hand as an undo would put it back equals the hand copied whole when the point was
taken."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT, SHARED_PHH
from rule_profiles import PROFILES

from hil.replay import run_direct, script_from_record
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, ShoeButton
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.undo import Undo
from shoe_ctl.phh import read_phh
from shoe_ctl.rules.cards import full_deck

SEATS = (1, 2, 3, 4)

_STEP = st.one_of(
    st.tuples(st.just("fold"), st.sampled_from(SEATS)),
    st.tuples(st.just("all-in"), st.sampled_from(SEATS)),
    st.tuples(st.just("undo"), st.none()),
    st.tuples(st.just("complete"), st.none()),
    st.tuples(st.just("card"), st.none()),
)


def _table(m: Dealing) -> str:
    st_ = m.public_state()
    st_.pop("alerts")
    return json.dumps(st_, sort_keys=True)


def _codes(out: list[Any]) -> list[str]:
    return [c.code for c in out if isinstance(c, Alert)]


def _as_taken(m: Dealing, taken: dict[int, Any]) -> int:
    """The last undo point's hand, as an undo would put it back, equals the hand copied whole
    when the point was taken (``taken``, by the point's id); how many seats it shares with the
    live hand now."""
    last = m.undo.last
    if last is None or last[1] is None or last[1].progress.hand is None:
        return 0
    point = last[1]
    seats = point.seats()
    assert seats is not None
    assert point.hand() == taken[id(point)][1], "the undo point's hand changed"
    live = {id(s) for s in m.hand.seats} if m.hand is not None else set()
    return sum(1 for s in seats if id(s) in live)


def _keeping_whole_copies(monkeypatch: pytest.MonkeyPatch) -> dict[int, Any]:
    """Every undo point taken from now on, by id, with the hand copied whole at that moment."""
    taken: dict[int, Any] = {}
    take = Undo.take

    def taking(self: Undo, p: Any, state: str, action: DealerAction) -> Any:
        whole = p.hand.copy() if p.hand is not None else None
        point = take(self, p, state, action)
        taken[id(point)] = (point, whole)  # (the point kept alive: its id names it alone)
        return point

    monkeypatch.setattr(Undo, "take", taking)
    return taken


@settings(max_examples=60, deadline=None)
@given(st.lists(_STEP, min_size=1, max_size=40))
def test_undo_puts_back_the_state_before_the_last_input(steps: list[tuple[str, int | None]]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        undone, shared = _undo_puts_back(steps, _keeping_whole_copies(mp))
    if len(steps) >= 30:  # a long sequence has both: undos taken and seats shared
        assert undone or shared


def _undo_puts_back(steps: list[tuple[str, int | None]], taken: dict[int, Any]) -> tuple[int, int]:
    """Plays ``steps`` from 3rd street's betting round, checking each undo against the public state
    before the input it undoes; returns how many undos were taken and how many seats were shared."""
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": list(SEATS)}))
    deck = full_deck()
    for seq in range(1, 3 * len(SEATS) + 1):  # 3rd street dealt: the betting round is open
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    assert m.state == "hand_third_betting"
    before_last: str | None = None  # the public state before the input the undo point is for
    undone = 0
    shared = 0
    for kind, seat in steps:
        if kind == "card":
            if not deck or m.hand is None:
                continue
            seq += 1
            m.handle(CardRead(seq, deck.pop(), "rfid", seq))
            before_last = None  # a card forgets the undo point
        elif kind == "undo":
            out = m.handle(DealerInput(DealerAction.UNDO))
            if "undo" in _codes(out):
                assert before_last is not None
                assert _table(m) == before_last
                undone += 1
                before_last = None
            else:
                assert _codes(out) == ["undo-refused"]
        else:
            action = {"fold": DealerAction.FOLD, "all-in": DealerAction.ALL_IN,
                      "complete": DealerAction.BETTING_COMPLETE}[kind]
            was = m.undo.last
            now = _table(m)
            m.handle(DealerInput(action, seat=seat))
            last = m.undo.last
            if last is not was and last is not None and last[1] is not None:
                before_last = now  # accepted and undoable: the undo point taken before it
            elif last is not was:
                before_last = None
        shared += _as_taken(m, taken)
    return undone, shared


def _third_street_betting(rules: str) -> Dealing:
    """A machine under ``rules`` whose 4-seat hand has 3rd street dealt (its betting round open)."""
    m = Dealing(PROFILES, default_rules=rules)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": list(SEATS)}))
    deck = full_deck()
    for seq in range(1, 13):
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    assert m.state == "hand_third_betting"
    return m


def test_two_folds_then_an_undo_then_a_fold_and_undo_again() -> None:
    """A fold's undo point keeps the folding seat alone (the others shared with the live hand);
    an undo puts the seats back as they were, and a later fold's undo point again."""
    m = _third_street_betting("tda")
    assert m.hand is not None
    m.handle(DealerInput(DealerAction.FOLD, seat=1))
    before = _table(m)
    m.handle(DealerInput(DealerAction.FOLD, seat=2))
    assert "undo" in _codes(m.handle(DealerInput(DealerAction.UNDO)))
    assert _table(m) == before
    assert [s.status for s in m.hand.seats] == ["folded", "live", "live", "live"]
    m.handle(DealerInput(DealerAction.FOLD, seat=3))
    point = m.undo.last[1] if m.undo.last is not None else None
    assert point is not None and point.kept is not None and len(point.kept) == 1  # seat 3's alone
    assert "undo" in _codes(m.handle(DealerInput(DealerAction.UNDO)))
    assert [s.status for s in m.hand.seats] == ["folded", "live", "live", "live"]


def _checked_events(monkeypatch: pytest.MonkeyPatch, taken: dict[int, Any], seen: list[int]) -> None:
    """Every event the machine handles: before it and after it, the last undo point as taken."""
    handle = Dealing.handle

    def checking(self: Dealing, event: object) -> Any:
        seen.append(_as_taken(self, taken))
        out = handle(self, event)
        seen.append(_as_taken(self, taken))
        return out

    monkeypatch.setattr(Dealing, "handle", checking)


@pytest.mark.shared
def test_the_undo_point_is_as_taken_at_every_event_of_real_and_irregular_hands(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The 208 real hands and 100 seeded hands with one or two irregularities each (exposed,
    off-table and premature cards, burn errors, absent players, a wrong bring-in, a card count,
    misdeals, undos; TDA and house alternating), as ``scripts/replay_digest.py`` deals them:
    before and after every event, the last undo point's hand, as an undo would put it back,
    equals the hand copied whole when it was taken; seats are shared while unchanged, and kept
    at their first change (the undos themselves: the random sequences above)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from replay_digest import irregular_hands

    taken = _keeping_whole_copies(monkeypatch)
    seen: list[int] = []
    _checked_events(monkeypatch, taken, seen)
    files = sorted(SHARED_PHH.rglob("*.phh"))
    run_direct([script_from_record(read_phh(f), seed=i, path=f) for i, f in enumerate(files)], PROFILES)
    for hand in irregular_hands():
        with contextlib.suppress(Exception):  # (a stalled or refused script ends its run: it is checked up to there)
            run_direct([hand], PROFILES, rules=hand.rules)
    kept = sum(len(point.kept or ()) for point, _ in taken.values())
    assert len(taken) > 1000 and sum(seen) > 1000 and kept > 100  # points taken, seats shared, seats kept


def test_an_input_that_changes_seats_itself_takes_them_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both hole cards exposed (house 16.2): the exposed-card input turns the seat's downcards
    up itself before its ruling, so its undo point copies the seats (it is not among the inputs
    that share them) and the undo puts them back; after a fold (which shares them), the same."""
    taken = _keeping_whole_copies(monkeypatch)
    m = _third_street_betting("house")
    assert m.hand is not None
    m.handle(DealerInput(DealerAction.FOLD, seat=4))
    before = [(list(s.down), list(s.up)) for s in m.hand.seats]
    table = _table(m)
    out = m.handle(DealerInput(DealerAction.EXPOSED_CARD, seat=1, args={"street": "3rd", "both": True}))
    assert "house-16.2" in _codes(out) and not m.hand.seats[0].down
    point = m.undo.last[1] if m.undo.last is not None else None
    assert point is not None and point.kept is None  # copied whole
    _as_taken(m, taken)
    assert "undo" in _codes(m.handle(DealerInput(DealerAction.UNDO)))
    assert [(s.down, s.up) for s in m.hand.seats] == before and _table(m) == table


def test_any_other_event_keeps_the_shared_seats_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a fold (its undo point shares the seats), an event that is neither a card read nor
    an input that shares them finds every seat kept before it is handled: even a change made
    outside the rules core (here a shoe button's handling, made to change a seat) leaves the
    point as taken."""
    taken = _keeping_whole_copies(monkeypatch)
    m = _third_street_betting("tda")
    m.handle(DealerInput(DealerAction.FOLD, seat=1))
    point = m.undo.last[1] if m.undo.last is not None else None
    assert point is not None and point.kept is not None and m.undo.sharing
    dispatch = Dealing._dispatch

    def meddling(self: Dealing, event: object) -> None:
        assert self.hand is not None
        self.hand.seats[2].up.append(None)  # (a change no handler makes: outside the rules core)
        dispatch(self, event)

    monkeypatch.setattr(Dealing, "_dispatch", meddling)
    m.handle(ShoeButton(13, 1))
    assert not m.undo.sharing and len(point.kept) == len(SEATS)
    _as_taken(m, taken)


def test_a_change_beside_the_seats_finds_the_whole_hand_kept_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a fold the undo point holds the live hand itself; an event that changes the hand
    beside its seats (here a shoe button's handling, made to change the burn pile and the count
    of cards put back) finds the hand copied for the point first, and an undo puts that copy
    back, not the changed hand."""
    taken = _keeping_whole_copies(monkeypatch)
    m = _third_street_betting("tda")
    m.handle(DealerInput(DealerAction.FOLD, seat=2))
    point = m.undo.last[1] if m.undo.last is not None else None
    assert point is not None and point.kept is not None and point.progress.hand is m.hand
    live = m.hand
    dispatch = Dealing._dispatch

    def meddling(self: Dealing, event: object) -> None:
        assert self.hand is not None
        self.hand.burn_pile.append(("3rd", None))  # (changes no handler makes here)
        self.hand.returned += 1
        dispatch(self, event)

    monkeypatch.setattr(Dealing, "_dispatch", meddling)
    m.handle(ShoeButton(13, 1))
    assert point.kept.hand is not None and point.kept.hand is not live
    assert point.kept.hand.burn_pile == [] and point.kept.hand.returned == 0
    _as_taken(m, taken)
    monkeypatch.setattr(Dealing, "_dispatch", dispatch)
    assert "undo" in _codes(m.handle(DealerInput(DealerAction.UNDO)))
    assert m.hand is not live and m.hand == taken[id(point)][1]
    assert [s.status for s in m.hand.seats] == ["live", "live", "live", "live"]
