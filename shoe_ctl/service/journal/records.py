"""The journal's data: the SQLite schema, one record and its checksum, the meta table, and what an
open reports. No file or connection is opened here; the other units of the package use these.

The fields, the checksum and the meta keys are described in ``docs/journal.md`` ("Records").
"""

from __future__ import annotations

import binascii
import json
import os
import sqlite3
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoe_ctl import events
from shoe_ctl.service import codec

FORMAT = 1
"""The journal's schema version (meta key ``format``)."""

SHOE_SEQ_TYPES = events.SHOE_NUMBERED
"""Events that carry the shoe's message sequence (what ``ShoeLink.ack`` acknowledges)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    time_us INTEGER NOT NULL,
    kind TEXT NOT NULL,
    hand INTEGER,
    shoe_seq INTEGER,
    body TEXT NOT NULL,
    crc INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS records_hand ON records (hand, seq) WHERE hand IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_kind ON records (kind, seq) WHERE kind IN ('hand-start', 'hand-end');
CREATE TABLE IF NOT EXISTS damaged (
    id INTEGER PRIMARY KEY,
    found_us INTEGER NOT NULL,
    seq INTEGER,
    reason TEXT NOT NULL,
    raw TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chain (seq INTEGER PRIMARY KEY, hash BLOB NOT NULL);
"""

COLS = "seq, time_us, kind, hand, shoe_seq, body, crc"
"""The columns of ``records`` in the order of :data:`Row`."""

Row = tuple[int, int, str, int | None, int | None, str, int]
"""One row of ``records`` as read: (seq, time_us, kind, hand, shoe_seq, body, crc)."""


def _expected_schema() -> list[tuple[str, str, str, str | None]]:
    """(type, name, tbl_name, sql) of every schema object, in creation order, as SQLite stores them."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.executescript(SCHEMA)
        return [tuple(r) for r in mem.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")]
    finally:
        mem.close()


EXPECTED_SCHEMA = _expected_schema()


class JournalError(ValueError):
    """A journal that cannot be used as asked: another table's or profile's file, a newer format,
    a file that cannot be made private, or a record whose checksum fails while reading.

    :param message: the words; an error about a journal file names it in them, once.
    :param path: the journal file the error is about (as the caller gave it), or ``None`` for an
        error that names no file (an argument out of range, a hand number, a reserved kind).
        :func:`shoe_ctl.service.journal.files.journal_problem` reads it, never the words, to
        know whether the journal is named.
    """

    def __init__(self, message: str, *, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(message)
        self.path: Path | None = None if path is None else Path(path)


def record_text(seq: int, time_us: int, kind: str, hand: int | None, shoe_seq: int | None, body: str) -> bytes:
    """What a record's CRC and its hash-chain link cover: its fields joined by U+001F (unit
    separator), in UTF-8. The writer makes it once per record for both."""
    return "\x1f".join(
        (str(seq), str(time_us), kind, "" if hand is None else str(hand), "" if shoe_seq is None else str(shoe_seq), body)
    ).encode("utf-8")


def text_crc(text: bytes) -> int:
    """A record's CRC from its :func:`record_text`: CRC-32 (``binascii.crc32``)."""
    return binascii.crc32(text)


def record_crc(seq: int, time_us: int, kind: str, hand: int | None, shoe_seq: int | None, body: str) -> int:
    """The CRC of a record's fields (:func:`text_crc` of its :func:`record_text`)."""
    return text_crc(record_text(seq, time_us, kind, hand, shoe_seq, body))


