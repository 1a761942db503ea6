"""The stacked deck's seeded shuffle (``hil/deck.py`` ``seeded_shuffle``), written out for speed,
gives the order ``random.Random(seed).shuffle`` gives: the direct replay's decks, and so its
reports, are those of the library's shuffle."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from hil.deck import seeded_shuffle, stacked_order
from shoe_ctl.rules.cards import full_deck


@given(st.integers(min_value=0, max_value=2**64), st.integers(min_value=0, max_value=52))
def test_the_written_out_shuffle_is_the_librarys(seed: int, n: int) -> None:
    cards = full_deck()[:n]
    ours, theirs = list(cards), list(cards)
    seeded_shuffle(ours, seed)
    random.Random(seed).shuffle(theirs)
    assert ours == theirs


def test_a_stacked_deck_fills_its_open_places_from_the_shuffled_rest() -> None:
    deck = full_deck()
    first = [deck[51], None, deck[0], None]
    rest = [c for c in deck if c not in (deck[0], deck[51])]
    random.Random(7).shuffle(rest)
    assert stacked_order(first, 7) == [deck[51], rest[0], deck[0], rest[1], *rest[2:]]
