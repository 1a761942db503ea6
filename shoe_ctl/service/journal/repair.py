"""Opening a journal for writing: the checks at open and the repairs they call for.

In order: refuse what is no journal or cannot be written, create the file private, walk the
write-ahead log (:mod:`~shoe_ctl.service.journal.wal`), refuse another table's file, then check
the schema, the structure (``PRAGMA integrity_check``) and the records' CRCs. On damage the files
are first copied aside (:mod:`~shoe_ctl.service.journal.aside`), then the indexes are rebuilt,
damaged records moved to ``damaged``, or every readable intact record salvaged into a fresh file.
Everything found goes into the :class:`OpenReport`. ``docs/journal.md`` ("Damage").
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shoe_ctl.service.journal.aside import keep_aside
from shoe_ctl.service.journal.files import (
    create_private,
    fsync_dir,
    private_copy,
    refuse_foreign,
    refuse_unwritable,
    sidecars,
    tighten_modes,
)
from shoe_ctl.service.journal.identity import Identity
from shoe_ctl.service.journal.records import (
    COLS,
    EXPECTED_SCHEMA,
    Damage,
    JournalError,
    OpenReport,
    Row,
    damaged_raw,
    decode_text,
    init_schema,
    raise_seq_floor,
    read_meta,
    replay_start,
    verify_row,
)
from shoe_ctl.service.journal.store import connect, start_reads
from shoe_ctl.service.journal.wal import scan_wal


def tail_index_damage(conn: sqlite3.Connection, start: int) -> str | None:
    """The indexes' part that the start path reads, checked against the table: the hand marks
    (``records_kind``) and the hands (``records_hand``) of the records after ``start``, counted
    through each index and through the table itself. Cheap (the tail only) where
    ``PRAGMA integrity_check`` reads the whole file.

    :returns: what differs, in words; ``None`` when the index answers match the table.
    """
    marks = "kind IN ('hand-start', 'hand-end') AND seq > ?"
    by_index = conn.execute(f"SELECT count(*) FROM records INDEXED BY records_kind WHERE {marks}", (start,)).fetchone()
    by_table = conn.execute(f"SELECT count(*) FROM records NOT INDEXED WHERE {marks}", (start,)).fetchone()
    if by_index != by_table:
        return f"index records_kind: {by_index[0]} hand marks after record {start}, the table has {by_table[0]}"
    first = conn.execute("SELECT min(hand) FROM records NOT INDEXED WHERE seq > ? AND hand IS NOT NULL",
                         (start,)).fetchone()[0]
    if first is None:
        return None
    hands = "hand IS NOT NULL AND hand >= ? AND seq > ?"
    by_index = conn.execute(f"SELECT count(*) FROM records INDEXED BY records_hand WHERE {hands}",
                            (first, start)).fetchone()
    by_table = conn.execute(f"SELECT count(*) FROM records NOT INDEXED WHERE {hands}", (first, start)).fetchone()
    if by_index != by_table:
        return f"index records_hand: {by_index[0]} records of hands from {first} on, the table has {by_table[0]}"
    return None


def check_file(path: Path, stop: threading.Event | None = None, pause_s: float = 0.0) -> list[Damage]:
    """The whole-file check, on its own read-only connection (a running service may write
    meanwhile): the structure (``PRAGMA integrity_check``) and every record's checksum.

    :param stop: set, it ends the check at once (the structure check is interrupted through
        SQLite's progress handler); what was not checked is not reported.
    :param pause_s: sleep this long after every 2,000 records (a background check leaves the
        interpreter to the controller).
    :returns: what is damaged (empty when nothing is). Repairs are left to the next open
        (``meta`` ``check_due``), which runs the full check and repairs what it finds.
    """
    uri = path.absolute().as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=1)
    conn.text_factory = decode_text
    out: list[Damage] = []
    if stop is not None:
        conn.set_progress_handler(lambda: 1 if stop.is_set() else 0, 20000)
    try:
        check = conn.execute("PRAGMA integrity_check(20)").fetchall()
        if check != [("ok",)]:
            out.append(Damage("database file", "; ".join(str(r[0]) for r in check[:3])))
        last = 0
        while True:
            rows = conn.execute(f"SELECT {COLS} FROM records WHERE seq > ? ORDER BY seq LIMIT 2000",
                                (last,)).fetchall()
            if not rows or (stop is not None and stop.is_set()):
                break
            if pause_s:
                time.sleep(pause_s)
            for row in rows:
                last = row[0]
                why = verify_row(row)
                if why:
                    out.append(Damage(f"record {row[0]}", why, row[0]))
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        if stop is None or not stop.is_set():  # not an interrupted check
            out.append(Damage("database file", f"unreadable: {exc}"))
    finally:
        conn.close()
    return out


class _Broken(Exception):
    """Internal: the file's structure is damaged beyond per-record repair."""


class Repair:
    """Opens one journal file for writing, checking and repairing it, and repairs what a later
    read finds.

    :param path: the journal file.
    :param identity: the table and profile the file must belong to.
    :param report: where everything found and done is recorded.
    :param synchronous: ``"FULL"`` or ``"NORMAL"``, set on the connection at open.
    :param verify: ``"recent"`` or ``"full"``: which records' CRCs the open checks.
    :param clock: seconds since the epoch (stamps of copies aside and ``damaged`` rows).
    """

    def __init__(self, path: Path, identity: Identity, report: OpenReport, *, synchronous: str, verify: str,
                 clock: Callable[[], float]) -> None:
        self.path = path
        self.identity = identity
        self.report = report
        self.synchronous = synchronous
        self.verify = verify
        self._clock = clock
        self.deep_checked = False
        """True when this open ran the whole-file structure check (``integrity_check``)."""

    def _now_us(self) -> int:
        return int(round(self._clock() * 1e6))

    def open_writable(self) -> sqlite3.Connection:
        """Open (creating it 0600 if missing), check and repair the journal.

        :returns: the connection, in WAL mode, identity written, the file proven writable.
        :raises JournalError: a path that is no journal, an unwritable folder or file, another
            table's or profile's journal, a mode that cannot be made 0600, no WAL mode.
        """
        path = self.path
        refuse_foreign(path)
        refuse_unwritable(path)
        created = False
        if not path.exists():
            create_private(path)
            fsync_dir(path.parent)
            created = True
        self.report.created = created
        self.report.permissions.extend(tighten_modes(path))
        wal = scan_wal(sidecars(path)[0])
        wal_problems = list(wal.problems) if wal is not None else []
        if wal is not None and (wal.tail or wal.dropped):
            # A stop in the middle of an append (a kill, a power cut): SQLite ignores those frames
            # and nothing acked is in them; reported, but not damage and not copied aside.
            self.report.tail = list(wal.tail)
            self.report.wal_dropped = wal.dropped

        conn = connect(path)
        meta: dict[str, str] | None
        try:
            meta = read_meta(conn)
        except (sqlite3.Error, UnicodeDecodeError):
            meta = None
        if meta:
            self.identity.check(meta)  # refuse another table's journal before touching it

        bad: list[tuple[Row, str]] = []
        broken: str | None = None
        index_damage: str | None = None
        try:
            init_schema(conn)
            schema = [tuple(r) for r in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")]
            if schema != EXPECTED_SCHEMA:
                raise _Broken("the schema is altered")
            start = 0
            if self.verify == "recent" and meta and not meta.get("check_due"):
                # What a stop can damage is what was written since the last open; the replay
                # window is read at start-up, so it is checked too. Older records are checked
                # again whenever they are read (export) and by the full check (``check_file``).
                start = min(int(meta.get("verified_seq", "0") or 0), replay_start(conn))
            if self.verify == "full" or not meta or meta.get("check_due"):
                check = conn.execute("PRAGMA integrity_check(20)").fetchall()
                if check != [("ok",)]:
                    index_damage = "; ".join(str(r[0]) for r in check[:3])
                self.deep_checked = True
            else:
                index_damage = tail_index_damage(conn, start)
            start_reads(conn)  # what the store reads at its open: a damaged page there is damage now
            for row in conn.execute(f"SELECT {COLS} FROM records WHERE seq > ? ORDER BY seq", (start,)):
                why = verify_row(row)
                if why:
                    bad.append((row, why))
        except (sqlite3.Error, UnicodeDecodeError, _Broken) as exc:
            self._refuse_if_locked(conn, exc)
            broken = str(exc) or type(exc).__name__

        for msg in wal_problems:
            self.report.damage.append(Damage("write-ahead log", msg))
        if broken is None and not bad and not wal_problems and index_damage is None:
            pass
        else:
            aside = self.keep_aside()
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
                    self.quarantine(conn, bad)
                except (sqlite3.Error, UnicodeDecodeError) as exc:
                    broken = f"cannot be repaired in place: {exc}"
            if broken is None:
                for row, why in bad:
                    self.report.damage.append(Damage(f"record {row[0]}", why, row[0]))
            else:
                conn.close()
                self.report.damage.append(Damage("database file", f"damaged structure: {broken}"))
                self._rebuild(aside)
                conn = connect(path)
                meta = read_meta(conn)
                if meta:
                    self.identity.check(meta)
        try:
            self._finish_open(conn)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            # e.g. a damaged header that leaves the file readable but not writable
            self._refuse_if_locked(conn, exc)
            conn.close()
            self.report.damage.append(Damage("database file", f"cannot be written: {exc}"))
            aside = self.keep_aside() if not self.report.kept_aside else Path(
                str(self.report.kept_aside[0]))
            self._rebuild(aside)
            conn = connect(path)
            self._finish_open(conn)
        self.report.permissions.extend(tighten_modes(path))
        return conn

    def _refuse_if_locked(self, conn: sqlite3.Connection, exc: BaseException) -> None:
        """Refuse the journal, untouched, when ``exc`` says another connection holds SQLite's lock
        on it (``SQLITE_BUSY``, ``SQLITE_LOCKED``, beyond the busy timeout): a program outside
        shoe-ctl in a transaction on it (an ``sqlite3`` shell, a copy tool), which the owner's lock
        does not keep out. That is no damage: copied aside and rebuilt, the journal would be
        replaced under that program.

        :raises JournalError: naming the journal and what to do.
        """
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(exc, sqlite3.OperationalError) and code is not None and \
                code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            conn.close()
            raise JournalError(f"{self.path}: another program holds SQLite's lock on it ({exc}); it was left as "
                               "it is: end that program's transaction or close it, then try again",
                               path=self.path) from None

    def _finish_open(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"{self.path}: SQLite refused WAL mode (got {mode!r}); is it on a network filesystem?",
                               path=self.path)
        self.identity.write(conn, self._now_us())
        conn.execute("BEGIN IMMEDIATE")  # proves the file takes writes now, not at the first card
        top = conn.execute("SELECT max(seq) FROM records").fetchone()[0] or 0
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('verified_seq', ?)", (str(top),))
        if self.deep_checked and not self.report.damage:
            conn.execute("DELETE FROM meta WHERE key = 'check_due'")
        conn.execute("COMMIT")

    def keep_aside(self) -> Path:
        """Copy the damaged files aside (:func:`~shoe_ctl.service.journal.aside.keep_aside`).

        :returns: the set's base path.
        """
        return keep_aside(self.path, self._clock(), self.report)

    def quarantine(self, conn: sqlite3.Connection, bad: list[tuple[Row, str]]) -> None:
        """Move damaged records (row, reason) to the ``damaged`` table in one transaction, keep
        their sequences from reuse and count them in ``report.lost``."""
        now = self._now_us()
        conn.execute("BEGIN IMMEDIATE")
        for row, why in bad:
            conn.execute(
                "INSERT INTO damaged (found_us, seq, reason, raw) VALUES (?, ?, ?, ?)",
                (now, row[0] if isinstance(row[0], int) else None, why, damaged_raw(row)),
            )
            conn.execute("DELETE FROM records WHERE seq = ?", (row[0],))
        top = max((r[0] for r, _ in bad if isinstance(r[0], int)), default=0)
        raise_seq_floor(conn, top)
        conn.execute("COMMIT")
        self.report.lost += len(bad)

    def _rebuild(self, aside: Path) -> None:
        """Salvage every readable, intact record of the damaged copy into a fresh file."""
        scratch = Path(f"{self.path}.salvage-tmp")
        fresh = Path(f"{self.path}.rebuild-tmp")
        for p in (scratch, *sidecars(scratch), fresh, *sidecars(fresh)):
            p.unlink(missing_ok=True)
        private_copy(aside, scratch)
        if Path(f"{aside}-wal").exists():
            private_copy(Path(f"{aside}-wal"), sidecars(scratch)[0])
        rows, bad, meta, unreadable = salvage(scratch)
        for p in (scratch, *sidecars(scratch)):
            p.unlink(missing_ok=True)
        for where, why in unreadable:
            self.report.damage.append(Damage(where, why))
        for row, why in bad:
            self.report.damage.append(Damage(f"record {row[0]}", why, row[0] if isinstance(row[0], int) else None))
        self.report.lost += len(bad)
        create_private(fresh)
        conn = sqlite3.connect(fresh, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = DELETE")
            init_schema(conn)
            conn.execute("BEGIN IMMEDIATE")
            for k, v in meta.items():
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (k, v))
            conn.executemany(f"INSERT INTO records ({COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            # the links did not survive the salvage: the chain starts again after what was saved
            # (docs/journal.md, "The hash chain")
            top = max((r[0] for r in rows), default=0)
            floor = int(meta.get("seq_floor", "0") or 0) if isinstance(meta, dict) else 0
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('chain_from', ?)",
                         (str(max(top, floor) + 1),))
            now = self._now_us()
            for row, why in bad:
                conn.execute(
                    "INSERT INTO damaged (found_us, seq, reason, raw) VALUES (?, ?, ?, ?)",
                    (now, row[0] if isinstance(row[0], int) else None, why, damaged_raw(row)),
                )
            for where, why in unreadable:
                conn.execute(
                    "INSERT INTO damaged (found_us, seq, reason, raw) VALUES (?, NULL, ?, '')",
                    (now, f"{where}: {why}"),
                )
            top = max([r[0] for r in rows] + [r[0] for r, _ in bad if isinstance(r[0], int)] + [0])
            raise_seq_floor(conn, top)
            conn.execute("COMMIT")
        finally:
            conn.close()
        with open(fresh, "rb+") as f:
            os.fsync(f.fileno())
        # The damaged log is kept aside; it must not be replayed onto the fresh file.
        for p in sidecars(self.path):
            p.unlink(missing_ok=True)
        os.replace(fresh, self.path)
        fsync_dir(self.path.parent)


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


def salvage(path: Path) -> tuple[list[Row], list[tuple[Row, str]], dict[str, str], list[tuple[str, str]]]:
    """Read every readable record of a damaged journal file, skipping unreadable b-tree pages.

    :returns: (intact rows, rows whose checksum fails with the reason, meta, unreadable ranges as
        (where, why)).
    """
    rows: list[Row] = []
    bad: list[tuple[Row, str]] = []
    unreadable: list[tuple[str, str]] = []
    meta: dict[str, str] = {}
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.text_factory = decode_text
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
                f"SELECT {COLS} FROM records WHERE seq > ? ORDER BY seq LIMIT 1", (x,)
            ).fetchone()
            return row

        while True:
            try:
                batch = conn.execute(
                    f"SELECT {COLS} FROM records WHERE seq > ? ORDER BY seq LIMIT 256", (last,)
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
                why = verify_row(row)
                if why:
                    bad.append((row, why))
                else:
                    rows.append(row)
            last = top if top > last else last + 1
    finally:
        conn.close()
    return rows, bad, meta, unreadable
