"""The journal: every event of the table, appended durably to SQLite before the shoe's card is acked.

One file per table (``docs/journal.md``). Each record is one row of ``records``::

    seq INTEGER PRIMARY KEY   -- the journal's own sequence, 1, 2, 3, ... never reused
    time_us INTEGER           -- wall-clock time of the append, microseconds since the epoch (UTC)
    kind TEXT                 -- codec type ("CardRead", "DealerInput", "Alert", ...) or
                                 "hand-start", "hand-end", "decision"
    hand INTEGER              -- the hand the record belongs to, NULL between hands
    shoe_seq INTEGER          -- the shoe's message sequence for CardRead/ShoeFault/ShoeButton
    body TEXT                 -- JSON (shoe_ctl.service.codec for events and commands)
    crc INTEGER               -- CRC-32 (binascii.crc32) over all the fields above

The durability boundary: :meth:`Journal.append` returns only after SQLite has committed the row
and (``synchronous=FULL``, the default) fsynced the write-ahead log. The controller acks a card to
the shoe (``ShoeLink.ack(seq)``) only after that; a card that was not journaled is not acked and
the shoe sends it again after a restart (``ShoeLink(resume_seq=journal.last_shoe_seq())``).

Damage: at open the journal checks the write-ahead log's frames (a torn or uncommitted tail, what
a kill or a power cut in the middle of an append leaves, is reported with the frames dropped but
is not damage: SQLite ignores it and nothing acked is in it), runs ``PRAGMA quick_check`` and
verifies every record's CRC. Damaged or unreadable records are reported (:class:`Damage`: which
record, why); before anything is repaired, the damaged files are copied aside as
``<name>.damaged-<UTC time>`` (and ``-wal``; only the newest :data:`KEEP_ASIDE` sets are kept, and
none older than the retention);
then the intact records are kept and the damaged ones moved to the ``damaged`` table (raw bytes
kept) or, when the file's structure is broken, every readable record is salvaged into a fresh file.

Hole cards are in here: the file (and SQLite's ``-wal``/``-shm``, which take the same mode) is
created ``0600`` and a looser mode found at open is tightened and reported.

Retention: finished hands (a ``hand-end`` record, or a hand superseded by a later ``hand-start``)
whose last record is older than ``retention_days`` are deleted at open, at a hand's end at most
once an hour (:data:`PRUNE_EVERY_S`) and by :meth:`prune`, with
the between-hands records of the same age; the unfinished hand and the last shoe sequence are
never lost. Freed pages are reused, so the file stops growing at about ``retention_days`` of play.
"""

from __future__ import annotations

import binascii
import calendar
import contextlib
import json
import logging
import os
import re
import shutil
import sqlite3
import stat
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoe_ctl import events
from shoe_ctl.service import codec

log = logging.getLogger(__name__)

FORMAT = 1
"""The journal's schema version (meta key ``format``)."""

SYNC_LEVELS = ("FULL", "NORMAL")

PRUNE_EVERY_S = 3600.0
"""A long-running service prunes at a hand's end when the last pruning is this old (seconds)."""

KEEP_ASIDE = 3
"""Copies of damaged files kept beside the journal (``<name>.damaged-<UTC time>`` and its
``-wal``): the newest this many sets; older ones, and any older than ``retention_days``, are
removed at open and by :meth:`Journal.prune`."""

_ASIDE_RE = re.compile(r"\.damaged-(\d{8}T\d{6}Z)(?:\.(\d+))?(-wal)?$")

SHOE_SEQ_TYPES = (events.CardRead, events.ShoeFault, events.ShoeButton)
"""Events that carry the shoe's message sequence (what ``ShoeLink.ack`` acknowledges)."""

_SCHEMA = """
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
"""

_COLS = "seq, time_us, kind, hand, shoe_seq, body, crc"


