"""A deck not shuffled (docs/irregularities.md, *A deck not shuffled*): every factory order, cut
anywhere, is flagged within its first 8 cards; a deck sorted by rank, cut anywhere, within its
first 9; shuffled decks are not; both are information alerts that name no card. The false-alarm
rate is measured in bench/bench_deck_order.py, not here."""

from __future__ import annotations

import random
from itertools import permutations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shoe_ctl.config import load_profile
from shoe_ctl.events import (
    Alert,
    CardRead,
    CounterReset,
    DealerAction,
    DealerInput,
    LinkChanged,
    LinkStatus,
    ShoeInfo,
)
from shoe_ctl.floor.severity import severity
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.deck_order import (
    RANK_WINDOW,
    RANKS_CODE,
    RUNS_CODE,
    WINDOW,
    flagged_at,
    links,
    rank_flagged_at,
    rank_pairs,
    take,
)
from shoe_ctl.machine.reads import Read
from shoe_ctl.rules.cards import Card

PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}
RANKS = "A23456789TJQK"
CLUBS, DIAMONDS, HEARTS, SPADES = "cdhs"


def suit_run(suit: str, ranks: str) -> list[Card]:
    return [Card.parse(r + suit) for r in ranks]


def factory_orders() -> dict[str, list[Card]]:
    """The usual factory orders: the new-deck order (spades and diamonds A-K, clubs and hearts K-A),
    bridge order (clubs, diamonds, hearts, spades, each 2-A), every suit order A-K and K-A."""
    up, down, bridge = RANKS, RANKS[::-1], RANKS[1:] + "A"
    orders = {
        "new-deck": suit_run(SPADES, up) + suit_run(DIAMONDS, up) + suit_run(CLUBS, down) + suit_run(HEARTS, down),
        "bridge": [c for s in (CLUBS, DIAMONDS, HEARTS, SPADES) for c in suit_run(s, bridge)],
    }
    for suits in permutations("cdhs"):
        for name, ranks in (("A-K", up), ("K-A", down)):
            orders["".join(suits) + " " + name] = [c for s in suits for c in suit_run(s, ranks)]
    return orders


def codes(cards: list[Card]) -> list[int | None]:
    return [c.code for c in cards]


@pytest.mark.parametrize("cut", range(0, 52, 3))
def test_every_factory_order_cut_anywhere_is_flagged_within_8_cards(cut: int) -> None:
    for name, deck in factory_orders().items():
        assert sorted(c.code for c in deck) == list(range(52)), name
        dealt = deck[cut:] + deck[:cut]
        found = flagged_at(codes(dealt))
        assert found and found[0] <= WINDOW, (name, cut, found)
        assert len(found) <= 2, (name, cut, found)  # one run, not an alert per card


def test_a_factory_order_from_the_bottom_is_flagged_too() -> None:
    deck = factory_orders()["new-deck"][::-1]
    assert flagged_at(codes(deck))[0] == WINDOW


@pytest.mark.parametrize("seed", [1, 7, 2026, 31337, 99991])
def test_shuffled_decks_are_not_flagged(seed: int) -> None:
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    assert flagged_at(list[int | None](deck)) == []


def test_links_count_one_suit_next_ranks_with_the_ace_at_both_ends() -> None:
    cards = [Card.parse(t) for t in ("Ks", "As", "2s", "2h", "3h", "5h")]
    assert links(codes(cards)) == 3  # Ks-As, As-2s, 2h-3h; 2s-2h is two suits, 3h-5h not next
    assert links([Card.parse("Ks").code, None, Card.parse("As").code]) == 0  # an unreadable card breaks it


def table() -> Dealing:
    m = Dealing(PROFILES, await_counter_reset=True)
    m.start()
    m.handle(LinkChanged(LinkStatus.CONNECTED, "shoe S1", ShoeInfo(2, "fw", "S1", ("rfid",))))
    return m


def deal(m: Dealing, deck: list[Card], seq: int, cards: int) -> tuple[list[Alert], int]:
    """A new 4-seat hand; its first ``cards`` cards of ``deck`` read. Its alerts and the next seq."""
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4], "rules": "tda", "game": "stud"}))
    m.handle(CounterReset(1))
    alerts: list[Alert] = []
    for i, card in enumerate(deck[:cards], start=1):
        alerts += [c for c in m.handle(CardRead(seq, card, "rfid", i, 1)) if isinstance(c, Alert)]
        seq += 1
    return alerts, seq


def test_a_factory_order_deck_dealt_is_flagged_by_its_8th_card_and_the_deal_goes_on() -> None:
    m = table()
    deck = factory_orders()["new-deck"]
    alerts, _ = deal(m, deck, 1, WINDOW)
    [runs] = [a for a in alerts if a.code == RUNS_CODE]
    assert not runs.latched and m.state != "attention"
    assert runs.message.startswith(f"read {WINDOW}: ") and "floor" in runs.message
    assert not any(str(c) in runs.message or c.pretty in runs.message for c in deck[:WINDOW])
    assert severity(RUNS_CODE, False) == "warning"




