"""The deck check: a live deck's cards passed over the reader before its first hand, and every
card missing, read twice, of another deck or of no deck named, by card and tag. The procedure:
docs/build-a-shoe.md, "Deck check".
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from drivers.shoe_fw import deckmap
from shoe_ctl.service.decks import DeckReading, EnrolError, scan_once

if TYPE_CHECKING:
    from drivers.reader_port import ReaderModule

__all__ = ["MAX_PASSES", "DeckCheck", "DeckCheckShown", "check_deck", "latest_check", "read_passes"]

MAX_PASSES = 2 * deckmap.DECK_SIZE
"""Tags a check reads at most: two decks' worth (more is not one deck: the check stops)."""


class DeckCheck:
    """What :func:`check_deck` found for deck ``deck``: ``read`` tags, ``missing`` (card, tag) of
    the deck never read, ``twice`` (card, tag, times) read more than once, ``other`` (deck, card,
    tag) of another live deck or, with ``retired``, a retired one, ``foreign`` tags of no deck."""

    def __init__(self, deck: str) -> None:
        self.deck = deck
        self.read = 0
        self.missing: list[tuple[str, str]] = []
        self.twice: list[tuple[str, str, int]] = []
        self.other: list[tuple[str, str, str]] = []
        self.foreign: list[str] = []

    @property
    def ok(self) -> bool:
        """Every card of the deck read once and nothing else."""
        return not (self.missing or self.twice or self.other or self.foreign)

    def lines(self) -> list[str]:
        """The result for the dealer, a line per finding, the summary first."""
        found = self.read - sum(n - 1 for _c, _t, n in self.twice) - len(self.other) - len(self.foreign)
        head = (f"deck {self.deck}: {found} of {deckmap.DECK_SIZE} cards read"
                + (", none missing, none twice, no card of another deck" if self.ok else ""))
        return ([head] + [f"missing: {card} (tag {tag})" for card, tag in self.missing]
                + [f"twice: {card} read {n} times (tag {tag})" for card, tag, n in self.twice]
                + [f"of deck {deck}: {card} (tag {tag})" for deck, card, tag in self.other]
                + [f"foreign: tag {tag} (in no deck)" for tag in self.foreign])


def check_deck(dm: deckmap.DeckMap, uids: Sequence[bytes], book: deckmap.DeckBook,
               retired: Mapping[str, tuple[str, int]] | None = None) -> DeckCheck:
    """Compare the tags read (``uids``, in the order passed) with deck map ``dm``; ``book``: the
    live decks, ``retired``: tag -> (deck, card code) of the retired ones (each names a tag of no
    live deck)."""
    out = DeckCheck(dm.deck)
    out.read = len(uids)
    seen: Counter[str] = Counter()
    for uid in uids:
        tag = deckmap.uid_hex(uid)
        if tag in dm.cards:
            seen[tag] += 1
            continue
        found = book.lookup(uid) or (retired or {}).get(tag)
        if found is None:
            out.foreign.append(tag)
        else:
            deck = found[0] if book.lookup(uid) is not None else f"{found[0]} (retired)"
            out.other.append((deck, deckmap.card_name(found[1]), tag))
    for tag, code in dm.cards.items():
        if not seen[tag]:
            out.missing.append((deckmap.card_name(code), tag))
        elif seen[tag] > 1:
            out.twice.append((deckmap.card_name(code), tag, seen[tag]))
    return out


def read_passes(reader: ReaderModule, *, interval_s: float = 0.02, idle_s: float = 5.0, first_s: float = 30.0,
                clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                on_tag: Callable[[int, bytes], None] | None = None, where: str = "reader") -> list[bytes]:
    """Every tag that passes the reader, once per time it is in the field (two at once: both),
    in order, until the field stays empty for ``idle_s`` after the first tag (or ``first_s``
    with none).

    :param on_tag: called with (number 1.., UID) as each tag leaves the field.
    :raises EnrolError: the reader fails after a reset, or more than :data:`MAX_PASSES` tags.
    """
    got = DeckReading()
    tags: list[bytes] = []
    present: set[bytes] = set()
    last = clock()
    while True:
        uids = set(scan_once(reader, got, where))
        now = clock()
        if uids:
            last = now
        for uid in sorted(present - uids, key=bytes.hex):  # left the field: one pass
            tags.append(uid)
            if on_tag is not None:
                on_tag(len(tags), uid)
        present = uids
        if len(tags) > MAX_PASSES:
            raise EnrolError(f"more than {MAX_PASSES} tags passed: that is not one deck; pass one deck alone")
        if not present and now - last >= (idle_s if tags else first_s):
            return tags
        sleep(interval_s)


