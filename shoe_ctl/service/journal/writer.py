"""The journal's writer thread: group commit in queue order (one fsync a group), each append told
once it is durable; after a failed commit nothing behind it is written, and the appends that must
be kept are tried again until they are. docs/journal.md, *The writer*.
"""

from __future__ import annotations

import itertools
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from shoe_ctl.service.journal.disk import disk_full, full_disk_words
from shoe_ctl.service.journal.records import Record
from shoe_ctl.service.journal.store import Store

log = logging.getLogger("shoe_ctl.service.journal")

MAX_GROUP_ROWS = 2000
"""At most this many records go into one transaction."""

RETRY_S = 0.25
"""Seconds between two tries of a failing group (kept appends wait at the head meanwhile)."""

LINGER_S = 0.004
"""Longest a group made only of appends that nobody waits for (``linger``: the controller's shoe
events, whose ack follows the commit, and the hand marks) waits for company before its commit.
An append somebody waits for (a dealer input, a direct ``append``) ends the wait at once, and so
does the end of a hold (:meth:`GroupWriter.hold`)."""

BUSY_S = 0.004
"""A hold that ends sooner than this after the last commit ended (events coming faster than any
dealer deals: the loaded bench, a burst) lets its group linger for company instead of committing
it at once (:meth:`GroupWriter.release`)."""

LINGER_ROWS = 64
"""A lingering group is committed as soon as it holds this many records."""

STALL_S = 5.0
"""A commit still running after this many seconds (stuck in its fsync: a frozen filesystem, a
stalled SD card, a disk that stopped answering) is reported as a failure, :class:`StalledCommit`,
until it ends: the dealer gets the journal's STOP and systemd its ``STATUS=`` line, as for a full
disk (docs/journal.md, "The writer")."""


CLOSE_WAIT_S = 2.0
"""Longest :meth:`GroupWriter.close` waits for the writer's thread (a commit the disk holds); past
it the close gives up on that commit, which ends on its own (docs/journal.md, "Stopping on a
stalled disk")."""


class StalledCommit(Exception):
    """The journal's disk has kept a commit waiting :data:`STALL_S` seconds or more."""

Batch = list[tuple[str, str, int | None]]
"""The rows of one append: (kind, body, shoe_seq)."""


class Entry:
    """One append waiting in the FIFO: its rows, the hand they belong to, whether it is kept through
    failures, and, once ``done``, its journal sequences or the error that dropped it.

    ``done`` is a plain flag the writer sets under its lock and announces on its condition, where
    every waiter waits (:meth:`GroupWriter.wait_done`): no event object per append."""

    __slots__ = ("rows", "items", "hand", "keep", "sync", "linger", "on_durable", "done", "seqs", "error")

    def __init__(self, rows: Batch, hand: int | None, keep: bool, sync: bool,
                 on_durable: Callable[[list[int]], None] | None, linger: bool = False,
                 items: Sequence[object] | None = None) -> None:
        self.rows = rows
        self.items = items  # the events/commands encoded as ``rows``, one each (handed to commit listeners)
        self.hand = hand
        self.keep = keep
        self.sync = sync
        self.linger = linger
        self.on_durable = on_durable
        self.done = False
        self.seqs: list[int] = []
        self.error: BaseException | None = None