def verify_row(row: tuple[Any, ...]) -> str | None:
    """Why a row of ``records`` (:data:`Row`) cannot be trusted, in words; ``None`` when its field
    types hold, its CRC matches and its body is JSON."""
    seq, time_us, kind, hand, shoe_seq, body, crc = row
    types_ok = (
        isinstance(seq, int)
        and isinstance(time_us, int)
        and isinstance(kind, str)
        and (hand is None or isinstance(hand, int))
        and (shoe_seq is None or isinstance(shoe_seq, int))
        and isinstance(body, str)
        and isinstance(crc, int)
    )
    if not types_ok:
        return "a field has the wrong type (damaged row)"
    if record_crc(seq, time_us, kind, hand, shoe_seq, body) != crc:
        return "checksum mismatch (the record was altered or torn)"
    try:
        json.loads(body)
    except ValueError:
        return "checksum holds but the body is not JSON"
    except RecursionError:  # an edited body nested thousands deep: no event is
        return "checksum holds but the body is nested too deeply to be an event"
    return None


def damaged_raw(row: tuple[Any, ...]) -> str:
    """The raw text of a damaged row as kept in the ``damaged`` table (a JSON list of its fields)."""
    return json.dumps([repr(v) if isinstance(v, bytes) else v for v in row], ensure_ascii=False)


def decode_text(raw: bytes) -> str:
    """SQLite text as ``str`` (a connection's ``text_factory``).

    A flipped bit can make a body invalid UTF-8: it is decoded with replacement so the row is
    still read and its checksum (computed over the original text) fails, instead of the read
    raising.
    """
    return raw.decode("utf-8", "replace")


