"""The table's floor publisher: a controller sink that publishes the journal's committed records
and the public state on the floor's MQTT broker (paho-mqtt 2.x, QoS 1), the journal being its
outbox; its work runs in its network loop's thread (:mod:`shoe_ctl.floor.netloop`), so a record's
publication is written in the turn that makes it; dealing never waits for the broker. Topics,
sessions, the outbox file and the replay of a gap: docs/floor.md.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import socket
import ssl
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from shoe_ctl.events import Command, DisplayUpdate
from shoe_ctl.floor.card_health import CardHealth, HealthLimits, JournalDeckTags, record_body
from shoe_ctl.floor.config import Credentials, FloorConfig, load_credentials, parse_broker
from shoe_ctl.floor.failover import BrokerChoice, host_topic
from shoe_ctl.floor.netloop import NetLoop, Timer, shared_loop
from shoe_ctl.floor.replay_gate import Asked, ReplayGate
from shoe_ctl.floor.topics import (
    Topics,
    bare_payload,
    dumps,
    event_payload,
    floor_state,
    floor_tile,
    recall_hand,
)
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal.records import CommittedTail, Record
from shoe_ctl.utf8 import Reports

if TYPE_CHECKING:
    from shoe_ctl.release import SoftwareIdentity  # cryptography: loaded only where a seed is answered

log = logging.getLogger(__name__)
_REPORTS = Reports(log)
"""The warnings of a record published withheld (one a minute)."""

Report = Callable[[str, str], object]
"""``report(code, message)``: raise (and journal) an information alert at the table."""
Recall = Callable[[], list[dict[str, Any]]]
"""The last hands, full (the publisher shows their public part on the ``recall`` topic)."""

__all__ = ["FloorPublisher", "attach_floor"]

IDLE_POLL_S = 0.5
"""For a journal that tells no commits (read-only here: written by another process), and with
several brokers (the floor's state on each is timed), how often the publisher steps when nothing
asks it to: it reads the journal for new records then (seconds)."""

IDLE_WAIT_S = 2.0
"""Otherwise the longest the publisher goes without a step when nothing asks for one: a commit, a
new state, a message from the broker, a full window's acknowledgement and each timed step (the
heartbeat, the read-back's deadline, the outbox's save, a held-back state or recall) ask for it."""

STATE_HELD_MAX = 2.0
"""A tile held back by ``state_interval`` goes out with the first step after the interval's end, and
at the latest this many intervals after the tile before it: at a busy table the next commit's step
carries it, without a timed step of its own."""

TIMER_SLACK_S = 0.002
"""A timed step already set for within this many seconds of the time now wanted is kept."""

MAX_SKEW_S = 1.0
"""The most the table's clock may differ from the floor's before a ``clock-skew`` warning (s)."""

RECALL_EVERY_S = 2.0
"""The recall is published at most this often (seconds)."""

SAVE_EVERY_S = 5.0
"""The outbox file is rewritten at most this often (and at close): after a crash the records of
the last seconds are published again and the floor drops those it has."""

DISPLAY_EVERY_S = 2.0
"""The whole public state (``display`` topic) is sent at most this often while only the stub's
count, the upcards, the instruction or the machine's state within a street change; a new hand,
street or alert sends it at the next step."""

HEALTH_SEED_RECORDS = 20_000
"""At a start, the reader and card health counts are taken again from at most this many journal
records before the first one to publish (``docs/floor.md``, "Reader and card health")."""

HANDED_MAX = 1000
"""The most records the journal's writer handed over (after their commit) that the publisher keeps
for publication; past it the oldest are dropped and read from the journal when their turn comes."""

FIRST_CONNECT_WAIT_S = 1.0
"""At a stop before the first connection is made, the longest wait for a connection on its way
(a broker that refuses or cannot be reached is not waited for)."""


class FloorPublisher:
    """Publishes one table's journal and public state to the floor broker.

    :param journal: the table's :class:`~shoe_ctl.service.journal.Journal` (read only here).
    :param table: the table's name (also its broker user name under the ACL of ``docs/floor.md``).
    :param room: the room (first topic level).
    :param host: broker host; :param port: broker TCP port.
    :param credentials: broker user and password, or ``None``.
    :param tls: connect with TLS; ``ca_file``: the CA for the broker's certificate (``None``: the
        system's CAs).
    :param outbox: the outbox file (acknowledged sequence and session, JSON); ``None`` keeps them
        in memory only (a restart then publishes the whole journal again).
    :param window: most events published and not yet acknowledged.
    :param state_interval: least seconds between two state publications (the newest is kept); the
        ``state`` topic carries the tile's fields and is sent when they change.
    :param display: also publish the whole public state on the retained ``display`` topic, at
        most every :data:`DISPLAY_EVERY_S` but at once on a new hand, street or alert
        (``docs/floor.md``; the broker's ACL must let the table write it).
    :param readback_s: a state the broker acknowledged must come back on the table's own
        subscription within this many seconds, else :attr:`problem` says the broker drops the
        table's publications (Mosquitto acknowledges a publication its ACL denies and drops it).
    :param recall: returns the last hands (:func:`shoe_ctl.recall.recall_hands`), published with
        the downcards hidden on the retained ``recall`` topic.
    :param others: ``(host, port)`` of further brokers: the table moves to the next one when the
        floor is not online on its broker (``docs/floor.md``, "Two brokers"); ``primary_host``:
        the floor's host id whose online state it reads there (the floor's broker user).
    :param identity: the table's software identity (``public()`` in the birth message,
        ``answer(seed)`` for a seed on the ``verify`` topic); ``report(code, message)`` is told a
        refused seed (journaled by the table).
    :param health: the reader and card health counts published with each ``hand-end``
        (default: counted without a room key, so no tag is listed by index).

    Call :meth:`start`, then give it to ``Controller.add_sink``; :meth:`close` at shutdown.
    """

    def __init__(self, journal: Any, *, table: str, room: str, host: str, port: int,
                 credentials: Credentials | None = None, tls: bool = False, ca_file: str | None = None,
                 keepalive: int = 15, outbox: str | os.PathLike[str] | None = None, window: int = 200,
                 state_interval: float = 0.05, reconnect_max_s: int = 5, readback_s: float = 10.0,
                 identity: SoftwareIdentity | None = None, report: Report | None = None,
                 recall: Recall | None = None, others: Sequence[tuple[str, int]] = (),
                 primary_host: str = "floor", loop: NetLoop | None = None,
                 health: CardHealth | None = None, display: bool = False) -> None:
        self.journal = journal
        self.display = display
        self.health = health if health is not None else CardHealth()
        self._net = loop
        self.reconnect_max_s = reconnect_max_s
        self.choice = BrokerChoice([(host, port), *others]) if others else None
        """The broker in use and when to move (``None``: one broker)."""
        self.host_topic = host_topic(room, primary_host)
        self.identity = identity
        self.report = report
        self.recall = recall
        self._recall_due = recall is not None
        self._recall_at = 0.0
        self._recall_json: dict[tuple[Any, ...], bytes] = {}  # each hand's published JSON, by what can change in it
        self.verifications = 0
        self.topics = Topics(room, table)
        self.table = table
        self.host, self.port = host, port
        self.keepalive = keepalive
        self.window = max(1, window)
        self.state_interval = state_interval
        self.outbox = Path(outbox) if outbox is not None else None
        saved = self._load_outbox()
        self.acked: int = int(saved.get("acked", 0))
        """Every record up to this journal sequence was acknowledged by the broker."""
        self.session: int = int(saved.get("session", 0)) + 1
        self.connected = False
        self.published = 0
        self.republished = 0
        self.replay_requests = 0
        self.bad_replays = 0
        """``replay`` messages refused (not ``{"from": N}``), logged at the first and once per thousand."""
        self.replays = ReplayGate()
        """The replay under way and the requests waiting (folded or deferred ones logged at the first
        and once per thousand)."""
        self._next = self.acked + 1
        self._high = self.acked
        self._pending: set[int] = set()
        self._inflight: dict[int, int] = {}
        self._acks: collections.deque[int] = collections.deque()
        self._signals: collections.deque[tuple[str, Any]] = collections.deque()
        self._poked = False  # a step is asked for and has not begun (any thread sets it)
        self._due = float("inf")  # monotonic time of a step asked for by _run_at
        self._timer: Timer | None = None  # the next timed step, on the loop
        self._commits = 0  # commits the journal told of
        self._handed = CommittedTail(HANDED_MAX)  # committed records, handed over by the journal's writer
        self._read_upto = -1  # the value of _commits when the journal was last read to its end
        self._notified = False  # the journal tells its commits (else it is read every IDLE_POLL_S)
        self.journal_reads = 0
        """Reads of the journal (``Journal.records`` calls) so far."""
        self.records_handed = 0
        """Records taken for publication as the journal's writer handed them over (no read)."""
        self._stop = threading.Event()
        self._latest: dict[str, Any] | None = None
        self._state_sent: dict[str, Any] | None = None  # the DisplayUpdate state last taken
        self._state_at = 0.0
        self._tile_sent: dict[str, Any] | None = None  # the tile last published on ``state``
        self._tile_at = 0.0
        self._display_key: tuple[Any, ...] | None = None  # hand, street, state, alerts of the last display sent
        self._display_sent: dict[str, Any] | None = None  # the DisplayUpdate state last sent on ``display``
        self._display_at = 0.0
        self._readback_done = False  # this connection's state came back: no more read-backs on it
        self._saved = (self.acked, self.session - 1)
        self._saved_at = 0.0
        self._started = False
        self._killed = False
        self.readback_s = readback_s
        self.problem: str | None = None
        """Why the floor does not get this table's publications although the broker takes them
        (its ACL), or ``None``; shown on the dealer display and by ``doctor``."""
        self._state_token: int | None = None  # time_us of the oldest state awaiting its read-back
        self._state_pub_at = 0.0  # when it was published
        self._connected_at = 0.0
        self._lost_awaiting = 0  # connections lost while a read-back was awaited
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"table-{room}-{table}",
                                  clean_session=True, protocol=mqtt.MQTTv311)
        if credentials is not None:
            self.client.username_pw_set(credentials.username, credentials.password)
        if tls:
            self.client.tls_set(ca_certs=ca_file, cert_reqs=ssl.CERT_REQUIRED)
        self.client.max_inflight_messages_set(self.window)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self.client.on_connect_fail = self._on_connect_fail
        self._set_will()

    # ------------------------------------------------------------------ sink (controller thread)

    def handle(self, command: Command) -> None:
        """Take one command (:meth:`handle_all` of it alone)."""
        self.handle_all([command])

    def handle_all(self, commands: Sequence[Command]) -> None:
        """Take one event's commands (the controller hands them over at the event's end): keeps the
        newest public state and asks for a step for it, unless a commit of the journal is still to
        come (the event's record queued: that commit asks for the step, which then publishes the
        record and the state at once). Never blocks, never raises."""
        latest = None
        for command in commands:
            if isinstance(command, DisplayUpdate):
                latest = command.state
        if latest is None:
            return  # nothing here for the floor
        self._latest = latest  # before the look at the journal: a commit after it sees this state
        if not self._commit_coming():
            self._poke()

    def _commit_coming(self) -> bool:
        """The journal tells its commits, holds appends not yet written and is not failing: its
        writer calls :meth:`_committed` after this (any thread)."""
        journal = self.journal
        return self._notified and getattr(journal, "pending", 0) > 0 and getattr(journal, "failing", None) is None

    def close(self, timeout: float = 3.0) -> None:
        """Stop: publish what the broker can still take within ``timeout`` seconds, mark the table
        offline (a clean stop sends no Will), save the outbox and disconnect. Idempotent."""
        if self._stop.is_set():
            return
        deadline = time.monotonic() + timeout
        flush = getattr(self.journal, "flush", None)
        if flush is not None:
            # closed with the controller's sinks: the last shoe events may still wait in the
            # journal's writer for company (a lingering group); they are this session's to send
            flush(timeout)
        # stopped just after the start: the first connection, if on its way, carries the records
        first = min(deadline, time.monotonic() + FIRST_CONNECT_WAIT_S)
        while (not self.connected and self.published == 0 and self._net is not None and self._net.trying(self.client)
               and time.monotonic() < first):
            time.sleep(0.01)
        while self.connected and (self._inflight or self._next <= self._last_seq()) and time.monotonic() < deadline:
            self._poke()
            time.sleep(0.02)
        self._stop.set()
        last: list[mqtt.MQTTMessageInfo] = []
        said = self._in_loop(lambda: last.extend(self._last_words()), max(0.5, deadline - time.monotonic()))
        for info in last:
            try:
                info.wait_for_publish(1.0)
            except (RuntimeError, ValueError):
                pass
        self._save_outbox(force=True)
        if self._net is None:
            return
        if said:
            self._net.disconnect(self.client)
        else:  # no offline status made: a DISCONNECT (no Will) would leave the floor seeing the table online
            self._net.abort(self.client)  # the broker sends the Will: offline, not a clean stop

    def _last_words(self) -> list[mqtt.MQTTMessageInfo]:
        """At a clean stop (the loop's thread): the last state, if an interval held it back, and the
        offline status marked clean."""
        self._drain_acks()
        if self._timer is not None:
            self._timer.cancel()
        if not self.connected:
            return []
        self._state_at = self._display_at = float("-inf")
        self._publish_state()
        return [self.client.publish(self.topics.status, dumps(self._status(False, clean=True), self.topics.status), qos=1, retain=True)]

    def _in_loop(self, fn: Callable[[], None], timeout: float) -> bool:
        """Run ``fn`` in the loop's thread, where every step runs, and wait for it up to ``timeout``
        seconds; with no loop running, here. :returns: False when the loop did not run it in time
        (a busy loop: it will not run it later either)."""
        net = self._net
        if net is None or not self._started or net.in_loop():
            fn()
            return True
        done = threading.Event()
        late = threading.Event()

        def run() -> None:
            try:
                if not late.is_set():
                    fn()
            finally:
                done.set()

        net.call_soon(run)
        if done.wait(timeout):
            return True
        late.set()
        log.warning("floor publisher of table %s: its network loop did not answer within %.1f s at the stop; "
                    "its connection is dropped, so that the broker's Will says the table is offline",
                    self.table, timeout)
        return False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FloorPublisher:
        """Connect in the background on the network loop (the process's own unless one was given:
        :mod:`shoe_ctl.floor.netloop`), retrying while the broker is away; the publisher's steps
        run in the loop's thread from now on."""
        listen = getattr(self.journal, "add_commit_listener", None)
        self._notified = bool(listen(self._committed)) if listen is not None else False
        self.client.connect_async(self.host, self.port, keepalive=self.keepalive)
        if self._net is None:
            self._net = shared_loop()
        # drain off: the broker sends about one packet a turn (a PUBACK), read without a FIONREAD look
        self._net.add(self.client, min_delay=1.0, max_delay=float(self.reconnect_max_s), before_connect=self._to_broker,
                      drain=False)
        self._started = True
        self._poked = False  # a state or commit taken before the start is in the first step
        self._poke()
        return self

    def kill(self) -> None:
        """Die as a crash would (tests, ``hil floor``): no last words, no outbox saved, the TCP
        connection dropped without DISCONNECT (the broker sends the Will)."""
        self._killed = True
        self._stop.set()
        if self._net is not None:
            self._net.abort(self.client)

    # ------------------------------------------------------------------ paho callbacks (network thread)

    def _set_will(self) -> None:
        self.client.will_set(self.topics.status, dumps(self._status(False), self.topics.status), qos=1, retain=True)

    def _on_connect(self, client: mqtt.Client, _ud: object, _flags: mqtt.ConnectFlags, reason: ReasonCode,
                    _props: Properties | None) -> None:
        if getattr(reason, "is_failure", False):
            log.warning("floor broker refused table %s: %s", self.table, reason)
            return
        self._birth_due = True  # before `connected`: a step that sees the connection sends the birth first
        self._readback_done = False
        self.connected = True
        self._connected_at = time.monotonic()
        client.subscribe([(self.topics.replay, 1), (self.topics.state, 1)])
        if self.choice is not None:
            self.choice.connected(self._connected_at)
            client.subscribe(self.host_topic, qos=1)
        if self.identity is not None:
            client.subscribe(self.topics.verify, qos=1)
        if self.report is not None:
            client.subscribe(self.topics.clock, qos=1)
        self._signals.append(("connected", None))
        self._poke()

    def _on_disconnect(self, _client: mqtt.Client, _ud: object, _flags: mqtt.DisconnectFlags, reason: ReasonCode,
                       _props: Properties | None) -> None:
        was = self.connected
        self.connected = False
        if self._state_token is not None:
            self._lost_awaiting += 1  # Mosquitto closes the connection after a publication its ACL denies
        if was and not self._stop.is_set():
            self.session += 1  # the next connection is a new session; its Will says so
            self._set_will()
            log.warning("floor broker connection lost (%s); table %s reconnects", reason, self.table)
        self._next_broker(f"lost: {reason}")
        self._poke()

    def _on_connect_fail(self, _client: mqtt.Client, _ud: object) -> None:
        self._next_broker("connection failed")

    def _next_broker(self, why: str) -> None:
        """With several brokers: the next connection try goes to the next broker of the list
        (:meth:`_to_broker` gives paho the address before the try, outside its callbacks)."""
        if self.choice is None or self._stop.is_set():
            return
        self._goto = self.choice.lost(time.monotonic(), why)  # taken by the next try (_to_broker)

    _goto: tuple[str, int] | None = None

    def _to_broker(self) -> None:
        """Before each connection try (the network loop's connecting thread): the broker chosen
        since the last one, if another."""
        goto, self._goto = self._goto, None
        if goto is not None:
            self.client.connect_async(goto[0], goto[1], keepalive=self.keepalive)

    def _on_publish(self, _client: mqtt.Client, _ud: object, mid: int, _reason: ReasonCode, _props: Properties) -> None:
        self._acks.append(mid)
        if len(self._inflight) >= self.window:  # else folded in at the next step: no wake-up per message
            self._poke()

    def _state_back(self, payload: bytes | bytearray) -> None:
        """Our own state delivered back by the broker: it keeps what this table publishes."""
        try:
            data = json.loads(payload)
        except (ValueError, RecursionError):
            return
        token, back = self._state_token, data.get("time_us") if isinstance(data, dict) else None
        # this state or a newer one (a retained topic keeps only the newest)
        if token is not None and isinstance(back, int) and back >= token and data.get("table") == self.table:
            self._state_token = None
            self._lost_awaiting = 0
            # the broker keeps what this connection publishes: its later states need not come back
            self._readback_done = True
            self.client.unsubscribe(self.topics.state)
            if self.problem is not None:
                log.warning("floor: table %s's publications reach the broker again", self.table)
            self.problem = None

    def _check_readback(self) -> None:
        """A state published and never delivered back, within ``readback_s`` of being connected or
        over three connections in a row (Mosquitto closes one after a denied publication): the
        broker dropped it (an ACL that does not let this user write the table's topics)."""
        since = time.monotonic() - max(self._state_pub_at, self._connected_at)
        if self._state_token is not None and self.problem is None:
            self._run_at(time.monotonic() - since + self.readback_s + 0.01)
        if self._state_token is not None and self.problem is None and (
                self._lost_awaiting >= 3 or (self.connected and since > self.readback_s)):
            self.problem = (f"the floor broker acknowledges table {self.table}'s publications but drops them: "
                            "its ACL does not let this broker user write the table's topics (the user must be "
                            "the table's name, docs/floor.md) or hides the table's own state from it; the "
                            "floor may see nothing of this table")
            log.warning("floor: %s", self.problem)

    def _on_subscribe(self, _client: mqtt.Client, _ud: object, _mid: int, reasons: list[ReasonCode],
                      _props: Properties | None) -> None:
        codes = list(reasons) if isinstance(reasons, list | tuple) else [reasons]
        if len(codes) > 1 and getattr(codes[1], "is_failure", False):
            self.problem = (f"the floor broker refuses table {self.table} reading its own state: its ACL is not "
                            "the one docs/floor.md gives (the broker user must be the table's name)")
            log.warning("floor: %s", self.problem)

    def _on_message(self, _client: mqtt.Client, _ud: object, msg: mqtt.MQTTMessage) -> None:
        if msg.topic == self.host_topic:
            if self.choice is not None and self.choice.take_state(msg.payload):
                self._signals.append(("connected", None))  # the floor is (back) here: the birth again
            self._poke()
            return
        if msg.topic == self.topics.state:
            self._state_back(msg.payload)
            return
        if msg.topic == self.topics.clock:
            self._signals.append(("clock", (time.time(), bytes(msg.payload[:256]))))
            self._poke()
            return
        if msg.topic == self.topics.verify:
            if len(self._signals) < 64:  # a flood of seeds is answered up to this many at a time
                self._signals.append(("verify", bytes(msg.payload[:1024])))
                self._poke()
            return
        try:
            data = json.loads(msg.payload)
            seq = data["from"] if isinstance(data, dict) else None
        except (ValueError, RecursionError):  # an exception here would end paho's network thread
            seq = None
        if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < 2**63:
            self.bad_replays += 1
            if self.bad_replays % 1000 == 1:  # a flood of them is a few lines, not one each
                log.warning("floor: bad replay request on %s (expected {\"from\": a journal sequence}; %d so far)",
                            msg.topic, self.bad_replays)
            return
        self._signals.append(("replay", seq))
        self._poke()

    # ------------------------------------------------------------------ the publisher thread

    def _committed(self, records: Sequence[Record]) -> None:
        """The journal committed ``records`` (its writer thread): keep them, ask for a step."""
        self._handed.add(records)
        self._commits += 1
        self._poke()

    def _after(self, since: int) -> Iterable[Record]:
        """The records after journal sequence ``since`` to publish: those the writer handed over when
        they follow ``since`` without a gap (the usual case: nothing is read), none when nothing was
        handed over after ``since`` (a read overlapped a commit whose hand-over came after it: the
        next commit's hand-over asks for the next step), else the journal's."""
        taken = self._handed.after(since)
        if taken is not None:
            self.records_handed += len(taken)
            return taken
        # a start, a replay asked from further back, records dropped past HANDED_MAX, or none
        # handed over yet: the journal has them all (and those handed over after them)
        read: Iterable[Record] = self._records(since)
        return read

    def _records(self, since: int | None) -> Any:
        """The journal's records after ``since`` (every read of the journal goes through here)."""
        self.journal_reads += 1
        return self.journal.records(since)

    def _run_at(self, when: float) -> None:
        """Run the publisher's step again at monotonic time ``when`` (a state or recall held back
        by its interval) without a step before then (in a step)."""
        self._due = min(self._due, when)

    def _poke(self) -> None:
        """Ask for a step in the network loop's thread (any thread; never blocks): one step for
        however many asked before it begins."""
        if self._poked:
            return
        self._poked = True
        if self._started and self._net is not None:
            self._net.call_soon(self._turn)

    def _turn(self) -> None:
        """One step (the loop's thread), then the next timed one: asked for by :meth:`_run_at`, or
        :data:`IDLE_WAIT_S` (:data:`IDLE_POLL_S`) from now."""
        self._poked = False
        if self._stop.is_set():
            return
        self._due = float("inf")
        try:
            self._step()
        except Exception:  # noqa: BLE001 - the publisher never takes the table down
            log.exception("floor publisher of table %s", self.table)
        idle = IDLE_WAIT_S if self._notified and self.choice is None else IDLE_POLL_S
        when = min(self._due, time.monotonic() + idle)
        timer = self._timer
        if timer is not None:
            if not timer.cancelled and abs(timer.when - when) < TIMER_SLACK_S:
                return  # the timed step stands
            timer.cancel()  # this step did what it was for, or something new is due sooner
        if self._net is not None:
            self._timer = self._net.call_at(when, self._timed)

    def _timed(self) -> None:
        self._timer = None
        self._turn()

    def _check_outbox(self) -> None:
        """At the first step: an outbox ahead of the journal (no record at or after its acknowledged
        sequence: the journal file was replaced) restarts the publication from the journal's start."""
        self._outbox_checked = True
        if self.acked > 0 and next(iter(self._records(self.acked - 1)), None) is None:
            log.warning("floor outbox %s is ahead of the journal (a new journal?): publishing it from the start",
                        self.outbox)
            self.acked = self._high = 0
            self._next = 1
            self._pending.clear()
            self._read_upto = -1
        if self._next > 1:  # what was published before this start: counted again, not published
            self.health.seed(self._records(max(0, self._next - 1 - HEALTH_SEED_RECORDS)), self._next - 1)

    _outbox_checked = False
    _born_as: dict[str, Any] | None = None  # the software identity of the last birth message
    _birth_due = False  # connected and no birth sent on this connection yet

    def _step(self) -> int:
        if not self._outbox_checked:
            self._check_outbox()
        self._drain_acks()
        birth = self._birth_due
        while self._signals:
            kind, value = self._signals.popleft()
            if kind == "connected":
                birth = True
            elif kind == "clock":
                self._compare_clock(*value)
            elif kind == "verify" and self.connected and self.identity is not None:  # subscribed only then
                self._answer_seed(self.identity, value)
            elif kind == "replay" and isinstance(value, int):
                self._ask_replay(value)
        start = self.replays.take(next_seq=self._next, high=self._high, now=time.monotonic())
        if start is not None:
            birth = True  # tell the floor the journal's first record again
            self._next = start
            self._read_upto = -1
        sent = 0
        leave = self.choice.due(time.monotonic()) if self.choice is not None and self.connected else None
        if leave is not None:
            host, port = self.choice.current if self.choice is not None else ("", 0)
            log.warning("floor: table %s leaves broker %s:%d: %s", self.table, host, port, leave)
            self.client.disconnect()  # no Will; paho reconnects to the next broker (_on_disconnect)
            return 0
        if self.connected and self.identity is not None and self.identity.public() != self._born_as:
            birth = True  # the shoe's serial and firmware came with its hello: the birth says them
        if self.connected:
            if birth:
                self._birth_due = False
                self.client.publish(self.topics.status, dumps(self._status(True), self.topics.status), qos=1, retain=True)
                self._state_sent = self._tile_sent = self._display_sent = self._display_key = None
            sent = self._publish_events()
            self.replays.sent(self._next, time.monotonic())
            self._publish_state()
            self._check_readback()
            if birth and self.recall is not None:
                self._recall_due = True
            self._publish_recall()
        due = self.replays.due()
        if due is not None:
            self._run_at(due)
        self._save_outbox()
        return sent

    def _ask_replay(self, seq: int) -> None:
        """One ``{"from": seq}`` request: kept by :attr:`replays`, which folds it into what is on its
        way or defers it (a flood of those is a few log lines, as the bad requests are)."""
        self.replay_requests += 1
        asked = self.replays.ask(seq, next_seq=self._next, in_flight=seq in self._inflight.values(),
                                 now=time.monotonic())
        if asked is Asked.WANTED:
            return
        held = self.replays.folded + self.replays.deferred
        if held % 1000 == 1:
            log.log(logging.WARNING if held > 1 else logging.INFO,
                    "floor: replay request from %d on %s %s (%d folded into what is on its way, %d deferred "
                    "to the end of a replay and its cooldown, of %d requests)", seq, self.topics.replay,
                    asked.value, self.replays.folded, self.replays.deferred, self.replay_requests)

    _skewed = False

    def _compare_clock(self, received: float, raw: bytes) -> None:
        """The floor's time against this table's (docs/compliance.md, "The host's life"): more
        than :data:`MAX_SKEW_S` apart is a ``clock-skew`` warning, once per episode; back within,
        ``clock-agrees``. The message's transit counts against the table (a bound, not a measure)."""
        try:
            floor_us = json.loads(raw).get("time_us")
        except (ValueError, AttributeError, RecursionError):
            return
        if not isinstance(floor_us, int) or isinstance(floor_us, bool) or self.report is None:
            return
        skew = received - floor_us / 1e6
        if abs(skew) > MAX_SKEW_S and not self._skewed:
            self._skewed = True
            self.report("clock-skew", f"the table's clock differs from the floor's by {skew:+.1f} s (more than "
                        f"{MAX_SKEW_S:g} s): hands may start, and the record's times may be off until it is fixed")
        elif abs(skew) <= MAX_SKEW_S and self._skewed:
            self._skewed = False
            self.report("clock-agrees", f"the table's clock agrees with the floor's again ({skew:+.2f} s)")

    def _publish_recall(self) -> None:
        """The last hands on the retained ``recall`` topic, downcards hidden and every other card
        token not face up redacted (at most every :data:`RECALL_EVERY_S` s)."""
        now = time.monotonic()
        if not self._recall_due or self.recall is None:
            return
        if now - self._recall_at < RECALL_EVERY_S:
            self._run_at(self._recall_at + RECALL_EVERY_S)
            return

        self._recall_due = False
        self._recall_at = now
        self.client.publish(self.topics.recall, self._recall_payload(self.recall()), qos=1, retain=True)

    def _recall_payload(self, hands: list[dict[str, Any]]) -> bytes:
        """The ``recall`` message of ``hands`` (:func:`~shoe_ctl.floor.topics.recall_hand` each, as
        :func:`~shoe_ctl.floor.topics.dumps` writes them): a hand's JSON is made again only when it
        changed since the last recall (its entries are only ever added to: their count, its number,
        ``finished`` and ``more`` tell), so a recall redacts the hand in progress, not ten hands."""
        parts = []
        kept: dict[tuple[Any, ...], bytes] = {}
        for hand in hands:
            entries = hand.get("entries")
            key = (hand.get("hand"), hand.get("started"), hand.get("game"), hand.get("rules"),
                   str(hand.get("seats")), hand.get("finished"), hand.get("more"),
                   len(entries) if isinstance(entries, list) else None)
            data = self._recall_json.get(key)
            if data is None:
                data = dumps(recall_hand(hand), self.topics.recall)
            kept[key] = data
            parts.append(data)
        self._recall_json = kept
        head = dumps({"v": 1, "table": self.table, "time_us": int(time.time() * 1e6)}, self.topics.recall)
        return head[:-1] + b',"hands":[' + b",".join(parts) + b"]}"

    def _answer_seed(self, identity: SoftwareIdentity, raw: bytes) -> None:
        """Answer a seeded verification request ``{"seed": HEX}`` on ``verified`` (docs/compliance.md,
        "Verification on demand"); a bad request gets ``{"error"}`` there and is journaled."""
        # lazy: cryptography, loaded only when a seed is answered
        from shoe_ctl.release import ReleaseError

        seed: object = None
        try:
            data = json.loads(raw)
            seed = data.get("seed") if isinstance(data, dict) else None
            out: dict[str, Any] = identity.answer(seed)
            self.verifications += 1
        except (ValueError, RecursionError, ReleaseError) as exc:
            why = str(exc) if isinstance(exc, ReleaseError) else 'not JSON {"seed": HEX}'
            shown = seed[:16] + "..." if isinstance(seed, str) and len(seed) > 16 else seed
            out = {"error": why}
            if self.report is not None:
                self.report("verify-refused", f"seeded verification from the floor refused: {why} "
                            f"(seed {shown!r})")
        payload = {"v": 1, "table": self.table, "time_us": int(time.time() * 1e6), **out}
        self.client.publish(self.topics.verified, dumps(payload, self.topics.verified), qos=1)

    def _drain_acks(self) -> None:
        """Fold in the broker's acknowledgements. Runs in the thread that publishes, always after
        the ``mid`` of each publication was recorded, so an early PUBACK is never missed."""
        changed = False
        while self._acks:
            mid = self._acks.popleft()
            seq = self._inflight.pop(mid, None)  # None: a state, status or alerts message
            if seq is not None:
                self._pending.discard(seq)
                changed = True
        if changed or not self._pending:
            self.acked = max(self.acked, (min(self._pending) - 1) if self._pending else self._high)

    def _publish_events(self) -> int:
        room = self.window - len(self._inflight)
        if room <= 0:
            return 0
        commits = self._commits
        if self._notified and commits == self._read_upto:
            return 0  # no commit since the journal was last read to its end
        sent = 0
        full = False
        for rec in self._after(self._next - 1):
            payload, data = self._event_data(rec)
            info = self.client.publish(self.topics.events, data, qos=1)
            if info.rc == mqtt.MQTT_ERR_QUEUE_SIZE:
                full = True
                break
            self._inflight[info.mid] = rec.seq
            if rec.seq > self._high:
                self._high = rec.seq
                self._pending.add(rec.seq)
                self.published += 1
            else:
                self.republished += 1
            if rec.kind == "Alert":
                self.client.publish(self.topics.alerts, data, qos=1)
                if payload.get("latched"):
                    self._recall_due = True  # a STOP: the floor looks back
            elif rec.kind in ("hand-start", "hand-end"):
                self._recall_due = True
            self._next = rec.seq + 1
            sent += 1
            if sent >= room:
                full = True
                break
        # read to its end: nothing more to read until the next commit (a full window: read again)
        self._read_upto = -1 if full else commits
        self._drain_acks()
        return sent

    def _event_data(self, rec: Record) -> tuple[dict[str, Any], bytes]:
        """A record's payload (:func:`~shoe_ctl.floor.topics.event_payload`, the health counts
        with a ``hand-end``) and its JSON. A record whose body cannot be made into a payload (a
        journal row written by another program, with values nested hundreds deep: the redaction
        runs out of stack) is published with the keys every record has and ``"withheld": true``,
        with a warning (at most one a minute): the floor's order has no hole, and the records after
        it follow (before, the publisher tried it at every step and sent nothing more)."""
        try:
            body = record_body(rec)  # read once, for the payload and the counts
            payload = event_payload(rec, table=self.table, session=self.session, body=body)
            figures = self.health.feed(rec, body)
            if figures is not None:
                payload["health"] = figures
            return payload, dumps(payload, self.topics.events)
        except (TypeError, ValueError, RecursionError) as exc:
            _REPORTS(self.topics.events, f"floor: table {self.table}'s record {rec.seq} ({rec.kind}) has a body "
                                         f"that cannot be published ({type(exc).__name__}): published without it "
                                         "(withheld)")
            payload = {**bare_payload(rec, table=self.table, session=self.session), "withheld": True}
            return payload, dumps(payload, self.topics.events)

    def _publish_state(self) -> None:
        """The newest public state, if new: its tile on ``state`` when the tile changed (at most every
        ``state_interval``), the whole on ``display`` (:data:`DISPLAY_EVERY_S`); the tile again,
        unchanged, when nothing was sent on ``state`` for ``keepalive`` seconds (the heartbeat)."""
        raw = self._latest
        now = time.monotonic()
        if raw is None:
            return
        if raw is not self._state_sent:
            if now - self._state_at < self.state_interval:
                # published by the first step after the interval (a commit's, usually), at the latest
                # by a timed step STATE_HELD_MAX intervals after the last
                self._run_at(self._state_at + STATE_HELD_MAX * self.state_interval)
            else:
                self._state_sent, self._state_at = raw, now
                tile = floor_tile(raw)
                if tile != self._tile_sent:
                    self._send_tile(tile, now)
        if self._tile_sent is not None and now - self._tile_at >= self.keepalive:
            self._send_tile(self._tile_sent, now)  # the floor hears the table is alive
        if self._tile_sent is not None:
            self._run_at(self._tile_at + self.keepalive)
        self._publish_display(now)

    def _send_tile(self, tile: dict[str, Any], now: float) -> None:
        time_us = int(time.time() * 1e6)
        payload: dict[str, Any] = {"v": 1, "table": self.table, "session": self.session, "seq": self._high,
                                   "time_us": time_us, "state": tile}
        chain_public = getattr(self.journal, "chain_public", None)
        if chain_public is not None:  # the journal's head, as its display tag: the floor's copy
            head = chain_public()
            payload["chain"] = {"seq": head["seq"], "tag": head["head"]}
        if self._state_token is None and not self._readback_done:  # awaited from before the publication
            self._state_token, self._state_pub_at = time_us, now
        self.client.publish(self.topics.state, dumps(payload, self.topics.state), qos=0, retain=True)
        self._tile_sent, self._tile_at = tile, now

    def _publish_display(self, now: float) -> None:
        """The whole public state on ``display`` when a new one was taken: at once for a new hand,
        street or alert list, else at most every :data:`DISPLAY_EVERY_S`."""
        raw = self._state_sent
        if not self.display or raw is None or raw is self._display_sent:
            return
        alerts = raw.get("alerts")
        key = (raw.get("hand"), raw.get("street"),
               tuple((a.get("code"), a.get("seat")) for a in alerts if isinstance(a, dict))
               if isinstance(alerts, list) else None)
        if key == self._display_key and now - self._display_at < DISPLAY_EVERY_S:
            self._run_at(self._display_at + DISPLAY_EVERY_S)
            return
        payload = {"v": 1, "table": self.table, "session": self.session, "seq": self._high,
                   "time_us": int(time.time() * 1e6), "state": floor_state(raw)}
        self.client.publish(self.topics.display, dumps(payload, self.topics.display), qos=0, retain=True)
        self._display_sent, self._display_key, self._display_at = raw, key, now

    def _status(self, online: bool, *, clean: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"v": 1, "table": self.table, "online": online, "session": self.session}
        if online:
            if self.identity is not None:
                out["software"] = self._born_as = self.identity.public()
            first = next(iter(self._records(None)), None)
            created = getattr(self.journal, "created_us", None)
            journal_id = created() if created is not None else None
            if isinstance(journal_id, int):
                out["journal"] = journal_id  # names the journal file: the floor tells a new one by it
            out.update(first=first.seq if first is not None else 1, last=self._last_seq(),
                       time_us=int(time.time() * 1e6), keepalive=self.keepalive)
        if clean:
            out["clean"] = True
        return out

    def _last_seq(self) -> int:
        last = self._high
        try:
            for rec in self._records(self._high):
                last = rec.seq
        except Exception:  # noqa: BLE001 - a journal closed first at shutdown
            pass
        return last

    # ------------------------------------------------------------------ the outbox file

    def _load_outbox(self) -> dict[str, Any]:
        if self.outbox is None:
            return {}
        try:
            # O_NONBLOCK: a named pipe at the outbox's path must not hold the table's start
            with os.fdopen(os.open(self.outbox, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    raise ValueError("not a regular file")
                data = json.loads(fh.read(1 << 16).decode("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("floor outbox %s unreadable (%s): publishing the whole journal again", self.outbox, exc)
            return {}
        if not isinstance(data, dict) or data.get("table") not in (None, self.table):
            return {}
        numbers = {key: data.get(key, 0) for key in ("acked", "session")}
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 for v in numbers.values()):
            log.warning("floor outbox %s holds no journal sequence and session (%s): publishing the whole "
                        "journal again", self.outbox, str(numbers)[:120])
            return {}
        return data

    def _save_outbox(self, force: bool = False) -> None:
        if self.outbox is None or self._killed:
            return
        now = time.monotonic()
        state = (self.acked, self.session)
        if state == self._saved:
            return
        if not force and now - self._saved_at < SAVE_EVERY_S:
            self._run_at(self._saved_at + SAVE_EVERY_S)
            return
        tmp = self.outbox.with_name(self.outbox.name + ".tmp")
        try:
            tmp.write_text(json.dumps({"table": self.table, "acked": self.acked, "session": self.session}),
                           encoding="utf-8")
            os.replace(tmp, self.outbox)
        except OSError as exc:
            log.warning("floor outbox %s not written: %s", self.outbox, exc)
            return
        self._saved, self._saved_at = state, now


def attach_floor(controller: Controller, journal: Any, cfg: FloorConfig, *, table: str,
                 journal_path: str | os.PathLike[str] | None = None, identity: SoftwareIdentity | None = None,
                 report: Report | None = None, recall: Recall | None = None) -> FloorPublisher | None:
    """Wire the floor publisher into a table's service (the composition root calls this).

    :param controller: the :class:`~shoe_ctl.service.controller.Controller` (``add_sink``).
    :param journal: the table's journal (the outbox); required when the floor is enabled.
    :param cfg: ``[floor]``; nothing happens when ``cfg.enabled`` is false.
    :param table: the table's name.
    :param journal_path: the journal file, for the default outbox path ``<journal>.floor``.
    :param identity: the table's :class:`shoe_ctl.release.SoftwareIdentity` (birth message,
        seeded verification), or None; ``report(code, message)``: journals a refused seed;
        ``recall``: the last hands (the ``recall`` topic), or None.
    :returns: the started publisher (close it at shutdown), or ``None`` when the floor is off.
    :raises ValueError: the floor is enabled without a journal, an outbox that is the journal's
        own file (or its ``-wal``/``-shm``/``.lock``), or a bad name.
    :raises shoe_ctl.config.ConfigError: an unreadable or too open credentials file.
    """
    if not cfg.enabled:
        return None
    if journal is None:
        raise ValueError("[floor] is enabled but the table has no journal: the journal is the floor's outbox")
    host, port, tls = cfg.host_port_tls
    others = [parse_broker(url)[:2] for url in cfg.broker_urls[1:]]
    creds = load_credentials(cfg.credentials) if cfg.credentials else None
    outbox = cfg.outbox or (f"{os.fspath(journal_path)}.floor" if journal_path is not None else None)
    if outbox is not None and journal_path is not None:
        taken = {Path(f"{base}{end}").resolve() for end in ("", "-wal", "-shm", "-journal", ".lock")
                 for base in (os.fspath(journal_path), os.path.realpath(journal_path))}  # a symlink's too
        if Path(outbox).resolve() in taken:  # the outbox is rewritten by rename: it would replace the journal
            raise ValueError(f"[floor] outbox {outbox} is the journal's own file; leave outbox unset "
                             f"(default: {os.fspath(journal_path)}.floor) or name a file of its own")
    pub = FloorPublisher(journal, table=table, room=cfg.room, host=host, port=port, credentials=creds, tls=tls,
                         ca_file=cfg.ca_file, keepalive=cfg.keepalive, outbox=outbox, identity=identity,
                         report=report, recall=recall, others=others, primary_host=cfg.primary_host,
                         display=cfg.display,
                         health=CardHealth(creds.room_key if creds is not None else None,
                                           HealthLimits(cfg.tag_retries_per_1000, cfg.tag_retries_min_reads),
                                           JournalDeckTags(journal))).start()
    controller.add_sink(pub)
    return pub


class ProbeWarning(str):
    """A :func:`probe_broker` finding that may be innocent (``doctor`` warns rather than fails)."""


def probe_broker(cfg: FloorConfig, credentials: Credentials | None, timeout: float = 3.0,
                 table: str | None = None) -> str | None:
    """Connect to the floor's broker as the table's user and disconnect (``shoe-ctl doctor``):
    ``None`` when the broker accepted the user (and, with ``table``, lets it read back the
    table's own ``state`` topic, as the ACL of docs/floor.md does), else what went wrong
    (unreachable, no answer within ``timeout`` seconds, TLS refused, the user refused, the ACL).
    A broker configured as docs/floor.md says names a connection after its user, so a running
    table's connection is replaced for a moment: the table reconnects within seconds."""
    host, port, tls = cfg.host_port_tls
    answered = threading.Event()
    subscribed = threading.Event()
    reasons: list[Any] = []
    granted: list[Any] = []
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"doctor-{socket.gethostname()}-{os.getpid()}",
                         clean_session=True, protocol=mqtt.MQTTv311)
    client.connect_timeout = timeout
    if credentials is not None:
        client.username_pw_set(credentials.username, credentials.password)

    def on_connect(_c: mqtt.Client, _u: object, _f: mqtt.ConnectFlags, reason: ReasonCode,
                   _p: Properties | None) -> None:
        reasons.append(reason)
        answered.set()

    def on_subscribe(_c: mqtt.Client, _u: object, _m: int, codes: list[ReasonCode], _p: Properties | None) -> None:
        granted.extend(codes if isinstance(codes, list | tuple) else [codes])
        subscribed.set()

    kept = threading.Event()
    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = lambda _c, _u, _m: kept.set()
    net = NetLoop("floor-probe")
    net.add(client, connect=False, reconnect=False)
    try:
        if tls:
            client.tls_set(ca_certs=cfg.ca_file, cert_reqs=ssl.CERT_REQUIRED)
        client.connect(host, port, keepalive=max(5, int(timeout) + 1))
    except (OSError, ValueError) as exc:  # refused, no route, no such host, TLS (ssl.SSLError is an OSError)
        net.stop()
        return f"{cfg.broker} cannot be reached: {exc}"
    try:
        if not answered.wait(timeout):
            return f"{cfg.broker} took the connection but did not answer within {timeout:g} s"
        reason = reasons[0]
        if getattr(reason, "is_failure", False):
            who = credentials.username if credentials is not None else "an anonymous client"
            return f"{cfg.broker} refused {who}: {reason}"
        if table is not None:
            topic = Topics(cfg.room, table).state
            client.subscribe(topic, qos=1)
            if not subscribed.wait(timeout):
                return f"{cfg.broker} did not answer a subscription to {topic} within {timeout:g} s"
            if not granted or getattr(granted[0], "is_failure", False):
                return (f"{cfg.broker}'s ACL does not let this user read {topic}: it is not the ACL docs/floor.md "
                        "gives, and the broker acknowledges and drops whatever the ACL denies")
            if not kept.wait(timeout):
                return ProbeWarning(
                    f"{cfg.broker} keeps no state of table {table} for it to read back ({topic}): either the table "
                    "has not published yet, or the broker's ACL drops its publications or hides its state from it "
                    "(Mosquitto acknowledges a denied publication and drops it; docs/floor.md gives the ACL)")
        return None
    finally:
        net.disconnect(client)
        net.stop()
