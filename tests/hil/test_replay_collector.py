"""The direct replay raises the cycle collector's young-generation threshold while it deals and
puts it back after, whatever the threshold was and however the replay ends."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from rule_profiles import PROFILES

from hil.dealer import random_hands
from hil.replay import BATCH_YOUNG_THRESHOLD, few_young_collections, run_direct


@pytest.fixture(autouse=True)
def _threshold_kept() -> Iterator[None]:
    old = gc.get_threshold()
    yield
    gc.set_threshold(*old)


def test_raised_inside_and_put_back() -> None:
    gc.set_threshold(700, 11, 12)
    with few_young_collections():
        assert gc.get_threshold() == (BATCH_YOUNG_THRESHOLD, 11, 12)
    assert gc.get_threshold() == (700, 11, 12)


def test_put_back_after_an_error() -> None:
    gc.set_threshold(500, 10, 10)
    with pytest.raises(KeyError), few_young_collections(9_000):
        assert gc.get_threshold() == (9_000, 10, 10)
        raise KeyError("x")
    assert gc.get_threshold() == (500, 10, 10)


@pytest.mark.parametrize("first", [0, BATCH_YOUNG_THRESHOLD, 50_000])
def test_left_alone_when_off_or_higher(first: int) -> None:
    gc.set_threshold(first, 10, 10)
    with few_young_collections():
        assert gc.get_threshold() == (first, 10, 10)
    assert gc.get_threshold() == (first, 10, 10)


def test_nested_blocks_restore_the_outer_threshold() -> None:
    gc.set_threshold(700, 10, 10)
    with few_young_collections(5_000):
        with few_young_collections(8_000):
            assert gc.get_threshold()[0] == 8_000
        assert gc.get_threshold()[0] == 5_000
    assert gc.get_threshold()[0] == 700


def test_run_direct_deals_under_the_raised_threshold_and_puts_it_back() -> None:
    gc.set_threshold(700, 10, 10)
    seen: list[int] = []

    class Watch:
        def handle(self, cmd: Any) -> None:
            seen.append(gc.get_threshold()[0])

    hands = list(random_hands(3, count=3))
    recorder, dealer = run_direct(hands, PROFILES, sinks=[Watch()], display=False)
    assert dealer.stalled is None and len(recorder.hands) == 3
    assert seen and set(seen) == {BATCH_YOUNG_THRESHOLD}
    assert gc.get_threshold() == (700, 10, 10)
