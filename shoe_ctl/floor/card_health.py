"""Reader and card health from the table's journal: reads, unreadable cards, misreads and retries
of the shoe's reader, and reads and retries per tag of each enrolled deck; the figures published
with each ``hand-end``, the card to replace once its tag retries too often, the keyed hashes
of the tags at the table and the fingerprint of the hand's dealt order. Fed by the floor publisher in journal order; described in docs/floor.md,
"Reader and card health" and "One tag at two tables".
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:  # a dependency; an environment made before it was one reads with the standard library
    import orjson
except ImportError:  # pragma: no cover - the environments the project makes have it
    orjson = None  # type: ignore[assignment]

from drivers.shoe_fw import deckmap
from shoe_ctl.rules.cards import Card, CardError
from shoe_ctl.service.journal.records import Record

__all__ = ["ORDER_CARDS", "RETRIES_CODE", "CardHealth", "DeckTags", "HealthLimits", "JournalDeckTags", "order_hash",
           "tag_hash", "tag_index"]

DeckTags = Callable[[str], Sequence[bytes] | None]
"""The tag UIDs of an enrolled deck by its id, ``None`` when not known."""

RETRIES_CODE = "card-retries-floor"
"""The floor's alert that a card's tag retries too often. ``-floor``: neither rule text speaks of
a worn card's tag; the floor decides when the card is changed."""

MAX_DECKS = 16
"""Decks whose tags are counted at once; the one counted longest ago is forgotten beyond."""

MAX_WAITING = 120
"""Reads kept while their stub's deck is not yet named (the shoe names it after its first known
card); the oldest are dropped beyond (a shoe that never names its decks)."""

MAX_TAGS_SHOWN = 52
"""Tags listed in one ``hand-end``'s figures, the highest retry rate first."""

ORDER_CARDS = 12
"""The cards of a hand's deal its order fingerprint covers (:func:`order_hash`): two shuffled
decks share their first 12 cards in order once in about 4e20."""


@dataclass(frozen=True, slots=True)
class HealthLimits:
    """When a tag's retries call for the card to be replaced: at least ``min_reads`` reads of it
    in its deck's life and more than ``per_1000`` retries per 1,000 of those reads."""

    per_1000: int = 100
    min_reads: int = 10

    def worn(self, reads: int, retries: int) -> bool:
        """Whether ``retries`` of ``reads`` pass the limits."""
        return reads >= self.min_reads and retries * 1000 > self.per_1000 * reads


def tag_index(key: bytes, deck: str, code: int) -> str:
    """The opaque index of the tag of card ``code`` (0..51) in deck ``deck``: the first 12 hex
    digits of HMAC-SHA256 under ``key`` (the room key) of ``deck/code``; without the key nobody
    can tell which card an index is."""
    return hmac.new(key, f"{deck}/{code}".encode(), hashlib.sha256).hexdigest()[:12]


def tag_hash(key: bytes, uid: bytes) -> str:
    """The keyed hash of tag ``uid`` the tables of a room send to the floor: the first 16 hex
    digits of HMAC-SHA256 under the room ``key`` of ``tag/`` and the UID; the same tag gives the
    same hash at every table, and nobody without the key can tell which tag or card it is."""
    return hmac.new(key, b"tag/" + uid, hashlib.sha256).hexdigest()[:16]


def order_hash(key: bytes, codes: Sequence[int]) -> str:
    """The fingerprint of a hand's first :data:`ORDER_CARDS` cards in dealt order (card codes,
    255 for an unreadable card): the first 16 hex digits of HMAC-SHA256 under the room ``key``."""
    return hmac.new(key, b"order/" + bytes(codes), hashlib.sha256).hexdigest()[:16]


