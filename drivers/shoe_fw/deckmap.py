"""Deck maps: which tag UID is which card of an enrolled deck, sealed under the table's key.

A tag carries a UID, not a rank and suit; ``shoe-ctl deck enrol`` writes one map per deck and the
firmware reads the live ones to turn a UID into a card code (docs/protocol.md section 4: code
``(rank - 2) * 4 + suit``). The file format, the seal and the live-deck folder are specified in
docs/build-a-shoe.md, "Deck map". Runs on CircuitPython: ``json.loads`` without hooks where the
port has none, and its own canonical JSON writer (CircuitPython's ``json.dumps`` has no
``sort_keys``), checked against CPython's in the tests.
"""

import json

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    from collections.abc import Callable

from .crypto import HmacKey, same

FORMAT = "shoe-ctl deck map 1"
"""The ``format`` value of this revision."""
SEAL_LABEL = b"shoe-ctl deck map"
"""The seal key is HMAC-SHA256(table key, SEAL_LABEL)."""
DECK_SIZE = 52
RANKS = "23456789TJQKA"
SUITS = "cdhs"
UID_MIN, UID_MAX = 4, 10
"""Bytes of a tag UID (ISO 14443-A: 4, 7 or 10; ISO 15693: 8)."""
_ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
_HEX = "0123456789abcdef"


class DeckMapError(ValueError):
    """A deck map that cannot be used; the message names the file and the place in it
    (``decks/D12.json: cards: 51 cards, a deck is 52``)."""


def card_code(name: object) -> int:
    """The protocol's card code of a card name (``"As"`` -> 51, ``"2c"`` -> 0), or -1 when
    ``name`` is not a card name (rank ``23456789TJQKA``, suit ``cdhs``)."""
    if not isinstance(name, str) or len(name) != 2:
        return -1
    rank, suit = RANKS.find(name[0]), SUITS.find(name[1])
    if rank < 0 or suit < 0:
        return -1
    return rank * 4 + suit


