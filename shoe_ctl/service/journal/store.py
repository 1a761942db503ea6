"""The journal's record store: one open SQLite connection, appends in one transaction each,
verified reads, the hand marks and the queries recovery and export need.

It neither repairs nor prunes: the file it is given was opened and checked by
:mod:`shoe_ctl.service.journal.repair` (or read-only by :func:`open_readonly`), and a record whose
checksum fails when read is handed to ``on_damaged``. ``docs/journal.md`` ("Records", "The
durability boundary").
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from shoe_ctl.lifecycle import Closeable
from shoe_ctl.service import codec
from shoe_ctl.service.journal import chain
from shoe_ctl.service.journal.files import refuse_foreign, sidecars
from shoe_ctl.service.journal.identity import Identity
from shoe_ctl.service.journal.records import (
    COLS,
    SHOE_SEQ_TYPES,
    HandSummary,
    JournalError,
    OpenReport,
    Record,
    Row,
    decode_text,
    read_meta,
    record_text,
    replay_start,
    text_crc,
    verify_row,
)

BUSY_TIMEOUT_S = 1.0
"""How long one write waits for a lock another program holds on the file before it fails (and the
writer retries it later, ``docs/journal.md``, "The writer")."""


def connect(path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """A connection for the journal's threads: autocommit (transactions are explicit), usable from
    any thread (the store's lock serialises), a busy timeout of ``busy_timeout_s`` seconds
    (:data:`BUSY_TIMEOUT_S`), lenient text decoding."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_s)
    conn.text_factory = decode_text
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    return conn


def _connect_readonly(uri: str) -> tuple[sqlite3.Connection, dict[str, str]]:
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=10)
    conn.text_factory = decode_text
    try:
        return conn, read_meta(conn)
    except BaseException:
        conn.close()
        raise


TOP_SEQ = "SELECT max(seq) FROM records"
LAST_MARK = "SELECT kind, hand FROM records WHERE kind IN ('hand-start', 'hand-end') ORDER BY seq DESC LIMIT 1"
TOP_HAND = "SELECT max(hand) FROM records WHERE hand IS NOT NULL"  # answered from the partial index records_hand


def start_reads(conn: sqlite3.Connection) -> None:
    """Run the reads a :class:`Store` makes when it opens (the last sequence, the open hand's
    mark, the top hand, the chain head and where the chain starts), so the open's check meets a
    damaged page they read before anything is written to the file.

    :raises sqlite3.DatabaseError: a page they read is damaged.
    """
    for query in (TOP_SEQ, LAST_MARK, TOP_HAND):
        conn.execute(query).fetchall()
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chain'").fetchone():
        chain.head(conn)
        chain.chain_from(conn)  # meta by its key: the key's index, which no other read at open uses


def open_readonly(path: Path, identity: Identity) -> sqlite3.Connection:
    """Open an existing journal for reading only (export, doctor); nothing is repaired.

    On a medium this user cannot write, SQLite cannot make the ``-shm`` a WAL reader needs:
    without a pending log the file alone holds every record and is read as immutable.

    :raises FileNotFoundError: no such file (its ``filename`` the path).
    :raises JournalError: a path that is no journal, another table's journal, or a file that
        cannot be read (with a pending ``-wal`` on an unwritable medium: copy both elsewhere).
    """
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, "no such file", os.fspath(path))
    refuse_foreign(path)
    uri = path.absolute().as_uri()  # percent-encoded: a '#' or '?' in the name is a name
    try:
        conn, meta = _connect_readonly(f"{uri}?mode=ro")
    except sqlite3.OperationalError as exc:
        # A folder this user cannot write (read-only medium, a copy on a locked share): SQLite
        # cannot make the -shm file a WAL reader needs. Without a pending log the file alone
        # holds every record, and nothing can write it: read it as immutable.
        wal = sidecars(path)[0]
        if wal.exists() and wal.stat().st_size > 0:
            raise JournalError(f"{path}: cannot be opened for reading ({exc}) and a write-ahead log is "
                               "pending; copy the journal and its -wal file to a writable folder", path=path) from None
        try:
            conn, meta = _connect_readonly(f"{uri}?mode=ro&immutable=1")
        except sqlite3.Error as exc2:
            raise JournalError(f"{path}: cannot be opened for reading: {exc2}", path=path) from None
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot be opened for reading: {exc}", path=path) from None
    identity.check(meta)
    return conn


