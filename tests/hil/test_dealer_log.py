"""The simulated dealer's log of a hand (``TablePicture.log``): each card pulled once, in the
order of the pulls, as ``(street, place)`` where the dealer put it, the entry of one place on
one street the same value hand after hand."""

from __future__ import annotations

import collections

from rule_profiles import PROFILES

from hil.dealer import _placed, random_hands
from hil.replay import run_direct


def test_the_log_names_every_card_where_it_lies() -> None:
    hands = list(random_hands(3, game="stud", rules="tda", fold_rate=0.1, all_in_rate=0.02, count=12))
    recorder, dealer = run_direct(hands, PROFILES, rules="tda", seed=3)
    assert dealer.stalled is None and len(dealer.history) == 12
    plain = [p for p in dealer.history if not p.scrambles]  # (a scramble takes the burns back)
    assert plain
    for picture in plain:
        places = collections.Counter(place for _street, place in picture.log)
        for seat, held in picture.seats.items():
            for face in ("up", "down"):
                assert places[f"seat {seat} {face}"] == sum(f == face for f, _c in held)
        assert places["burn"] == sum(map(len, picture.burns.values()))
        assert places["centre"] == len(picture.community)
        assert len(picture.log) == picture.total
        streets = [street for street, _place in picture.log]
        assert streets == sorted(streets, key=["3rd", "4th", "5th", "6th", "7th"].index)  # in the order pulled


def test_a_place_is_worded_once() -> None:
    first = _placed("5th", 4, "up")
    assert first == ("5th", "seat 4 up")
    assert _placed("5th", 4, "up") is first
    assert _placed("5th", None, "burn") == ("5th", "burn")
    assert _placed("6th", 4, "up") == ("6th", "seat 4 up") and _placed("5th", 4, "down") == ("5th", "seat 4 down")