def rank_sorted(seed: int, descending: bool = False) -> list[Card]:
    """A deck sorted by rank (A A A A 2 2 2 2 ... K K K K, or K to A), the suits of each rank in an
    order of their own."""
    rng = random.Random(seed)
    deck: list[Card] = []
    for r in (RANKS[::-1] if descending else RANKS):
        suits = list("cdhs")
        rng.shuffle(suits)
        deck += [Card.parse(r + s) for s in suits]
    return deck


@pytest.mark.parametrize("cut", range(0, 52, 5))
def test_a_deck_sorted_by_rank_cut_anywhere_is_flagged_within_9_cards(cut: int) -> None:
    for seed, descending in ((1, False), (2, True), (3, False)):
        deck = rank_sorted(seed, descending)
        dealt = deck[cut:] + deck[:cut]
        found = rank_flagged_at(codes(dealt))
        assert found and found[0] <= RANK_WINDOW, (seed, descending, cut, found)
        assert len(found) <= 2, found  # one alert for the sorted run, one more after the cut's seam at most


@pytest.mark.parametrize("seed", [1, 7, 2026, 31337, 99991])
def test_shuffled_decks_are_not_flagged_by_rank(seed: int) -> None:
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    assert rank_flagged_at(list[int | None](deck)) == []


def test_rank_pairs_count_one_rank_and_next_ranks_whatever_the_suit() -> None:
    cards = [Card.parse(t) for t in ("Kc", "Kd", "Ah", "2s", "2c", "4c")]
    assert rank_pairs(codes(cards)) == (2, 4)  # Kc-Kd, 2s-2c one rank; Kd-Ah, Ah-2s next; 2c-4c neither
    assert rank_pairs([Card.parse("Kc").code, None, Card.parse("Kd").code]) == (0, 0)
    sorted_by_suit = factory_orders()["new-deck"]
    assert rank_flagged_at(codes(sorted_by_suit)) == [], "a suit run is the runs check's, not this one's"


def test_a_deck_sorted_by_rank_dealt_is_flagged_by_its_9th_card_and_the_deal_goes_on() -> None:
    m = table()
    deck = rank_sorted(5)
    alerts, _ = deal(m, deck, 1, RANK_WINDOW)
    [ranks] = [a for a in alerts if a.code == RANKS_CODE]
    assert RUNS_CODE not in {a.code for a in alerts}
    assert not ranks.latched and m.state != "attention"
    assert ranks.message.startswith(f"read {RANK_WINDOW}: ") and "floor" in ranks.message
    assert not any(str(c) in ranks.message or c.pretty in ranks.message for c in deck[:RANK_WINDOW])
    assert severity(RANKS_CODE, False) == "warning"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["next", "next", "next", "rank", "rank", "step", "other", "unreadable"]),
                          st.integers(0, 51)), max_size=40))
@example([("other", 0)] + [("next", 0)] * 6 + [("other", 40)])  # flagged at the 8th card, its own pair apart
@example([("other", 0)] + [("rank", 0)] * 3 + [("next", 0)] + [("rank", 0)] * 3 + [("other", 0), ("other", 30)])
# a deck sorted by rank, up and down, flagged on a pair of one rank after a change of rank
@example([("other", 0)] + [("rank", 0)] * 2 + [("step", 1)] + [("rank", 1)] * 3 + [("step", 3), ("rank", 0)])
@example([("other", 51)] + [("rank", 0)] * 2 + [("step", 0)] + [("rank", 1)] * 3 + [("step", 2), ("rank", 0)])
def test_take_read_by_read_alerts_where_flagged_at_does(dealt: list[tuple[str, int]]) -> None:
    """``take``, called after each read as the machine calls it (and passing over most reads on
    their newest pair alone), raises the runs alert exactly at the counts ``flagged_at`` names and
    the ranks alert at those ``rank_flagged_at`` names. Each card is the last one's next rank of its
    suit (runs), another card of its rank (a rank run; cards may repeat here, which the counting
    does not mind), the next rank up or down of another suit (a rank-sorted deck's change of rank), any card,
    or unreadable."""
    codes_: list[int | None] = []
    for how, code in dealt:
        prev = codes_[-1] if codes_ else None
        if how == "unreadable":
            codes_.append(None)
        elif how == "next" and prev is not None:
            codes_.append((prev + 4) % 52)
        elif how == "rank" and prev is not None:
            codes_.append(prev - prev % 4 + (prev + 1 + code % 3) % 4)
        elif how == "step" and prev is not None:
            codes_.append((prev // 4 + (1 if code % 2 else 12)) % 13 * 4 + (prev + 1 + code % 3) % 4)
        else:
            codes_.append(code)
    reads: list[Read] = []
    raised: dict[str, list[int]] = {RUNS_CODE: [], RANKS_CODE: []}
    for k, card in enumerate(codes_, start=1):
        reads.append(Read(k, None if card is None else Card(card), "down", "3rd", None))
        take(reads, k, lambda code, message, seq=k, **_: raised[code].append(seq))
    assert raised[RUNS_CODE] == flagged_at(codes_)
    assert raised[RANKS_CODE] == rank_flagged_at(codes_)