class JournalDeckTags:
    """:data:`DeckTags` from a table's journal: the deck map file its newest ``deck-enrol``
    record of that deck names (``shoe-ctl deck enrol``), read without its seal (only the UIDs are
    taken). At most ``scan`` enrolment records are looked at per deck."""

    def __init__(self, journal: Any, scan: int = 1000) -> None:
        self.journal = journal
        self.scan = scan

    def __call__(self, deck: str) -> Sequence[bytes] | None:
        for n, rec in enumerate(self.journal.newest("deck-enrol")):
            if n >= self.scan:
                return None
            body = record_body(rec)
            if body.get("deck") != deck:
                continue
            try:
                dm = deckmap.parse(Path(str(body.get("file"))).read_bytes()[:1 << 16], None, str(body.get("file")))
            except (OSError, deckmap.DeckMapError):
                return None
            return [bytes.fromhex(uid) for uid in sorted(dm.cards)] if dm.deck == deck else None
        return None


_BODY_KINDS = frozenset({"CardRead", "ShoeFault", "ForeignCard", "StubDeck", "deck-enrol", "deck-retire"})
"""The record kinds whose body the counts read."""


_LONG_NUMBER = re.compile(r"\d{19}")
"""Nineteen digits in a row: maybe an integer past 64 bits, which orjson would read as a float."""


def record_body(rec: Record) -> dict[str, Any]:
    """A journal record's body as a ``dict`` (``{}`` when it is empty, not JSON, nested deeper than
    the standard library reads, or not an object),
    as the standard library reads it: read by orjson (a fraction of the time), or by the standard
    library when the text has nineteen digits in a row (orjson reads an integer past 64 bits as a
    float) or orjson refuses it (``NaN``, ``1e400``, a lone surrogate)."""
    text = rec.body
    if not text:
        return {}
    try:
        if orjson is None or _LONG_NUMBER.search(text):
            body = json.loads(text)
        else:
            try:
                body = orjson.loads(text)
            except orjson.JSONDecodeError:
                body = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the reader's stack
        return {}
    return body if isinstance(body, dict) else {}


def _code(card: object) -> int | None:
    """A record's card name (``9c``) as its code (:class:`~shoe_ctl.rules.cards.Card`), else
    ``None`` (the unknown card, or anything that names none)."""
    if not isinstance(card, str) or len(card) != 2:
        return None
    try:
        return Card.parse(card).code
    except CardError:
        return None