def refuse_other_table(path: Path, table: str, profile: str) -> None:
    """Refuse, before anything is done, what the writable open would refuse on the journal's
    identity: another table's or profile's journal, or a newer format. A missing or empty file, or
    one SQLite cannot read, is left to that open (which creates or repairs it). A tool that writes
    one record at its end (``shoe-ctl deck``) asks this first, as it asks
    :func:`~shoe_ctl.service.journal.files.refuse_owned`.

    :raises JournalError: naming the journal and both identities (``Identity.check``).
    """
    if not path.is_file() or path.stat().st_size == 0:
        return
    try:
        conn, meta = _connect_readonly(f"{path.absolute().as_uri()}?mode=ro")
    except sqlite3.Error:
        return
    conn.close()
    Identity(path, table, profile, OpenReport(path)).check(meta)


def _dumps(body: Mapping[str, Any]) -> str:
    return codec.TEXT.encode(dict(body))


class Store(Closeable):
    """Appends and reads of one open journal file.

    :param path: the journal file (named in errors).
    :param conn: the open connection (the store closes it).
    :param synchronous: ``"FULL"`` or ``"NORMAL"``, restored after an unsynced append.
    :param readonly: refuse every write.
    :param clock: seconds since the epoch; each append is stamped with one reading.
    :param on_damaged: called with (row, reason) for a record whose checksum fails when read,
        under the store's lock; the record is skipped.

    ``lock`` (an ``RLock``) serialises every use of the connection; the writer holds it through
    each commit (and its fsync), a pruning through each of its transactions. Making a hand mark's
    row (:meth:`hand_start_row`, :meth:`hand_end_row`) does not take it.
    """

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        *,
        synchronous: str,
        readonly: bool,
        clock: Callable[[], float],
        on_damaged: Callable[[Row, str], None],
    ) -> None:
        self.path = path
        self.synchronous = synchronous
        self.readonly = readonly
        self.lock = threading.RLock()
        super().__init__(self.lock)
        self._clock = clock
        self._on_damaged = on_damaged
        self._conn = conn
        self.next_seq = self._compute_next_seq()
        self._current_hand = self._find_current_hand()
        self.top_hand = self._find_top_hand()
        """The highest hand number the file has known (records or meta ``last_hand``)."""
        self.has_chain = bool(self.db().execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chain'").fetchone())
        self.chain_head: tuple[int, bytes] = chain.head(self.db()) if self.has_chain else (0, chain.ZERO)
        """(sequence, link) of the last chained record (``chain.py``)."""
        self._chain_from = chain.chain_from(self.db()) if self.has_chain else None
        self._one_step = self.has_chain and not readonly
        """Appends of up to :data:`ROWS_PER_INSERT` records go in as one statement (:data:`APPEND_VIEW`)."""
        if self._one_step:
            make_append_view(self.db())

    # ------------------------------------------------------------------ basics

    def db(self) -> sqlite3.Connection:
        """The open connection.

        :raises JournalError: when closed.
        """
        if self._conn is None or self._closed:
            raise JournalError(f"journal {self.path} is closed", path=self.path)
        return self._conn

    def now_us(self) -> int:
        """The clock in whole microseconds."""
        return int(round(self._clock() * 1e6))

    def _compute_next_seq(self) -> int:
        db = self.db()
        top = db.execute(TOP_SEQ).fetchone()[0] or 0
        row = db.execute("SELECT value FROM meta WHERE key = 'seq_floor'").fetchone() if self.has_meta() else None
        floor = int(row[0]) if row else 0
        return max(int(top), floor) + 1

    def has_meta(self) -> bool:
        """True when the file has a ``meta`` table."""
        return bool(
            self.db().execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
        )

    def count(self) -> int:
        """The number of records in the file."""
        return int(self.db().execute("SELECT count(*) FROM records").fetchone()[0])

    def _find_top_hand(self) -> int:
        db = self.db()
        # ``hand IS NOT NULL`` lets SQLite answer from the partial index records_hand
        top = db.execute(TOP_HAND).fetchone()[0] or 0
        row = db.execute("SELECT value FROM meta WHERE key = 'last_hand'").fetchone() if self.has_meta() else None
        return max(int(top), int(row[0]) if row else 0)

    def _find_current_hand(self) -> int | None:
        row = (
            self.db()
            .execute(LAST_MARK)
            .fetchone()
        )
        if row and row[0] == "hand-start":
            return int(row[1])
        return None

    def _closing(self) -> None:
        """``close()``: close the connection, under the lock (no append is cut in two). A clean
        close checkpoints and removes the ``-wal``."""
        if self._conn is not None:
            self._conn.close()

    # ------------------------------------------------------------------ writing

    @property
    def current_hand(self) -> int | None:
        """The hand that has a ``hand-start`` and no ``hand-end`` yet (also after a restart)."""
        return self._current_hand

    def hand_start_row(self, info: Mapping[str, Any] | None, hand: int | None) -> tuple[int, tuple[str, str, int | None]]:
        """The ``hand-start`` row for ``hand`` (default: one more than the highest known, also
        after pruning), and make it the current hand: later appends belong to it. The caller ends
        an open hand first and writes the row (in order, through the writer).

        Neither this nor :meth:`hand_end_row` takes :attr:`lock` or reads the file: the caller
        serialises them (``Journal``'s submit lock), and the writer holds :attr:`lock` through its
        commit and fsync, which a controller that marks a hand must never wait out (a stalled
        disk; ``docs/journal.md``, "The writer").

        :returns: (the hand number, the row).
        :raises JournalError: ``hand`` is not above the highest number known: hand numbers never
            repeat in a journal.
        """
        top = self.top_hand
        if hand is None:
            hand = top + 1
        elif hand <= top:
            raise JournalError(f"hand {hand} is not above the journal's last hand {top}: "
                               "hand numbers never repeat in a journal")
        body = dict(info or {})
        body["hand"] = hand
        row = ("hand-start", _dumps(body), None)
        self.top_hand = hand
        self._current_hand = hand
        return hand, row

    def hand_end_row(self, info: Mapping[str, Any] | None) -> tuple[int, tuple[str, str, int | None]]:
        """The ``hand-end`` row of the open hand; no hand is open afterwards.

        :returns: (the hand number, the row).
        :raises JournalError: when no hand is open.
        """
        hand = self._current_hand
        if hand is None:
            raise JournalError("end_hand: no hand is open in the journal")
        body = dict(info or {})
        body["hand"] = hand
        row = ("hand-end", _dumps(body), None)
        self._current_hand = None
        return hand, row

    def rows_of(self, items: Iterable[codec.Encodable]) -> list[tuple[str, str, int | None]]:
        """The (kind, body, shoe_seq) rows of events/commands, encoded now.

        :raises codec.CodecError: for an object the codec cannot encode.
        """
        batch = []
        for item in items:
            shoe_seq = item.seq if isinstance(item, SHOE_SEQ_TYPES) else None
            batch.append((type(item).__name__, codec.dumps(item), shoe_seq))
        return batch

    @staticmethod
    def record_row(kind: str, body: Mapping[str, Any]) -> tuple[str, str, int | None]:
        """The row of a record that is no event or command (``Journal.append_record``).

        :raises JournalError: for a kind that is a codec type or a hand marker.
        """
        if kind in codec.TYPES or kind in ("hand-start", "hand-end"):
            raise JournalError(f"kind {kind!r} is reserved; use append() or begin_hand()/end_hand()")
        return (kind, _dumps(body), None)

    def write(self, batch: list[tuple[str, str, int | None]], hand: int | None, sync: bool) -> list[int]:
        """Append (kind, body, shoe_seq) rows to ``hand`` in one transaction; see :meth:`write_groups`."""
        return self.write_groups([(batch, hand)], sync=sync)[0]

    def write_groups(self, groups: list[tuple[list[tuple[str, str, int | None]], int | None]], *,
                     sync: bool = True, written: list[Record] | None = None,
                     items: Sequence[Sequence[object] | None] | None = None) -> list[list[int]]:
        """Append several batches of (kind, body, shoe_seq) rows, each to its hand, in one
        transaction (one fsync: the group commit), numbered from :attr:`next_seq` and stamped with
        one clock reading; with ``sync`` false SQLite skips the fsync for this transaction.

        :param written: given, the records written are added to it once they are committed (in
            journal order, as :meth:`records` would read them back).
        :param items: for each batch, the events or commands its rows encode (one a row) or
            ``None``: a record of ``written`` then carries its own (``Record.given``).
        :returns: each batch's journal sequences.
        :raises JournalError: when read-only or closed.
        :raises sqlite3.Error: the write failed (e.g. a full disk, a lock held beyond the busy
            timeout); nothing of it was kept.
        """
        if self.readonly:
            raise JournalError(f"journal {self.path} is open read-only", path=self.path)
        with self.lock:
            db = self.db()
            now = self.now_us()
            rows = []
            links = []
            out: list[list[int]] = []
            given: list[object] = []  # each row's event or command (None: none handed in)
            seq = self.next_seq
            prev = self.chain_head[1]
            for i, (batch, hand) in enumerate(groups):
                batch_items = items[i] if items is not None else None
                if batch_items is not None and len(batch_items) == len(batch):
                    given += batch_items
                else:
                    given += [None] * len(batch)
                seqs = []
                for kind, body, shoe_seq in batch:
                    text = record_text(seq, now, kind, hand, shoe_seq, body)  # one text for CRC and link
                    rows.append((seq, now, kind, hand, shoe_seq, body, text_crc(text)))
                    prev = chain.link_text(prev, text)
                    links.append((seq, prev))
                    seqs.append(seq)
                    seq += 1
                out.append(seqs)
            if not sync:
                db.execute("PRAGMA synchronous = OFF")
            try:
                if self._one_step and self._chain_from is not None and len(rows) <= ROWS_PER_INSERT:
                    # one statement, a transaction of its own (SQLite rolls all of it back on an error)
                    _insert_rows(db, APPEND_HEAD, [(*row, link) for row, (_seq, link) in zip(rows, links, strict=True)])
                else:
                    self._transaction(db, rows, links)
            finally:
                if not sync:
                    db.execute(f"PRAGMA synchronous = {self.synchronous}")
            self.next_seq = seq
            if self.has_chain and links:
                self.chain_head = links[-1]
                if self._chain_from is None:
                    self._chain_from = links[0][0]
            if written is not None:
                written.extend(Record(*row[:6], item) for row, item in zip(rows, given, strict=True))
            return out

    def _transaction(self, db: sqlite3.Connection, rows: list[tuple[Any, ...]], links: list[tuple[int, bytes]]) -> None:
        """``rows`` and their ``links`` in one explicit transaction of several statements (a group
        over :data:`ROWS_PER_INSERT` records, the journal's first chained record, a file without
        the chain)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            _insert_rows(db, f"INSERT INTO records ({COLS}) VALUES ", rows)
            if self.has_chain and links:
                _insert_rows(db, "INSERT INTO chain (seq, hash) VALUES ", links)
                if self._chain_from is None:
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('chain_from', ?)",
                               (str(links[0][0]),))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite already rolled back on e.g. SQLITE_FULL
                db.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------ reading

    def records(self, since: int | None = None, *, hand: int | None = None) -> Iterator[Record]:
        """The records after ``since`` (of ``hand`` when given), in order, each verified as it is
        read; a damaged one goes to ``on_damaged`` and is skipped."""
        sql = f"SELECT {COLS} FROM records WHERE seq > ?"
        if hand is not None:
            sql += " AND hand = ?"
        sql += " ORDER BY seq LIMIT 1000"
        return self._verified(sql, lambda last: [(since or 0) if last is None else last]
                              + ([] if hand is None else [hand]))

    def newest(self, kind: str) -> Iterator[Record]:
        """The records of ``kind``, newest first, each verified as it is read (a damaged one goes
        to ``on_damaged`` and is skipped); SQLite walks the table from its end, so the last one
        is found without reading the records after it in Python."""
        sql = f"SELECT {COLS} FROM records WHERE kind = ? AND seq < ? ORDER BY seq DESC LIMIT 100"
        return self._verified(sql, lambda last: [kind, 2**63 - 1 if last is None else last])

    def _verified(self, sql: str, args: Callable[[int | None], list[Any]]) -> Iterator[Record]:
        """The rows of ``sql`` read in batches (``args(last seq read, None at first)`` gives each
        batch's parameters), each verified: a damaged one goes to ``on_damaged`` and is skipped."""
        last: int | None = None
        while True:
            with self.lock:
                rows = self.db().execute(sql, args(last)).fetchall()
            if not rows:
                return
            for row in rows:
                last = row[0]
                why = verify_row(row)
                if why:
                    with self.lock:
                        self._on_damaged(row, why)
                    continue
                yield Record(*row[:6])

    def identity(self) -> tuple[str | None, str | None]:
        """The (table, profile) the journal file belongs to, from its meta table."""
        with self.lock:
            if not self.has_meta():
                return None, None
            meta = read_meta(self.db())
        return meta.get("table"), meta.get("profile")

    def created_us(self) -> int | None:
        """When the journal file was made (µs since the epoch, its meta ``created_us``): it names
        the file; ``None`` for a file without it."""
        with self.lock:
            if not self.has_meta():
                return None
            value = read_meta(self.db()).get("created_us")
        return int(value) if value is not None and value.isdigit() else None

    def last_shoe_seq(self) -> int | None:
        """The shoe sequence of the most recent CardRead/ShoeFault/ShoeButton (kept in ``meta``
        through pruning); ``None`` when there is none."""
        with self.lock:
            db = self.db()
            row = db.execute(
                "SELECT shoe_seq FROM records WHERE shoe_seq IS NOT NULL ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            if row:
                return int(row[0])
            kept = db.execute("SELECT value FROM meta WHERE key = 'last_shoe_seq'").fetchone()
            return int(kept[0]) if kept else None

    def last_bodies(self, kind: str, limit: int) -> list[str]:
        """The bodies of the ``limit`` most recent records of ``kind``, newest first."""
        with self.lock:
            rows = self.db().execute("SELECT body FROM records WHERE kind = ? ORDER BY seq DESC LIMIT ?",
                                     (kind, limit)).fetchall()
            return [str(r[0]) for r in rows]

    def replay_start(self) -> int:
        """The journal sequence of the last ``hand-end`` (0 if none)."""
        with self.lock:
            return replay_start(self.db())

    def hands(self, *, finished_only: bool = False) -> list[HandSummary]:
        """Every hand in the journal, oldest first (``finished_only``: finished or abandoned ones).

        A hand is a run of records with one hand number: a number that repeats (a journal written
        before numbers ran on across restarts) is one hand per ``hand-start`` mark, each listed.
        Records of a number before its first mark (the mark lost to damage) are a hand of their own.
        """
        with self.lock:
            db = self.db()
            spans = db.execute(
                "SELECT hand, min(seq), max(seq), min(time_us), max(time_us) FROM records "
                "WHERE hand IS NOT NULL GROUP BY hand ORDER BY min(seq)"
            ).fetchall()
            marks = db.execute(
                "SELECT seq, kind, hand, body, time_us FROM records WHERE kind IN ('hand-start', 'hand-end') ORDER BY seq"
            ).fetchall()
            starts: dict[int, list[int]] = {}
            for seq, kind, hand, _body, _t in marks:
                if kind == "hand-start" and hand is not None:
                    starts.setdefault(hand, []).append(seq)
            runs: list[tuple[int, int, int, int, int]] = []
            for hand, first, last, t0, t1 in spans:
                cuts = [seq for seq in starts.get(hand, ()) if seq > first]
                if not cuts:  # the common case: the number is one hand
                    runs.append((hand, first, last, t0, t1))
                    continue
                for lo, hi in zip([first, *cuts], [*cuts, last + 1], strict=True):
                    row = db.execute("SELECT min(seq), max(seq), min(time_us), max(time_us) FROM records "
                                     "WHERE hand = ? AND seq >= ? AND seq < ?", (hand, lo, hi)).fetchone()
                    if row[0] is not None:
                        runs.append((hand, *row))
        runs.sort(key=lambda run: run[1])
        found: dict[int, list[tuple[int, str, str, int]]] = {}  # hand: its marks (seq, kind, body, time)
        for seq, kind, hand, body, t in marks:
            found.setdefault(hand, []).append((seq, kind, body, t))
        out = []
        for i, (hand, first, last, t0, t1) in enumerate(runs):
            own = [m for m in found.get(hand, ()) if first <= m[0] <= last]
            info: dict[str, Any] = next((json.loads(body) for _seq, kind, body, _t in own if kind == "hand-start"), {})
            ended = [t / 1e6 for _seq, kind, _body, t in own if kind == "hand-end"]
            later = i + 1 < len(runs)
            finished = bool(ended) or later
            if finished_only and not finished:
                continue
            out.append(HandSummary(hand, first, last, t0 / 1e6, ended[-1] if ended else (t1 / 1e6 if later else None),
                                   finished, info))
        return out


ROWS_PER_INSERT = 64
"""Rows one ``INSERT`` statement carries at most (:func:`_insert_rows`)."""

APPEND_VIEW = "journal_append"
"""A view of the writing connection alone (``temp``: nothing of it is in the file, whose schema is
pinned) whose ``INSTEAD OF INSERT`` trigger puts each row in ``records`` and its hash-chain link in
``chain``: a commit of up to :data:`ROWS_PER_INSERT` records is one ``INSERT`` into it, a
transaction of its own, so one step of SQLite (one release of the interpreter's lock, the fsync
in it) instead of four (``BEGIN IMMEDIATE``, two ``INSERT``, ``COMMIT``). docs/journal.md, *The writer*."""

APPEND_HEAD = f"INSERT INTO temp.{APPEND_VIEW} ({COLS}, hash) VALUES "


def make_append_view(db: sqlite3.Connection) -> None:
    """Make :data:`APPEND_VIEW` on ``db`` (idempotent).

    :raises sqlite3.Error: SQLite refused it.
    """
    db.execute(f"CREATE TEMP VIEW IF NOT EXISTS {APPEND_VIEW} AS SELECT {COLS}, NULL AS hash FROM records WHERE 0")
    news = ", ".join(f"NEW.{col}" for col in COLS.split(", "))
    db.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS {APPEND_VIEW}_row INSTEAD OF INSERT ON {APPEND_VIEW} BEGIN "
               f"INSERT INTO records ({COLS}) VALUES ({news}); INSERT INTO chain (seq, hash) VALUES (NEW.seq, NEW.hash); END")


def _insert_rows(db: sqlite3.Connection, head: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert ``rows`` (tuples of one width) with ``head`` (``INSERT INTO t (cols) VALUES ``),
    :data:`ROWS_PER_INSERT` rows to a statement: one SQLite step each, where ``executemany`` steps
    once per row and lets go of the interpreter lock for each step (a writer that must take it
    back after every row waits behind the service's other threads; docs/performance.md)."""
    if not rows:
        return
    one = "(" + ", ".join("?" * len(rows[0])) + ")"
    for start in range(0, len(rows), ROWS_PER_INSERT):
        part = rows[start:start + ROWS_PER_INSERT]
        db.execute(head + ", ".join([one] * len(part)), [value for row in part for value in row])
