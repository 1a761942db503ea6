"""The controller: one thread owns the dealing machine and takes every event from one queue.

Card reads (from :class:`drivers.shoe.ShoeLink`), dealer inputs: every event is put on
:attr:`Controller.queue`. A shoe event goes machine, sinks, journal, ack; any other event goes
journal, machine (while the record's commit runs), sinks once it is committed
(:meth:`Controller.step`; docs/service.md, *How an event flows*).

Dealer inputs wait in a lane of their own (:class:`EventQueue`): a shoe event waits behind at most
:data:`MAX_INPUTS_AHEAD` of them, and at most :data:`MAX_DEALER_INPUTS` wait (docs/security.md,
"Floods and connections"). Inputs queued back to back are journaled in one commit, each handled
once its own record is written (docs/journal.md, "The writer").
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from shoe_ctl.events import (
    SHOE_NUMBERED,
    Alert,
    CardRead,
    Command,
    DealerAction,
    DealerInput,
    Event,
    ForeignCard,
    ShoeButton,
    ShoeFault,
    TimerFired,
)
from shoe_ctl.input_spec import ack_pinned, ack_targets
from shoe_ctl.lifecycle import Closeable
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.foreign import UNREAD_TIMER, UNREAD_WAIT_S
from shoe_ctl.service.codec import CodecError, Encodable
from shoe_ctl.service.journal.writer import Entry, stop_words
from shoe_ctl.users import TILT_ROLES, required_role, role_of_source, user_of_source, what_needs

log = logging.getLogger(__name__)

__all__ = ["Controller", "EventQueue", "JournalLike", "NullJournal", "Sink", "WriterJournal"]

MAX_DEALER_INPUTS = 128
"""Dealer inputs waiting at most; :meth:`Controller.post` refuses more."""
MAX_INPUTS_AHEAD = 8
"""A shoe event (any event but a dealer input) waits behind at most this many dealer inputs."""


class Sink(Protocol):
    """Anything that takes the machine's commands: ``handle`` must not block."""

    def handle(self, command: Command) -> None: ...

    def close(self) -> None: ...


class JournalLike(Protocol):
    """What the controller needs of any journal: ``append`` one event or command, durable when it
    returns (a test's list, :class:`NullJournal`)."""

    def append(self, item: Encodable) -> int: ...


@runtime_checkable
class WriterJournal(JournalLike, Protocol):
    """A journal with a writer thread (:class:`shoe_ctl.service.journal.Journal`): the controller
    queues records with :meth:`submit` and goes on, waits for a dealer input's record with
    :meth:`wait_written`, and hears when writes fail and succeed again (docs/journal.md, *The
    writer*). A journal with only ``append`` is written by the controller thread itself."""

    def append_many(self, items: Iterable[Encodable]) -> list[int]: ...

    def submit(self, items: Iterable[Encodable], *, on_durable: Callable[[list[int]], None] | None = None,
               linger: bool = False) -> Entry: ...

    def wait_written(self, entry: Entry, timeout: float | None) -> bool: ...

    def add_state_listener(self, fn: Callable[[BaseException | None], None]) -> None: ...


class LinkLike(Protocol):
    """What the controller needs of the shoe link: the cumulative ack."""

    def ack(self, seq: int) -> None: ...


class NullJournal:
    """A journal that keeps nothing (tests, ``--direct`` replays, a service run without one)."""

    def append(self, item: Encodable) -> int:
        return 0


_STOP = object()
_UNJOURNALED = object()  # a dealer input taken ahead whose journal submit failed


class _Unencodable:
    """The journal's codec refused an event (its arguments cannot be recorded): not a failing
    journal; a dealer input so refused is not acted on."""

    __slots__ = ("error",)

    def __init__(self, error: CodecError) -> None:
        self.error = error


