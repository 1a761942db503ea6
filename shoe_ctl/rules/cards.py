"""Playing cards as single comparable values.

A card is one integer ``code = (rank - 2) * 4 + suit`` with ranks 2..14 (ace = 14) and suits
clubs < diamonds < hearts < spades (0..3), so two cards compare, hash and sort as one value:
``Card.parse("2c") < Card.parse("2d") < Card.parse("As")``. The unknown card ``??`` (a card a
record lacks, or a card the shoe could not read) is ``None`` wherever a ``Card | None`` appears.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
SUIT_SYMBOLS = "\u2663\u2666\u2665\u2660"
UNKNOWN_TEXT = "??"


class CardError(ValueError):
    """A card text or code that names no card of the 52-card deck."""


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One card of the 52-card deck, compared as one value.

    :param code: 0..51, ``(rank - 2) * 4 + suit``.
    :raises CardError: when ``code`` is outside 0..51.
    """

    code: int

    _cache: ClassVar[dict[str, Card]] = {}

    def __post_init__(self) -> None:
        if not isinstance(self.code, int) or not 0 <= self.code < 52:
            raise CardError(f"card code {self.code!r} is not in 0..51")

    @property
    def rank(self) -> int:
        """Rank 2..14 (11 = jack, 12 = queen, 13 = king, 14 = ace)."""
        return self.code // 4 + 2

    @property
    def suit(self) -> int:
        """Suit 0..3: clubs, diamonds, hearts, spades."""
        return self.code % 4

    @property
    def low_rank(self) -> int:
        """Rank with the ace low (1..13), as razz and the stud-8 low count it."""
        r = self.rank
        return 1 if r == 14 else r

    @classmethod
    def of(cls, rank: int, suit: int) -> Card:
        """The card of ``rank`` (2..14) and ``suit`` (0..3).

        :raises CardError: for a rank or suit out of range.
        """
        if not (2 <= rank <= 14 and 0 <= suit <= 3):
            raise CardError(f"no card has rank {rank!r} and suit {suit!r}")
        return cls((rank - 2) * 4 + suit)

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``As``, ``Td``, ``10d`` (case of the suit ignored; rank letters upper or lower).

        :raises CardError: for ``??`` or anything that is not one card; use :func:`parse_card`
            where the unknown card is allowed.
        """
        hit = cls._cache.get(text)
        if hit is not None:
            return hit
        t = text.strip()
        if len(t) == 3 and t[:2] == "10":
            t = "T" + t[2]
        if len(t) != 2:
            raise CardError(f"{text!r} is not a card (expected rank and suit, e.g. 'As', 'Td', '10d')")
        r = RANK_CHARS.find(t[0].upper())
        s = SUIT_CHARS.find(t[1].lower())
        if r < 0 or s < 0:
            raise CardError(f"{text!r} is not a card (ranks {RANK_CHARS}, suits {SUIT_CHARS})")
        card = cls(r * 4 + s)
        cls._cache[text] = card
        return card

    def __str__(self) -> str:
        return RANK_CHARS[self.code // 4] + SUIT_CHARS[self.code % 4]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    @property
    def pretty(self) -> str:
        """Rank and suit symbol, e.g. ``A\u2660``."""
        return RANK_CHARS[self.code // 4] + SUIT_SYMBOLS[self.code % 4]


def parse_card(text: str) -> Card | None:
    """Parse one card, where ``??`` is the unknown card (``None``).

    :raises CardError: for text that is neither a card nor ``??``.
    """
    if text.strip() == UNKNOWN_TEXT:
        return None
    return Card.parse(text)


def card_text(card: Card | None) -> str:
    """``str(card)``, or ``??`` for the unknown card."""
    return UNKNOWN_TEXT if card is None else str(card)


def parse_cards(text: str) -> list[Card | None]:
    """Parse concatenated cards as PHH writes them (``"AsKd??"`` or ``"10dAs"``).

    :raises CardError: naming the position of the first text that is not a card.
    """
    out: list[Card | None] = []
    i = 0
    t = text.strip()
    while i < len(t):
        width = 3 if t.startswith("10", i) else 2
        chunk = t[i : i + width]
        try:
            out.append(parse_card(chunk))
        except CardError as exc:
            raise CardError(f"{text!r}: position {i}: {exc}") from None
        i += width
    return out


_DECK: tuple[Card, ...] = tuple(Card(c) for c in range(52))


def full_deck() -> list[Card]:
    """The 52 cards in code order (2c, 2d, 2h, 2s, 3c, ... As): a new list each call, of
    shared card values (cards are immutable; built once, not 52 validations per call)."""
    return list(_DECK)


def iter_known(cards: Iterable[Card | None]) -> Iterator[Card]:
    """The known cards of ``cards``, skipping ``None``."""
    return (c for c in cards if c is not None)