def init_schema(conn: sqlite3.Connection) -> None:
    """Create the tables and indexes that are missing, in one transaction."""
    conn.executescript("BEGIN IMMEDIATE;" + SCHEMA + "COMMIT;")


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` table as a dict; empty when the file has no ``meta`` table (yet)."""
    has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    if not has:
        return {}
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}


def raise_seq_floor(conn: sqlite3.Connection, seq: int) -> None:
    """Raise meta ``seq_floor`` to ``seq`` (never lower it): sequences up to it are never reused,
    also after the records holding them were quarantined, lost or pruned. Call inside a
    transaction."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'seq_floor'").fetchone()
    old = int(row[0]) if row else 0
    if seq > old:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('seq_floor', ?)", (str(seq),))


def replay_start(conn: sqlite3.Connection) -> int:
    """The journal sequence of the last ``hand-end`` (0 if none): recovery replays what follows."""
    row = conn.execute("SELECT max(seq) FROM records WHERE kind = 'hand-end'").fetchone()
    return int(row[0] or 0)


@dataclass(frozen=True, slots=True)
class Record:
    """One journal record (``docs/journal.md``, "Records", for the fields)."""

    seq: int
    time_us: int
    kind: str
    hand: int | None
    shoe_seq: int | None
    body: str
    given: Any = field(default=None, compare=False, repr=False)
    """The event or command itself, on a record the journal's writer handed over after its commit
    (its commit listeners): :attr:`item` returns it instead of decoding the body (the codec gives
    back an equal one: its round trip is exact). ``None`` on a record read from the file."""

    @property
    def time(self) -> float:
        """The append time in seconds since the epoch (UTC)."""
        return self.time_us / 1e6

    @property
    def data(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)

    @property
    def item(self) -> codec.Encodable | None:
        """The event or command of a codec record, else ``None`` (hand-start, decision, ...).

        :raises codec.CodecError: naming this record when the body does not decode.
        """
        if self.kind not in codec.TYPES:
            return None
        if self.given is not None:
            return self.given  # type: ignore[no-any-return]
        return codec.loads(self.body, where=f"journal record {self.seq}")


class CommittedTail:
    """The newest records a journal's writer committed, as its commit listener hands them over
    (``Journal.add_commit_listener(tail.add)``), kept for one reader in the same process that
    would otherwise read them back from the file (the floor publisher, the kept recall).

    :param keep: the most records kept; past it the oldest are dropped (the reader reads those).
    """

    def __init__(self, keep: int) -> None:
        self._records: deque[Record] = deque(maxlen=max(1, keep))
        self.last: int | None = None
        """The journal sequence of the newest record handed over (None: none yet)."""

    def add(self, records: Sequence[Record]) -> None:
        """Take a commit's records, in journal order (the writer's thread; never blocks)."""
        if records:
            self._records.extend(records)
            self.last = records[-1].seq

    def __len__(self) -> int:
        return len(self._records)

    def after(self, since: int) -> list[Record] | None:
        """The records after journal sequence ``since`` when those kept follow it without a gap
        (records up to ``since`` are dropped: the reader has them); ``[]`` when nothing was handed
        over after ``since`` (a read that overlapped a commit's hand-over has it already, or the
        commit's listener calls again); ``None`` when they do not follow it, or nothing was handed
        over yet: the reader reads the journal (a start, a read from further back, records dropped
        past ``keep``)."""
        kept = self._records
        while kept and kept[0].seq <= since:
            kept.popleft()
        taken = list(kept)  # one C call: a commit handed over meanwhile is in it whole or not at all
        if taken and taken[0].seq == since + 1 and taken[-1].seq == since + len(taken):
            return taken
        last = self.last  # after the snapshot: a commit handed over meanwhile is in it or raised this
        if not taken and last is not None and last <= since:
            return []
        return None


@dataclass(frozen=True, slots=True)
class Damage:
    """One problem found in the journal: ``where`` (e.g. ``"record 812"``, ``"WAL offset 4152"``),
    ``reason`` in words, ``seq`` the record's sequence when one record is concerned."""

    where: str
    reason: str
    seq: int | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass
class OpenReport:
    """What the journal found and did at open (and later, when a read finds a damaged record).

    ``damage``: every problem found; ``kept_aside``: copies of the damaged files made before any
    repair; ``records``: intact records in the journal after open (-1 until a deferred open has
    counted them); ``lost``: records that could not
    be kept (their raw text, if readable, is in the ``damaged`` table and always in the copies);
    ``permissions``: files whose mode was tightened to 0600; ``pruned``: records removed by
    retention; ``created``: a new file was made; ``tail``: what a stop in the middle of an append
    left in the write-ahead log (not damage, nothing acked: see ``WalScan``) and
    ``wal_dropped`` its frames, which SQLite ignores; ``removed_aside``: older copies of damaged
    files deleted to keep the newest ``KEEP_ASIDE`` (and none older than the retention).
    """

    path: Path
    created: bool = False
    damage: list[Damage] = field(default_factory=list)
    kept_aside: list[Path] = field(default_factory=list)
    records: int = 0
    lost: int = 0
    permissions: list[str] = field(default_factory=list)
    pruned: int = 0
    tail: list[str] = field(default_factory=list)
    wal_dropped: int = 0
    removed_aside: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing was damaged and no permission had to be fixed."""
        return not self.damage and not self.permissions

    def lines(self) -> list[str]:
        """The report as short lines for a log or the display."""
        count = f"{self.records} records" if self.records >= 0 else "records counted in the background"
        out = [f"journal {self.path}: {'created' if self.created else 'opened'}, {count}"]
        out += [f"damage: {d}" for d in self.damage]
        if self.wal_dropped or self.tail:
            out.append(f"write-ahead log: {self.wal_dropped} frame(s) of an interrupted append dropped "
                       "(a stop mid-append; nothing acked is lost)")
            out += [f"  {t}" for t in self.tail]
        if self.lost:
            out.append(f"records not kept: {self.lost}")
        out += [f"kept aside: {p}" for p in self.kept_aside]
        out += [f"removed old copy: {p}" for p in self.removed_aside]
        out += [f"permissions: {p}" for p in self.permissions]
        if self.pruned:
            out.append(f"retention: {self.pruned} records pruned")
        return out


@dataclass(frozen=True, slots=True)
class HandSummary:
    """One hand in the journal: first and last record, times (seconds), whether it finished
    (``hand-end``) or was abandoned (a later hand started first), and the hand-start body."""

    hand: int
    first_seq: int
    last_seq: int
    started: float
    ended: float | None
    finished: bool
    info: dict[str, Any]
