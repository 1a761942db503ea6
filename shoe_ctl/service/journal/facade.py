"""``Journal``: the one object the service, recovery, export and the tools use. It opens the file
through :mod:`~shoe_ctl.service.journal.repair` (or read-only), then hands appends and reads to
the :mod:`~shoe_ctl.service.journal.store` and pruning to
:mod:`~shoe_ctl.service.journal.retention`, and keeps one :class:`OpenReport` of all of it.

What the journal does and guarantees is described once, in ``docs/journal.md``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from shoe_ctl.service import codec
from shoe_ctl.service.journal import chain
from shoe_ctl.service.journal import writer as writer_module
from shoe_ctl.service.journal.aside import prune_aside
from shoe_ctl.service.journal.disk import disk_full, write_problem
from shoe_ctl.service.journal.files import closed_here, give_up_ownership, opened_here, take_ownership
from shoe_ctl.service.journal.identity import Identity
from shoe_ctl.service.journal.records import Damage, HandSummary, JournalError, OpenReport, Record, Row
from shoe_ctl.service.journal.repair import Repair, check_file
from shoe_ctl.service.journal.retention import Retention
from shoe_ctl.service.journal.store import Store, open_readonly
from shoe_ctl.service.journal.writer import Entry, GroupWriter

log = logging.getLogger("shoe_ctl.service.journal")

SYNC_LEVELS = ("FULL", "NORMAL")

NOT_DAMAGE = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_READONLY)
"""SQLite's errors of a pruning that say nothing of the file's pages (another program's lock, a
medium that takes no writes): the pruning is not run, and no whole-file check is started."""


def _unreadable(path: Path, exc: sqlite3.DatabaseError) -> JournalError:
    """A read-only open that met damage it does not repair (``docs/journal.md``, "Damage: found,
    reported, nothing intact thrown away"), or an empty file (made, nothing written in it yet)."""
    with contextlib.suppress(OSError):
        if path.stat().st_size == 0:
            return JournalError(f"{path}: an empty file: no journal has been written in it yet", path=path)
    return JournalError(f"{path}: cannot be read: {exc}; the file is damaged (shoe-ctl journal check lists "
                        "the damage; the service's next open repairs it)", path=path)


class CommitPending(JournalError):
    """A record's commit did not end within the wait given (:meth:`Journal.append_record`): the
    disk is not answering. The record stays queued."""


class Journal:
    """The table's append-only journal (SQLite in WAL mode); ``docs/journal.md``.

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
    :param deferred: take the whole-file checks and the retention off the open: they run in a
        background thread ``deferred_delay_s`` seconds after the open (the service's start path,
        ``docs/journal.md``, "What is checked when"); ``report.records`` is counted there too.
    :raises JournalError: a journal another process (or another ``Journal`` of this one) has open
        for writing, when opened for writing (naming it and what to do; ``docs/journal.md``, "One
        writing process"), another table's or profile's journal (naming both), a format newer than
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
        deferred: bool = False,
        deferred_delay_s: float = 2.0,
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
        self.report = OpenReport(self.path)
        identity = Identity(self.path, table, profile, self.report)
        self._repair = Repair(self.path, identity, self.report, synchronous=self.synchronous, verify=verify,
                              clock=clock)
        self._owner = None if readonly else take_ownership(self.path)
        try:
            conn = open_readonly(self.path, identity) if readonly else self._repair.open_writable()
            try:
                self.store = Store(self.path, conn, synchronous=self.synchronous, readonly=readonly, clock=clock,
                                   on_damaged=self._bad_read)
            except BaseException:
                conn.close()
                raise
        except sqlite3.DatabaseError as exc:
            give_up_ownership(self._owner)
            if not readonly:
                raise
            raise _unreadable(self.path, exc) from exc  # a read-only open repairs nothing
        except BaseException:
            give_up_ownership(self._owner)  # a failed open leaves the journal free for the next
            raise
        opened_here(id(self), self.path)
        self._writer: GroupWriter | None = None
        self.checked: list[Damage] | None = None
        """What the last whole-file check (:meth:`check`) found; ``None`` before one ran."""
        self._maint_stop = threading.Event()
        self._maint: threading.Thread | None = None
        try:
            self._retention = Retention(self.store, retention_days, self.report, clock)
            self._submit_lock = threading.RLock()  # the order of the FIFO is the order of the hand marks
            self._writer = None if readonly else GroupWriter(self.store, name=self.path.name)
            if deferred and not readonly:
                self.report.records = -1
                self._maint = threading.Thread(target=self._maintain, args=(deferred_delay_s,),
                                               name=f"{self.path.name}-maintenance", daemon=True)
                self._maint.start()
                return
            if not readonly and self.retention_days > 0:
                self.report.pruned = self._prune_or_check()
            elif not readonly:
                prune_aside(self.path, self.report)
            self.report.records = self.store.count()
        except sqlite3.DatabaseError as exc:
            self.close()
            if not readonly:
                raise
            raise _unreadable(self.path, exc) from exc
        except BaseException:
            self.close()  # what the open took (the store, the writer, the file's ownership) is given back
            raise

    def _maintain(self, delay_s: float) -> None:
        """The deferred part of the open: retention, then the whole-file check, then the count."""
        if self._maint_stop.wait(delay_s):
            return
        try:
            if self.retention_days > 0:
                self.report.pruned = self._prune_or_check(stop=self._maint_stop)
            else:
                prune_aside(self.path, self.report)
            if self._maint_stop.is_set():
                return
            self.check(stop=self._maint_stop, pause_s=0.005)
            if self._maint_stop.is_set():
                return
            with self.store.lock:
                if not self.store.closed:
                    self.report.records = self.store.count()
        except Exception:  # noqa: BLE001 - a closed journal, a full disk: the next open does it
            log.exception("journal %s: background maintenance failed", self.path)

    def check(self, *, stop: threading.Event | None = None, pause_s: float = 0.0) -> list[Damage]:
        """The whole-file check (``PRAGMA integrity_check`` and every record's checksum) on a
        read-only connection of its own, so appends go on meanwhile (``shoe-ctl journal check``,
        the deferred open). Damage found is logged, added to ``report.damage``, and marked in
        ``meta`` (``check_due``) so the next open runs the full check and repairs it.

        :param stop: ends the check early when set (the journal closes); ``pause_s``: a pause
            every 2,000 records (the background check).
        :returns: the damage found (empty: none).
        """
        found = check_file(self.path, stop, pause_s)
        if stop is not None and stop.is_set():
            return found
        self.checked = found
        if found:
            for d in found:
                log.error("journal %s: %s", self.path, d)
            self.report.damage.extend(found)
            if not self.readonly:
                with self.store.lock:
                    if not self.store.closed:
                        self.store.db().execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('check_due', '1')")
        return found

    def _prune_or_check(self, stop: threading.Event | None = None) -> int:
        """Retention at the open; a damaged page it meets (in a part the open's tail check does
        not read: old hands, the ``damaged`` table) is found and reported by the whole-file
        check, which marks the file for repair at the next open. A full disk (or a lock another
        program holds) is no damage: said as what it is, in one line, and the pruning is left for
        the next. Returns the records pruned."""
        try:
            return self._retention.prune(stop=stop)
        except sqlite3.DatabaseError as exc:
            code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
            if disk_full(exc) or code in NOT_DAMAGE:  # the disk or another program, not the file
                log.error("%s; retention not run, tried again at the next pruning", write_problem(self.path, exc))
                return 0
            log.error("journal %s: retention met a damaged page (%s); checking the whole file", self.path, exc)
            if not self.check(stop=stop):
                self.report.damage.append(Damage("retention", f"not run: {exc}"))
            return 0

    def _bad_read(self, row: Row, why: str) -> None:
        """A record whose checksum fails when read: reported; a writable journal keeps the file
        aside (once per session) and moves the record to ``damaged``."""
        with self.store.lock:
            self.report.damage.append(Damage(f"record {row[0]}", why, row[0]))
            log.error("journal %s: record %s: %s", self.path, row[0], why)
            if self.readonly:
                return
            if not self.report.kept_aside:
                self._repair.keep_aside()
            try:
                self._repair.quarantine(self.store.db(), [(row, why)])
            except sqlite3.DatabaseError as exc:
                # the page around the record is damaged too: the next open rebuilds the file
                if self.store.db().in_transaction:
                    self.store.db().execute("ROLLBACK")
                log.error("journal %s: record %s cannot be moved aside (%s); the file is repaired at the next "
                          "open", self.path, row[0], exc)
                self.report.damage.append(Damage("database file", f"record {row[0]} cannot be moved aside: {exc}"))
                with contextlib.suppress(sqlite3.Error):
                    self.store.db().execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('check_due', '1')")

    # ------------------------------------------------------------------ life

    def close(self) -> None:
        """Write what is queued (one try), close the file (idempotent). A clean close checkpoints
        and removes the ``-wal``. Appends still unwritten (a failing journal) are logged: their
        shoe events were not acked, so the shoe keeps them.

        A commit the disk does not end (a stalled disk) is waited for at most
        :data:`~shoe_ctl.service.journal.writer.CLOSE_WAIT_S`; then the close returns saying so
        in one line, and the file is closed (and given up for another writer) by the writer's
        thread once that commit ends, as after a crash if it never does (docs/journal.md,
        "Stopping on a stalled disk")."""
        if self._shut:
            return
        self._shut = True
        self._maint_stop.set()
        if self._maint is not None and self._maint is not threading.current_thread():
            # a pruning chunk ends in milliseconds; behind a commit the disk holds it waits with it
            stuck = self._writer is not None and self._writer.committing
            self._maint.join(writer_module.CLOSE_WAIT_S if stuck else 10)
        if self._writer is not None:
            self._writer.on_abandoned_end = self._release
            left = self._writer.close()
            if self._writer.abandoned:
                log.error("journal %s: its last commit did not finish within %g s (the disk is not answering); "
                          "stopping without it: %d append(s) unwritten and not acked (the shoe keeps their "
                          "cards), nothing committed before is lost, and the next start checks the journal "
                          "as after a crash", self.path, writer_module.CLOSE_WAIT_S, left)
                return
            if left:
                log.error("journal %s: closed with %d append(s) unwritten (not acked)", self.path, left)
        self._release()

    _shut = False

    def _release(self) -> None:
        """Close the store and give up the file (the close's end; the writer's thread after a
        commit the close gave up on)."""
        self.store.close()
        closed_here(id(self))
        give_up_ownership(self._owner)
        self._owner = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing

    @property
    def current_hand(self) -> int | None:
        """The hand that has a ``hand-start`` and no ``hand-end`` yet (also after a restart)."""
        return self.store.current_hand

    def _writer_or_raise(self) -> GroupWriter:
        if self._writer is None:
            raise JournalError(f"journal {self.path} is open read-only", path=self.path)
        if self.store.closed:
            raise JournalError(f"journal {self.path} is closed", path=self.path)
        return self._writer

    @staticmethod
    def _wait(writer: GroupWriter, entry: Entry) -> list[int]:
        writer.wait_done(entry)
        if entry.error is not None:
            raise entry.error
        return entry.seqs

    def append(self, item: codec.Encodable, *, sync: bool = True) -> int:
        """Append one event or command to the current hand; durable when it returns.

        :param item: any event or command of :mod:`shoe_ctl.events`.
        :param sync: ``False`` lets the OS write it later (use for commands that replay can
            regenerate); the next synced append makes it durable too (the log is written in order).
        :returns: the record's journal sequence.
        :raises codec.CodecError: for an object the codec cannot encode (nothing is written).
        :raises JournalError: when closed or read-only.
        :raises sqlite3.Error: the write failed (a full disk, a lock held beyond the busy timeout):
            the record is not kept.
        """
        return self.append_many([item], sync=sync)[0]

    def append_many(self, items: Iterable[codec.Encodable], *, sync: bool = True) -> list[int]:
        """Append several events/commands in one transaction (one fsync, shared with what else is
        waiting: the group commit); durable when it returns. Errors as :meth:`append`.

        :returns: their journal sequences, in order.
        """
        writer = self._writer_or_raise()
        items = list(items)
        rows = self.store.rows_of(items)
        with self._submit_lock:
            entry = writer.submit(rows, self.store.current_hand, keep=False, sync=sync, items=items)
        return self._wait(writer, entry)

    def submit(self, items: Iterable[codec.Encodable], *,
               on_durable: Callable[[list[int]], None] | None = None, linger: bool = False) -> Entry:
        """Queue events/commands for the writer without waiting (the controller's path): they are
        written in order, in one transaction with whatever else waits, and ``on_durable(seqs)``
        runs in the writer thread once they are committed (the shoe's ack goes there). A write that
        fails keeps them at the head of the queue, and nothing behind them is written, until a
        retry succeeds (``docs/journal.md``, "The writer").

        With ``linger`` (nobody waits for the commit: the shoe's ack is in ``on_durable``) the writer
        may hold the group a few milliseconds for more appends to share its fsync
        (``writer.LINGER_S``); :meth:`wait_written` on it ends that at once.

        :returns: the queued entry (``entry.done`` is true once written or dropped).
        :raises codec.CodecError: for an object the codec cannot encode (nothing is queued).
        :raises JournalError: when closed or read-only.
        """
        writer = self._writer_or_raise()
        items = list(items)
        rows = self.store.rows_of(items)
        with self._submit_lock:
            return writer.submit(rows, self.store.current_hand, keep=True, on_durable=on_durable, linger=linger,
                                 items=items)

    def hold(self) -> None:
        """Begin a hold on lingering appends (``GroupWriter.hold``): queued until :meth:`release`,
        they wake the writer once, when it ends. Nothing when read-only or closed."""
        if self._writer is not None:
            self._writer.hold()

    def release(self) -> None:
        """End a hold (:meth:`hold`): the writer commits what lingers at once."""
        if self._writer is not None:
            self._writer.release()

    def wait_written(self, entry: Entry, timeout: float | None) -> bool:
        """Wait until ``entry`` (from :meth:`submit`) is written (True), or the journal is failing
        or ``timeout`` passed (False)."""
        return self._writer_or_raise().wait_failing_or_done(entry, timeout) and entry.error is None

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued append is written; False on timeout (a failing journal)."""
        return self._writer is None or self._writer.flush(timeout)

    @property
    def failing(self) -> BaseException | None:
        """The error of the last failed write while no write has succeeded since (None: healthy)."""
        return None if self._writer is None else self._writer.failing

    @property
    def pending(self) -> int:
        """Appends queued and not written yet."""
        return 0 if self._writer is None else self._writer.pending()

    def add_state_listener(self, fn: Callable[[BaseException | None], None]) -> None:
        """``fn(error)`` when writes start failing, ``fn(None)`` when they succeed again (from the
        writer thread; must not block). Read-only journals never call it."""
        if self._writer is not None:
            self._writer.add_listener(fn)

    def add_commit_listener(self, fn: Callable[[Sequence[Record]], None]) -> bool:
        """``fn(records)`` after each commit of this journal's writer, with the records it wrote,
        in journal order, as :meth:`records` would read them back (from the writer thread; must
        not block): a reader in this process (the floor publisher) learns of new records, and
        gets them, without reading the file again.

        :returns: False for a read-only journal (no writer here: whoever writes it is elsewhere).
        """
        if self._writer is None:
            return False
        self._writer.add_commit_listener(fn)
        return True

    def append_record(self, kind: str, body: Mapping[str, Any], *, sync: bool = True,
                      wait_s: float | None = None) -> int:
        """Append a record that is not an event or command, e.g. kind ``"decision"`` with the
        controller's procedure or card assignment (``docs/journal.md``). ``body`` must be JSON-safe.

        :param wait_s: wait at most this many seconds for the commit (None: until it is written);
            past it the record stays queued, written in order if the disk answers before the close.
        :raises JournalError: for a kind that is a codec type or a hand marker (use the methods).
        :raises CommitPending: ``wait_s`` passed before the commit ended (a stalled disk).
        """
        writer = self._writer_or_raise()
        row = self.store.record_row(kind, body)
        with self._submit_lock:
            entry = writer.submit([row], self.store.current_hand, keep=False, sync=sync)
        if wait_s is not None and not writer.wait_done(entry, wait_s):
            raise CommitPending(f"journal {self.path}: a {kind} record waited {wait_s:g} s for a commit that "
                                "did not end (the disk is not answering)", path=self.path)
        return self._wait(writer, entry)[0]

    MARK_WAIT_S = 2.0
    """Longest a hand mark waits for its commit while the journal is healthy (seconds)."""

    def _mark(self, entry: Entry) -> None:
        writer = self._writer_or_raise()
        writer.wait_failing_or_done(entry, self.MARK_WAIT_S)
        if entry.error is not None and not isinstance(entry.error, RuntimeError):
            raise entry.error

    def begin_hand(self, info: Mapping[str, Any] | None = None, *, hand: int | None = None,
                   wait: bool = True) -> int:
        """Start a hand: appends ``hand-start`` (body: ``info`` plus ``"hand"``); later appends belong
        to it. A hand still open is ended first as abandoned. The mark is kept in the writer's
        queue through a failing spell (written in order once the journal writes again): the call
        returns when it is written or the journal is failing; with ``wait`` false at once (the
        controller's path, :class:`~shoe_ctl.service.recovery.HandMarks`: the mark is queued, and
        every record queued after it is committed with it or after it).

        :param info: JSON-safe facts for export, e.g. ``{"game": "stud", "rules": "tda",
            "seats": [3, 4, 6, 1]}`` (table seats in player order), ``"antes"``, ``"bring_in"``,
            ``"small_bet"``, ``"big_bet"``, ``"stacks"`` where known.
        :param hand: the hand number; default one more than the highest in the journal.
        :returns: the hand number.
        """
        writer = self._writer_or_raise()
        with self._submit_lock:
            rows = []
            if self.store.current_hand is not None:
                old, row = self.store.hand_end_row({"abandoned": True})
                rows.append(([row], old))
            number, row = self.store.hand_start_row(info, hand)
            rows.append(([row], number))
            entries = [writer.submit(r, h, keep=True, linger=not wait) for r, h in rows]
        if wait:
            self._mark(entries[-1])
        return number

    def end_hand(self, info: Mapping[str, Any] | None = None, *, wait: bool = True) -> int:
        """End the current hand: appends ``hand-end`` (body: ``info`` plus ``"hand"``; kept through
        a failing spell as :meth:`begin_hand`, and with ``wait`` false returning at once as there);
        prunes when the last pruning is an hour old (``PRUNE_EVERY_S``) and the journal is not
        failing.

        :returns: the record's journal sequence (0 when not written yet: the journal is failing,
            or ``wait`` is false).
        :raises JournalError: when no hand is open.
        """
        writer = self._writer_or_raise()
        with self._submit_lock:
            number, row = self.store.hand_end_row(info)
            entry = writer.submit([row], number, keep=True, linger=not wait)
        if wait:
            self._mark(entry)
        if entry.error is None and writer.failing is None and self._retention.due():
            if wait:
                self.prune()
            else:
                self._prune_in_background()
        return entry.seqs[0] if entry.seqs else 0

    def _prune_in_background(self) -> None:
        """The pruning a hand's end calls for, in a thread of its own (the controller's path,
        ``wait`` false: the controller never waits for the store's lock or the disk). One at a
        time, none while the deferred open's maintenance runs (it prunes too); :meth:`close`
        stops it between chunks."""
        with self._submit_lock:
            if self._maint is not None and self._maint.is_alive():
                return
            self._maint = threading.Thread(target=self._prune_quietly, name=f"{self.path.name}-retention",
                                           daemon=True)
            self._maint.start()

    def _prune_quietly(self) -> None:
        try:
            self._prune_or_check(stop=self._maint_stop)
        except Exception:  # noqa: BLE001 - a closed journal, a failing disk: the next pruning does it
            log.exception("journal %s: pruning at a hand's end failed", self.path)

    # ------------------------------------------------------------------ reading

    def records(self, since: int | None = None, *, hand: int | None = None) -> Iterator[Record]:
        """The records after journal sequence ``since`` (all when ``None``), in order; only those of
        ``hand`` when given. Each record's checksum is verified as it is read: a damaged record is
        skipped, added to ``report.damage`` and logged; a writable journal also keeps the file
        aside (``<name>.damaged-<time>``) and moves the record to the ``damaged`` table.
        """
        return self.store.records(since, hand=hand)

    def newest(self, kind: str) -> Iterator[Record]:
        """The records of ``kind``, newest first, verified as :meth:`records` verifies them: the
        last of a kind without reading the whole journal (the host's start on a month of hands)."""
        return self.store.newest(kind)

    def identity(self) -> tuple[str | None, str | None]:
        """The (table, profile) the journal file belongs to, from its meta table."""
        return self.store.identity()

    def created_us(self) -> int | None:
        """When the journal file was made (µs since the epoch): it names the file (a new journal
        has another), ``None`` for a file without it."""
        return self.store.created_us()

    def last_shoe_seq(self) -> int | None:
        """The shoe sequence of the most recent journaled CardRead/ShoeFault/ShoeButton, for
        ``ShoeLink(resume_seq=...)`` (kept through pruning); ``None`` when there is none."""
        return self.store.last_shoe_seq()

    def last_shoe_boot(self) -> tuple[str, int] | None:
        """``(serial, boot id)`` of the shoe as the last journaled ``LinkChanged`` that names one
        knew it, for ``ShoeLink(resume_boot=...)``: a shoe that restarted while the service was
        down is then a shoe restart (docs/protocol.md section 12); ``None`` when there is none
        among the last 64 (a record that does not decode is passed over)."""
        for body in self.store.last_bodies("LinkChanged", 64):
            try:
                item = codec.loads(body)
            except codec.CodecError:
                continue
            info = getattr(item, "info", None)
            if info is not None and info.boot_id and not getattr(item, "refused", ""):
                return str(info.serial), int(info.boot_id)
        return None

    def chain_head(self) -> tuple[int, str]:
        """The hash chain's head: (journal sequence, SHA-256 link in hex) of the last chained
        record written (``docs/journal.md``, "The hash chain"); shown by ``doctor``, the display's
        status and exports so a rewritten chain can be told from the one seen before."""
        with self.store.lock:
            if not self.readonly:
                seq, value = self.store.chain_head
            elif self.store.has_chain:
                seq, value = chain.head(self.store.db())
            else:
                seq, value = 0, chain.ZERO
        return seq, value.hex()

    def chain_public(self) -> dict[str, Any]:
        """``{"seq": int, "head": str | None}``: the chain head for the display's status as its
        display tag (:meth:`display_tag`), never the link itself: a link seen on a screen beside the
        one before would let a watcher try the 52 cards of a hole-card record against it. Safe from
        any thread, and on a journal being written it does not wait for the store's lock (which
        the writer holds through its commit and fsync): it reads the head the writer replaces,
        whole, once a group is committed, and makes the tag again only when the head moved."""
        if self.readonly:
            seq, value = self.chain_head()
            return {"seq": seq, "head": self.display_tag(value)}
        head = self.store.chain_head  # one read of a tuple the writer only ever replaces
        shown = self._head_shown
        if shown is None or shown[0] is not head:
            shown = self._head_shown = (head, self.display_tag(head[1].hex()))
        return {"seq": head[0], "head": shown[1]}

    _head_shown: tuple[tuple[int, bytes], str | None] | None = None

    def display_tag(self, link_hex: str) -> str | None:
        """The display tag of a chain link: HMAC-SHA256 under the file's ``chain_key`` (meta),
        16 hex digits; ``shoe-ctl journal verify`` prints the head's, so a tag noted from the
        screen can be checked later. None for a file without the key (an older, read-only one)."""
        key = self._chain_key
        if key is None:
            with self.store.lock:
                row = (self.store.db().execute("SELECT value FROM meta WHERE key = 'chain_key'").fetchone()
                       if self.store.has_meta() else None)
            if row is None:
                return None
            key = self._chain_key = bytes.fromhex(row[0])
        return hmac.new(key, bytes.fromhex(link_hex), hashlib.sha256).hexdigest()[:16]

    _chain_key: bytes | None = None

    def verify_chain(self, *, retention_days: float | None = None,
                     floor_tags: dict[int, str] | None = None) -> chain.ChainReport:
        """Walk the hash chain over every record (``shoe-ctl journal verify``): edited, deleted,
        inserted or reordered records are listed in the report's ``problems``; a file with the
        chain's display key (written by a version that chains) and no link has had its chain
        stripped. ``retention_days``: the table's retention, which a pruning anchor must fit (as of
        the journal's clock). ``floor_tags``: ``{seq: display tag}`` of heads noted outside the
        file (the floor's copy, ``docs/floor.md``), each compared with the file's."""
        with self.store.lock:
            db = self.store.db()
            chained = self.store.has_meta() and db.execute(
                "SELECT 1 FROM meta WHERE key = 'chain_key'").fetchone() is not None
            if not self.store.has_chain:
                rep = chain.ChainReport()
                rep.unchained = self.store.count()
                if chained and rep.unchained:
                    rep.problems.append(f"{rep.unchained} records: no link at all (the chain was stripped)")
                return rep
            return chain.verify(db, chained=chained, retention_days=retention_days,
                                now_us=self.store.now_us(), known=floor_tags, tag=self.display_tag)

    def last_hand(self) -> int:
        """The highest hand number the journal has known (0 for none; kept through pruning)."""
        return self.store.top_hand

    def replay_start(self) -> int:
        """The journal sequence after which recovery replays: the last ``hand-end`` (0 if none).
        Everything after it — the dealer's new-hand input, the unfinished hand, link events — is
        what a fresh state machine needs to reach the state before the stop."""
        return self.store.replay_start()

    def hands(self, *, finished_only: bool = False) -> list[HandSummary]:
        """Every hand in the journal, oldest first (``finished_only``: finished or abandoned ones)."""
        return self.store.hands(finished_only=finished_only)

    def hand_records(self, hand: int | HandSummary) -> list[Record]:
        """The records of one hand, in order (verified as :meth:`records`): of the hand a
        :class:`HandSummary` from :meth:`hands` names, or every record numbered ``hand`` (all the
        hands of a number that repeats)."""
        if isinstance(hand, int):
            return list(self.records(hand=hand))
        return list(itertools.takewhile(lambda r: r.seq <= hand.last_seq,
                                        self.records(hand.first_seq - 1, hand=hand.hand)))

    # ------------------------------------------------------------------ retention

    def prune(self, now: float | None = None) -> int:
        """Delete finished hands (and between-hands records) whose last record is older than
        ``retention_days``; the unfinished hand, anything after the last ``hand-end`` and the last
        shoe sequence (kept in ``meta``) always stay.

        :returns: the number of records deleted.
        """
        return self._retention.prune(now)