class GroupWriter:
    """The FIFO of appends and the thread that commits it (started at once).

    :param store: the open, writable store (the writer is its only writer).
    :param name: for the thread's name.
    """

    def __init__(self, store: Store, *, name: str = "journal") -> None:
        self.store = store
        self._queue: deque[Entry] = deque()
        self._cond = threading.Condition()
        self._stop = False
        self._listeners: list[Callable[[BaseException | None], None]] = []
        self._committed: list[Callable[[Sequence[Record]], None]] = []
        self.failing: BaseException | None = None
        """The error of the last failed commit while it is not followed by a successful one."""
        self.groups = 0
        self.rows_written = 0
        self._rows_queued = 0
        self._holds = 0
        self._go = False
        self._lingering = False
        self._ended = -math.inf
        """When the last commit ended (``time.monotonic()``); a hold ending sooner lets its group linger."""
        self._since: float | None = None
        """When the commit running began (``time.monotonic()``), None between commits (under ``_cond``)."""
        self._running = 0
        """Appends at the head of the queue in the commit running (under ``_cond``)."""
        self._abandoned = False
        """The close gave up waiting for the thread (under ``_cond``): it ends after its commit."""
        self._exited = False
        self.on_abandoned_end: Callable[[], None] | None = None
        """Called from the writer's thread once a commit the close gave up on has ended (the
        journal closes its file there)."""
        self._telling = threading.Lock()  # a state change and its report to the listeners, as one
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"{name}-writer", daemon=True)
        self._thread.start()
        self._watch_thread = threading.Thread(target=self._watch, name=f"{name}-stall", daemon=True)
        self._watch_thread.start()

    # ------------------------------------------------------------------ callers

    def add_listener(self, fn: Callable[[BaseException | None], None]) -> None:
        """Call ``fn(error)`` when the journal starts failing (the error) and ``fn(None)`` when it
        writes again; from the writer thread, must not block."""
        self._listeners.append(fn)

    def add_commit_listener(self, fn: Callable[[Sequence[Record]], None]) -> None:
        """Call ``fn(records)`` after each commit, with the records it wrote in journal order (as
        ``Store.records`` reads them back; never changed afterwards: a listener may keep them);
        from the writer thread, after the commit's ``on_durable`` callbacks: must not block."""
        self._committed.append(fn)

    def submit(self, rows: Batch, hand: int | None, *, keep: bool, sync: bool = True,
               on_durable: Callable[[list[int]], None] | None = None, linger: bool = False,
               items: Sequence[object] | None = None) -> Entry:
        """Queue one append (never blocks).

        :param items: the events or commands ``rows`` encode, one a row: the records handed to
            the commit listeners carry them (``Record.given``), so a listener need not decode them.
        :param linger: nobody waits for this commit (its ``on_durable`` does what follows it): the
            writer may hold a group of such appends up to :data:`LINGER_S` for more to share its
            fsync (at most :data:`LINGER_ROWS` records); while a hold is on (:meth:`hold`), until
            the hold ends instead.
        :raises RuntimeError: the writer is closed.
        """
        entry = Entry(rows, hand, keep, sync, on_durable, linger, items)
        with self._cond:
            if self._stop:
                raise RuntimeError("the journal writer is closed")
            self._queue.append(entry)
            self._rows_queued += len(rows)
            if (not linger or self._rows_queued >= LINGER_ROWS
                    or (len(self._queue) == 1 and not self._holds)):
                self._cond.notify_all()  # a lingering writer needs no wake-up for one more of its kind
        return entry

    def hold(self) -> None:
        """Begin a hold: lingering appends queued until it ends (:meth:`release`) wake the writer
        only then, in one wake-up, and their group is committed at once; a full group
        (:data:`LINGER_ROWS`) or an append somebody waits for is committed as without a hold.
        Holds nest and count; the controller holds around each event it handles, so a card's
        record, its alerts and the hand mark after it share one commit begun when the controller
        is done with the card (docs/journal.md, *The writer*)."""
        with self._cond:
            self._holds += 1

    def release(self) -> None:
        """End a hold (:meth:`hold`); the last one ending lets the writer commit what lingers: at
        once, unless the last commit ended less than :data:`BUSY_S` ago (events coming faster
        than that): the group then waits for company as without a hold (:data:`LINGER_S` from the
        writer's wake-up, or :data:`LINGER_ROWS`), the writer woken once for it."""
        with self._cond:
            self._holds = max(self._holds - 1, 0)
            if not self._holds and self._queue:
                if time.monotonic() - self._ended >= BUSY_S:
                    self._go = True
                    self._cond.notify_all()
                elif not self._lingering:
                    self._cond.notify_all()

    def pending(self) -> int:
        """Appends queued and not yet written."""
        with self._cond:
            return len(self._queue)

    def wait_done(self, entry: Entry, timeout: float | None = None) -> bool:
        """Wait until ``entry`` is written or dropped (True) or ``timeout`` passed (False); a
        lingering ``entry`` keeps lingering (compare :meth:`wait_failing_or_done`)."""
        with self._cond:
            return self._cond.wait_for(lambda: entry.done, timeout)

    def wait_failing_or_done(self, entry: Entry, timeout: float | None = None) -> bool:
        """Wait until ``entry`` is written or dropped (True), or the journal is failing, or
        ``timeout`` passed (False)."""
        with self._cond:
            if entry.linger:
                entry.linger = False  # somebody waits for it now: no lingering for company
                self._cond.notify_all()
            self._cond.wait_for(lambda: entry.done or self.failing is not None, timeout)
            return entry.done

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the FIFO is empty; False on timeout (e.g. while the journal is failing). The
        caller waits for what lingers: its group is committed at once, a hold or not."""
        with self._cond:
            if self._queue and not self._go:
                self._go = True
                self._cond.notify_all()
            return self._cond.wait_for(lambda: not self._queue, timeout)

    @property
    def committing(self) -> bool:
        """True while a commit runs (it may be one the disk holds)."""
        return self._since is not None

    @property
    def abandoned(self) -> bool:
        """True once :meth:`close` gave up on a commit that did not end (a stalled disk): the
        thread ends after it, and the store is not the closer's to touch meanwhile."""
        with self._cond:
            return self._abandoned

    def close(self, timeout: float | None = None) -> int:
        """Write what is queued (one try), stop the thread. Idempotent.

        Waits at most ``timeout`` seconds (default :data:`CLOSE_WAIT_S`) for the thread: a commit still running then (a disk
        that does not answer) is given up on (:attr:`abandoned`): the appends behind it are
        dropped unwritten, the commit itself ends on its own in the thread, which then calls
        :attr:`on_abandoned_end`.

        :returns: the number of appends left unwritten (kept appends of a failing journal: not
            acked, so the shoe still holds their events; with a commit given up on, its appends
            too).
        """
        if timeout is None:
            timeout = CLOSE_WAIT_S
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._closing.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self._watch_thread.join(timeout)
        with self._cond:
            if self._thread.is_alive() and not self._exited and self._thread is not threading.current_thread():
                self._abandoned = True
                left = len(self._queue)
                running = self._running if self._since is not None else 0
                behind = list(itertools.islice(self._queue, running, None))
                for entry in behind:
                    self._queue.remove(entry)
                    self._rows_queued -= len(entry.rows)
                self._drop(behind)
                return left
            left = len(self._queue)
            self._drop(self._queue)
            self._queue.clear()
            self._rows_queued = 0
        return left

    def _drop(self, entries: Iterable[Entry]) -> None:
        """Mark ``entries`` dropped unwritten by the close (``_cond`` held)."""
        for entry in entries:
            if not entry.done:
                entry.error = RuntimeError("the journal closed before this append was written")
                entry.done = True
        self._cond.notify_all()

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        try:
            self._commits()
        finally:
            with self._cond:
                self._exited = True
                abandoned = self._abandoned
                if abandoned:
                    self._drop(self._queue)
                    self._queue.clear()
                    self._rows_queued = 0
            if abandoned and self.on_abandoned_end is not None:
                self.on_abandoned_end()

    def _commits(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._stop)
                if not self._queue or self._abandoned:
                    return
                if self.failing is None:
                    self._lingering = True
                    self._cond.wait_for(self._commit_now, LINGER_S)
                    self._lingering = False
                self._go = False
                group: list[Entry] = []
                rows = 0
                for entry in self._queue:
                    if group and rows + len(entry.rows) > MAX_GROUP_ROWS:
                        break
                    group.append(entry)
                    rows += len(entry.rows)
                stopping = self._stop
                self._running = len(group)
                self._since = time.monotonic()
            written: list[Record] | None = [] if self._committed else None
            try:
                seqs = self.store.write_groups([(e.rows, e.hand) for e in group],
                                               sync=any(e.sync for e in group), written=written,
                                               items=[e.items for e in group] if written is not None else None)
            except BaseException as exc:  # noqa: BLE001 - every failure keeps order and is reported
                self._failed(group, exc)
                if stopping or self.abandoned:
                    return
                with self._cond:
                    self._cond.wait_for(lambda: self._stop, RETRY_S)
                continue
            self._written(group, seqs, written or [])

    def _watch(self) -> None:
        """The stall watch's thread: a commit running :data:`STALL_S` or longer makes the journal
        failing (:class:`StalledCommit`), told to the listeners; its end (written or failed) ends
        that as any failure ends. Looks four times in :data:`STALL_S` (at most once a second)."""
        while not self._closing.wait(min(1.0, STALL_S / 4)):
            since = self._since
            if since is None or time.monotonic() - since < STALL_S:
                continue
            with self._telling:
                with self._cond:
                    if self._since != since or self.failing is not None:
                        continue
                    exc = self.failing = StalledCommit(
                        f"a commit has waited {STALL_S:g} s for the disk (stalled, frozen or failing)")
                    self._cond.notify_all()
                log.error("journal %s: %s; appends kept in order, written once it answers", self.store.path, exc)
                self._tell(exc)

    def _commit_now(self) -> bool:
        """No more lingering (lock held): stopping, a hold ended, enough records, or an append somebody
        waits for."""
        return (self._stop or self._go or self._rows_queued >= LINGER_ROWS
                or not all(e.linger for e in self._queue))

    def _written(self, group: list[Entry], seqs: list[list[int]], records: list[Record]) -> None:
        with self._telling, self._cond:
            self._since = None
            for entry in group:
                self._queue.popleft()
                self._rows_queued -= len(entry.rows)
            if not self._queue:
                self._go = False  # the hold that ended is served
            self._ended = time.monotonic()
            recovered = self.failing is not None
            self.failing = None
            self.groups += 1
            self.rows_written += sum(len(s) for s in seqs)
            for entry, s in zip(group, seqs, strict=True):
                entry.seqs = s
                entry.done = True
            self._cond.notify_all()
        for entry in group:
            if entry.on_durable is not None:
                try:
                    entry.on_durable(entry.seqs)
                except Exception:  # noqa: BLE001
                    log.exception("journal: a callback after a commit failed")
        if records:
            for fn in list(self._committed):
                try:
                    fn(records)
                except Exception:  # noqa: BLE001
                    log.exception("journal: a commit listener failed")
        if recovered:
            log.warning("journal %s: writes again", self.store.path)
            with self._telling:
                if self.failing is None:
                    self._tell(None)

    def _failed(self, group: list[Entry], exc: BaseException) -> None:
        with self._telling, self._cond:
            self._since = None
            first = self.failing is None or isinstance(self.failing, StalledCommit)
            self.failing = exc
            dropped = [e for e in group if not e.keep]
            for entry in dropped:
                self._queue.remove(entry)
                self._rows_queued -= len(entry.rows)
                entry.error = exc
                entry.done = True
            self._cond.notify_all()
            kept = len(self._queue)
        if first:
            why = f"{exc}: {full_disk_words(self.store.path)}" if disk_full(exc) else exc
            log.error("journal %s: a write failed (%s); %d append(s) kept in order and retried every %.2f s",
                      self.store.path, why, kept, RETRY_S)
            self._tell(exc)

    def _tell(self, exc: BaseException | None) -> None:
        for fn in list(self._listeners):
            try:
                fn(exc)
            except Exception:  # noqa: BLE001
                log.exception("journal state listener failed")


def stop_words(exc: BaseException) -> str:
    """The dealer's words for the journal's STOP (``journal-write-failed``): what failed and what
    a dealer or technician does, by what the writer met: a commit the disk does not end
    (:class:`StalledCommit`: no error, the disk or SD card not answering), a full disk
    (:func:`~shoe_ctl.service.journal.disk.disk_full`), or any other failed write."""
    kept = "card reads are not acknowledged to the shoe, which keeps them"
    if isinstance(exc, StalledCommit):
        return (f"the journal's disk is not answering ({describe(exc)}): {kept}; the hand waits: call a "
                "technician to check the disk or SD card holding the journal (seated, powered, not frozen), "
                "and do not switch the table off")
    if disk_full(exc):
        return (f"the journal's disk is full ({describe(exc)}): {kept}; call a technician to free space on "
                "it (the service's log says where and how much), and do not switch the table off")
    return (f"the journal cannot be written ({describe(exc)}): {kept}; call a technician to fix the "
            "journal's storage, and do not switch the table off")


def describe(exc: object) -> str:
    """A failing journal's error in a few words for an alert or ``STATUS=``."""
    text = str(exc) or type(exc).__name__
    return text if len(text) < 120 else text[:117] + "..."