class CardHealth:
    """The health counts of one table, fed its journal records in order (:meth:`feed`), each
    record once (one at or below :attr:`upto` is skipped: a record published again).

    Reader counts since the first record fed: ``cards`` (every CARD), ``unreadable`` (a CARD
    without identity that was no other deck's card), ``foreign`` (a card of no deck or of
    another), ``misreads`` (misread FAULTs begun), ``retries`` (a misread after a CARD that
    carried an identity: the reader's check failed and the shoe trusted another read), ``readers``
    (CARDs by the reader that identified them). Per tag (a card of an enrolled deck, named by
    the shoe's ``StubDeck``): reads and retries since the deck's enrolment or since counted.

    :param key: the room key for :func:`tag_index` and :func:`tag_hash`; ``None``: no tag is
        listed by index, none is sent by hash.
    :param limits: when a card is to be replaced.
    :param deck_tags: an enrolled deck's tag UIDs (:class:`JournalDeckTags`), for the hashes of
        the tags at the table; ``None``: only the foreign cards' tags are sent.
    """

    def __init__(self, key: bytes | None = None, limits: HealthLimits | None = None,
                 deck_tags: DeckTags | None = None) -> None:
        self.key = key
        self.deck_tags = deck_tags
        self._uids: OrderedDict[str, Sequence[bytes] | None] = OrderedDict()
        self._foreign: list[tuple[str, str]] = []  # (deck, tag hash) of the hand's foreign cards
        self.limits = limits or HealthLimits()
        self.upto = 0
        """The last journal sequence counted."""
        self.since: int | None = None
        """The first journal sequence counted."""
        self.reader: dict[str, int] = {"cards": 0, "unreadable": 0, "foreign": 0, "misreads": 0, "retries": 0}
        self.readers: dict[str, int] = {}
        self.tags: OrderedDict[str, dict[int, list[int]]] = OrderedDict()
        """deck -> card code -> [reads, retries]."""
        self.flagged: set[tuple[str, int]] = set()
        self._epoch_deck: OrderedDict[int | None, str] = OrderedDict()
        self._waiting: list[list[Any]] = []  # [epoch, code, retries] of reads whose deck is not named yet
        self._last: tuple[str, int] | list[Any] | None = None  # the newest shoe event, when a card with identity
        self._unreadable_last = False
        self._hand_decks: set[str] = set()
        self._figures: tuple[int, dict[str, Any]] | None = None
        self._order: list[int] = []  # the hand's first cards in dealt order (255: unreadable)

    # ------------------------------------------------------------------ counting

    def seed(self, records: Iterable[Record], upto: int) -> None:
        """Count ``records`` up to journal sequence ``upto`` without any figures (a restart:
        what was published before), so the counts go on where they were."""
        for rec in records:
            if rec.seq > upto:
                break
            self.feed(rec)
        self.upto = max(self.upto, upto)

    def feed(self, rec: Record, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Count one journal record; for a ``hand-end`` the figures to publish with it
        (:meth:`figures`; the newest ``hand-end`` read again gets the same), else ``None``.
        ``body``: the record's :func:`record_body` when the caller has it already (the publisher
        parses each body once, for its payload and here)."""
        if rec.seq <= self.upto:
            return self._figures[1] if self._figures is not None and self._figures[0] == rec.seq else None
        self.upto = rec.seq
        if self.since is None:
            self.since = rec.seq
        kind = rec.kind
        if body is None and kind in _BODY_KINDS:
            body = record_body(rec)
        if kind == "CardRead":
            self._card(body or {})
        elif kind == "ShoeFault":
            body = body or {}
            if body.get("kind") == "misread" and not body.get("cleared"):
                self._misread()
            self._last = None
        elif kind == "ForeignCard":
            self._foreign_tag(body or {})
            if self._unreadable_last:
                self.reader["unreadable"] -= 1
                self.reader["foreign"] += 1
            self._unreadable_last = False
            self._last = None
        elif kind == "StubDeck":
            body = body or {}
            self._named(body.get("epoch"), str(body.get("deck") or ""))
        elif kind in ("deck-enrol", "deck-retire"):
            self._forget(str((body or {}).get("deck") or ""))
        elif kind == "hand-start":
            self._hand_decks = set()
            self._order = []
        elif kind == "hand-end":
            self._figures = (rec.seq, self.figures())
            return self._figures[1]
        elif rec.shoe_seq is not None:
            self._last, self._unreadable_last = None, False
        return None

    def _card(self, body: dict[str, Any]) -> None:
        self.reader["cards"] += 1
        code = _code(body.get("card"))
        if len(self._order) < ORDER_CARDS:
            self._order.append(255 if code is None else code)
        self._unreadable_last = code is None
        if code is None:
            self.reader["unreadable"] += 1
            self._last = None
            return
        reader = str(body.get("reader") or "?")[:16]
        if reader in self.readers or len(self.readers) < 8:
            self.readers[reader] = self.readers.get(reader, 0) + 1
        epoch = body.get("epoch")
        deck = self._epoch_deck.get(epoch) if isinstance(epoch, int | None) else None
        if deck:
            self._count(deck, code, 1, 0)
            self._last = (deck, code)
        else:
            entry = [epoch, code, 0]
            self._waiting.append(entry)
            del self._waiting[:-MAX_WAITING]
            self._last = entry

    def _foreign_tag(self, body: dict[str, Any]) -> None:
        tag = body.get("tag")
        if self.key is None or not isinstance(tag, str) or len(self._foreign) >= MAX_TAGS_SHOWN:
            return
        try:
            uid = bytes.fromhex(tag)
        except ValueError:
            return
        self._foreign.append((str(body.get("deck") or "")[:64], tag_hash(self.key, uid)))

    def _misread(self) -> None:
        self.reader["misreads"] += 1
        last = self._last
        if last is None:
            return
        self.reader["retries"] += 1
        if isinstance(last, tuple):
            self._count(last[0], last[1], 0, 1)
        else:
            last[2] += 1
        self._last = None

    def _named(self, epoch: object, deck: str) -> None:
        if not deck or not isinstance(epoch, int):
            return
        self._epoch_deck[epoch] = deck
        self._epoch_deck.move_to_end(epoch)
        while len(self._epoch_deck) > 8:
            self._epoch_deck.popitem(last=False)
        keep = []
        for entry in self._waiting:
            if entry[0] == epoch:
                self._count(deck, entry[1], 1, entry[2])
                if self._last is entry:
                    self._last = (deck, entry[1])
            else:
                keep.append(entry)
        self._waiting = keep

    def _count(self, deck: str, code: int, reads: int, retries: int) -> None:
        counts = self.tags.get(deck)
        if counts is None:
            counts = self.tags[deck] = {}
            while len(self.tags) > MAX_DECKS:
                gone, _ = self.tags.popitem(last=False)
                self.flagged = {f for f in self.flagged if f[0] != gone}
        self.tags.move_to_end(deck)
        pair = counts.setdefault(code, [0, 0])
        pair[0] += reads
        pair[1] += retries
        self._hand_decks.add(deck)

    def _forget(self, deck: str) -> None:
        """A deck enrolled or retired: its tags' counts start again (another deck of that id has
        other tags)."""
        self.tags.pop(deck, None)
        self._uids.pop(deck, None)
        self.flagged = {f for f in self.flagged if f[0] != deck}

    # ------------------------------------------------------------------ figures

    def figures(self) -> dict[str, Any]:
        """What a ``hand-end`` publishes: the reader counts (``since``: the first journal sequence
        counted), the tags with a retry of the decks dealt in the hand by :func:`tag_index` (only
        with a room key; reads and retries, the highest rate first, at most
        :data:`MAX_TAGS_SHOWN`), and ``replace``: each card whose tag has just passed the limits,
        named (the hand is over) with its deck, reads and retries. A card is named once per
        deck's life."""
        out: dict[str, Any] = {**self.reader, "readers": dict(self.readers), "since": self.since}
        tags: list[dict[str, Any]] = []
        replace: list[dict[str, Any]] = []
        for deck in sorted(self._hand_decks):
            for code, (reads, retries) in sorted(self.tags.get(deck, {}).items()):
                if not retries:
                    continue
                if self.key is not None:
                    tags.append({"deck": deck, "tag": tag_index(self.key, deck, code), "reads": reads,
                                 "retries": retries})
                if (deck, code) not in self.flagged and self.limits.worn(reads, retries):
                    self.flagged.add((deck, code))
                    replace.append({"deck": deck, "card": str(Card(code)), "reads": reads, "retries": retries})
        tags.sort(key=lambda t: (-t["retries"] / max(1, t["reads"]), t["deck"], t["tag"]))
        out["tags"] = tags[:MAX_TAGS_SHOWN]
        out["replace"] = replace
        if self.key is not None:
            out["seen"] = self._seen(self.key)
            if len(self._order) == ORDER_CARDS:
                out["order"] = order_hash(self.key, self._order)
        self._hand_decks = set()
        self._order = []
        return out

    def _seen(self, key: bytes) -> list[dict[str, Any]]:
        """The tags at the table in the hand, by :func:`tag_hash`: every tag of each deck dealt
        (from its map: the same 52 hashes whatever was dealt), then the foreign cards' tags."""
        seen: list[dict[str, Any]] = []
        for deck in sorted(self._hand_decks):
            if deck not in self._uids:
                self._uids[deck] = self.deck_tags(deck) if self.deck_tags is not None else None
                while len(self._uids) > MAX_DECKS:
                    self._uids.popitem(last=False)
            uids = self._uids[deck]
            if uids:
                seen.append({"deck": deck, "tags": sorted(tag_hash(key, u) for u in uids)})
        if self._foreign:
            by_deck: dict[str, list[str]] = {}
            for deck, h in self._foreign:
                by_deck.setdefault(deck, []).append(h)
            seen.extend({"deck": deck, "foreign": True, "tags": sorted(set(hs))} for deck, hs in sorted(by_deck.items()))
            self._foreign = []
        return seen