SCAN_LIMIT = 5000
"""Records a look reads at most (a check comes between hands, among few records); a
:class:`DeckCheckShown` goes on from there at its next look."""


def latest_check(journal: Any) -> dict[str, Any] | None:
    """The newest ``deck-check`` record of ``journal`` as the dealer display shows it, while no
    hand has started since it (the check is of a deck before its first hand): ``{"deck",
    "checked", "by", "whole", "lines"}`` (:meth:`DeckCheck.lines`, as journaled; a record without
    them names its findings by tag), else ``None``. Reads the records since the newest hand's
    start (at most :data:`SCAN_LIMIT`)."""
    hand = next(iter(journal.newest("hand-start")), None)  # indexed: found at once
    check, _seq, _n = _scan(journal.records(hand.seq if hand is not None else None), None)
    return _as_shown(check) if check is not None else None


def _scan(records: Iterable[Any], check: Any) -> tuple[Any, int | None, int]:
    """The newest ``deck-check`` of ``records`` not followed by a ``hand-start`` (``check``, the one
    found before them, while none is), the last sequence read (``None``: none read) and how many
    were read; at most :data:`SCAN_LIMIT` records."""
    seq, n = None, 0
    for rec in records:
        if n >= SCAN_LIMIT:
            break
        n += 1
        if rec.kind == "deck-check":
            check = rec
        elif rec.kind == "hand-start":
            check = None
        seq = rec.seq
    return check, seq, n


def _as_shown(check: Any) -> dict[str, Any] | None:
    """A ``deck-check`` record as the display shows it (:func:`latest_check`), ``None`` for a body
    that is not a JSON object."""
    try:
        body = json.loads(check.body)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    lines = body.get("lines")
    if not isinstance(lines, list):
        lines = [f"deck {body.get('deck')}: {body.get('read')} tags read"]
        for what in ("missing", "twice", "other", "foreign"):
            tags = body.get(what)
            lines += [f"{what}: tag {tag}" for tag in (tags if isinstance(tags, list) else [])]
    return {"deck": str(body.get("deck", "")), "checked": body.get("checked"), "by": body.get("by"),
            "whole": body.get("whole") is True, "lines": [str(line)[:200] for line in lines[:MAX_PASSES + 1]]}


class DeckCheckShown:
    """:func:`latest_check` of ``journal``, looked for again at most every ``every_s`` seconds (the
    display asks at each state it sends, and every 2 s). The first look reads the records since the
    newest hand's start (a check ``shoe-ctl deck check`` journaled while the service was stopped is
    found there); each later one only those committed since the last look: a ``deck-check`` among them is shown,
    a ``hand-start`` hides it. While a check is shown each look also reads the newest ``deck-check``
    (verified, as every read is): a shown record found damaged or changed since is no longer shown
    as it was, and the look reads again from the newest hand's start. An idle table's look reads
    nothing (one record while a check is shown); a dealing table's, the few records of the last
    seconds instead of the whole hand so far."""

    def __init__(self, journal: Any, every_s: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.journal = journal
        self.every_s = every_s
        self.clock = clock
        self._at: float | None = None
        self._shown: dict[str, Any] | None = None
        self._check: Any = None  # the record shown
        self._seq: int | None = None  # the last record looked at (None: no look yet)
        self.read = 0
        """Records read by the looks so far."""

    def __call__(self) -> dict[str, Any] | None:
        now = self.clock()
        if self._at is None or now - self._at >= self.every_s:
            self._at = now
            self._look()
        return self._shown

    def _look(self) -> None:
        shown = self._check
        if shown is not None:  # the record shown, still as it was? (the newest check, read verified)
            newest = next(iter(self.journal.newest("deck-check")), None)  # indexed: found at once
            self.read += 1
            if newest is None or newest.seq < shown.seq or (newest.seq == shown.seq and newest.body != shown.body):
                # changed under the display (found damaged and put aside, or edited): look again
                # from the newest hand's start, as the first look
                self._seq = self._check = self._shown = None
        since, check = self._seq, self._check
        if since is None:  # the first look: from the newest hand's start
            hand = next(iter(self.journal.newest("hand-start")), None)  # indexed: found at once
            since = hand.seq if hand is not None else None
        check, seq, n = _scan(self.journal.records(since), check)
        self.read += n
        if seq is not None:
            self._seq = seq
        elif self._seq is None:
            self._seq = since if since is not None else 0  # nothing after the hand's start (or at all)
        if check is not self._check:
            self._check = check
            self._shown = _as_shown(check) if check is not None else None