def card_name(code: int) -> str:
    """The card name of a card code 0..51 (``51`` -> ``"As"``)."""
    return RANKS[code // 4] + SUITS[code % 4]


def valid_deck_id(deck: object) -> bool:
    """True for a deck id: 1..32 characters of ``A-Z a-z 0-9 . _ -``."""
    if not isinstance(deck, str) or not 1 <= len(deck) <= 32:
        return False
    for ch in deck:
        if ch not in _ID_CHARS:
            return False
    return True


def uid_hex(uid: bytes) -> str:
    """A UID's lowercase hex text (``b"\\x04\\xa1"`` -> ``"04a1"``)."""
    out = []
    for b in uid:
        out.append(_HEX[b >> 4] + _HEX[b & 15])
    return "".join(out)


def _is_uid_hex(text: object) -> bool:
    if not isinstance(text, str) or len(text) % 2 or not UID_MIN * 2 <= len(text) <= UID_MAX * 2:
        return False
    return _is_hex(text)


def _is_hex(text: str) -> bool:
    for ch in text:
        if ch not in _HEX:
            return False
    return True


def _json_str(text: str) -> str:
    """``text`` as a JSON string, as ``json.dumps(text, ensure_ascii=True)`` writes it."""
    out = ['"']
    for ch in text:
        n = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif n < 0x20 or 0x7F <= n < 0x10000:
            out.append("\\u" + _hex4(n))
        elif n >= 0x10000:
            n -= 0x10000
            out.append("\\u" + _hex4(0xD800 + (n >> 10)) + "\\u" + _hex4(0xDC00 + (n & 0x3FF)))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _hex4(n: int) -> str:
    return _HEX[(n >> 12) & 15] + _HEX[(n >> 8) & 15] + _HEX[(n >> 4) & 15] + _HEX[n & 15]


def canonical(value: object) -> str:
    """The canonical JSON text of ``value`` (dicts with str keys, lists, str, int, bool, None):
    what ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`` writes.

    :raises DeckMapError: a value of another type (a float: a deck map has none).
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _json_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        parts = []
        for key in sorted(value):
            if not isinstance(key, str):
                raise DeckMapError("canonical JSON: a key that is not a string")
            parts.append(_json_str(key) + ":" + canonical(value[key]))
        return "{" + ",".join(parts) + "}"
    raise DeckMapError("canonical JSON: a value of type " + type(value).__name__)


def seal_key(table_key: bytes) -> HmacKey:
    """The deck maps' seal key made ready: HMAC-SHA256(``table_key``, ``SEAL_LABEL``).
    ``table_key`` is the shoe's pairing secret (32 bytes)."""
    return HmacKey(HmacKey(table_key).digest(SEAL_LABEL))


def seal_of(doc: "dict[str, object]", key: HmacKey) -> str:
    """The seal (64 lowercase hex digits) of the deck map ``doc`` (a dict; its ``seal`` entry,
    if any, left out) under ``key`` (:func:`seal_key`)."""
    body = {}
    for k in doc:
        if k != "seal":
            body[k] = doc[k]
    return uid_hex(key.digest(canonical(body).encode("utf-8")))


def _no_dup_pairs(pairs: "list[tuple[str, object]]") -> "dict[str, object]":
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise DeckMapError("duplicate key " + _json_str(k))
        seen[k] = v
    return seen


def _loads(text: str) -> object:
    try:
        return json.loads(text, object_pairs_hook=_no_dup_pairs)
    except TypeError:  # CircuitPython's json.loads takes no hooks
        return json.loads(text)


class DeckMap:
    """One enrolled deck: ``deck`` (id), ``enrolled`` (ISO-8601 UTC text), ``by`` (user name),
    ``cards`` (dict: UID hex -> card code 0..51), ``where`` (the file it came from)."""

    def __init__(self, deck: str, cards: dict[str, int], enrolled: str = "", by: str = "",
                 where: str = "") -> None:
        self.deck = deck
        self.cards = cards
        self.enrolled = enrolled
        self.by = by
        self.where = where

    def code(self, uid: bytes) -> int:
        """The card code of tag ``uid`` (bytes) in this deck, or -1."""
        return self.cards.get(uid_hex(uid), -1)


def parse(text: bytes | str, key: HmacKey | None = None, where: str = "deck map") -> DeckMap:
    """Read and check one deck map.

    :param text: the file's bytes or text (UTF-8 JSON).
    :param key: the seal key (:func:`seal_key`), or None to skip the seal check (a tool that
        only shows a file).
    :param where: the file's name, for the errors.
    :returns: a :class:`DeckMap`.
    :raises DeckMapError: not UTF-8, not JSON, not an object, a wrong ``format``, a bad ``deck``
        id, ``enrolled`` or ``by`` missing, ``cards`` not an object of 52 entries, a duplicate
        UID, a UID that is not 4..10 bytes of lowercase hex, a card name that is not one, a card
        twice, a missing or wrong ``seal``; the message names ``where`` and the place.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeError:
            raise DeckMapError(where + ": not UTF-8 text") from None
    try:
        doc = _loads(text)
    except DeckMapError as exc:
        raise DeckMapError(where + ": " + str(exc) + " (a duplicate UID?)") from None
    except ValueError as exc:
        raise DeckMapError(where + ": not JSON (" + str(exc) + ")") from None
    if not isinstance(doc, dict):
        raise DeckMapError(where + ": not a JSON object")
    if doc.get("format") != FORMAT:
        raise DeckMapError(where + ": format: " + _show(doc.get("format")) + ", expected " + _json_str(FORMAT))
    deck = doc.get("deck")
    if not valid_deck_id(deck):
        raise DeckMapError(where + ": deck: " + _show(deck) + " is not 1..32 characters of A-Z a-z 0-9 . _ -")
    for field in ("enrolled", "by"):
        if not isinstance(doc.get(field), str) or not doc.get(field):
            raise DeckMapError(where + ": " + field + ": missing or not a text")
    cards = doc.get("cards")
    if not isinstance(cards, dict):
        raise DeckMapError(where + ": cards: not an object of tag UID -> card")
    if len(cards) != DECK_SIZE:
        raise DeckMapError(where + ": cards: " + str(len(cards)) + " cards, a deck is " + str(DECK_SIZE))
    codes = {}
    by_code = {}  # type: dict[int, str]
    for uid in sorted(cards):
        name = cards[uid]
        if not _is_uid_hex(uid):
            raise DeckMapError(where + ": cards: " + _show(uid) + " is not a tag UID (4..10 bytes, lowercase hex)")
        code = card_code(name)
        if code < 0:
            raise DeckMapError(where + ": cards: " + uid + ": " + _show(name) + " is not a card (e.g. \"As\", \"Td\", \"2c\")")
        if code in by_code:
            raise DeckMapError(where + ": cards: " + name + " twice (tags " + by_code[code] + " and " + uid + ")")
        by_code[code] = uid
        codes[uid] = code
    seal = doc.get("seal")
    if key is not None:
        if not isinstance(seal, str) or len(seal) != 64 or not _is_hex(seal):
            raise DeckMapError(where + ": seal: missing or not 64 lowercase hex digits")
        if not same(seal.encode("utf-8"), seal_of(doc, key).encode("utf-8")):
            raise DeckMapError(where + ": seal: does not match (changed after enrolment, or sealed under "
                               "another table's key)")
    return DeckMap(str(deck), codes, str(doc["enrolled"]), str(doc["by"]), where)


def _show(value: object) -> str:
    if isinstance(value, str):
        return _json_str(value[:40])
    if value is None:
        return "missing"
    return canonical(value)[:40] if isinstance(value, (int, list, dict)) else type(value).__name__


def dumps(doc: "dict[str, object]", key: HmacKey) -> str:
    """A deck map's file text: ``doc`` (without ``seal``) with its seal under ``key`` added,
    in canonical JSON and a final newline."""
    sealed = {}
    for k in doc:
        if k != "seal":
            sealed[k] = doc[k]
    sealed["seal"] = seal_of(sealed, key)
    return canonical(sealed) + "\n"


class DeckBook:
    """The live decks: what a tag UID is across them.

    :meth:`add` a :class:`DeckMap` per live deck; :meth:`lookup` a UID. A UID may be enrolled
    in one live deck only (``shoe-ctl deck enrol`` refuses the second).
    """

    def __init__(self) -> None:
        self._where = {}  # type: dict[str, DeckMap]
        self.decks = {}  # type: dict[str, DeckMap]

    def add(self, dm: DeckMap) -> None:
        """Add a live deck.

        :raises DeckMapError: its id already live, or one of its UIDs in another live deck
            (names both files).
        """
        if dm.deck in self.decks:
            raise DeckMapError(dm.where + ": deck " + dm.deck + " is also " + self.decks[dm.deck].where)
        for uid in dm.cards:
            other = self._where.get(uid)
            if other is not None:
                raise DeckMapError(dm.where + ": cards: tag " + uid + " is also in deck " + other.deck + " ("
                                   + other.where + ")")
        self.decks[dm.deck] = dm
        for uid in dm.cards:
            self._where[uid] = dm

    def lookup(self, uid: bytes) -> tuple[str, int] | None:
        """``(deck id, card code)`` of tag ``uid`` (bytes), or None for a foreign tag (in no
        live deck)."""
        dm = self._where.get(uid_hex(uid))
        if dm is None:
            return None
        return (dm.deck, dm.cards[uid_hex(uid)])

    def __len__(self) -> int:
        return len(self.decks)


def load_folder(folder: str, key: HmacKey, listdir: "Callable[[str], list[str]]",
                read: "Callable[[str], bytes]") -> tuple[DeckBook, list[str]]:
    """The live decks in ``folder`` (every ``*.json`` directly in it; ``retired/`` is not read).

    :param key: the seal key (:func:`seal_key`).
    :param listdir: ``os.listdir``; ``read``: a function path -> bytes (ports differ).
    :returns: ``(book, errors)``: a :class:`DeckBook` of the maps that are good, and one
        message per file that is not (each names the file): a bad file never stops the others.
    """
    book = DeckBook()
    errors = []
    try:
        names = sorted(listdir(folder))
    except OSError as exc:
        return book, [folder + ": cannot list the live decks (" + str(exc) + ")"]
    for name in names:
        if not name.endswith(".json"):
            continue
        path = folder + "/" + name
        try:
            data = read(path)
        except OSError as exc:
            errors.append(path + ": cannot read (" + str(exc) + ")")
            continue
        try:
            dm = parse(data, key, path)
            if dm.deck + ".json" != name:
                raise DeckMapError(path + ": deck: " + _json_str(dm.deck) + " in a file named " + name)
            book.add(dm)
        except DeckMapError as exc:
            errors.append(str(exc))
    return book, errors


def load_retired(folder: str, key: HmacKey, listdir: "Callable[[str], list[str]]",
                 read: "Callable[[str], bytes]") -> "tuple[dict[str, tuple[str, int]], list[str]]":
    """The retired decks in ``folder`` (``decks/retired/``: every ``*.json``, named
    ``<deck>-<UTC time>.json``), each checked and its seal verified as a live one.

    :returns: ``(tags, errors)``: tag UID (lowercase hex) -> ``(deck id, card code)``, the file
        retired last winning when a tag was in several; one message per file that cannot be
        used (each names the file). A folder that does not exist is no retired deck.
    """
    tags = {}  # type: dict[str, tuple[str, int]]
    errors = []  # type: list[str]
    try:
        names = sorted(listdir(folder))
    except OSError:
        return tags, errors
    for name in names:  # the UTC time in the name sorts the files in the order they were retired
        if not name.endswith(".json"):
            continue
        path = folder + "/" + name
        try:
            dm = parse(read(path), key, path)
        except OSError as exc:
            errors.append(path + ": cannot read (" + str(exc) + ")")
            continue
        except DeckMapError as exc:
            errors.append(str(exc))
            continue
        for uid in dm.cards:
            tags[uid] = (dm.deck, dm.cards[uid])
    return tags, errors
