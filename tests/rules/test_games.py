"""Showing hands: bring-in, first to act, ties, open pairs (shoe_ctl.rules.games)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_ctl.rules.cards import Card, full_deck, parse_cards
from shoe_ctl.rules.games import (
    Game,
    TieRule,
    board_key,
    bring_in,
    first_to_act,
    first_to_act_third,
    open_pair,
)


def c(text: str) -> Card:
    return Card.parse(text)


def cs(text: str) -> list[Card | None]:
    return parse_cards(text)


def boards(*texts: str) -> list[list[Card | None]]:
    return [cs(t) for t in texts]


ALL = [True] * 8


# --- Game ---------------------------------------------------------------------------------------


def test_game_from_phh_variants():
    assert Game.from_phh("F7S") is Game.STUD
    assert Game.from_phh("F7S/8") is Game.STUD8
    assert Game.from_phh("FR") is Game.RAZZ
    with pytest.raises(ValueError, match="NT"):
        Game.from_phh("NT")


# --- bring-in: house 16.3 -----------------------------------------------------------------------


def test_house_16_3_stud_lowest_upcard_by_suit_brings_in():
    """house 16.3: the lowest up-card by suit; 2c is the lowest card, ace high."""
    assert bring_in(Game.STUD, cs("2d2cAs")) == 1
    assert bring_in(Game.STUD, cs("3s2hAc")) == 1
    assert bring_in(Game.STUD8, cs("5h5c5s")) == 1
    # ace is high in stud: a deuce brings in before an ace
    assert bring_in(Game.STUD, cs("Ac7d")) == 1


def test_house_16_3_razz_highest_upcard_ace_low_by_suit():
    """Razz: the highest upcard brings in, ace low, Ks the highest card."""
    assert bring_in(Game.RAZZ, cs("KhKs2c")) == 1
    assert bring_in(Game.RAZZ, cs("AsQc2d")) == 1
    assert bring_in(Game.RAZZ, cs("AsAc2d")) == 2


def test_bring_in_unknown_upcard_gives_none_unless_it_cannot_matter():
    assert bring_in(Game.STUD, cs("2d??As")) is None
    assert bring_in(Game.STUD, cs("2c??As")) == 0
    assert bring_in(Game.RAZZ, cs("Qs??")) is None
    assert bring_in(Game.RAZZ, cs("??Ks")) == 1
    assert bring_in(Game.STUD, cs("????")) is None


# --- RP-10-E / house 16.4 -----------------------------------------------------------------------


def test_rp_10_e_house_16_4_bring_in_all_in_for_ante_passes_left():
    """RP-10-E, house 16.4: the low card all-in for the ante: betting starts to his left."""
    up = cs("9c2cKdJs")
    assert first_to_act_third(Game.STUD, up, [True, True, True, True]) == 1
    assert first_to_act_third(Game.STUD, up, [True, False, True, True]) == 2
    assert first_to_act_third(Game.STUD, up, [True, False, False, True]) == 3
    # wraps round the table
    assert first_to_act_third(Game.STUD, cs("9cKd2c"), [True, True, False]) == 0


def test_third_street_no_betting_when_fewer_than_two_can_act():
    assert first_to_act_third(Game.STUD, cs("2c9c"), [False, True]) is None


def test_third_street_length_mismatch_is_an_error():
    with pytest.raises(ValueError):
        first_to_act_third(Game.STUD, cs("2c9c"), [True])


# --- first to act 4th-7th: house 16.14 -----------------------------------------------------------


def test_house_16_14_category_order_quads_trips_two_pair_pair_high():
    """house 16.14: high hand and pairs are what counts; straights/flushes are not announced."""
    b = boards("AsKs", "2c2d", "9h9c7h7d", "JcJdJh3c", "4c4d4h4s")
    assert first_to_act(Game.STUD, b[:2], ALL[:2], ALL[:2], TieRule.SUIT) == 1
    four = boards("9h9c7h7d", "JcJdAhAd", "JsJh3s2d")
    assert first_to_act(Game.STUD, four, ALL[:3], ALL[:3], TieRule.SUIT) == 1
    assert board_key(Game.STUD, cs("4c4d4h4s")) > board_key(Game.STUD, cs("AcAdAhKs"))
    assert board_key(Game.STUD, cs("2c2d2h3s")) > board_key(Game.STUD, cs("AcAdKhKs"))
    assert board_key(Game.STUD, cs("9h9c7h7d")) > board_key(Game.STUD, cs("JcJdAhKs"))


def test_house_16_14_no_straight_or_flush_on_four_upcards():
    """house 16.14: four cards to a straight flush showing rank as high cards only."""
    sf = cs("5h6h7h8h")
    pair = cs("2c2d3h4s")
    assert board_key(Game.STUD, pair) > board_key(Game.STUD, sf)
    assert first_to_act(Game.STUD, [sf, pair], [True, True], [True, True], TieRule.SUIT) == 1


def test_five_visible_cards_straight_and_flush_count():
    """house 16.20 / house 16.22: five visible cards are a poker hand; a straight beats trips."""
    straight = cs("5h6c7d8s")
    trips = cs("KcKdKh2s")
    community = c("9c")
    assert first_to_act(Game.STUD, [trips, straight], [True, True], [True, True], TieRule.SUIT) == 0
    assert first_to_act(Game.STUD, [trips, straight], [True, True], [True, True], TieRule.SUIT, community) == 1
    flush = cs("2c5c7cJc")
    assert first_to_act(Game.STUD, [straight, flush], [True, True], [True, True], TieRule.SUIT, community) == 1
    # house 16.22: one player's 7th card exposed: five upcards against four
    exposed = cs("5h6c7d8s4d")
    assert first_to_act(Game.STUD, [trips, exposed], [True, True], [True, True], TieRule.SUIT) == 1
    # wheel straight
    assert board_key(Game.STUD, cs("Ac2d3h4s5c"))[0] == 4
    assert board_key(Game.STUD, cs("Ac2c3c4c5c"))[0] == 8
    assert board_key(Game.STUD, cs("AcAd3c3h3s"))[0] == 6


def test_razz_lowest_board_acts_first_straights_flushes_ignored():
    b = boards("Ac2c3c4c", "6d7h8s9c", "AhAd2h3h")
    assert first_to_act(Game.RAZZ, b, ALL[:3], ALL[:3], TieRule.SUIT) == 0
    assert first_to_act(Game.RAZZ, b[1:], ALL[:2], ALL[:2], TieRule.SUIT) == 0
    # a pair of deuces beats a pair of threes in razz; one pair beats two pair
    assert board_key(Game.RAZZ, cs("2c2dKh")) > board_key(Game.RAZZ, cs("3c3dAh"))
    assert board_key(Game.RAZZ, cs("KcKdQh")) > board_key(Game.RAZZ, cs("2c2d3h3s"))
    # five razz cards: a wheel is the best low, not a straight
    assert board_key(Game.RAZZ, cs("Ac2c3c4c5c")) > board_key(Game.RAZZ, cs("Ac2d3h4s6c"))


def test_stud8_first_to_act_is_the_high_hand():
    b = boards("Ac2c", "KdKh")
    assert first_to_act(Game.STUD8, b, ALL[:2], ALL[:2], TieRule.SUIT) == 1


# --- ties: RP-10-D -------------------------------------------------------------------------------


def test_rp_10_d_tie_broken_by_suit_of_highest_card():
    """RP-10-D: equal high hands: the high card by suit (here K spades over K hearts)."""
    b = boards("Kh7c", "Ks7d")
    assert first_to_act(Game.STUD, b, ALL[:2], ALL[:2], TieRule.SUIT) == 1
    assert first_to_act(Game.STUD, b, ALL[:2], ALL[:2], TieRule.POSITION) == 0


def test_rp_10_d_tie_pair_decided_by_the_pair_not_the_kicker():
    """RP-10-D: the highest card of the ranking part: the pair's best suit, not the kicker's."""
    b = boards("KsKd4c", "KhKc4s")
    assert first_to_act(Game.STUD, b, ALL[:2], ALL[:2], TieRule.SUIT) == 0


def test_rp_10_d_razz_tie_high_card_by_suit():
    """RP-10-D in razz: A-6 vs A-6: the six decides by suit (the real hand Stars/35874817957)."""
    b = boards("Ac6h", "As6s")
    assert first_to_act(Game.RAZZ, b, ALL[:2], ALL[:2], TieRule.SUIT) == 1
    b = boards("As6h", "Ac6s")
    assert first_to_act(Game.RAZZ, b, ALL[:2], ALL[:2], TieRule.SUIT) == 1
    assert first_to_act(Game.RAZZ, b, ALL[:2], ALL[:2], TieRule.POSITION) == 0


def test_rp_10_d_community_card_skipped_in_suit_tie():
    """RP-10-D with a community card (house 16.20): the shared card cannot break the tie."""
    b = boards("9c8d7h2c", "9d8c7c2d")
    assert first_to_act(Game.STUD, b, ALL[:2], ALL[:2], TieRule.SUIT, c("As")) == 1


# --- all-in, folded, unknown ---------------------------------------------------------------------


def test_all_in_high_hand_passes_the_action_clockwise():
    b = boards("2c3d", "AcAd", "7h8h", "KsQs")
    assert first_to_act(Game.STUD, b, ALL[:4], [True, False, True, True], TieRule.SUIT) == 2
    assert first_to_act(Game.STUD, b, [True, True, False, True], [True, False, True, True], TieRule.SUIT) == 3


def test_folded_players_are_ignored_and_no_betting_with_one_able():
    b = boards("2c3d", "AcAd", "7h8h")
    assert first_to_act(Game.STUD, b, [True, False, True], ALL[:3], TieRule.SUIT) == 2
    assert first_to_act(Game.STUD, b, [True, True, False], [True, False, True], TieRule.SUIT) is None


def test_unknown_upcard_none_only_when_it_could_change_the_answer():
    # Kh plus any unknown card is at most a pair of kings: AA stays best
    b = boards("AcAd", "Kh??")
    assert first_to_act(Game.STUD, b, ALL[:2], ALL[:2], TieRule.SUIT) == 0
    b = boards("2c3d", "Kh??", "AcAd")
    assert first_to_act(Game.STUD, b, ALL[:3], ALL[:3], TieRule.SUIT) == 2
    b = boards("2c3d", "Kh??", "QcQd")
    assert first_to_act(Game.STUD, b, ALL[:3], ALL[:3], TieRule.SUIT) is None
    # a folded player's unknown card does not matter
    assert first_to_act(Game.STUD, b, [True, False, True], ALL[:3], TieRule.SUIT) == 2
    # too many unknowns that could matter
    b = boards("2c??", "Kh??", "Qc??")
    assert first_to_act(Game.STUD, b, ALL[:3], ALL[:3], TieRule.SUIT) is None
    # many unknowns that cannot reach the known trips: the answer stands
    b = boards("2c??3d", "Kh??4d", "Qc??5d", "AsAhAd")
    assert first_to_act(Game.STUD, b, ALL[:4], ALL[:4], TieRule.SUIT) == 3
    # ... and an all-in best hand still passes the action on
    assert first_to_act(Game.STUD, b, ALL[:4], [True, True, True, False], TieRule.SUIT) == 0
    # razz: an unknown card can always pair the board, never improve past a known wheel draw
    b = boards("5c4d3h2s", "Kh??QdJc")
    assert first_to_act(Game.RAZZ, b, ALL[:2], ALL[:2], TieRule.SUIT) == 0


# --- open pair: RP-10-F / house 16.8 --------------------------------------------------------------


def test_rp_10_f_house_16_8_open_pair_on_fourth():
    """RP-10-F (no doubled bet) and house 16.8 (small or big bet) both key on a pair showing."""
    assert open_pair(cs("7c7d"))
    assert not open_pair(cs("7c8d"))
    assert not open_pair(cs("7c??"))
    assert open_pair(cs("Kc2dKh"))


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError):
        first_to_act(Game.STUD, boards("2c", "3c"), [True], [True, True], TieRule.SUIT)


# --- soundness with unknown cards ---------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(
    game=st.sampled_from(list(Game)),
    deck=st.permutations(full_deck()),
    n=st.integers(2, 8),
    upcards=st.integers(1, 4),
    hide=st.lists(st.integers(0, 31), min_size=1, max_size=4),
    tie=st.sampled_from(list(TieRule)),
)
def test_an_answer_with_unknown_cards_is_the_answer_with_them_known(game, deck, n, upcards, hide, tie):
    full = [deck[i * upcards : (i + 1) * upcards] for i in range(n)]
    hidden = [list(b) for b in full]
    for h in hide:
        i, j = divmod(h % (n * upcards), upcards)
        hidden[i][j] = None
    flags = [True] * n
    got = first_to_act(game, hidden, flags, flags, tie)
    if got is not None:
        assert got == first_to_act(game, full, flags, flags, tie)
    doors = [b[0] for b in hidden]
    b = bring_in(game, doors)
    if b is not None:
        assert b == bring_in(game, [x[0] for x in full])


def test_house_16_20_unread_community_card_gives_none_when_it_matters():
    """house 16.20: the high hand using the community card acts first; when that card was not
    read and could change who that is, the answer is None (not the answer without it)."""
    p1, p2 = [c("As"), c("Kd"), c("9c"), c("3h")], [c("Qs"), c("Jd"), c("8c"), c("4h")]
    flags = [True, True]
    assert first_to_act(Game.STUD, [p1, p2], flags, flags, TieRule.SUIT, c("Qh")) == 1
    assert first_to_act(Game.STUD, [p1, p2], flags, flags, TieRule.SUIT, c("2d")) == 0
    assert first_to_act(Game.STUD, [p1, p2], flags, flags, TieRule.SUIT, None, community_unknown=True) is None
    # Trips showing cannot be caught by any community card: the answer stands.
    p3 = [c("7s"), c("7d"), c("7c"), c("2h")]
    assert first_to_act(Game.STUD, [p3, p2], flags, flags, TieRule.SUIT, None, community_unknown=True) == 0
    with pytest.raises(ValueError):
        first_to_act(Game.STUD, [p3, p2], flags, flags, TieRule.SUIT, c("2d"), community_unknown=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=1, max_size=4, unique=True), st.sampled_from([Game.STUD, Game.STUD8]))
def test_a_board_of_up_to_four_cards_keys_by_its_rank_groups(codes: list[int], game: Game) -> None:
    """Up to four upcards, high: the category of the rank groups (0 high cards, 1 a pair, 2 two
    pair, 3 trips, 7 quads), then each group's rank, the larger group and the higher rank first
    (a board with no pair: its ranks from the highest)."""
    cards = [Card(c) for c in codes]
    counts: dict[int, int] = {}
    for c in cards:
        counts[c.rank] = counts.get(c.rank, 0) + 1
    groups = sorted(((k, r) for r, k in counts.items()), reverse=True)
    sizes = sorted(counts.values(), reverse=True)
    category = {(1,): 0, (2,): 1, (2, 2): 2, (3,): 3, (4,): 7}[tuple(k for k in sizes if k > 1) or (1,)]
    assert board_key(game, cards) == (category, *(r for _, r in groups))