def _expected_schema() -> list[tuple[str, str, str, str | None]]:
    """(type, name, tbl_name, sql) of every schema object, in creation order, as SQLite stores them."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.executescript(_SCHEMA)
        return [tuple(r) for r in mem.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")]
    finally:
        mem.close()


EXPECTED_SCHEMA = _expected_schema()

_Row = tuple[int, int, str, int | None, int | None, str, int]


class JournalError(ValueError):
    """A journal that cannot be used as asked: another table's or profile's file, a newer format,
    a file that cannot be made private, or a record whose checksum fails while reading."""


def record_crc(seq: int, time_us: int, kind: str, hand: int | None, shoe_seq: int | None, body: str) -> int:
    """CRC-32 (``binascii.crc32``) of one record's fields, joined by U+001F (unit separator)."""
    text = "\x1f".join(
        (str(seq), str(time_us), kind, "" if hand is None else str(hand), "" if shoe_seq is None else str(shoe_seq), body)
    )
    return binascii.crc32(text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Record:
    """One journal record (see the module docstring for the fields)."""

    seq: int
    time_us: int
    kind: str
    hand: int | None
    shoe_seq: int | None
    body: str

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
        return codec.loads(self.body, where=f"journal record {self.seq}")


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
    """What :class:`Journal` found and did at open.

    ``damage``: every problem found; ``kept_aside``: copies of the damaged files made before any
    repair; ``records``: intact records in the journal after open; ``lost``: records that could not
    be kept (their raw text, if readable, is in the ``damaged`` table and always in the copies);
    ``permissions``: files whose mode was tightened to 0600; ``pruned``: records removed by
    retention; ``created``: a new file was made; ``tail``: what a stop in the middle of an append
    left in the write-ahead log (not damage, nothing acked: see :class:`WalScan`) and
    ``wal_dropped`` its frames, which SQLite ignores; ``removed_aside``: older copies of damaged
    files deleted to keep the newest :data:`KEEP_ASIDE` (and none older than the retention).
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
        out = [f"journal {self.path}: {'created' if self.created else 'opened'}, {self.records} records"]
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


# --------------------------------------------------------------------------- write-ahead log scan


@dataclass(frozen=True, slots=True)
class WalScan:
    """The structure of a ``-wal`` file (SQLite file format, section "WAL file format").

    ``committed_end``: offset just after the last valid commit frame (what SQLite will use);
    ``size``: the file size; ``problems``: damage, in words — a frame SQLite ignores although a
    committed transaction depends on it (a commit frame, or frames followed by a commit), or a
    damaged log header; ``tail``: what a stop in the middle of an append leaves, in words — frames
    of a transaction that never committed, a partial last frame, a torn header of a log with no
    frame — normal after a kill or a power cut (nothing acked is in it); ``dropped``: how many
    frames of that tail SQLite ignores (a partial frame counts as one).
    """

    size: int
    page_size: int
    frames: int
    committed_frames: int
    committed_end: int
    problems: tuple[str, ...]
    commits: int = 0
    tail: tuple[str, ...] = ()
    dropped: int = 0


def _wal_checksum(data: bytes, s0: int, s1: int, big: bool) -> tuple[int, int]:
    words = struct.unpack((">" if big else "<") + f"{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def scan_wal(path: Path) -> WalScan | None:
    """Walk the frames of the write-ahead log at ``path`` and find a torn or uncommitted tail.

    A frame belongs to the log when its salt matches the header's and its cumulative checksum
    holds; SQLite replays frames up to the last such *commit* frame and ignores the rest. Frames
    with the current salt after that point are an interrupted transaction (an append that never
    returned, so nothing acked); a partial frame at the end is a torn write: both are the
    ``tail``, not damage. A frame that fails (damaged header or checksum) is damage
    (``problems``) when it is a commit frame or a commit frame of this log follows it: then a
    transaction that committed is ignored. Frames with an older salt are left over from before
    a checkpoint reset and are normal.

    :returns: ``None`` when there is no log or it is empty; else a :class:`WalScan`.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if not data:
        return None
    if len(data) < 32:
        return WalScan(len(data), 0, 0, 0, 0, (), 0,
                       (f"WAL header torn: only {len(data)} bytes, no frame (a log being started when "
                        "the service stopped)",))
    magic, _version, page_size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if magic not in (0x377F0682, 0x377F0683):
        return WalScan(len(data), 0, 0, 0, 0, (f"WAL header has a bad magic number {magic:#x}",))
    big = bool(magic & 1)
    s0, s1 = _wal_checksum(data[:24], 0, 0, big)
    if (s0, s1) != (c1, c2):
        return WalScan(len(data), page_size, 0, 0, 0, ("WAL header checksum fails: the whole log is ignored",))
    frame_size = 24 + page_size
    off = 32
    frames = committed = commits = 0
    committed_end = 32
    problems: list[str] = []
    tail: list[str] = []
    dropped = 0


    def later_frames(start: int) -> tuple[int, int]:
        """Frames and commit frames of this log generation after ``start`` (which SQLite drops)."""
        n = c = 0
        for at in range(start + frame_size, len(data) - frame_size + 1, frame_size):
            _p, com, a, b = struct.unpack(">4I", data[at : at + 16])
            if (a, b) == (salt1, salt2):
                n += 1
                c += bool(com)
        return n, c

    def bad_frame(what: str, is_commit: bool) -> None:
        """A frame SQLite stops at: damage when a committed transaction depends on it, else the
        torn tail of an append that never returned."""
        nonlocal dropped
        n, c = later_frames(off)
        if c or is_commit:
            problems.append(
                f"WAL frame at offset {off} {what}"
                + ("; it is a commit frame" if is_commit else "")
                + (f"; {n} later frame(s) with {c} commit(s) are ignored by SQLite (kept in the copy set aside)"
                   if n else "")
            )
        else:
            dropped += 1 + n
            tail.append(f"WAL frame at offset {off} {what} and no commit follows it: {1 + n} frame(s) of an "
                        "append that never returned are dropped (nothing acked is lost)")

    while off + frame_size <= len(data):
        header = data[off : off + 24]
        _pgno, commit, fs1, fs2, fc1, fc2 = struct.unpack(">6I", header)
        if (fs1, fs2) != (salt1, salt2):
            if later_frames(off)[0]:  # frames of this generation follow: this header was damaged
                bad_frame("has a damaged header", bool(commit))
            break  # otherwise left over from an earlier log generation: normal
        s0, s1 = _wal_checksum(header[:8], s0, s1, big)
        s0, s1 = _wal_checksum(data[off + 24 : off + frame_size], s0, s1, big)
        if (s0, s1) != (fc1, fc2):
            bad_frame("fails its checksum (a torn or damaged write)", bool(commit))
            break
        frames += 1
        off += frame_size
        if commit:
            committed = frames
            committed_end = off
            commits += 1
    else:
        if off < len(data):
            dropped += 1
            tail.append(f"WAL ends in a partial frame: {len(data) - off} bytes at offset {off} (torn write of an "
                        "append that never returned)")
    if frames > committed:
        dropped += frames - committed
        tail.append(
            f"WAL has {frames - committed} frame(s) of an uncommitted transaction after offset "
            f"{committed_end}: an append that never returned (nothing acked is lost)"
        )
    return WalScan(len(data), page_size, frames, committed, committed_end, tuple(problems), commits,
                   tuple(tail), dropped)


# --------------------------------------------------------------------------- helpers


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _sidecars(path: Path) -> tuple[Path, Path]:
    return Path(f"{path}-wal"), Path(f"{path}-shm")


def _utc_stamp(now: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))


def _private_copy(src: Path, dst: Path) -> None:
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
        shutil.copyfileobj(inp, out)
        out.flush()
        os.fsync(out.fileno())


def _text(raw: bytes) -> str:
    # A flipped bit can make a body invalid UTF-8: decode with replacement so the row is still read
    # and its checksum (computed over the original text) fails, instead of the read raising.
    return raw.decode("utf-8", "replace")