class EventQueue:
    """The controller's queue: two lanes, one ``get``.

    ``put`` files a :class:`~shoe_ctl.events.DealerInput` (and the stop mark) in the dealer lane,
    anything else in the shoe lane, each with its posting number. ``get`` takes the older of the
    two lanes' first events, unless more than :data:`MAX_INPUTS_AHEAD` dealer inputs are ahead of
    the shoe lane's first event: then that one. Each lane keeps its order (shoe events are never
    reordered among themselves, nor are dealer inputs); only a dealer input in a backlog may be
    overtaken by a shoe event posted after it. Unbounded: :meth:`Controller.post` bounds the
    dealer inputs (:data:`MAX_DEALER_INPUTS`); shoe events are bounded by the shoe's own window.

    :meth:`take_inputs` hands the controller, at once, the dealer inputs ``get`` would return next
    while no shoe event waits (their journal records then share one commit); they count as
    ahead of a shoe event posted before the controller has handled them, so the bound above
    holds with them too.

    The lanes are two deques under one lock; a waiting ``get`` sleeps on a
    :class:`queue.SimpleQueue` that gets one token per event put (a C-level wake-up, cheaper than
    a ``Condition`` on every event). An event taken by :meth:`take_inputs` leaves its token
    behind: a later ``get`` that finds the lanes empty takes such a token and waits again.

    Every event put (by any producer: :meth:`Controller.post`, the shoe link putting straight
    here, an urgent call; not the stop mark) counts as unfinished until its consumer calls
    :meth:`task_done`; :meth:`wait_done` waits for none to be left, so an event put without going
    through the controller is waited for too and never makes an earlier one look handled.
    """

    def __init__(self) -> None:
        self.mutex = threading.Lock()
        self._bell: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._shoe: deque[tuple[int, Any]] = deque()
        self._dealer: deque[tuple[int, Any]] = deque()
        self._posted = 0
        self._held = 0  # dealer inputs taken by take_inputs and not yet handled
        self._waited = 0  # of those, the ones the shoe lane's first event waits behind
        self._unfinished = 0  # events put (not the stop mark) and not yet marked task_done
        self._done = threading.Condition(self.mutex)

    def qsize(self) -> int:
        """Events waiting in both lanes."""
        with self.mutex:
            return len(self._shoe) + len(self._dealer)

    def empty(self) -> bool:
        """No event waits."""
        return self.qsize() == 0

    def put(self, item: object) -> None:
        """File ``item`` in its lane (never blocks)."""
        with self.mutex:
            self._posted += 1
            if item is not _STOP:
                self._unfinished += 1
            if isinstance(item, DealerInput) or item is _STOP:
                self._dealer.append((self._posted, item))
            else:
                if not self._shoe:
                    self._waited = self._held
                self._shoe.append((self._posted, item))
        self._bell.put(None)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """The next event (see the class docstring for which one); waits for one when ``block``.

        :raises queue.Empty: none waits (``block`` false), or none came within ``timeout`` s.
        """
        while True:
            with self.mutex:
                if self._shoe or self._dealer:
                    return self._get()
            if not block:
                raise queue.Empty
            self._bell.get(timeout=timeout)  # a token per event put; raises queue.Empty on timeout

    def get_nowait(self) -> Any:
        """:meth:`get` without waiting.

        :raises queue.Empty: no event waits.
        """
        return self.get(block=False)

    def _shoe_first(self) -> bool:
        """True when the shoe lane's first event is the one to take next (lock held)."""
        if not self._dealer:
            return True
        if not self._shoe:
            return False
        first_shoe = self._shoe[0][0]
        if first_shoe < self._dealer[0][0]:
            return True
        ahead = self._waited
        for n, _ in self._dealer:
            if n > first_shoe or ahead > MAX_INPUTS_AHEAD:
                break
            ahead += 1
        return ahead > MAX_INPUTS_AHEAD

    def _get(self) -> Any:
        if self._shoe_first():
            self._waited = 0
            return self._shoe.popleft()[1]
        return self._dealer.popleft()[1]

    def take_inputs(self, limit: int) -> list[DealerInput]:
        """Take (without waiting) up to ``limit`` dealer inputs at the head of the dealer lane while
        the shoe lane is empty: exactly the events ``get`` would return next, in that order. The
        caller handles them before its next ``get`` and calls :meth:`handled_held` as it takes up
        each one."""
        with self.mutex:
            out: list[DealerInput] = []
            while len(out) < limit and self._dealer and not self._shoe \
                    and isinstance(self._dealer[0][1], DealerInput):
                out.append(self._dealer.popleft()[1])
            self._held += len(out)
            return out

    def handled_held(self) -> None:
        """The controller takes up one of the inputs :meth:`take_inputs` gave it."""
        with self.mutex:
            self._held = max(0, self._held - 1)

    def put_urgent(self, item: object) -> None:
        """Put ``item`` ahead of every event waiting, in either lane (the controller's urgent
        calls: a journal that cannot write is told to the dealer at once)."""
        with self.mutex:
            self._unfinished += 1
            self._shoe.appendleft((-1, item))
        self._bell.put(None)

    def task_done(self) -> None:
        """The consumer has finished with one event it took (``get``, :meth:`take_inputs`)."""
        with self.mutex:
            self._unfinished = max(self._unfinished - 1, 0)
            if self._unfinished == 0:
                self._done.notify_all()

    def wait_done(self, timeout: float | None = None) -> bool:
        """Wait until every event put has been marked :meth:`task_done`; False on timeout (s)."""
        with self.mutex:
            return self._done.wait_for(lambda: self._unfinished == 0, timeout)

    def dealer_waiting(self) -> int:
        """Dealer inputs (and the stop mark) waiting now."""
        with self.mutex:
            return len(self._dealer)


