"""Deck enrolment: map one deck's tag UIDs to its cards through the reader, seal the map, keep it
live; list and retire live decks.

:func:`read_deck` passes a deck's cards over a reader module (:mod:`drivers.shoe_fw.reader`) in a
known order and returns the UID of each: a card counts once it was read at least twice with the
same UID and left the field; a tag whose UID changes between reads (a random-UID tag), two tags
at once, a UID read twice in the deck, a UID of another live deck, a 53rd tag, or no card for a
while before the 52nd each stop the enrolment with an :class:`EnrolError` naming the card and
the tag. :class:`DeckFolder` writes the sealed map (``drivers.shoe_fw.deckmap``'s format and
seal) into the live-deck folder, reads it back through the firmware's parser, and retires a deck
into ``retired/``. ``shoe-ctl deck`` (``shoe_ctl/cli/deck.py``) journals each enrolment and
retirement. The procedure and the file format: docs/build-a-shoe.md, "Enrolment" and "Deck map".
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from drivers.shoe_fw import deckmap
from drivers.shoe_fw.reader import ReaderError

if TYPE_CHECKING:
    from drivers.reader_port import ReaderModule

RANKS_UP = "A23456789TJQK"
NEW_DECK_ORDER: tuple[str, ...] = (
    tuple(r + "s" for r in RANKS_UP) + tuple(r + "d" for r in RANKS_UP)
    + tuple(r + "c" for r in reversed(RANKS_UP)) + tuple(r + "h" for r in reversed(RANKS_UP))
)
"""The factory order of a new deck as it leaves the box face down, top card first: A-K of
spades, A-K of diamonds, K-A of clubs, K-A of hearts (the common US new-deck order; a deck
sold in another order is enrolled with ``--order``)."""


class EnrolError(Exception):
    """An enrolment that cannot go on; the message names the card (its place and name), the tag
    and what to do."""


def parse_order(text: str, where: str) -> tuple[str, ...]:
    """A deck order: 52 distinct card names (``As``, ``Td``, ``2c``) separated by spaces, commas
    or lines; ``#`` starts a comment.

    :raises EnrolError: not 52 names, a name that is not a card, a card twice; names ``where``.
    """
    names: list[str] = []
    for line in text.splitlines():
        for word in line.split("#", 1)[0].replace(",", " ").split():
            names.append(word)
    seen: dict[str, int] = {}
    for n, name in enumerate(names, start=1):
        if deckmap.card_code(name) < 0:
            raise EnrolError(f"{where}: card {n}: {name!r} is not a card (rank 23456789TJQKA, suit cdhs: As, Td, 2c)")
        if name in seen:
            raise EnrolError(f"{where}: card {n}: {name} twice (also card {seen[name]})")
        seen[name] = n
    if len(names) != deckmap.DECK_SIZE:
        raise EnrolError(f"{where}: {len(names)} cards, a deck is {deckmap.DECK_SIZE}")
    return tuple(names)


def is_random_id(uid: bytes) -> bool:
    """True for a random ID: a 4-byte UID whose first byte is ``08`` (ISO/IEC 14443-3: a RID,
    new at every activation)."""
    return len(uid) == 4 and uid[0] == 0x08


class DeckReading:
    """What :func:`read_deck` found: ``uids`` in deck order, ``reads`` (scans that saw each
    card), ``scans`` and ``resets`` of the reader."""

    def __init__(self) -> None:
        self.uids: list[bytes] = []
        self.reads: list[int] = []
        self.scans = 0
        self.resets = 0


def read_deck(reader: ReaderModule, order: Sequence[str], *, known: deckmap.DeckBook | None = None,
              min_reads: int = 2, interval_s: float = 0.02, idle_s: float = 30.0, settle_s: float = 1.5,
              clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
              on_card: Callable[[int, str, bytes], None] | None = None,
              where: str = "reader") -> DeckReading:
    """Read one deck's tags in ``order`` through a started reader module.

    :param reader: a reader module (``scan()``, ``reset()``), started.
    :param order: the 52 card names in the order the cards pass.
    :param known: the other live decks (a UID of one of them is refused).
    :param min_reads: scans that must see a card's UID before it counts.
    :param interval_s: pause between scans (seconds).
    :param idle_s: how long without a tag before the 52nd card ends the enrolment (seconds).
    :param settle_s: how long the field must stay empty after the 52nd card (seconds); a tag in
        that time is a 53rd.
    :param on_card: called with (place 1..52, card name, UID) as each card counts.
    :param where: the reader's name in messages (its spec).
    :returns: a :class:`DeckReading` of 52 UIDs.
    :raises EnrolError: see the module; the reader failing and not coming back after a reset.
    """
    size = deckmap.DECK_SIZE
    if len(order) != size:
        raise EnrolError(f"the deck order has {len(order)} cards, a deck is {size}")
    got = DeckReading()
    place: dict[bytes, int] = {}
    current: bytes | None = None
    count = 0
    last_tag = clock()

    def name(n: int) -> str:
        return f"card {n} ({order[n - 1]})" if n <= size else f"tag {n}"

    def accept(uid: bytes, reads: int) -> None:
        n = len(got.uids) + 1
        hexed = uid.hex()
        if uid in place:
            first = place[uid]
            raise EnrolError(f"{name(n)}: tag {hexed} was already read as {name(first)}: a duplicate UID "
                             "(the same card passed twice, or two tags with one UID)")
        if known is not None:
            other = known.lookup(uid)
            if other is not None:
                deck, code = other
                raise EnrolError(f"{name(n)}: tag {hexed} is enrolled in live deck {deck} as "
                                 f"{deckmap.card_name(code)}: a card of another deck; take it out, or retire "
                                 f"deck {deck} first")
        place[uid] = n
        got.uids.append(uid)
        got.reads.append(reads)
        if on_card is not None:
            on_card(n, order[n - 1], uid)

    def close_presence() -> None:
        if current is None:
            return
        n = len(got.uids) + 1
        if count < min_reads:
            raise EnrolError(f"{name(n)}: tag {current.hex()} read {count} time(s) as it passed; each card must "
                             f"be read at least {min_reads} times: pass the cards slower and start again")
        accept(current, count)

    while True:
        uids = scan_once(reader, got, where)
        now = clock()
        if len(uids) > 1:
            n = len(got.uids) + (1 if current is None else 2)
            raise EnrolError(f"{name(n)}: two tags in the field at once ({uids[0].hex()}, {uids[1].hex()}): "
                             "pass the cards one at a time and start again")
        if uids:
            uid = uids[0]
            last_tag = now
            n = len(got.uids) + 1 + (1 if current is not None and uid != current else 0)
            if is_random_id(uid):
                raise EnrolError(f"{name(n)}: tag {uid.hex()} is a random ID (ISO/IEC 14443-3, first byte 08): "
                                 "its UID changes at every read, so it cannot be enrolled")
            if len(got.uids) == size and (current is None or uid != current):
                raise EnrolError(f"a 53rd tag ({uid.hex()}) after the 52nd card {order[-1]}: a deck is {size}; "
                                 "take out the extra card (a joker or a card of another deck)")
            if current is None:
                current, count = uid, 1
            elif uid == current:
                count += 1
            elif count >= min_reads:
                close_presence()
                current, count = uid, 1
            else:
                raise EnrolError(f"{name(len(got.uids) + 1)}: the tag's UID changed between reads "
                                 f"({current.hex()}, then {uid.hex()}): a random-UID tag cannot be enrolled")
        else:
            close_presence()
            current, count = None, 0
            if len(got.uids) == size and now - last_tag >= settle_s:
                return got
            if len(got.uids) < size and now - last_tag >= idle_s:
                left = size - len(got.uids)
                raise EnrolError(f"{len(got.uids)} tags read, a deck is {size}: no card for {idle_s:g} s; "
                                 f"{left} missing from {name(len(got.uids) + 1)} on")
        sleep(interval_s)


def scan_once(reader: ReaderModule, got: DeckReading, where: str) -> list[bytes]:
    """One scan of the reader (counted in ``got``); a failing reader is reset once and scanned
    again.

    :raises EnrolError: the reader fails again after the reset (names ``where``).
    """
    got.scans += 1
    try:
        return list(reader.scan())
    except ReaderError as first:
        got.resets += 1
        try:
            reader.reset()
            return list(reader.scan())
        except ReaderError as exc:
            raise EnrolError(f"reader {where}: {first}; after a reset: {exc}") from None


def start_reader(reader: ReaderModule, where: str) -> None:
    """Start a reader module, naming it when it does not answer.

    :raises EnrolError: the reader does not answer or answers wrongly.
    """
    try:
        reader.start()
    except ReaderError as exc:
        raise EnrolError(f"reader {where}: {exc}: {reader_hint(where)}") from None


def reader_hint(where: str) -> str:
    """What to check on a reader that does not answer, by its family (the spec's ``FAMILY:``)."""
    if where.startswith("pepper:"):
        return "is it plugged in and is this its port (ls /dev/ttyACM*)?"
    return "is it powered, wired to this port (TX to RX, RX to TX) and in HSU mode (I0 = 0, I1 = 0)?"


def utc_now() -> str:
    """Now in ISO-8601 UTC to the second (``2026-12-04T21:00:00Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class DeckFolder:
    """The live decks: ``<folder>/<deck>.json``, retired ones in ``<folder>/retired/``.

    :param folder: the live-deck folder.
    :param secret: the table key (the shoe's pairing secret, 32 bytes).
    """

    def __init__(self, folder: str | os.PathLike[str], secret: bytes) -> None:
        self.folder = Path(folder)
        self.key = deckmap.seal_key(secret)

    def path(self, deck: str) -> Path:
        return self.folder / f"{deck}.json"

    def load(self) -> tuple[deckmap.DeckBook, list[str]]:
        """The live decks and one message per file that cannot be used (each names the file)."""
        if not self.folder.exists():
            return deckmap.DeckBook(), []
        return deckmap.load_folder(str(self.folder), self.key, os.listdir, _read_bytes)

    def write(self, deck: str, by: str, order: Sequence[str], uids: Sequence[bytes],
              enrolled: str | None = None) -> tuple[Path, deckmap.DeckMap]:
        """Seal and write a deck's map (atomically, mode 0600), then read it back with the
        firmware's parser.

        :raises EnrolError: a bad deck id, a deck of that id already live, a map that does not
            read back, or the file cannot be written.
        """
        if not deckmap.valid_deck_id(deck):
            raise EnrolError(f"deck id {deck!r}: 1..32 characters of A-Z a-z 0-9 . _ -")
        path = self.path(deck)
        if path.exists():
            raise EnrolError(f"deck {deck} is already live ({path}): retire it first (shoe-ctl deck retire {deck}) "
                             "or choose another id")
        doc: dict[str, object] = {"format": deckmap.FORMAT, "deck": deck, "enrolled": enrolled or utc_now(), "by": by,
               "cards": {uid.hex(): card for uid, card in zip(uids, order, strict=True)}}
        text = deckmap.dumps(doc, self.key)
        tmp = path.with_name(path.name + ".new")
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            raise EnrolError(f"{path}: cannot write ({exc.strerror or exc})") from None
        try:
            dm = deckmap.parse(path.read_bytes(), self.key, str(path))
        except (OSError, deckmap.DeckMapError) as exc:
            raise EnrolError(f"{path}: written but does not read back: {exc}") from None
        return path, dm

    def retire(self, deck: str) -> Path:
        """Move a live deck's map to ``retired/<deck>-<UTC time>.json``; its tags become foreign.

        :raises EnrolError: no such live deck, or the move fails.
        """
        if not deckmap.valid_deck_id(deck):
            raise EnrolError(f"deck id {deck!r}: 1..32 characters of A-Z a-z 0-9 . _ -")
        path = self.path(deck)
        if not path.is_file():
            raise EnrolError(f"deck {deck} is not live: no {path}")
        target = self.folder / "retired" / f"{deck}-{utc_now().replace(':', '')}.json"
        try:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.replace(path, target)
        except OSError as exc:
            raise EnrolError(f"{path}: cannot move to {target} ({exc.strerror or exc})") from None
        return target


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(1 << 16)
