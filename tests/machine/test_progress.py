"""The hand's progress is one value that the undo point copies whole: every field of
:class:`~shoe_ctl.machine.progress.Progress` says how it is copied, the copy holds every field,
shares nothing that is changed in place, and an undo puts every field back."""

from __future__ import annotations

from dataclasses import fields

import pytest
from rule_profiles import PROFILES

from shoe_ctl.events import CardRead, DealerAction, DealerInput
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.progress import COPY, Progress
from shoe_ctl.machine.undo import SHARING
from shoe_ctl.rules.cards import full_deck

KINDS = {"value", "container", "deep", "hand"}


def _betting() -> Dealing:
    m = Dealing(PROFILES)
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4]}))
    deck = full_deck()
    for seq in range(1, 13):
        m.handle(CardRead(seq, deck.pop(), "rfid", seq))
    assert m.state == "hand_third_betting"
    m.p.premature = {"street": "4th"}  # every kind of field holds something
    return m


def test_every_field_says_how_the_undo_point_copies_it() -> None:
    names = [f.name for f in fields(Progress)]
    assert set(COPY) == set(names) and set(COPY.values()) <= KINDS
    assert list(COPY.values()).count("hand") == 1


@pytest.mark.parametrize("action", [DealerAction.EXPOSED_CARD, DealerAction.FOLD])
def test_the_copy_holds_every_field_and_shares_nothing_changed_in_place(action: DealerAction) -> None:
    """Every field copied by its kind; the hand copied with its seats, or (before an input that
    changes a seat only through the rules core, :data:`~shoe_ctl.machine.undo.SHARING`) the live
    hand itself, nothing of it kept yet."""
    m = _betting()
    p = m.p
    point = m.undo.take(p, m.state, action)
    copied = point.progress
    for name, kind in COPY.items():
        live, kept = getattr(p, name), getattr(copied, name)  # a field the copy missed raises here
        if kind == "value":
            assert kept is live, name
        elif kind == "hand" and action in SHARING:
            assert kept is live and point.kept is not None and not point.kept and point.kept.hand is None
            assert point.hand() == live and point.hand() is not live
        elif kind == "hand":
            assert kept is not live and kept.seats is not live.seats, name
            assert [s.__dict__ for s in kept.seats] == [s.__dict__ for s in live.seats]
            assert not any(a is b for a, b in zip(kept.seats, live.seats, strict=True))
        else:
            assert kept == live and (kept is not live or live is None), name


def test_an_undo_puts_every_field_back() -> None:
    m = _betting()
    before = {name: getattr(m.p, name) for name in COPY}
    copies = {name: (v.copy() if COPY[name] in ("container", "deep") and v is not None else v)
              for name, v in before.items()}
    seats_before = [dict(s.__dict__) for s in m.p.hand.seats]
    m.handle(DealerInput(DealerAction.FOLD, seat=2))
    m.handle(DealerInput(DealerAction.UNDO))
    assert m.state == "hand_third_betting"
    for name, kind in COPY.items():
        now = getattr(m.p, name)
        if kind == "hand":
            assert [s.__dict__ for s in now.seats] == seats_before
        elif name == "alerts":
            assert [a["code"] for a in now] == [a["code"] for a in copies[name]] + ["undo"]
        elif name != "forecast_dirty":  # an undo marks the forecast to be worked out again
            assert now == copies[name], name
