"""Showing hands: the bring-in on 3rd street and the first player to act on 4th to 7th street,
in player order (index 0 clockwise from the dealer's left), ``None`` for a card not known; stud,
stud-8 and razz, ties by suit or by position. Pure. docs/rules.md, *Showing hands: bring-in,
first to act, ties*.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from itertools import combinations

from shoe_ctl.rules.cards import Card

__all__ = [
    "Game",
    "TieRule",
    "board_key",
    "bring_in",
    "first_to_act",
    "first_to_act_third",
    "open_pair",
]

# Most unknown cards for which first_to_act tries every possible identity before giving up.
_MAX_UNKNOWN = 2

# High-hand categories (stud, stud-8). Straight, flush, full house and straight flush only
# arise on five or more visible cards.
_HIGH_CARD, _PAIR, _TWO_PAIR, _TRIPS, _STRAIGHT, _FLUSH, _FULL_HOUSE, _QUADS, _STRAIGHT_FLUSH = range(9)

_LOWEST = Card.of(2, 0)  # 2c: lowest card, ace high
_HIGHEST_RAZZ = Card.of(13, 3)  # Ks: highest card, ace low


class Game(StrEnum):
    """The stud-family game dealt at the table."""

    STUD = "stud"
    STUD8 = "stud8"
    RAZZ = "razz"

    @classmethod
    def from_phh(cls, variant: str) -> Game:
        """The game of a PHH ``variant`` code: ``F7S`` stud, ``F7S/8`` stud-8, ``FR`` razz.

        :raises ValueError: for any other variant, naming it and the accepted codes.
        """
        game = _PHH_VARIANTS.get(variant)
        if game is None:
            raise ValueError(f"variant {variant!r} is not a stud game (accepted: F7S, F7S/8, FR)")
        return game

    @property
    def low(self) -> bool:
        """True when the lowest board acts first (razz)."""
        return self is Game.RAZZ


_PHH_VARIANTS = {"F7S": Game.STUD, "F7S/8": Game.STUD8, "FR": Game.RAZZ}


class TieRule(StrEnum):
    """How two equal best boards are separated (a rule profile switch)."""

    SUIT = "suit"  # RP-10-D: the high card by suit
    POSITION = "position"  # first clockwise from the dealer


_RAZZ, _SUIT = Game.RAZZ, TieRule.SUIT  # looked up once: board keys compare with them per board


def _bring_in_order(game: Game, card: Card) -> int:
    """Greater = brings in: stud/stud-8 lowest card (ace high), razz highest (ace low), by suit."""
    if game is Game.RAZZ:
        return card.low_rank * 4 + card.suit
    return -card.code


def bring_in(game: Game, upcards: Sequence[Card | None], counts: Sequence[bool] | None = None) -> int | None:
    """Index of the player holding the bring-in card (house 16.3, RP-10-E).

    :param upcards: the 3rd-street upcard (door card) of each player dealt in, in player order.
    :param counts: per player, False for a hand that takes no part in the bring-in: a dead hand
        (house 16.2: both hole cards exposed, ante returned; it may have no upcard at all).
        ``None``: every player counts. A killed hand still counts (TDA Rule 30: an absent player
        dealt the bring-in card posts it; house 16.9: the forced bet is lost);
        :meth:`~shoe_ctl.rules.hand.HandState.bring_in_counts` gives these flags.
    :returns: the index, or ``None`` when an unknown upcard could hold the bring-in card (or
        no upcard is known). Stud and stud-8: the lowest upcard, ace high, by suit (2c lowest).
        Razz: the highest upcard, ace low, by suit (Ks highest).
    :raises ValueError: when ``counts`` and ``upcards`` differ in length.
    """
    if counts is not None and len(counts) != len(upcards):
        raise ValueError(f"{len(upcards)} upcards but {len(counts)} counts flags")
    best = -1
    best_order = 0
    unknown = False
    for i, card in enumerate(upcards):
        if counts is not None and not counts[i]:
            continue
        if card is None:
            unknown = True
            continue
        order = _bring_in_order(game, card)
        if best < 0 or order > best_order:
            best, best_order = i, order
    if best < 0:
        return None
    if unknown:
        extreme = _HIGHEST_RAZZ if game is Game.RAZZ else _LOWEST
        if upcards[best] != extreme:
            return None
    return best


def first_to_act_third(
    game: Game, upcards: Sequence[Card | None], can_act: Sequence[bool], counts: Sequence[bool] | None = None
) -> int | None:
    """Index of the player who starts the betting on 3rd street (RP-10-E, house 16.4).

    The bring-in; when that player cannot act (all-in for the ante, or a killed hand that posts
    the bring-in under Rule 30) the next player to the left (clockwise, higher index, wrapping)
    who can act.

    :param upcards: door cards in player order.
    :param can_act: per player, True when the player has chips behind after the ante (and is
        in the hand).
    :param counts: per player, False for a hand that takes no part in the bring-in (a dead hand,
        house 16.2); see :func:`bring_in`.
    :returns: the index, or ``None`` when the bring-in is unknown (see :func:`bring_in`) or fewer
        than two players can act (no betting round).
    :raises ValueError: when the sequences differ in length.
    """
    n = len(upcards)
    if len(can_act) != n:
        raise ValueError(f"{n} upcards but {len(can_act)} can_act flags")
    if sum(can_act) < 2:
        return None
    b = bring_in(game, upcards, counts)
    if b is None:
        return None
    for step in range(n):
        i = (b + step) % n
        if can_act[i]:
            return i
    return None  # pragma: no cover - unreachable: two players can act


def _high_groups(cards: Sequence[Card]) -> tuple[int, list[tuple[int, int]]]:
    """Category (pairs only) and ``(count, rank)`` groups, largest group and rank first."""
    counts: dict[int, int] = {}
    for c in cards:
        r = c.code // 4 + 2  # Card.rank, without the property's call (boards at every street)
        counts[r] = counts.get(r, 0) + 1
    groups = sorted([(k, r) for r, k in counts.items()], reverse=True)
    return _category(groups), groups


def _low_groups(cards: Sequence[Card]) -> tuple[int, list[tuple[int, int]]]:
    counts: dict[int, int] = {}
    for c in cards:
        r = c.low_rank
        counts[r] = counts.get(r, 0) + 1
    groups = sorted(((k, r) for r, k in counts.items()), reverse=True)
    return _category(groups), groups


def _category(groups: list[tuple[int, int]]) -> int:
    top = groups[0][0]
    second = groups[1][0] if len(groups) > 1 else 0
    if top >= 4:
        return _QUADS
    if top == 3:
        return _FULL_HOUSE if second >= 2 else _TRIPS
    if top == 2:
        return _TWO_PAIR if second == 2 else _PAIR
    return _HIGH_CARD


def _high_key5plus(cards: Sequence[Card]) -> tuple[int, ...]:
    """Key of the best five-card high hand among five or more cards."""
    if len(cards) > 5:
        return max(_high_key5plus(five) for five in combinations(cards, 5))
    cat, groups = _high_groups(cards)
    ranks = [r for _, r in groups]
    flush = len({c.suit for c in cards}) == 1
    straight_top = 0
    if len(groups) == 5:
        if ranks[0] - ranks[4] == 4:
            straight_top = ranks[0]
        elif ranks == [14, 5, 4, 3, 2]:
            straight_top = 5
    if straight_top and flush:
        return (_STRAIGHT_FLUSH, straight_top)
    if cat in (_QUADS, _FULL_HOUSE):
        return (cat, *ranks)
    if flush:
        return (_FLUSH, *ranks)
    if straight_top:
        return (_STRAIGHT, straight_top)
    return (cat, *ranks)


def board_key(game: Game, cards: Sequence[Card]) -> tuple[int, ...]:
    """Comparable strength of a showing board; the greater key acts first.

    :param cards: the known visible cards of one player (upcards plus any community card).
    :returns: ``(category, ranks...)``. Stud and stud-8 (high): category 0 high cards, 1 pair,
        2 two pair, 3 trips, 7 quads, then the ranks (ace 14) of the groups, largest group and
        higher rank first; with five or more cards the best five-card poker hand, where 4
        straight, 5 flush, 6 full house and 8 straight flush count too. Razz (low, ace = 1,
        straights and flushes ignored): every value negated, so the lowest board has the greatest
        key. An empty board gives ``(0,)``.
    """
    if not cards:
        return (0,)
    if game is _RAZZ:
        if len(cards) > 5:
            return max(board_key(game, five) for five in combinations(cards, 5))
        cat, groups = _low_groups(cards)
        return (-cat, *(-r for _, r in groups))
    if len(cards) >= 5:
        return _high_key5plus(cards)
    ranks = sorted([c.code // 4 + 2 for c in cards], reverse=True)  # Card.rank, written out
    if len(set(ranks)) == len(ranks):  # no pair: high cards, the ranks from the highest (most boards)
        return (_HIGH_CARD, *ranks)
    cat, groups = _high_groups(cards)
    return (cat, *(r for _, r in groups))


def _suit_key(game: Game, cards: Sequence[Card], community: Card | None) -> tuple[int, ...]:
    """RP-10-D tie order: the cards in ranking order (largest group, higher rank, higher suit
    first), the shared community card left out; compare as card codes."""
    counts: dict[int, int] = {}
    low = game is Game.RAZZ
    for c in cards:
        r = c.low_rank if low else c.rank
        counts[r] = counts.get(r, 0) + 1
    ordered = sorted(
        (c for c in cards if c != community),
        key=lambda c: (counts[c.low_rank if low else c.rank], c.low_rank if low else c.rank, c.suit),
        reverse=True,
    )
    return tuple(c.suit + 4 * (c.low_rank if low else c.rank) for c in ordered)


def open_pair(cards: Sequence[Card | None]) -> bool:
    """True when two known cards of ``cards`` share a rank (a pair showing).

    Used on 4th street (RP-10-F: bets are not doubled for it; house 16.8: the players may choose
    the small or the big bet).
    """
    seen = 0
    for c in cards:
        if c is None:
            continue
        bit = 1 << c.rank
        if seen & bit:
            return True
        seen |= bit
    return False


def _decide(
    game: Game,
    boards: Sequence[Sequence[Card | None]],
    in_hand: Sequence[bool],
    can_act: Sequence[bool],
    tie: TieRule,
    community: Card | None,
) -> int | None:
    """first_to_act on boards without unknown cards among the players in the hand."""
    n = len(boards)
    best = -1
    best_key: tuple[int, ...] = ()
    for i in range(n):
        if not in_hand[i]:
            continue
        visible = [c for c in boards[i] if c is not None]
        if community is not None:
            visible.append(community)
        key = board_key(game, visible)
        if best < 0 or key > best_key:
            best, best_key = i, key
        elif key == best_key and tie is _SUIT:
            prev = [c for c in boards[best] if c is not None]
            if community is not None:
                prev.append(community)
            if _suit_key(game, visible, community) > _suit_key(game, prev, community):
                best = i
    if best < 0:
        return None
    for step in range(n):
        i = (best + step) % n
        if in_hand[i] and can_act[i]:
            return i
    return None  # pragma: no cover - unreachable: two players can act


def first_to_act(
    game: Game,
    boards: Sequence[Sequence[Card | None]],
    in_hand: Sequence[bool],
    can_act: Sequence[bool],
    tie: TieRule,
    community: Card | None = None,
    *,
    community_unknown: bool = False,
) -> int | None:
    """Index of the player who acts first on 4th to 7th street.

    The best board showing among the players in the hand (high in stud and stud-8, low in razz;
    see :func:`board_key`), ties by ``tie`` (RP-10-D suit, or position), the community card counted
    in every board (house 16.20: the high hand using the community card acts first). When that
    player cannot act (all-in) the action passes clockwise to the next player in the hand who can.
    Under TDA RP-10-H-D the first to act on 7th with a community card is instead whoever was first
    on 6th; that choice belongs to the caller.

    :param boards: per player (player order) the upcards dealt so far, ``None`` for an unknown one.
    :param in_hand: per player, False once folded, killed or dead.
    :param can_act: per player, False when all-in (only players in the hand are considered).
    :param tie: the profile's tie rule.
    :param community: the community card, if one is on the board.
    :param community_unknown: a community card is on the board but was not read (``community``
        must then be ``None``): every identity it could have is tried, and the answer stands only
        when all agree (with unknown upcards as well, only up to one of them; else ``None``).
    :returns: the index, or ``None`` when fewer than two players in the hand can act (no betting)
        or when unknown upcards of players in the hand could change the answer: when no board
        with unknown cards can reach the best fully known board the answer stands; otherwise every
        identity of up to two unknown upcards is tried, and with more the answer is ``None``.
    :raises ValueError: when the sequences differ in length, or ``community_unknown`` comes with
        a known ``community``.
    """
    n = len(boards)
    if len(in_hand) != n or len(can_act) != n:
        raise ValueError(f"{n} boards but {len(in_hand)} in_hand and {len(can_act)} can_act flags")
    if community_unknown:
        if community is not None:
            raise ValueError("community_unknown with a known community card")
        return _unknown_community(game, boards, in_hand, can_act, tie)
    able = 0
    holes: list[tuple[int, int]] = []
    for i in range(n):
        if in_hand[i]:
            if can_act[i]:
                able += 1
            for j, c in enumerate(boards[i]):
                if c is None:
                    holes.append((i, j))
    if able < 2:
        return None
    if not holes:
        return _decide(game, boards, in_hand, can_act, tie, community)
    seen = {c for b in boards for c in b if c is not None}
    if community is not None:
        seen.add(community)
    candidates = [Card(code) for code in range(52) if Card(code) not in seen]
    work = [list(b) for b in boards]
    bounded = _bounded(game, boards, in_hand, holes, candidates, community)
    if bounded:
        # No board with an unknown card can reach the best fully known board: any identities do.
        for (i, j), card in zip(holes, candidates, strict=False):
            work[i][j] = card
        return _decide(game, work, in_hand, can_act, tie, community)
    if len(holes) > _MAX_UNKNOWN:
        return None
    answer: int | None = None
    first = True
    for fill in combinations(candidates, len(holes)):
        # Distinct cards in every order: combinations cover sets, so try each assignment.
        for perm in _assignments(fill):
            for (i, j), card in zip(holes, perm, strict=True):
                work[i][j] = card
            got = _decide(game, work, in_hand, can_act, tie, community)
            if first:
                answer, first = got, False
            elif got != answer:
                return None
    return answer


def _unknown_community(
    game: Game,
    boards: Sequence[Sequence[Card | None]],
    in_hand: Sequence[bool],
    can_act: Sequence[bool],
    tie: TieRule,
) -> int | None:
    """first_to_act with an unread community card: the answer common to every identity it may
    have (cards showing excluded), else ``None``."""
    if sum(1 for i in range(len(boards)) if in_hand[i] and can_act[i]) < 2:
        return None
    holes = sum(1 for i, b in enumerate(boards) if in_hand[i] for c in b if c is None)
    if holes > 1:
        return None
    seen = {c for b in boards for c in b if c is not None}
    answer: int | None = None
    first = True
    for code in range(52):
        card = Card(code)
        if card in seen:
            continue
        got = first_to_act(game, boards, in_hand, can_act, tie, card)
        if got is None:
            return None
        if first:
            answer, first = got, False
        elif got != answer:
            return None
    return answer


def _bounded(
    game: Game,
    boards: Sequence[Sequence[Card | None]],
    in_hand: Sequence[bool],
    holes: list[tuple[int, int]],
    candidates: list[Card],
    community: Card | None,
) -> bool:
    """True when every board with unknown cards stays strictly below the best fully known board,
    whatever the unknown cards are (each board on its own, up to two unknown cards per board)."""
    holed = {i for i, _ in holes}
    best: tuple[int, ...] | None = None
    for i, board in enumerate(boards):
        if in_hand[i] and i not in holed:
            visible = [c for c in board if c is not None] + ([community] if community is not None else [])
            key = board_key(game, visible)
            if best is None or key > best:
                best = key
    if best is None:
        return False
    for i in holed:
        known = [c for c in boards[i] if c is not None] + ([community] if community is not None else [])
        missing = len(boards[i]) - sum(1 for c in boards[i] if c is not None)
        if missing > _MAX_UNKNOWN:
            return False
        for fill in combinations(candidates, missing):
            if board_key(game, known + list(fill)) >= best:
                return False
    return True


def _assignments(fill: tuple[Card, ...]) -> tuple[tuple[Card, ...], ...]:
    if len(fill) == 2:
        return (fill, (fill[1], fill[0]))
    return (fill,)
