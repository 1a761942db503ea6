"""The cards inside the virtual shoe: a seeded shuffle, a stacked order, or a recorded PHH hand.

A :class:`Deck` is an ordered list of cards, the next card to leave first. It never holds an
unknown card: where a caller leaves a position open (``None``), a seeded random card not used
elsewhere fills it, so the same seed gives the same deck.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from shoe_ctl.rules.cards import Card, full_deck, parse_cards


class DeckError(ValueError):
    """A deck that cannot be built (a card twice, more than 52 cards, a PHH hand without actions)."""


_CODES = frozenset(range(52))


def stacked_order(first: Sequence[Card | None], seed: int = 0, *, size: int = 52) -> list[Card]:
    """The cards of :meth:`Deck.with_prefix`, next to leave first: ``first`` on top, each
    ``None`` in it a card of the rest; the rest is every card not in ``first``, in code order,
    shuffled by ``random.Random(seed)``; it fills the open places in order, then follows them;
    ``size`` cards in all.

    :raises DeckError: a card twice in ``first``, or ``first`` longer than ``size`` or 52.
    """
    if len(first) > size or size > 52:
        raise DeckError(f"{len(first)} cards on top of a deck of {size} (at most 52)")
    known = [c for c in first if c is not None]
    taken = {c.code for c in known}  # card codes: an int hashes far faster than the dataclass
    if len(taken) != len(known):
        dup = next(c for c in known if known.count(c) > 1)
        raise DeckError(f"card {dup} appears twice in the stacked cards")
    deck = full_deck()  # in code order: a card's code is its place
    rest = [deck[code] for code in sorted(_CODES - taken)]
    seeded_shuffle(rest, seed)
    fill = iter(rest)
    cards = [c if c is not None else next(fill) for c in first]
    cards.extend(fill)
    return cards if size == 52 else cards[:size]


def seeded_shuffle(cards: list[Card], seed: int) -> None:
    """Shuffle ``cards`` in place as ``random.Random(seed).shuffle(cards)`` does (CPython 3.11's
    ``Random.shuffle`` and ``_randbelow_with_getrandbits``: from the last place down, a place
    drawn below the place's count with ``getrandbits`` of the count's bit length, drawn again
    while too large, and the two swapped), written out: the same order, without two Python
    calls per card (the direct replay stacks a deck for every hand)."""
    getrandbits = random.Random(seed).getrandbits
    for i in range(len(cards) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        cards[i], cards[j] = cards[j], cards[i]


class Deck:
    """An ordered stub of cards; :meth:`take` removes the next one.

    :param cards: the cards, next to leave first.
    :raises DeckError: a card appears twice.
    """

    def __init__(self, cards: Iterable[Card]) -> None:
        self._cards = list(cards)
        seen: set[int] = set()  # card codes: an int hashes far faster than the dataclass
        for i, card in enumerate(self._cards):
            if card.code in seen:
                raise DeckError(f"card {card} appears twice (position {i})")
            seen.add(card.code)
        self._pos = 0

    # ---------------------------------------------------------------- builders

    @classmethod
    def seeded(cls, seed: int) -> Deck:
        """All 52 cards in a random order fixed by ``seed``."""
        cards = full_deck()
        random.Random(seed).shuffle(cards)
        return cls(cards)

    @classmethod
    def stacked(cls, cards: Sequence[Card]) -> Deck:
        """Exactly ``cards``, in that order (no fill).

        :raises DeckError: a card appears twice.
        """
        return cls(cards)

    @classmethod
    def with_prefix(cls, first: Sequence[Card | None], seed: int = 0, *, size: int = 52) -> Deck:
        """``first`` on top (``None`` = any card: a seeded random one), then the rest of the
        52-card deck in a seeded random order, ``size`` cards in all (:func:`stacked_order`).

        :raises DeckError: a card twice in ``first``, or ``first`` longer than ``size`` or 52.
        """
        deck = cls.__new__(cls)  # no repeat by construction: the check of __init__ is not run again
        deck._cards = stacked_order(first, seed, size=size)
        deck._pos = 0
        return deck

    @classmethod
    def from_phh(cls, source: str | Path, seed: int = 0) -> Deck:
        """The deck that deals a recorded PHH hand in physical order: 3rd street one card to each
        player in turn (down, down, up), then on 4th-7th a burn and one card to each player who
        received one in the record, a ``d db`` card as a burn and the community card; unknown
        cards (``??``) and burns are seeded random fill, then the rest of the deck.

        :param source: a ``.phh`` path, or the PHH text itself.
        :raises DeckError: no ``actions``, a bad card text, or a card twice.
        """
        path = Path(source) if not str(source).lstrip().startswith(("variant", "[", "#")) else None
        text = path.read_text(encoding="utf-8") if path is not None and path.is_file() else str(source)
        import tomllib  # here: the replay's decks are stacked by with_prefix, without a PHH text

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise DeckError(f"{source}: not a PHH (TOML) file: {exc}") from exc
        actions = data.get("actions")
        if not isinstance(actions, list):
            raise DeckError(f"{source}: no 'actions' list")
        streets: list[list[tuple[str, list[Card | None]]]] = []
        current: list[tuple[str, list[Card | None]]] = []
        for action in actions:
            parts = str(action).split()
            if len(parts) >= 3 and parts[0] == "d" and parts[1] in ("dh", "db"):
                who = parts[2] if parts[1] == "dh" else "board"
                cards_text = parts[3] if parts[1] == "dh" and len(parts) > 3 else parts[-1]
                try:
                    cards = parse_cards(cards_text)
                except ValueError as exc:
                    raise DeckError(f"{source}: action {action!r}: {exc}") from exc
                current.append((who, cards))
            elif current:
                streets.append(current)
                current = []
        if current:
            streets.append(current)
        order: list[Card | None] = []
        for n, street in enumerate(streets):
            if n == 0:
                width = max(len(cards) for _, cards in street)
                for i in range(width):
                    order.extend(cards[i] for _, cards in street if i < len(cards))
            else:
                order.append(None)  # the burn
                for _, cards in street:
                    order.extend(cards)
        return cls.with_prefix(order, seed)

    # ---------------------------------------------------------------- use

    def take(self) -> Card:
        """Remove and return the next card.

        :raises IndexError: the deck is empty.
        """
        if self._pos >= len(self._cards):
            raise IndexError("the deck is empty")
        card = self._cards[self._pos]
        self._pos += 1
        return card

    def peek(self) -> Card | None:
        """The next card without taking it (None when empty)."""
        return self._cards[self._pos] if self._pos < len(self._cards) else None

    def remaining(self) -> int:
        """Cards left."""
        return len(self._cards) - self._pos

    def cards(self) -> list[Card]:
        """The cards left, next first."""
        return self._cards[self._pos :]

    def dealt(self) -> list[Card]:
        """The cards taken so far, first first."""
        return self._cards[: self._pos]

    def __len__(self) -> int:
        return self.remaining()

    def __repr__(self) -> str:
        return f"Deck({self.remaining()} left of {len(self._cards)})"
