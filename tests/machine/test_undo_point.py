"""The undo point shares an unchanged seat's copy with the previous undo point
(``shoe_ctl/machine/undo.py``, docs/performance.md "Replay at 2x", third round): random dealer
inputs, card reads and undos on a 4-seat hand, each undo checked against the public state before
the undone input, and no copy in an undo point ever being a seat of the live hand."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from rule_profiles import PROFILES

from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput
from shoe_ctl.machine import Dealing
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


def _no_live_seat_in_undo_point(m: Dealing) -> None:
    last = m.undo.last
    if last is None or last[1] is None or last[1].progress.hand is None or m.hand is None:
        return
    kept = {id(s) for s in last[1].progress.hand.seats}
    assert not kept & {id(s) for s in m.hand.seats}


@settings(max_examples=60, deadline=None)
@given(st.lists(_STEP, min_size=1, max_size=40))
def test_undo_puts_back_the_state_before_the_last_input(steps: list[tuple[str, int | None]]) -> None:
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
    kept_before = m.undo._kept
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
        _no_live_seat_in_undo_point(m)
        shared += _shared_with_previous(m, kept_before)
        kept_before = m.undo._kept
    if len(steps) >= 30:  # a long sequence has both: undos taken and seats shared
        assert undone or shared


def _shared_with_previous(m: Dealing, kept_before: Any) -> int:
    kept = m.undo._kept
    if kept is None or kept_before is None or kept is kept_before:
        return 0
    return len({id(s) for s in kept[1]} & {id(s) for s in kept_before[1]})


def test_two_folds_then_an_undo_then_a_fold_and_undo_again() -> None:
    """Seats shared between two undo points stay as they were when a later input changes the
    live hand, and an undo's seats are copied again at the next undo point."""
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": list(SEATS)}))
    deck = full_deck()
    for seq in range(1, 13):
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    assert m.state == "hand_third_betting" and m.hand is not None
    m.handle(DealerInput(DealerAction.FOLD, seat=1))
    before = _table(m)
    m.handle(DealerInput(DealerAction.FOLD, seat=2))
    assert "undo" in _codes(m.handle(DealerInput(DealerAction.UNDO)))
    assert _table(m) == before
    assert [s.status for s in m.hand.seats] == ["folded", "live", "live", "live"]
    m.handle(DealerInput(DealerAction.FOLD, seat=3))
    _no_live_seat_in_undo_point(m)
    assert "undo" in _codes(m.handle(DealerInput(DealerAction.UNDO)))
    assert [s.status for s in m.hand.seats] == ["folded", "live", "live", "live"]