_SQLITE_MAGIC = b"SQLite format 3\x00"


def refuse_foreign(path: Path) -> None:
    """Refuse, untouched, a path that is not a journal file: a folder, a device or pipe, or a file
    whose first 16 bytes are not (within a few flipped bits, or zeroed) the SQLite header. A damaged journal
    is repaired; a foreign file (``--journal /etc/passwd``) must never be moved aside, re-created
    or chmod-ed.

    :raises JournalError: naming the path and what it is.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise JournalError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise JournalError(f"{path} is a folder, not a journal file; give a file path inside it")
    if not stat.S_ISREG(st.st_mode):
        raise JournalError(f"{path} is not a regular file; a journal is an SQLite file")
    if st.st_size == 0:
        return
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise JournalError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if not any(head):
        return  # a zeroed header page is damage (a torn or lost write), repaired like any other
    bits = sum(bin(a ^ b).count("1") for a, b in zip(head, _SQLITE_MAGIC, strict=False))
    if bits > 8:
        raise JournalError(f"{path} is not a shoe-ctl journal (not an SQLite file); it was left untouched")


class _Broken(Exception):
    """Internal: the file's structure is damaged beyond per-record repair."""


# --------------------------------------------------------------------------- the journal


class Journal:
    """The table's append-only journal (SQLite in WAL mode); see the module docstring.

    :param path: the journal file (created ``0600`` if missing; its folder must exist).
    :param table: the table's name; a journal of another table is refused.
    :param profile: the rule profile's name; a journal of another profile is refused.
    :param retention_days: finished hands older than this are pruned (at open and by :meth:`prune`);
        ``0`` or less keeps everything.
    :param synchronous: ``"FULL"`` (default: a returned append survives a power cut) or
        ``"NORMAL"`` (survives a crash of the process, not a power cut; see ``docs/journal.md``).
    :param clock: seconds since the epoch (tests inject one).
    :param verify: ``"recent"`` (default) checks every record's CRC written since the last open and
        the replay window; ``"full"`` checks all of them (``shoe-ctl doctor``; slower on a big file).
        The structure (``PRAGMA integrity_check``) is always checked; records are also checked
        whenever they are read.
    :param readonly: open an existing journal for reading only (export, doctor): no repair, no
        pruning, ``table``/``profile`` may be ``None`` to accept any; damaged records are reported
        and skipped.
    :raises JournalError: another table's or profile's journal (naming both), a format newer than
        this program, an unknown ``synchronous``, a file whose mode cannot be made 0600, or a path
        that is no journal at all (a folder, a device, a non-SQLite file: left untouched).
    :raises FileNotFoundError: ``readonly`` and no such file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        table: str | None,
        profile: str | None,
        retention_days: float = 30,
        synchronous: str = "FULL",
        clock: Callable[[], float] = time.time,
        readonly: bool = False,
        verify: str = "recent",
    ) -> None:
        self.path = Path(path)
        self.table = table
        self.profile = profile
        self.retention_days = retention_days
        self.synchronous = synchronous.upper()
        if self.synchronous not in SYNC_LEVELS:
            raise JournalError(f"synchronous must be one of {', '.join(SYNC_LEVELS)}, not {synchronous!r}")
        if not readonly and (table is None or profile is None):
            raise JournalError("a journal opened for writing needs its table and profile")
        self.readonly = readonly
        if verify not in ("recent", "full"):
            raise JournalError(f"verify must be 'recent' or 'full', not {verify!r}")
        self.verify = verify
        self._clock = clock
        self._lock = threading.RLock()
        self._closed = False
        self.report = OpenReport(self.path)
        self._identity_damaged = False
        self._conn: sqlite3.Connection | None = None
        if readonly:
            self._open_readonly()
        else:
            self._open_writable()
        self._next_seq = self._compute_next_seq()
        self._current_hand = self._find_current_hand()
        self._last_prune = self._clock()
        if not readonly and self.retention_days > 0:
            self.report.pruned = self.prune()
        elif not readonly:
            self._prune_aside()
        self.report.records = self._count()

    # ------------------------------------------------------------------ opening

    def _connect(self, path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
        conn.text_factory = _text
        conn.execute("PRAGMA busy_timeout = 10000")
        return conn

    def _open_readonly(self) -> None:
        if not self.path.exists():
            raise FileNotFoundError(f"no journal at {self.path}")
        refuse_foreign(self.path)
        uri = self.path.absolute().as_uri()  # percent-encoded: a '#' or '?' in the name is a name
        try:
            conn, meta = self._connect_readonly(f"{uri}?mode=ro")
        except sqlite3.OperationalError as exc:
            # A folder this user cannot write (read-only medium, a copy on a locked share): SQLite
            # cannot make the -shm file a WAL reader needs. Without a pending log the file alone
            # holds every record, and nothing can write it: read it as immutable.
            wal = _sidecars(self.path)[0]
            if wal.exists() and wal.stat().st_size > 0:
                raise JournalError(f"{self.path}: cannot be opened for reading ({exc}) and a write-ahead log is "
                                   "pending; copy the journal and its -wal file to a writable folder") from None
            try:
                conn, meta = self._connect_readonly(f"{uri}?mode=ro&immutable=1")
            except sqlite3.Error as exc2:
                raise JournalError(f"{self.path}: cannot be opened for reading: {exc2}") from None
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot be opened for reading: {exc}") from None
        self._conn = conn
        self._check_identity(meta)

    @staticmethod
    def _connect_readonly(uri: str) -> tuple[sqlite3.Connection, dict[str, str]]:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=10)
        conn.text_factory = _text
        try:
            return conn, Journal._read_meta(conn)
        except BaseException:
            conn.close()
            raise

    def _open_writable(self) -> None:
        path = self.path
        refuse_foreign(path)
        folder = path.parent
        for p, what in ((folder, "folder"), (path, "file")):
            if (what == "folder" or p.exists()) and not os.access(p, os.W_OK):
                # checked first: otherwise the failed writes below look like a damaged journal
                raise JournalError(f"{path}: the journal {what} {p} cannot be written (read-only medium or "
                                   "no permission); the journal, its -wal and -shm files need a writable folder")
        created = False
        if not path.exists():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
            _fsync_dir(path.parent)
            created = True
        self.report.created = created
        self._tighten_modes()
        wal = scan_wal(_sidecars(path)[0])
        wal_problems = list(wal.problems) if wal is not None else []
        if wal is not None and (wal.tail or wal.dropped):
            # A stop in the middle of an append (a kill, a power cut): SQLite ignores those frames
            # and nothing acked is in them; reported, but not damage and not copied aside.
            self.report.tail = list(wal.tail)
            self.report.wal_dropped = wal.dropped

        conn = self._connect(path)
        try:
            meta = self._read_meta(conn)
        except (sqlite3.Error, UnicodeDecodeError):
            meta = None
        if meta:
            self._check_identity(meta)  # refuse another table's journal before touching it

        bad: list[tuple[_Row, str]] = []
        broken: str | None = None
        index_damage: str | None = None
        try:
            self._init_schema(conn)
            schema = [tuple(r) for r in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")]
            if schema != EXPECTED_SCHEMA:
                raise _Broken("the schema is altered")
            check = conn.execute("PRAGMA integrity_check(20)").fetchall()
            if check != [("ok",)]:
                index_damage = "; ".join(str(r[0]) for r in check[:3])
            start = 0
            if self.verify == "recent" and meta:
                # What a stop can damage is what was written since the last open; the replay
                # window is read at start-up, so it is checked too. Older records are checked
                # again whenever they are read (export).
                start = min(int(meta.get("verified_seq", "0") or 0), self._replay_start(conn))
            for row in conn.execute(f"SELECT {_COLS} FROM records WHERE seq > ? ORDER BY seq", (start,)):
                why = self._verify_row(row)
                if why:
                    bad.append((row, why))
        except (sqlite3.Error, UnicodeDecodeError, _Broken) as exc:
            broken = str(exc) or type(exc).__name__

        for msg in wal_problems:
            self.report.damage.append(Damage("write-ahead log", msg))
        if broken is None and not bad and not wal_problems and index_damage is None:
            self._conn = conn
        else:
            aside = self._keep_aside()
            if broken is None and index_damage is not None:
                # Damage confined to the indexes is mended by rebuilding them from the records.
                try:
                    conn.execute("REINDEX")
                    if conn.execute("PRAGMA integrity_check(20)").fetchall() != [("ok",)]:
                        broken = f"integrity check: {index_damage}"
                except (sqlite3.Error, UnicodeDecodeError) as exc:
                    broken = f"integrity check: {index_damage}; {exc}"
                if broken is None:
                    self.report.damage.append(Damage("indexes", f"damaged ({index_damage}); rebuilt from the records"))
            if broken is None and bad:
                try:
                    self._quarantine(conn, bad)
                except (sqlite3.Error, UnicodeDecodeError) as exc:
                    broken = f"cannot be repaired in place: {exc}"
            if broken is None:
                for row, why in bad:
                    self.report.damage.append(Damage(f"record {row[0]}", why, row[0]))
                self._conn = conn
            else:
                conn.close()
                self.report.damage.append(Damage("database file", f"damaged structure: {broken}"))
                self._rebuild(aside)
                self._conn = self._connect(path)
                meta = self._read_meta(self._conn)
                if meta:
                    self._check_identity(meta)
        try:
            self._finish_open(self._conn)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            # e.g. a damaged header that leaves the file readable but not writable
            self._conn.close()
            self.report.damage.append(Damage("database file", f"cannot be written: {exc}"))
            aside = self._keep_aside() if not self.report.kept_aside else Path(
                str(self.report.kept_aside[0]))
            self._rebuild(aside)
            self._conn = self._connect(path)
            self._finish_open(self._conn)
        self._tighten_modes()

    def _finish_open(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"{self.path}: SQLite refused WAL mode (got {mode!r}); is it on a network filesystem?")
        self._write_identity(conn)
        conn.execute("BEGIN IMMEDIATE")  # proves the file takes writes now, not at the first card
        top = conn.execute("SELECT max(seq) FROM records").fetchone()[0] or 0
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('verified_seq', ?)", (str(top),))
        conn.execute("COMMIT")

    def _tighten_modes(self) -> None:
        for p in (self.path, *_sidecars(self.path)):
            try:
                st = p.stat()
            except FileNotFoundError:
                continue
            mode = stat.S_IMODE(st.st_mode)
            if mode & 0o077:
                try:
                    os.chmod(p, 0o600)
                except OSError as exc:
                    raise JournalError(
                        f"{p} is readable by others (mode {mode:04o}) and cannot be made 0600: {exc}"
                    ) from exc
                self.report.permissions.append(f"{p.name}: mode {mode:04o} tightened to 0600")

    @staticmethod
    def _init_schema(conn: sqlite3.Connection) -> None:
        conn.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;")

    @staticmethod
    def _read_meta(conn: sqlite3.Connection) -> dict[str, str]:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
        if not has:
            return {}
        return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}

    @staticmethod
    def _identity_crc(fmt: str | None, table: str | None, profile: str | None) -> str:
        return str(binascii.crc32("\x1f".join((fmt or "", table or "", profile or "")).encode("utf-8")))

    def _check_identity(self, meta: Mapping[str, str]) -> None:
        """Refuse another table's or profile's journal. The identity carries its own CRC: an
        identity that fails it is damage (reported, then rewritten), not another table."""
        fmt = meta.get("format")
        stored = meta.get("identity_crc")
        if stored is not None and stored != self._identity_crc(fmt, meta.get("table"), meta.get("profile")):
            if not self._identity_damaged:
                self._identity_damaged = True
                self.report.damage.append(Damage("meta", "the journal's identity (format, table, profile) "
                                                         "fails its checksum; it is written again"))
            return
        if fmt is not None and fmt.isdigit() and int(fmt) > FORMAT:
            raise JournalError(f"{self.path}: journal format {fmt} is newer than this program reads ({FORMAT})")
        theirs = (meta.get("table"), meta.get("profile"))
        mine = (self.table, self.profile)
        for name, t, m in (("table", theirs[0], mine[0]), ("profile", theirs[1], mine[1])):
            if t is not None and m is not None and t != m:
                raise JournalError(
                    f"{self.path} is the journal of table {theirs[0]!r} with profile {theirs[1]!r}; "
                    f"this service is table {mine[0]!r} with profile {mine[1]!r} ({name} differs). "
                    "Use that table's journal file or start a new one."
                )

    def _write_identity(self, conn: sqlite3.Connection) -> None:
        assert self.table is not None and self.profile is not None
        verb = "REPLACE" if self._identity_damaged else "IGNORE"
        conn.execute("BEGIN IMMEDIATE")
        for k, v in (("format", str(FORMAT)), ("table", self.table), ("profile", self.profile)):
            conn.execute(f"INSERT OR {verb} INTO meta (key, value) VALUES (?, ?)", (k, v))
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('created_us', ?)", (str(self._now_us()),))
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('identity_crc', ?)",
            (self._identity_crc(str(FORMAT), self.table, self.profile),),
        )
        conn.execute("COMMIT")

    @staticmethod
    def _verify_row(row: tuple[Any, ...]) -> str | None:
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
        return None

    def _keep_aside(self) -> Path:
        stamp = _utc_stamp(self._clock())
        # a later copy within the same second takes a higher number (never a freed lower one, so
        # the numbers order the copies)
        taken = [int(m.group(2) or 1) for m in (_ASIDE_RE.fullmatch(n[len(self.path.name):])
                                                for n in os.listdir(self.path.parent)
                                                if n.startswith(f"{self.path.name}.damaged-{stamp}"))
                 if m is not None]
        n = max(taken, default=0) + 1
        base = Path(f"{self.path}.damaged-{stamp}" + (f".{n}" if n > 1 else ""))
        while base.exists() or Path(f"{base}-wal").exists():
            n += 1
            base = Path(f"{self.path}.damaged-{stamp}.{n}")
        for src, suffix in ((self.path, ""), (_sidecars(self.path)[0], "-wal")):
            if src.exists():
                dst = Path(f"{base}{suffix}")
                _private_copy(src, dst)
                self.report.kept_aside.append(dst)
        _fsync_dir(self.path.parent)
        self._prune_aside()
        return base

    def _quarantine(self, conn: sqlite3.Connection, bad: list[tuple[_Row, str]]) -> None:
        now = self._now_us()
        conn.execute("BEGIN IMMEDIATE")
        for row, why in bad:
            raw = json.dumps([repr(v) if isinstance(v, bytes) else v for v in row], ensure_ascii=False)
            conn.execute(
                "INSERT INTO damaged (found_us, seq, reason, raw) VALUES (?, ?, ?, ?)",
                (now, row[0] if isinstance(row[0], int) else None, why, raw),
            )
            conn.execute("DELETE FROM records WHERE seq = ?", (row[0],))
        top = max((r[0] for r, _ in bad if isinstance(r[0], int)), default=0)
        self._raise_seq_floor(conn, top)
        conn.execute("COMMIT")
        self.report.lost += len(bad)

    @staticmethod
    def _raise_seq_floor(conn: sqlite3.Connection, seq: int) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'seq_floor'").fetchone()
        old = int(row[0]) if row else 0
        if seq > old:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('seq_floor', ?)", (str(seq),))

    def _rebuild(self, aside: Path) -> None:
        """Salvage every readable, intact record of the damaged copy into a fresh file."""
        scratch = Path(f"{self.path}.salvage-tmp")
        fresh = Path(f"{self.path}.rebuild-tmp")
        for p in (scratch, *_sidecars(scratch), fresh, *_sidecars(fresh)):
            p.unlink(missing_ok=True)
        _private_copy(aside, scratch)
        if Path(f"{aside}-wal").exists():
            _private_copy(Path(f"{aside}-wal"), _sidecars(scratch)[0])
        rows, bad, meta, unreadable = _salvage(scratch)
        for p in (scratch, *_sidecars(scratch)):
            p.unlink(missing_ok=True)
        for where, why in unreadable:
            self.report.damage.append(Damage(where, why))
        for row, why in bad:
            self.report.damage.append(Damage(f"record {row[0]}", why, row[0] if isinstance(row[0], int) else None))
        self.report.lost += len(bad)
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        conn = sqlite3.connect(fresh, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = DELETE")
            self._init_schema(conn)
            conn.execute("BEGIN IMMEDIATE")
            for k, v in meta.items():
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (k, v))
            conn.executemany(f"INSERT INTO records ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            now = self._now_us()
            for row, why in bad:
                raw = json.dumps([repr(v) if isinstance(v, bytes) else v for v in row], ensure_ascii=False)
                conn.execute(
                    "INSERT INTO damaged (found_us, seq, reason, raw) VALUES (?, ?, ?, ?)",
                    (now, row[0] if isinstance(row[0], int) else None, why, raw),
                )
            for where, why in unreadable:
                conn.execute(
                    "INSERT INTO damaged (found_us, seq, reason, raw) VALUES (?, NULL, ?, '')",
                    (now, f"{where}: {why}"),
                )
            top = max([r[0] for r in rows] + [r[0] for r, _ in bad if isinstance(r[0], int)] + [0])
            self._raise_seq_floor(conn, top)
            conn.execute("COMMIT")
        finally:
            conn.close()
        with open(fresh, "rb+") as f:
            os.fsync(f.fileno())
        # The damaged log is kept aside; it must not be replayed onto the fresh file.
        for p in _sidecars(self.path):
            p.unlink(missing_ok=True)
        os.replace(fresh, self.path)
        _fsync_dir(self.path.parent)

    # ------------------------------------------------------------------ basics

    def _db(self) -> sqlite3.Connection:
        if self._conn is None or self._closed:
            raise JournalError(f"journal {self.path} is closed")
        return self._conn

    def _now_us(self) -> int:
        return int(round(self._clock() * 1e6))

    def _compute_next_seq(self) -> int:
        db = self._db()
        top = db.execute("SELECT max(seq) FROM records").fetchone()[0] or 0
        row = db.execute("SELECT value FROM meta WHERE key = 'seq_floor'").fetchone() if self._has_meta() else None
        floor = int(row[0]) if row else 0
        return max(int(top), floor) + 1

    def _has_meta(self) -> bool:
        return bool(
            self._db().execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
        )

    def _count(self) -> int:
        return int(self._db().execute("SELECT count(*) FROM records").fetchone()[0])

    def _find_current_hand(self) -> int | None:
        row = (
            self._db()
            .execute(
                "SELECT kind, hand FROM records WHERE kind IN ('hand-start', 'hand-end') ORDER BY seq DESC LIMIT 1"
            )
            .fetchone()
        )
        if row and row[0] == "hand-start":
            return int(row[1])
        return None

    def close(self) -> None:
        """Close the file (idempotent). A clean close checkpoints and removes the ``-wal``."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._conn is not None:
                self._conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing

    @property
    def current_hand(self) -> int | None:
        """The hand that has a ``hand-start`` and no ``hand-end`` yet (also after a restart)."""
        return self._current_hand

    def append(self, item: codec.Encodable, *, sync: bool = True) -> int:
        """Append one event or command to the current hand; durable when it returns.

        :param item: any event or command of :mod:`shoe_ctl.events`.
        :param sync: ``False`` lets the OS write it later (use for commands that replay can
            regenerate); the next synced append makes it durable too (the log is written in order).
        :returns: the record's journal sequence.
        :raises codec.CodecError: for an object the codec cannot encode (nothing is written).
        :raises JournalError: when closed or read-only.
        """
        return self.append_many([item], sync=sync)[0]

    def append_many(self, items: Iterable[codec.Encodable], *, sync: bool = True) -> list[int]:
        """Append several events/commands in one transaction (one fsync); durable when it returns.

        :returns: their journal sequences, in order.
        """
        batch = []
        for item in items:
            shoe_seq = item.seq if isinstance(item, SHOE_SEQ_TYPES) else None
            batch.append((type(item).__name__, codec.dumps(item), shoe_seq))
        return self._write(batch, self._current_hand, sync)

    def append_record(self, kind: str, body: Mapping[str, Any], *, sync: bool = True) -> int:
        """Append a record that is not an event or command, e.g. kind ``"decision"`` with the
        controller's procedure or card assignment (``docs/journal.md``). ``body`` must be JSON-safe.

        :raises JournalError: for a kind that is a codec type or a hand marker (use the methods).
        """
        if kind in codec.TYPES or kind in ("hand-start", "hand-end"):
            raise JournalError(f"kind {kind!r} is reserved; use append() or begin_hand()/end_hand()")
        text = json.dumps(dict(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return self._write([(kind, text, None)], self._current_hand, sync)[0]

    def begin_hand(self, info: Mapping[str, Any] | None = None, *, hand: int | None = None) -> int:
        """Start a hand: appends ``hand-start`` (body: ``info`` plus ``"hand"``); later appends belong
        to it. A hand still open is ended first as abandoned.

        :param info: JSON-safe facts for export, e.g. ``{"game": "stud", "rules": "tda",
            "seats": [3, 4, 6, 1]}`` (table seats in player order), ``"antes"``, ``"bring_in"``,
            ``"small_bet"``, ``"big_bet"``, ``"stacks"`` where known.
        :param hand: the hand number; default one more than the highest in the journal.
        :returns: the hand number.
        """
        with self._lock:
            if self._current_hand is not None:
                self.end_hand({"abandoned": True})
            if hand is None:
                row = self._db().execute("SELECT value FROM meta WHERE key = 'last_hand'").fetchone()
                top = self._db().execute("SELECT max(hand) FROM records").fetchone()[0] or 0
                hand = max(int(top), int(row[0]) if row else 0) + 1
            body = dict(info or {})
            body["hand"] = hand
            text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            self._write([("hand-start", text, None)], hand, True)
            self._current_hand = hand
            return hand

    def end_hand(self, info: Mapping[str, Any] | None = None) -> int:
        """End the current hand: appends ``hand-end`` (body: ``info`` plus ``"hand"``).

        :raises JournalError: when no hand is open.
        """
        with self._lock:
            hand = self._current_hand
            if hand is None:
                raise JournalError("end_hand: no hand is open in the journal")
            body = dict(info or {})
            body["hand"] = hand
            text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            seq = self._write([("hand-end", text, None)], hand, True)[0]
            self._current_hand = None
            if self.retention_days > 0 and self._clock() - self._last_prune >= PRUNE_EVERY_S:
                self.prune()
            return seq

    def _write(self, batch: list[tuple[str, str, int | None]], hand: int | None, sync: bool) -> list[int]:
        if self.readonly:
            raise JournalError(f"journal {self.path} is open read-only")
        with self._lock:
            db = self._db()
            now = self._now_us()
            rows = []
            seq = self._next_seq
            for kind, body, shoe_seq in batch:
                rows.append((seq, now, kind, hand, shoe_seq, body, record_crc(seq, now, kind, hand, shoe_seq, body)))
                seq += 1
            if not sync:
                db.execute("PRAGMA synchronous = OFF")
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.executemany(f"INSERT INTO records ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:  # SQLite already rolled back on e.g. SQLITE_FULL
                        db.execute("ROLLBACK")
                    raise
            finally:
                if not sync:
                    db.execute(f"PRAGMA synchronous = {self.synchronous}")
            self._next_seq = seq
            return [r[0] for r in rows]

    # ------------------------------------------------------------------ reading

    def records(self, since: int | None = None, *, hand: int | None = None) -> Iterator[Record]:
        """The records after journal sequence ``since`` (all when ``None``), in order; only those of
        ``hand`` when given. Each record's checksum is verified as it is read: a damaged record is
        skipped, added to ``report.damage`` and logged; a writable journal also keeps the file
        aside (``<name>.damaged-<time>``) and moves the record to the ``damaged`` table.
        """
        sql = f"SELECT {_COLS} FROM records WHERE seq > ?"
        if hand is not None:
            sql += " AND hand = ?"
        sql += " ORDER BY seq LIMIT 1000"
        last = since or 0
        while True:
            args: list[Any] = [last] if hand is None else [last, hand]
            with self._lock:
                rows = self._db().execute(sql, args).fetchall()
            if not rows:
                return
            for row in rows:
                last = row[0]
                why = self._verify_row(row)
                if why:
                    self._bad_read(row, why)
                    continue
                yield Record(*row[:6])

    def _bad_read(self, row: _Row, why: str) -> None:
        """A record whose checksum fails when read: reported; a writable journal keeps the file
        aside (once per session) and moves the record to ``damaged``."""
        with self._lock:
            self.report.damage.append(Damage(f"record {row[0]}", why, row[0]))
            log.error("journal %s: record %s: %s", self.path, row[0], why)
            if self.readonly:
                return
            if not self.report.kept_aside:
                self._keep_aside()
            self._quarantine(self._db(), [(row, why)])

    def identity(self) -> tuple[str | None, str | None]:
        """The (table, profile) the journal file belongs to, from its meta table."""
        with self._lock:
            if not self._has_meta():
                return None, None
            meta = self._read_meta(self._db())
        return meta.get("table"), meta.get("profile")

    def last_shoe_seq(self) -> int | None:
        """The shoe sequence of the most recent journaled CardRead/ShoeFault/ShoeButton, for
        ``ShoeLink(resume_seq=...)`` (kept through pruning); ``None`` when there is none."""
        with self._lock:
            db = self._db()
            row = db.execute(
                "SELECT shoe_seq FROM records WHERE shoe_seq IS NOT NULL ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            if row:
                return int(row[0])
            kept = db.execute("SELECT value FROM meta WHERE key = 'last_shoe_seq'").fetchone()
            return int(kept[0]) if kept else None

    @staticmethod
    def _replay_start(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT max(seq) FROM records WHERE kind = 'hand-end'").fetchone()
        return int(row[0] or 0)

    def replay_start(self) -> int:
        """The journal sequence after which recovery replays: the last ``hand-end`` (0 if none).
        Everything after it — the dealer's new-hand input, the unfinished hand, link events — is
        what a fresh state machine needs to reach the state before the stop."""
        with self._lock:
            row = self._db().execute("SELECT max(seq) FROM records WHERE kind = 'hand-end'").fetchone()
        return int(row[0] or 0)

    def hands(self, *, finished_only: bool = False) -> list[HandSummary]:
        """Every hand in the journal, oldest first (``finished_only``: finished or abandoned ones)."""
        with self._lock:
            db = self._db()
            spans = db.execute(
                "SELECT hand, min(seq), max(seq), min(time_us), max(time_us) FROM records "
                "WHERE hand IS NOT NULL GROUP BY hand ORDER BY min(seq)"
            ).fetchall()
            marks = db.execute(
                "SELECT kind, hand, body, time_us FROM records WHERE kind IN ('hand-start', 'hand-end') ORDER BY seq"
            ).fetchall()
        infos: dict[int, dict[str, Any]] = {}
        ended: dict[int, float] = {}
        for kind, hand, body, t in marks:
            if kind == "hand-start":
                infos[hand] = json.loads(body)
            else:
                ended[hand] = t / 1e6
        out = []
        for i, (hand, first, last, t0, t1) in enumerate(spans):
            later = i + 1 < len(spans)
            finished = hand in ended or later
            if finished_only and not finished:
                continue
            out.append(
                HandSummary(hand, first, last, t0 / 1e6, ended.get(hand, t1 / 1e6 if later else None), finished,
                            infos.get(hand, {}))
            )
        return out

    def hand_records(self, hand: int) -> list[Record]:
        """All records of one hand, in order (verified as :meth:`records`)."""
        return list(self.records(hand=hand))

    # ------------------------------------------------------------------ retention

    def prune(self, now: float | None = None) -> int:
        """Delete finished hands (and between-hands records) whose last record is older than
        ``retention_days``; the unfinished hand, anything after the last ``hand-end`` and the last
        shoe sequence (kept in ``meta``) always stay.

        :returns: the number of records deleted.
        """
        if self.retention_days <= 0 or self.readonly:
            return 0
        with self._lock:
            self._last_prune = self._clock()
            db = self._db()
            cutoff = int(((self._clock() if now is None else now) - self.retention_days * 86400) * 1e6)
            keep_from = self.replay_start()
            old = [
                h.hand
                for h in self.hands(finished_only=True)
                if h.last_seq <= keep_from and int(round((h.ended or h.started) * 1e6)) < cutoff
            ]
            last_shoe = self.last_shoe_seq()
            top_hand = db.execute("SELECT max(hand) FROM records").fetchone()[0]
            db.execute("BEGIN IMMEDIATE")
            try:
                if last_shoe is not None:
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_shoe_seq', ?)", (str(last_shoe),))
                if top_hand is not None:
                    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_hand', ?)", (str(top_hand),))
                self._raise_seq_floor(db, self._next_seq - 1)
                n = 0
                for hand in old:
                    n += db.execute("DELETE FROM records WHERE hand = ?", (hand,)).rowcount
                n += db.execute(
                    "DELETE FROM records WHERE hand IS NULL AND time_us < ? AND seq <= ?", (cutoff, keep_from)
                ).rowcount
                db.execute("DELETE FROM damaged WHERE found_us < ?", (cutoff,))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            self._prune_aside(cutoff / 1e6)
            return n

    def _prune_aside(self, older_than: float | None = None) -> list[Path]:
        """Delete copies of damaged files beyond the newest :data:`KEEP_ASIDE` sets, and sets made
        before ``older_than`` (seconds since the epoch, by the UTC time in their name); the copies
        made by this open are always kept. Reported in ``report.removed_aside``.

        :returns: the files deleted.
        """
        folder = self.path.parent
        prefix = self.path.name
        sets: dict[tuple[float, int], list[Path]] = {}
        try:
            names = os.listdir(folder)
        except OSError:
            return []
        for name in names:
            if not name.startswith(prefix):
                continue
            m = _ASIDE_RE.fullmatch(name[len(prefix):])
            if m is None:
                continue
            try:
                when = float(calendar.timegm(time.strptime(m.group(1), "%Y%m%dT%H%M%SZ")))
            except ValueError:
                continue
            sets.setdefault((when, int(m.group(2) or 1)), []).append(folder / name)
        mine = {Path(p) for p in self.report.kept_aside}
        removed: list[Path] = []
        for i, key in enumerate(sorted(sets, reverse=True)):
            files = sets[key]
            if any(f in mine for f in files):
                continue
            if i >= KEEP_ASIDE or (older_than is not None and key[0] < older_than):
                for f in files:
                    with contextlib.suppress(FileNotFoundError):
                        f.unlink()
                        removed.append(f)
        if removed:
            _fsync_dir(folder)
            self.report.removed_aside.extend(removed)
            log.info("journal %s: removed %d old copies of damaged files", self.path, len(removed))
        return removed


def _restore_schema(conn: sqlite3.Connection) -> None:
    """Put back the known text of schema entries a flipped bit altered (by position; each entry
    keeps its root page), so the salvage can read the b-trees. Only used on a scratch copy."""
    have = conn.execute("SELECT rowid, type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid").fetchall()
    if [tuple(r[1:]) for r in have] == EXPECTED_SCHEMA:
        return
    for (rowid, *_old), want in zip(have, EXPECTED_SCHEMA, strict=False):
        conn.execute(
            "UPDATE sqlite_schema SET type = ?, name = ?, tbl_name = ?, sql = ? WHERE rowid = ?", (*want, rowid)
        )
    conn.execute("PRAGMA writable_schema = RESET")
    conn.execute("PRAGMA writable_schema = ON")


def _salvage(path: Path) -> tuple[list[_Row], list[tuple[_Row, str]], dict[str, str], list[tuple[str, str]]]:
    """Read every readable record of a damaged journal file, skipping unreadable b-tree pages.

    :returns: (intact rows, rows whose checksum fails with the reason, meta, unreadable ranges as
        (where, why)).
    """
    rows: list[_Row] = []
    bad: list[tuple[_Row, str]] = []
    unreadable: list[tuple[str, str]] = []
    meta: dict[str, str] = {}
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.text_factory = _text
        # A file shorter than its header's page count is refused as corrupt unless the schema is
        # "writable"; then SQLite reads what is there (nothing is written through this connection).
        conn.execute("PRAGMA writable_schema = ON")
        _restore_schema(conn)
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        return rows, bad, meta, [("database file", f"cannot be opened: {exc}")]
    try:
        try:
            meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            unreadable.append(("meta", f"unreadable: {exc}"))
        last = 0

        def first_after(x: int) -> tuple[Any, ...] | None:
            row: tuple[Any, ...] | None = conn.execute(
                f"SELECT {_COLS} FROM records WHERE seq > ? ORDER BY seq LIMIT 1", (x,)
            ).fetchone()
            return row

        while True:
            try:
                batch = conn.execute(
                    f"SELECT {_COLS} FROM records WHERE seq > ? ORDER BY seq LIMIT 256", (last,)
                ).fetchall()
            except (sqlite3.Error, UnicodeDecodeError):
                batch = []
                try:
                    row = first_after(last)
                    batch = [row] if row else []
                except (sqlite3.Error, UnicodeDecodeError) as exc:
                    # Skip ahead: find the smallest x > last whose probe reads, by doubling then bisecting.
                    lo, hi, step, found = last, None, 1, None
                    while step < 2**42:
                        try:
                            found = first_after(last + step)
                            hi = last + step
                            break
                        except (sqlite3.Error, UnicodeDecodeError):
                            lo = last + step
                            step *= 2
                    if hi is None:
                        unreadable.append((f"records after {last}", f"unreadable: {exc}"))
                        break
                    while hi - lo > 1:
                        mid = (lo + hi) // 2
                        try:
                            r = first_after(mid)
                            hi, found = mid, r
                        except (sqlite3.Error, UnicodeDecodeError):
                            lo = mid
                    unreadable.append((f"records {last + 1}..{hi}", f"unreadable: {exc}"))
                    if found is None:
                        break
                    batch = [found]
            if not batch:
                break
            top = last
            for row in batch:
                if not isinstance(row[0], int) or row[0] <= top:
                    continue  # a damaged page can yield keys out of order: never go backwards
                top = row[0]
                why = Journal._verify_row(row)
                if why:
                    bad.append((row, why))
                else:
                    rows.append(row)
            last = top if top > last else last + 1
    finally:
        conn.close()
    return rows, bad, meta, unreadable