class _Call:
    """A function to run in the controller thread (not journaled, not given to the machine)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn


class Controller(Closeable):
    """One thread, one queue, the dealing machine and its sinks.

    :param machine: the dealing machine (owned by the controller thread once started).
    :param journal: where every event is appended before its ack (default: keeps nothing).
    :param link: the shoe link to ack (``None``: nothing to ack, e.g. a direct replay).

    Use as a context manager, or :meth:`start` / :meth:`close`. :meth:`post` is thread-safe.
    """

    INPUT_WAIT_S = 1.0
    """Longest the controller waits for the commit of a dealer input, timer or link change before
    the machine acts on it (only a failing or stuck journal makes it wait that long; a card never
    waits: its ack follows the commit). So the controller thread never blocks on the journal for
    longer than this (``docs/journal.md``, "The writer")."""

    def __init__(self, machine: Dealing, *, journal: JournalLike | None = None,
                 link: LinkLike | None = None) -> None:
        super().__init__()
        self.machine = machine
        self.journal: JournalLike = journal if journal is not None else NullJournal()
        self.writer: WriterJournal | None = self.journal if isinstance(self.journal, WriterJournal) else None
        """The journal when it has a writer thread (records queued), else None (appended here)."""
        self._submit = self.writer.submit if self.writer is not None else None
        self._hold: Callable[[], None] | None = getattr(self.writer, "hold", None)
        self._release: Callable[[], None] | None = getattr(self.writer, "release", None)
        """The journal's hold around each event (records that linger wake its writer once, as the
        event is done; docs/journal.md, *The writer*), where the journal has one."""
        if self.writer is not None:
            self.writer.add_state_listener(self._journal_state)
        self.link = link
        self.queue: EventQueue = EventQueue()
        self.inputs_refused = 0
        self._refusing = False
        self.sinks: list[Sink] = []
        self._batch_sinks: dict[int, Callable[[list[Command]], None]] = {}  # id(sink) -> its handle_all
        self._held: list[Command] = []  # this event's commands for the batch sinks, handed at its end
        self._stepping = False
        self.handled = 0
        self.errors = 0
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.hooks: list[Callable[[Any, list[Command]], None]] = []
        self._ahead: deque[tuple[Any, Any]] = deque()  # dealer inputs queued for the journal ahead
        self._ahead_entry: Any = None  # the journal entry of the input being handled, if queued ahead
        self._unread: tuple[int, float] | None = None  # (read, monotonic deadline) of the wait in _next
        self.tilted: tuple[str, str] | None = None
        """The tilt in force, ``(code, message)``, or None (:meth:`tilt`)."""
        self.tilt_recheck: Callable[[], str] | None = None
        """Checks the release again for a technician clearing the tilt: ``""`` when it verifies,
        else the problem (set by the table)."""
        self.roles_enforced = False
        """True with a users file (``[users] file``): an input only some roles may make
        (:func:`shoe_ctl.users.required_role`) needs a ``source`` naming such a user."""

    # ------------------------------------------------------------------ wiring

    def add_sink(self, sink: Sink) -> None:
        """Add a sink; it receives every command from now on, in order.

        A sink with ``handle_all(commands)`` (the dealer display) takes them instead once per
        event: all of that event's commands in one call, once the controller is done with the
        event (its record queued for the journal, its hooks run), just before it waits for the
        next. A sink whose own thread takes the commands so wakes that thread once per event,
        when the controller no longer needs the interpreter's lock, instead of in the middle of
        the hand-over to the LEDs and the journal (docs/architecture.md, "The path of one card")."""
        self.sinks.append(sink)
        take = getattr(sink, "handle_all", None)
        if take is not None:
            self._batch_sinks[id(sink)] = take

    def add_hook(self, hook: Callable[[Any, list[Command]], None]) -> None:
        """Add ``hook(event, commands)``, called in the controller thread after every event has
        been handled, delivered, journaled and acked (e.g. the journal's hand marks,
        :meth:`shoe_ctl.service.recovery.HandMarks.after_event`). A hook that raises is logged and
        counted in :attr:`errors`."""
        self.hooks.append(hook)

    def post(self, event: Event | _Call) -> bool:
        """Put one event on the queue (any thread). A :class:`DealerInput` is refused (False,
        nothing queued; one log line per flood) when :data:`MAX_DEALER_INPUTS` wait already;
        every other event is always queued (True)."""
        if isinstance(event, DealerInput) and not self._room_for_input():
            return False
        self.queue.put(event)
        return True

    def _room_for_input(self) -> bool:
        """True when a dealer input may be queued; counts and logs (once per flood) a refusal."""
        if self.queue.dealer_waiting() < MAX_DEALER_INPUTS:
            if self._refusing and self.queue.dealer_waiting() < MAX_DEALER_INPUTS // 2:
                self._refusing = False
            return True
        self.inputs_refused += 1
        if not self._refusing:
            self._refusing = True
            log.warning("%d dealer inputs waiting: refusing more until the controller catches up",
                        MAX_DEALER_INPUTS)
        return False

    def call_soon(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` in the controller thread after the events already queued (any thread).
        Nothing is journaled or given to the machine; an exception is logged. Used for the
        systemd watchdog ping: a controller thread that is stuck sends none."""
        self.post(_Call(fn))

    # ------------------------------------------------------------------ tilt

    def tilt(self, code: str, message: str) -> None:
        """Tilt the table (controller thread; from another thread use :meth:`call_soon`): a latched
        ``code`` alert with ``message`` (a STOP on the display and the LEDs, critical on the
        floor), journaled; from now on no hand starts (not even on the floor's override) and the
        alert cannot be acknowledged, until :meth:`clear_tilt` (docs/compliance.md, "Software identity and the tilt")."""
        self.tilted = (code, message)
        self.raise_alert(code, message, latched=True)

    def clear_tilt(self, by: str, why: str) -> bool:
        """End the tilt (controller thread): its alert goes, a ``tilt-cleared`` alert naming
        ``by`` (a user id) and ``why`` is journaled. False when no tilt is in force."""
        if self.tilted is None:
            return False
        code = self.tilted[0]
        self.tilted = None
        self.machine.alerts = [a for a in self.machine.alerts if a["code"] != code]
        self.raise_alert("tilt-cleared", f"tilt {code} cleared by {by}: {why}")
        return True

    def raise_alert(self, code: str, message: str, *, latched: bool = False) -> None:
        """Raise a service alert in the machine, journal it, give its commands to the sinks."""
        alert = getattr(self.machine, "service_alert", None)
        if alert is None:
            return
        cmds = alert(code, message, latched=latched)
        alerts = [cmd for cmd in cmds if isinstance(cmd, Alert)]
        if alerts:
            self._journal(None, alerts)
        self._deliver(cmds)

    def _tilt_refuses(self, ev: DealerInput) -> str | None:
        """Why the tilt in force refuses ``ev`` (None: it does not): a new hand, and an
        acknowledgement that would take the tilt's alert away."""
        if self.tilted is None:
            return None
        code = self.tilted[0]
        if ev.action is DealerAction.NEW_HAND:
            return "no hand starts on a tilted table"
        if ev.action is DealerAction.ACK_ALERT:
            if any(a.get("code") == code for a in ack_targets(getattr(self.machine, "alerts", ()), ev.args)):
                return f"the {code} alert is cleared only once the release verifies (a technician)"
        return None

    def _gate(self, ev: DealerInput) -> list[Command] | None:
        """The roles and the tilt before the machine sees a dealer input (docs/compliance.md):
        an input whose role (:func:`shoe_ctl.users.required_role`, from the machine's own alerts)
        the user its ``source`` names does not hold is refused with ``role-refused``; a
        technician's acknowledgement of the tilt clears it once :attr:`tilt_recheck` passes; the
        tilt refuses the rest (:meth:`_tilt_refuses`). Returns the commands of a refusal or a
        clear (the input journaled), or None to go on."""
        if self.roles_enforced:
            tilt = self.tilted[0] if self.tilted is not None else None
            roles = required_role(ev.action, ev.args, getattr(self.machine, "alerts", ()), tilt_code=tilt)
            if roles is not None:
                role, who = role_of_source(ev.source), user_of_source(ev.source)
                if role not in roles:
                    by = f"{who} ({role.value})" if who and role else "no named user"
                    return self._refuse(ev, "role-refused", f"{what_needs(ev.action, roles)}; {by} may not "
                                        "decide this (the floor decides what the dealer reports)")
                if roles is TILT_ROLES and self.tilted is not None:
                    return self._recheck_tilt(ev, who or "?")
        if self.tilted is not None:
            why = self._tilt_refuses(ev)
            if why is not None:
                return self._refuse(ev, "tilt-refused", f"'{ev.action.value}' refused: {why} ({self.tilted[1]})")
        return None

    def _recheck_tilt(self, ev: DealerInput, who: str) -> list[Command]:
        """A technician acknowledges the tilt: the release is checked again; cleared when it
        verifies, else refused with the problem found. Journaled marked ``tilt-recheck``: the
        machine never sees it, and no replay hands it to one."""
        entry = self._journal_other(replace(ev, gate="tilt-recheck"))
        self._wait_other(ev, entry)
        self.handled += 1
        problem = self.tilt_recheck() if self.tilt_recheck is not None else "the release cannot be checked again"
        if problem:
            self.raise_alert("tilt-refused", f"tilt not cleared by {who}: {problem}")
        else:
            self.clear_tilt(who, "the installed code matches the signed release again")
        return []

    def _refuse(self, ev: DealerInput, code: str, message: str) -> list[Command]:
        """Journal ``ev`` marked refused (``gate=code``: no replay hands it to the machine) and
        refuse it with a ``code`` alert; nothing else changes."""
        entry = self._journal_other(replace(ev, gate=code))
        self._wait_other(ev, entry)
        self.handled += 1
        self.raise_alert(code, message)
        return []

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Controller:
        """Start the controller thread; the initial instruction and display go to the sinks."""
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="shoe-ctl-controller", daemon=True)
        self._deliver(self.machine.start())
        self._thread.start()
        return self

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every event queued so far (posted here, put on :attr:`queue` by the shoe
        link, an urgent call) has been handled; False on timeout (s)."""
        return self.queue.wait_done(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread (after the events already queued), close the sinks. Idempotent."""
        if not self._begin_close():
            return
        if self._thread is not None:
            self.queue.put(_STOP)
            self._thread.join(timeout)
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:  # noqa: BLE001
                log.exception("closing sink %r", sink)

    def __enter__(self) -> Controller:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        while True:
            if self._ahead:
                ev, self._ahead_entry = self._ahead.popleft()
                self.queue.handled_held()
            else:
                ev = self._next()
                if ev is None:  # the shoe said nothing more on an unreadable card: its wait ends
                    try:
                        self.step(TimerFired(UNREAD_TIMER, self.machine.state, self.machine.entries))
                    except Exception:  # noqa: BLE001 - the thread owning the machine never dies
                        self.errors += 1
                        log.exception("handling the end of an unreadable card's wait failed")
                    continue
            if ev is _STOP:
                return
            try:
                if isinstance(ev, _Call):
                    try:
                        ev.fn()
                    except Exception:  # noqa: BLE001
                        log.exception("controller call %r failed", ev.fn)
                else:
                    try:
                        self.step(ev)
                    except Exception:  # noqa: BLE001 - the thread owning the machine never dies
                        self.errors += 1
                        log.exception("handling a %s failed", type(ev).__name__)  # no repr: it may hold a card
            finally:
                self.queue.task_done()

    def _next(self) -> Any:
        """The next event of the queue; ``None`` when, first, the wait for the shoe's next word on an
        unreadable card (the machine's ``link.unread``, :func:`shoe_ctl.machine.foreign.unreadable`)
        ends: at most :data:`~shoe_ctl.machine.foreign.UNREAD_WAIT_S` after the card, once per card."""
        link = getattr(self.machine, "link", None)  # a stand-in machine (tests, bench) may have none
        waiting = link.unread if link is not None else None
        if waiting is None:
            return self.queue.get()
        if self._unread is None or self._unread[0] != waiting:
            self._unread = (waiting, time.monotonic() + UNREAD_WAIT_S)
        try:
            return self.queue.get(timeout=max(0.0, self._unread[1] - time.monotonic()))
        except queue.Empty:
            self._unread = (waiting, math.inf)  # ended once: a failing step must not spin
            return None

    def step(self, ev: Event | _Call) -> list[Command]:
        """Journal, ack, handle and deliver one event (:meth:`_step`), then hand the batch sinks
        (:meth:`add_sink`) the event's commands in one call."""
        self._stepping = True
        hold, release = self._hold, self._release
        if hold is not None and release is not None:
            hold()
        try:
            return self._step(ev)
        finally:
            self._stepping = False
            try:
                if self._held:
                    self._hand_held()
            finally:
                if hold is not None and release is not None:
                    release()

    def _step(self, ev: Event | _Call) -> list[Command]:
        """Journal, ack, handle and deliver one event (the controller thread's body; also usable
        synchronously when no thread is started).

        A shoe event (card read, fault, button) is handed to the machine and its commands to the
        sinks first; then the event and its alerts are queued for the journal's writer, and the ack
        goes out from the writer once they are committed. The LED command does not wait for the
        fsync, and the durability boundary stays the ack: the writer commits in order and keeps a
        failed append at the head of its queue, so an ack never covers an event that is not on
        disk, and the shoe sends an unacked event again after a restart. A shoe event the machine
        fails on is journaled all the same. Any other event (a dealer input, a timer, a link
        change: nobody would send it again) is queued for the writer before the machine sees it;
        the machine works out its answer while the record's commit runs, and the answer goes to
        the sinks only once the commit is done (waited for up to :data:`INPUT_WAIT_S`)."""
        if isinstance(ev, SHOE_NUMBERED):
            try:
                cmds = self.machine.handle(ev)
            except BaseException:
                self._journal_shoe(ev, [])
                raise
            self.handled += 1
            self._deliver(cmds)
            alerts = [cmd for cmd in cmds if isinstance(cmd, Alert)]
            self._journal_shoe(ev, alerts)
        else:
            if isinstance(ev, DealerInput) and ev.action is DealerAction.ACK_ALERT and ev.args.get("id") is not None:
                # the journal names the alert as a replay numbers it too: by code and place
                ev = DealerInput(ev.action, ev.seat, ack_pinned(getattr(self.machine, "alerts", ()), ev.args),
                                 ev.source, ev.gate)
            if isinstance(ev, DealerInput) and (self.roles_enforced or self.tilted is not None):
                refused = self._gate(ev)
                if refused is not None:
                    return refused
            entry = self._journal_other(ev)
            if isinstance(entry, _Unencodable) and isinstance(ev, DealerInput):
                return self._refuse_unrecordable(ev, entry.error)
            try:
                cmds = self.machine.handle(ev)  # while the record's fsync runs
            finally:
                self._wait_other(ev, entry)  # nothing leaves before the record is on disk
            self.handled += 1
            alerts = [cmd for cmd in cmds if isinstance(cmd, Alert)]
            if alerts:
                self._journal(None, alerts)
            self._deliver(cmds)
            if isinstance(ev, DealerInput) and ev.action is DealerAction.ACK_ALERT and self._journal_failing:
                self._journal_stop_again()
        for hook in self.hooks:
            try:
                hook(ev, cmds)
            except Exception:  # noqa: BLE001 - e.g. the journal's hand mark on a full disk
                self.errors += 1
                log.exception("after-event hook failed on a %s", type(ev).__name__)
        return cmds

    def _journal_shoe(self, ev: CardRead | ShoeFault | ForeignCard | ShoeButton, alerts: list[Alert]) -> None:
        """Journal a shoe event and its alerts; ack it once it is durable."""
        if self._submit is not None:
            link = self.link
            seq = ev.seq

            def ack(_seqs: list[int]) -> None:
                if link is not None:
                    link.ack(seq)

            try:
                self._submit([ev, *alerts], on_durable=ack, linger=True)  # nobody waits: the ack follows
            except Exception as exc:  # noqa: BLE001 - a closed journal: not acked, the shoe keeps it
                self.errors += 1
                log.exception("journal submit failed; event not acked")
                self._journal_failed(exc)
            return
        if self._journal(ev, alerts) and self.link is not None:
            try:
                self.link.ack(ev.seq)
            except Exception:  # noqa: BLE001
                log.exception("ack %d failed", ev.seq)

    def _journal_other(self, ev: Any) -> Any:
        """Queue the record of an event nobody would send again, before the machine acts on it;
        returns the entry to wait for (:meth:`_wait_other`), or None when there is none to wait
        for (no writer: written already; a failed submit: logged and told).

        In the controller thread, a dealer input takes the dealer inputs queued right behind it
        (:meth:`EventQueue.take_inputs`, at most :data:`MAX_INPUTS_AHEAD`) and queues their
        records for the writer too, each as its own append in handling order: a burst of inputs
        (folds, then *betting complete*) shares one commit instead of one fsync each. Each of them
        is still answered (its commands handed to the sinks) only once its own record is written.
        Not while the roles are enforced or a tilt is in force: the gate decides each input at its
        turn, and its record says what the gate did (``DealerInput.gate``)."""
        if self._submit is None:
            self._journal(ev, [])
            return None
        entry, self._ahead_entry = self._ahead_entry, None
        if entry is _UNJOURNALED:
            return None  # queued ahead, and its submit failed (already logged and told)
        if isinstance(entry, _Unencodable):
            return entry  # queued ahead: its record could not be made
        if entry is None:
            entry = self._submit_other(ev)
            if entry is None or isinstance(entry, _Unencodable):
                return entry
            if (isinstance(ev, DealerInput) and threading.current_thread() is self._thread
                    and not self.roles_enforced and self.tilted is None):  # (a gated input's record says
                # what the gate did, known only at its turn)
                for more in self.queue.take_inputs(MAX_INPUTS_AHEAD):
                    self._ahead.append((more, self._submit_other(more) or _UNJOURNALED))
        return entry

    def _wait_other(self, ev: object, entry: Entry | _Unencodable | None) -> None:
        """Wait (bounded) until ``entry``, the record of ``ev``, is written."""
        if entry is None or isinstance(entry, _Unencodable) or self.writer is None:
            return
        if not self.writer.wait_written(entry, self.INPUT_WAIT_S):
            log.warning("a %s acted on before its journal record was written (journal failing)", type(ev).__name__)

    def _submit_other(self, ev: Any) -> Entry | _Unencodable | None:
        """Queue ``ev``'s record for the writer; its entry, or None when that failed (logged, the
        dealer told)."""
        assert self._submit is not None
        try:
            return self._submit([ev])
        except CodecError as exc:  # the event, not the journal: the journal still writes
            self.errors += 1
            log.error("a %s cannot be recorded (%s); not journaled", type(ev).__name__, exc)
            return _Unencodable(exc)
        except Exception as exc:  # noqa: BLE001
            self.errors += 1
            log.exception("journal submit failed")
            self._journal_failed(exc)
            return None

    def _refuse_unrecordable(self, ev: DealerInput, exc: CodecError) -> list[Command]:
        """A dealer input the journal's codec cannot record (arguments of a shape no input has):
        refused with ``input-invalid``, never acted on (an input acted on must be in the
        journal), and the journal is not reported failing."""
        self.handled += 1
        alert = getattr(self.machine, "service_alert", None)
        cmds: list[Command] = alert("input-invalid", f"'{ev.action}' refused: its arguments cannot be recorded "
                                    f"({exc})") if alert is not None else []
        alerts = [cmd for cmd in cmds if isinstance(cmd, Alert)]
        if alerts:
            self._journal(None, alerts)
        self._deliver(cmds)
        return cmds

    def _journal(self, ev: Event | None, alerts: list[Alert]) -> bool:
        """Append ``ev`` (unless None) and then ``alerts``; True when ``ev`` was journaled.
        With a journal that has ``submit``, the alerts are queued (kept in order)."""
        if self._submit is not None and ev is None:
            try:
                self._submit(alerts)
            except Exception:  # noqa: BLE001
                log.exception("journal submit of alerts failed")
            return True
        many = self.writer.append_many if self.writer is not None else None
        if ev is not None:
            try:
                if many is not None and alerts:
                    many([ev, *alerts])
                    self._journal_failing = False
                    return True
                self.journal.append(ev)
            except Exception as exc:  # noqa: BLE001 - unjournaled: do not ack, the shoe will resend
                self.errors += 1
                log.exception("journal append failed; event not acked")
                self._journal_failed(exc)
                return False
            self._journal_failing = False
        for alert in alerts:
            try:
                self.journal.append(alert)
            except Exception:  # noqa: BLE001
                log.exception("journal append of an alert failed")
        return True

    _journal_failing = False
    _journal_latest: BaseException | None = None
    _journal_last_exc: BaseException | None = None
    _journal_episodes = 0
    _journal_alerted = 0
    _journal_stop_exc: BaseException | None = None

    def _journal_state(self, exc: BaseException | None) -> None:
        """The journal's writer says it fails (``exc``) or writes again (None): from its thread.
        The state is noted here and acted on in the controller thread, at once (ahead of queued
        events) by :meth:`_journal_sync`, which reads the newest state: a failure, a recovery and
        a second failure in quick succession give two alerts and end failing, whatever order the
        urgent calls run in."""
        with self._lock:
            self._journal_latest = exc
            if exc is not None:
                self._journal_episodes += 1
                self._journal_last_exc = exc
        self._urgent(self._journal_sync)

    def _journal_sync(self) -> None:
        """In the controller thread: one alert per failure episode the writer reported, and the
        failing flag as the writer's newest state says."""
        with self._lock:
            latest, episodes, exc = self._journal_latest, self._journal_episodes, self._journal_last_exc
        if episodes > self._journal_alerted and exc is not None:
            self._journal_alerted = episodes
            self._journal_failing = False
            self._journal_failed(exc)
        self._journal_failing = latest is not None

    def _urgent(self, fn: Callable[[], Any]) -> None:
        self.queue.put_urgent(_Call(fn))  # ahead of the events waiting: the dealer is told at once

    def _journal_failed(self, exc: BaseException) -> None:
        """Tell the dealer once, until an append succeeds again, that the journal is failing: a
        latched alert (stop until acknowledged), since a power cut now would lose card reads."""
        if self._journal_failing:
            return
        self._journal_failing = True
        self._journal_stop(exc)

    def _journal_stop(self, exc: BaseException) -> None:
        self._journal_stop_exc = exc
        alert = getattr(self.machine, "service_alert", None)
        if alert is not None:
            self._deliver(alert("journal-write-failed", stop_words(exc), latched=True))

    def _journal_stop_again(self) -> None:
        """A STOP stops: an acknowledgement that cleared ``journal-write-failed`` while the journal
        still cannot be written raises it again at once (the deal would go on with nothing written
        until the shoe's buffer of unacked cards is full)."""
        exc = self._journal_stop_exc
        if exc is None or any(a.get("code") == "journal-write-failed" for a in getattr(self.machine, "alerts", ())):
            return
        self._journal_stop(exc)

    def _deliver(self, cmds: list[Command]) -> None:
        """Hand ``cmds`` to every sink, in order; the batch sinks' share waits for the end of the
        event being handled (:meth:`step`), or goes at once outside one."""
        batched = self._batch_sinks
        sinks = [k for k in self.sinks if id(k) not in batched] if batched else self.sinks
        for cmd in cmds:
            for sink in sinks:
                try:
                    sink.handle(cmd)
                except Exception:  # noqa: BLE001
                    self.errors += 1
                    log.exception("sink %r failed on %r", sink, cmd)
        if batched and cmds:
            self._held.extend(cmds)
            if not self._stepping:
                self._hand_held()

    def _hand_held(self) -> None:
        """Hand the commands held for the batch sinks to each, in one call."""
        held, self._held = self._held, []
        for sink in self.sinks:
            take = self._batch_sinks.get(id(sink))
            if take is None:
                continue
            try:
                take(held)
            except Exception:  # noqa: BLE001
                self.errors += 1
                log.exception("sink %r failed on %d commands", sink, len(held))
