"""The floor's consumer: every table's topics folded into one view, each event once and in order.

:class:`FloorConsumer` subscribes to ``<room>/tables/+/{events,state,status}`` with a persistent
session (QoS 1: the broker keeps what arrives while the floor is away). Per table it applies
events strictly in journal order: a sequence already applied is a duplicate and dropped, one
beyond the next expected is held back, and a table whose known last sequence (from its events,
state or status) is ahead of what was applied, with no progress for :data:`GAP_GRACE_S` (a hole behind a
later event) or :data:`AHEAD_GRACE_S` (ahead only by its state or birth), is asked on its
``replay`` topic to publish again from the first missing sequence. A table's Last Will
(``online: false``) is believed only when its session is not older than the table's newest.

Floor staff acknowledge alerts (:meth:`FloorConsumer.acknowledge`): who and when are kept and
appended to the floor's own journal. ``docs/floor.md`` describes the whole.
"""

from __future__ import annotations

import json
import logging
import os
import re
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, TypeGuard

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from shoe_ctl.floor.card_health import MAX_TAGS_SHOWN, ORDER_CARDS, RETRIES_CODE
from shoe_ctl.floor.config import Credentials, parse_broker
from shoe_ctl.floor.failover import host_state, host_topic
from shoe_ctl.floor.netloop import NetLoop
from shoe_ctl.floor.severity import CRITICAL, SEVERITIES, WARNING, classify, needs_floor
from shoe_ctl.floor.sightings import REPEATED_ORDER_CODE, TWO_TABLES_CODE, OrderSightings, TagSightings
from shoe_ctl.floor.topics import Topics, check_name, dumps
from shoe_ctl.recall import MAX_ENTRIES, RECALL_HANDS
from shoe_ctl.service.gaming_day import GamingDay
from shoe_ctl.service.journal import Journal

log = logging.getLogger(__name__)

__all__ = ["FLOOR_LEAVES", "FloorConsumer", "TableView", "open_consumer", "open_floor_journal"]

FLOOR_LEAVES = frozenset({"replay", "verify", "clock"})
"""A table's topics the floor writes (its requests to the table: docs/floor.md, "Topics"): never a
table's word, so a message there makes no table and does not count as the table heard."""

GAP_GRACE_S = 0.5
"""A table with a hole (a later event held back) and no progress this long (seconds) is asked to
replay; asked again as often while no event comes."""

AHEAD_GRACE_S = 3.0
"""The same for a table known to be ahead only from its state or birth (no later event arrived:
its last events may be lost, or only slow)."""

KEEP_ACKED = 50
"""Acknowledged alerts kept per table for the page; older ones are forgotten (the floor journal
has them)."""

MAX_OPEN = 100
"""Open alert entries per table. A repeat of an open alert (same code, seat, severity, latch and
words but for the read it names) is merged into it with a ``count``; beyond this many entries an
alert joins the newest open one of its code, or the table's ``more-alerts`` entry. None is lost
from the count; one table's flood keeps its row, ``/state`` and each event's cost bounded."""

KEEP_NOTICES = 5
"""Routine alerts (``info``: shown, never queued for acknowledgement) kept per table for its tile."""

MAX_NOTES = 1000
"""Records of the floor's own alerts waiting for the floor journal (appended once a second)."""

SILENT_KEEPALIVES = 3
"""A table that announced a keepalive and says nothing for this many of them is ``table-silent``."""

_READ_PREFIX = re.compile(r"read \d+: ")

HOLD_MAX = 5000
"""Events held back per table waiting for a missing one; beyond, the newest are dropped (the
replay brings them again)."""


_TAG_RE = re.compile(r"[0-9a-f]{16}")


def _alert_key(alert: dict[str, Any]) -> tuple[Any, ...]:
    """What a repeat of an alert shares: code, seat, severity, latch and its words but for the
    read they start with (``read 12: ...``)."""
    message = alert.get("message") or ""
    return ("alert", alert["code"], alert["seat"], alert["severity"], alert["latched"],
            _READ_PREFIX.sub("", message, count=1) if message.startswith("read ") else message)


def _whole(value: object) -> TypeGuard[int]:
    """A sequence or session number: an int (not a bool) 0..2**63-1, as the journal keeps them."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63 else None


def _text(value: object, limit: int = 120) -> str | None:
    """A text the page shows: a short text as sent, a number as its digits, anything else ``None``."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return _text(repr(value) if isinstance(value, float) or abs(value) < 10**30 else "?", limit)
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "\u2026"
    return None


_STUB_KEYS = ("count", "required", "forecast")

_HEALTH_COUNTS = ("cards", "unreadable", "foreign", "misreads", "retries")
_CARD_RE = re.compile(r"[2-9TJQKA][cdhs]")


def _per_1000(part: int | None, whole: int | None) -> float | None:
    return round(part * 1000 / whole, 1) if part is not None and whole else None


def _floor_health(raw: object) -> dict[str, Any] | None:
    """A table's reader and card health as sent with a ``hand-end`` (``shoe_ctl.floor.card_health``),
    with its rates per 1,000 cards (per 1,000 reads for a tag); a field of another shape is left out,
    lists are cut to their bound."""
    if not isinstance(raw, dict):
        return None
    out: dict[str, Any] = {k: _int(raw.get(k)) for k in _HEALTH_COUNTS}
    out["since"] = _int(raw.get("since"))
    cards = out["cards"]
    out["per_1000"] = {k: _per_1000(out[k], cards) for k in ("unreadable", "foreign", "misreads", "retries")}
    readers = raw.get("readers")
    out["readers"] = ({str(k)[:16]: v for k, v in list(readers.items())[:8] if _int(v) is not None}
                      if isinstance(readers, dict) else {})
    tags: list[dict[str, Any]] = []
    sent = raw.get("tags")
    for t in sent if isinstance(sent, list) else []:
        if isinstance(t, dict) and _int(t.get("reads")) is not None and _int(t.get("retries")) is not None:
            tags.append({"deck": _text(t.get("deck"), 64), "tag": _text(t.get("tag"), 32), "reads": t["reads"],
                         "retries": t["retries"], "per_1000": _per_1000(t["retries"], t["reads"])})
        if len(tags) >= MAX_TAGS_SHOWN:
            break
    out["tags"] = tags
    return out


def _worn_cards(raw: object) -> list[dict[str, Any]]:
    """The cards a ``hand-end``'s health names for replacing (deck, card, reads, retries), checked."""
    replace = raw.get("replace") if isinstance(raw, dict) else None
    out = []
    for r in replace[:MAX_TAGS_SHOWN] if isinstance(replace, list) else []:
        if (isinstance(r, dict) and isinstance(r.get("card"), str) and _CARD_RE.fullmatch(r["card"])
                and isinstance(r.get("deck"), str) and _int(r.get("reads")) and _int(r.get("retries")) is not None):
            out.append({"deck": r["deck"][:64], "card": r["card"], "reads": r["reads"], "retries": r["retries"]})
    return out


def _floor_row_state(state: dict[str, Any]) -> dict[str, Any]:
    """The keys of a table's ``state`` payload the floor's row uses (:meth:`TableView.public`),
    each of the shape the page draws; a field of another shape is left out. The publisher sends
    more (``shoe_ctl.floor.topics.floor_state``); the row shows only these."""
    row: dict[str, Any] = {key: _text(state[key]) for key in ("state", "street", "game") if key in state}
    if "hand" in state:
        row["hand"] = _int(state["hand"])
    stub = state.get("stub")
    if isinstance(stub, dict):
        row["stub"] = {"count": _int(stub.get("count")), "required": _int(stub.get("required")),
                       "forecast": _text(stub.get("forecast"))}
    shoe = state.get("shoe")
    if isinstance(shoe, dict):
        row["shoe"] = {"status": _text(shoe.get("status")), "detail": _text(shoe.get("detail"), 1000)}
    return row


@dataclass
class TableView:
    """What the floor knows of one table."""

    table: str
    expected: int = 1
    session: int = 0
    born: int = 0
    """The session of the last birth (``status`` online) taken: a new journal is told by a birth
    of a later session, whatever events of that session came before it."""
    online: bool = False
    last_seen: float = 0.0
    known_last: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    state_seq: int = 0
    alerts: list[dict[str, Any]] = field(default_factory=list)
    shoe: dict[str, Any] = field(default_factory=dict)
    applied: int = 0
    duplicates: int = 0
    stale_wills: int = 0
    lost_said: int = -1
    """The session whose unclean end was alerted (a retained Will delivered again says nothing new)."""
    journal: int | None = None
    """The journal file the table's births name (its ``created_us``), once one named it."""
    journal_resets: int = 0
    replays_asked: int = 0
    held: dict[int, dict[str, Any]] = field(default_factory=dict)
    behind_since: float | None = None
    behind_at: int = 0
    asked_at: float = 0.0
    seqs: list[int] | None = None
    open_index: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)
    """The open alerts by what a repeat shares (:func:`_alert_key`)."""
    open_count: int = 0
    chain: dict[str, Any] = field(default_factory=dict)
    """The newest journal head the table sent (``{"seq", "tag"}``: its display tag), kept off the
    Pi for ``shoe-ctl journal verify --floor-head`` (docs/journal.md)."""
    clock_sent: float = 0.0
    recall: list[dict[str, Any]] = field(default_factory=list)
    """The table's last hands as it published them (``recall`` topic; downcards hidden)."""
    notices: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=KEEP_NOTICES))
    """The newest routine alerts (severity ``info``): shown, not queued for acknowledgement."""
    version: int = 0
    """The consumer's version at this table's last change (the page asks for what changed since)."""
    keepalive: int | None = None
    """The keepalive the table announced in its birth (it then says something at least that often)."""
    silent: dict[str, Any] | None = None
    """The open ``table-silent`` alert, while the table says nothing."""
    health: dict[str, Any] | None = None
    """The table's reader and card health sent with its newest ``hand-end`` (docs/floor.md,
    "Reader and card health")."""

    def public(self, now: float) -> dict[str, Any]:
        """The page's row: state, street, stub against the required number, alerts by severity
        (unacknowledged first), shoe health, last seen (seconds ago)."""
        st = self.state
        stub = st.get("stub") if isinstance(st.get("stub"), dict) else None
        open_alerts = [a for a in self.alerts if a.get("acked") is None]
        rank = {s: i for i, s in enumerate(SEVERITIES)}
        open_alerts.sort(key=lambda a: (rank.get(a.get("severity", "info"), 9), -int(a["id"])))
        return {
            "table": self.table, "online": self.online, "session": self.session,
            "last_seen": self.last_seen, "seen_ago_s": round(now - self.last_seen, 1) if self.last_seen else None,
            "state": st.get("state"), "street": st.get("street"), "hand": st.get("hand"),
            "game": st.get("game"),
            "stub": None if stub is None else {"count": stub.get("count"), "required": stub.get("required"),
                                               "forecast": stub.get("forecast")},
            "shoe": ((st.get("shoe") if isinstance(st.get("shoe"), dict) else self.shoe or None) if self.online
                     else {"status": "unknown", "detail": "the table is offline: its last word is not its shoe now"}),
            "alerts": open_alerts,
            "acknowledged": [a for a in self.alerts if a.get("acked") is not None][-10:],
            "notices": list(self.notices),
            "counts": {s: sum(1 for a in open_alerts if a.get("severity") == s) for s in SEVERITIES},
            "seq": self.expected - 1,
            "chain": dict(self.chain) or None,
            "health": self.health,
            "version": self.version,
        }


def _settle(view: TableView, code: str, note: str) -> None:
    """The shoe's fault ``code`` ended by itself (the shoe cleared it, or is back): its open
    ``critical`` alerts that the table did not latch become ``warning`` ones, still queued for a
    supervisor to sign for, merged into an open one they now repeat."""
    for alert in [a for a in view.alerts if a["code"] == code and a["acked"] is None
                  and a["severity"] == CRITICAL and not a["latched"]]:
        key = _alert_key(alert)
        if view.open_index.get(key) is alert:
            del view.open_index[key]
        alert["severity"] = WARNING
        alert["message"] = f"{alert['message'] or ''}; {note}"[:1000]
        key = _alert_key(alert)
        into = view.open_index.get(key)
        if into is None:
            view.open_index[key] = alert
            continue
        into["count"] += alert["count"]
        into["time_us"] = alert["time_us"]
        view.alerts.remove(alert)
        for k in [k for k, a in view.open_index.items() if a is alert]:
            view.open_index[k] = into
        view.open_count -= 1


class FloorConsumer:
    """Subscribes to one room and keeps a :class:`TableView` per table.

    :param host: broker host; :param port: broker port.
    :param room: the room to follow.
    :param credentials: the floor's broker user, or ``None``. Its name is no table: what arrives
        under ``tables/<that name>/`` (the ACL's patterns let every user write its own name's
        topics) is dropped.
    :param tls: TLS; ``ca_file`` the CA of the broker's certificate (``None``: the system's).
    :param client_id: the persistent session's id asked for (a broker configured as
        ``docs/floor.md`` says names the session after the user instead).
    :param journal: where acknowledgements are appended (``append_record``), or ``None``.
    :param keep_seqs: keep every applied sequence per table (tests, ``hil floor``).
    :param on_event: called ``(table, payload, received_at)`` for each event applied, in order
        (in the network loop's thread: must be quick).
    :param on_resent: called the same way for an event dropped as already applied (a replay, a
        second broker), e.g. for a replicator that is behind the floor.
    :param on_reset: called ``(table)`` when a table's birth tells a new journal file (its
        sequences start again), before any event of it is applied.
    :param host_id: the floor's host id (default: its broker user, else ``floor``): its online
        state is published retained on ``<room>/hosts/<host_id>`` at each connection, with a Last
        Will saying offline (tables with two brokers read it: docs/floor.md, "Two brokers").
    :param loop: the :class:`~shoe_ctl.floor.netloop.NetLoop` to run on (default: one of its own,
        thread ``floor-net-<room>``, stopped at :meth:`close`).
    :param gaming_day: the room's gaming day, for the tags seen at two tables in one
        (:class:`~shoe_ctl.floor.sightings.TagSightings`); default midnight UTC.
    """

    def __init__(self, *, host: str, port: int, room: str, credentials: Credentials | None = None,
                 tls: bool = False, ca_file: str | None = None, client_id: str | None = None,
                 journal: Journal | None = None, keep_seqs: bool = False, keepalive: int = 15,
                 on_event: Callable[[str, dict[str, Any], float], None] | None = None,
                 on_resent: Callable[[str, dict[str, Any], float], None] | None = None,
                 on_reset: Callable[[str], None] | None = None,
                 host_id: str | None = None, loop: NetLoop | None = None,
                 gaming_day: GamingDay | None = None) -> None:
        self.room = check_name("room", room)
        self.sightings = TagSightings(gaming_day)
        self.orders = OrderSightings(gaming_day)
        self.on_resent = on_resent
        self.on_reset = on_reset
        self.peers: list[FloorConsumer] = []
        """Consumers of the same floor on the other brokers (:meth:`follow`)."""
        self.host_topic = host_topic(room, host_id or (credentials.username if credentials is not None else "floor"))
        self._host_stamp = int(time.time() * 1000)
        self.host, self.port, self.keepalive = host, port, keepalive
        self.journal = journal
        self.keep_seqs = keep_seqs
        self.on_event = on_event
        self.tables: dict[str, TableView] = {}
        self.own_user = credentials.username if credentials is not None else None
        self._unreadable_counts: dict[str, int] = {}  # unreadable messages by table, for the log
        self.lock = threading.RLock()
        self.connected = threading.Event()
        self.version = 0
        self._lost_ids = 0  # the floor's own alerts (table-lost) count down from -1: never a table's seq
        self._notes: deque[tuple[str, dict[str, Any]]] = deque(maxlen=MAX_NOTES)
        self.notes_dropped = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or f"floor-{room}",
                                  clean_session=False, protocol=mqtt.MQTTv311)
        if credentials is not None:
            self.client.username_pw_set(credentials.username, credentials.password)
        if tls:
            self.client.tls_set(ca_certs=ca_file, cert_reqs=ssl.CERT_REQUIRED)
        self.client.max_inflight_messages_set(100)
        self._own_net = loop is None
        self.net = loop if loop is not None else NetLoop(f"floor-net-{self.room}")
        """The network loop driving the consumer's client (its own thread unless one was given)."""
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.will_set(self.host_topic, host_state(False, self._host_stamp), qos=1, retain=True)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FloorConsumer:
        """Connect in the background (retrying) and start the gap watcher; the same for every
        :attr:`peers` (their gap watchers have nothing to watch: their messages fold in here)."""
        for peer in self.peers:
            peer.start()
        self.client.connect_async(self.host, self.port, keepalive=self.keepalive)
        self.net.add(self.client, min_delay=1.0, max_delay=5.0)
        self._thread = threading.Thread(target=self._watch, name="floor-gaps", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Disconnect (the persistent session stays on the broker) and stop. Idempotent."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self.client.is_connected():  # the floor leaves this broker: tables move on (no Will after a clean stop)
            info = self.client.publish(self.host_topic, host_state(False, self._host_stamp), qos=1, retain=True)
            try:
                info.wait_for_publish(1.0)
            except (RuntimeError, ValueError):
                pass
        self.net.disconnect(self.client)
        if self._own_net:
            self.net.stop()
        if self._thread is not None:
            self._thread.join(2)
        for peer in self.peers:
            peer.close()

    def __enter__(self) -> FloorConsumer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ paho callbacks

    def _on_connect(self, client: mqtt.Client, _ud: object, _flags: mqtt.ConnectFlags, reason: ReasonCode,
                    _props: Properties | None) -> None:
        if getattr(reason, "is_failure", False):
            log.warning("floor broker refused the floor consumer: %s", reason)
            return
        base = f"{self.room}/tables/+/"
        client.subscribe([(base + leaf, 1) for leaf in ("events", "state", "status", "recall")])
        client.publish(self.host_topic, host_state(True, self._host_stamp), qos=1, retain=True)
        self.connected.set()

    def _on_disconnect(self, *_args: object) -> None:
        self.connected.clear()

    CLOCK_EVERY_S = 60.0
    """The floor's time goes to a table at each birth and at most this often (seconds)."""

    def _send_clock(self, view: TableView, force: bool = False) -> None:
        """Publish the floor's time to ``view``'s table (``clock`` topic): the table compares its
        own clock with it (docs/compliance.md, "The host's life")."""
        now = time.time()
        if not force and now - view.clock_sent < self.CLOCK_EVERY_S:
            return
        view.clock_sent = now
        self.publish(f"{self.room}/tables/{view.table}/clock", dumps({"time_us": int(now * 1e6)}))

    def publish(self, topic: str, payload: bytes) -> None:
        """Publish (QoS 1) on this broker and on every :attr:`peers`' broker: a replay request or
        the clock reaches a table on whichever broker it is."""
        for consumer in (self, *self.peers):
            if consumer.connected.is_set():
                consumer.client.publish(topic, payload, qos=1)

    def follow(self, other: FloorConsumer) -> None:
        """Fold ``other``'s messages (the same room on another broker) into this consumer's view:
        each event still once and in order, whichever broker brings it first. Call before
        ``other.start()``."""
        other.client.on_message = self._on_message
        self.peers.append(other)

    def receive(self, topic: str, payload: bytes) -> None:
        """Fold one message as if the broker had delivered it (a room simulated without a broker:
        ``hil/floor_room.py``, the page's screenshots and its benchmark)."""
        self._on_message(self.client, None, SimpleNamespace(topic=topic, payload=payload))  # type: ignore[arg-type]

    def _on_message(self, _client: mqtt.Client, _ud: object, msg: mqtt.MQTTMessage) -> None:
        parsed = Topics.parse(msg.topic)
        if parsed is None or parsed[0] != self.room:
            return
        _room, table, leaf = parsed
        if table == self.own_user or leaf in FLOOR_LEAVES:
            return
        try:
            payload = json.loads(msg.payload)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, an int of 5,000 digits, a nesting bomb
            self._unreadable(table, msg.topic)
            return
        if not isinstance(payload, dict):
            return
        now = time.time()
        try:
            with self.lock:
                view = self.tables.get(table)
                if view is None:
                    view = self.tables[table] = TableView(table, seqs=[] if self.keep_seqs else None)
                view.last_seen = now
                if view.silent is not None:
                    self._spoke(view, now)
                if leaf == "events":
                    self._event(view, payload, now)
                elif leaf == "state":
                    self._state(view, payload)
                    self._send_clock(view)
                elif leaf == "status":
                    self._status(view, payload)
                    self._send_clock(view, force=True)
                elif leaf == "recall":
                    view.recall = _bounded_recall(payload.get("hands"))
                self.version += 1
                view.version = self.version
        except Exception:  # noqa: BLE001 - an exception here would end paho's network thread: the floor deaf
            log.exception("floor: a message on %s could not be applied; dropped", msg.topic)

    def _unreadable(self, table: str, topic: str) -> None:
        """Log an unreadable message: a table's first, then one line per thousand (a flood of
        them is a few lines, not one each)."""
        with self.lock:
            n = self._unreadable_counts.get(table, 0) + 1
            if len(self._unreadable_counts) < 4096 or table in self._unreadable_counts:
                self._unreadable_counts[table] = n
        if n % 1000 == 1:
            log.warning("floor: unreadable message on %s (%d from table %s so far)", topic, n, table)

    # ------------------------------------------------------------------ folding (under the lock)

    def _alive(self, view: TableView, session: object) -> None:
        """An event or state of a newer session than known: the table is back (its birth may come
        later). One of the same session changes nothing: a retained state may arrive after the
        Will of the connection that sent it."""
        if _whole(session) and session > view.session:
            view.session = session
            view.online = True

    def _event(self, view: TableView, ev: dict[str, Any], now: float) -> None:
        seq = ev.get("seq")
        if not _whole(seq):
            return
        self._alive(view, ev.get("session"))
        view.known_last = max(view.known_last, seq)
        if seq < view.expected or seq in view.held:
            view.duplicates += 1
            if self.on_resent is not None and seq < view.expected:
                self.on_resent(view.table, ev, now)
            return
        if seq > view.expected:
            if len(view.held) < HOLD_MAX:
                view.held[seq] = ev
            return
        self._apply(view, ev, now)
        while view.expected in view.held:
            self._apply(view, view.held.pop(view.expected), now)

    def _apply(self, view: TableView, ev: dict[str, Any], now: float) -> None:
        seq = int(ev["seq"])
        view.expected = seq + 1
        view.applied += 1
        if view.seqs is not None:
            view.seqs.append(seq)
        kind = ev.get("kind")
        if kind == "Alert":
            code, latched = _text(ev.get("code")), ev.get("latched") is True
            severity = classify(code, latched, ev.get("severity"))  # the floor's table, not the sender's word
            alert = {"id": seq, "code": code, "message": _text(ev.get("message"), 1000), "severity": severity,
                     "seat": _int(ev.get("seat")), "street": _text(ev.get("street")), "latched": latched,
                     "hand": _int(ev.get("hand")), "time_us": _int(ev.get("time_us")), "acked": None, "count": 1}
            if needs_floor(severity):
                self._add_alert(view, alert)
            else:
                view.notices.append(alert)  # routine: shown on the tile, never queued
        elif kind == "ShoeFault":  # its alert is the table's own (the machine's code: a retry or not)
            fault = _text(ev.get("fault"))
            view.shoe = {"status": "fault" if not ev.get("cleared") else "connected", "detail": fault}
            if ev.get("cleared"):
                _settle(view, f"shoe-{fault}", "cleared by the shoe")
        elif kind == "LinkChanged":
            view.shoe = {"status": _text(ev.get("status")), "detail": _text(ev.get("detail"), 1000)}
            if view.shoe["status"] == "connected":
                _settle(view, "shoe-disconnected", "the shoe is back")
        elif kind == "hand-end" and "health" in ev:
            self._health(view, ev, seq)
        if self.on_event is not None:
            try:
                self.on_event(view.table, ev, now)
            except Exception:  # noqa: BLE001
                log.exception("floor on_event hook")

    def _health(self, view: TableView, ev: dict[str, Any], seq: int) -> None:
        """A ``hand-end``'s reader and card health: kept for the table's row; each card it names
        for replacing is a ``card-retries-floor`` alert (the hand is over: the card may be named)."""
        view.health = _floor_health(ev.get("health")) or view.health
        for worn in _worn_cards(ev.get("health")):
            rate = worn["retries"] * 1000 // worn["reads"]
            self._add_alert(view, {
                "id": seq, "code": RETRIES_CODE, "severity": classify(RETRIES_CODE, False), "seat": None,
                "street": None, "latched": False, "hand": _int(ev.get("hand")), "time_us": _int(ev.get("time_us")),
                "acked": None, "count": 1,
                "message": (f"replace the {worn['card']} of deck {worn['deck']}: {worn['retries']} of its "
                            f"{worn['reads']} reads needed a retry ({rate} per 1,000)")})
        health = ev["health"] if isinstance(ev.get("health"), dict) else {}
        seen, when, hand = health.get("seen"), _int(ev.get("time_us")), _int(ev.get("hand"))
        if when is None:
            return
        earlier = self.orders.seen(view.table, hand, when / 1e6, health.get("order"))
        if earlier is not None:
            where = "at this table" if earlier[0] == view.table else f"at table {earlier[0]}"
            self._add_alert(view, {
                "id": seq, "code": REPEATED_ORDER_CODE, "severity": classify(REPEATED_ORDER_CODE, False),
                "seat": None, "street": None, "latched": False, "hand": hand, "time_us": when, "acked": None,
                "count": 1,
                "message": (f"hand {hand} was dealt in the same order as hand {earlier[1]} {where} (its first "
                            f"{ORDER_CARDS} cards): the deck was not shuffled, or was stacked")})
        if not isinstance(seen, list):
            return
        for s in self.sightings.seen(view.table, when / 1e6, seen[:MAX_TAGS_SHOWN]):
            here = f"deck {s.deck}" if s.deck else "a card of no deck it knows"
            there = f"deck {s.other_deck}" if s.other_deck else "a card of no deck it knows"
            self._add_alert(view, {
                "id": seq, "code": TWO_TABLES_CODE, "severity": classify(TWO_TABLES_CODE, False), "seat": None,
                "street": None, "latched": False, "hand": _int(ev.get("hand")), "time_us": when, "acked": None,
                "count": 1,
                "message": (f"{s.tags} tag(s) at two tables on gaming day {s.day.isoformat()}: read here as {here}, "
                            f"at table {s.other} earlier as {there}")})

    def _add_alert(self, view: TableView, alert: dict[str, Any]) -> None:
        """Add an open alert: merged into an open repeat, or past :data:`MAX_OPEN` entries into the
        newest open one of its code or the table's ``more-alerts`` entry; each a dictionary look-up."""
        key = _alert_key(alert)
        into = view.open_index.get(key)
        if into is None and view.open_count >= MAX_OPEN:
            into = view.open_index.get(("code", alert["code"])) or view.open_index.get(("more",))
            if into is None:
                into = {"id": alert["id"], "code": "more-alerts", "severity": alert["severity"], "seat": None,
                        "street": None, "latched": alert["latched"], "hand": alert["hand"], "acked": None,
                        "count": 0, "message": ""}
                self._open(view, ("more",), into)
        if into is not None:
            into["count"] += 1
            into["time_us"] = alert["time_us"]
            if into["code"] == "more-alerts":
                rank = {s: i for i, s in enumerate(SEVERITIES)}
                if rank.get(alert["severity"], 9) < rank.get(into["severity"], 9):
                    into["severity"] = alert["severity"]
                into["latched"] = into["latched"] or alert["latched"]
                into["message"] = (f"{into['count']} more alerts from this table than the floor lists apart; "
                                   f"the newest: {alert['code']}: {alert['message'] or ''}")[:1000]
            else:
                into["message"] = alert["message"]
            return
        self._open(view, key, alert)

    @staticmethod
    def _open(view: TableView, key: tuple[Any, ...], alert: dict[str, Any]) -> None:
        view.alerts.append(alert)
        view.open_index[key] = alert
        view.open_index[("code", alert["code"])] = alert  # the newest open one of its code
        view.open_count += 1

    @staticmethod
    def _close(view: TableView, alert: dict[str, Any]) -> None:
        """``alert`` was acknowledged: out of the open index; the oldest acknowledged ones beyond
        :data:`KEEP_ACKED` forgotten (the floor journal has them)."""
        for k in [k for k, a in view.open_index.items() if a is alert]:
            del view.open_index[k]
        view.open_count -= 1
        acked = [a for a in view.alerts if a.get("acked") is not None]
        if len(acked) > KEEP_ACKED:
            drop = {id(a) for a in acked[: len(acked) - KEEP_ACKED]}
            view.alerts = [a for a in view.alerts if id(a) not in drop]

    def _state(self, view: TableView, msg: dict[str, Any]) -> None:
        self._alive(view, msg.get("session"))
        head = msg.get("chain")
        if isinstance(head, dict) and _whole(head.get("seq")) and isinstance(head.get("tag"), str) \
                and _TAG_RE.fullmatch(head["tag"]) and head["seq"] >= view.chain.get("seq", 0):
            view.chain = {"seq": head["seq"], "tag": head["tag"]}
        if isinstance(msg.get("state"), dict):
            view.state = _floor_row_state(msg["state"])
        if _whole(msg.get("seq")):
            view.state_seq = msg["seq"]
            view.known_last = max(view.known_last, msg["seq"])

    def _status(self, view: TableView, msg: dict[str, Any]) -> None:
        session = msg.get("session")
        if not _whole(session):
            return
        if msg.get("online"):
            first = msg["first"] if _whole(msg.get("first")) else None
            last = msg["last"] if _whole(msg.get("last")) else None
            journal = msg["journal"] if _whole(msg.get("journal")) else None
            # a birth naming its journal file is a new journal only if the file differs from the one
            # named before (a birth delivered after events that followed it is not one); a birth
            # naming none (an older table) is judged by its last sequence alone
            other_file = journal is None or (view.journal is not None and journal != view.journal)
            if journal is not None and (view.journal is None or session > view.born):
                view.journal = journal
            if (session > view.born and other_file and isinstance(last, int) and isinstance(first, int)
                    and last < view.expected - 1):
                # a new connection whose journal is behind what was applied: a new journal file
                # (a retained birth delivered again has the session already born and is not
                # this). Its events that came before this birth were taken for duplicates: the
                # replay asked for the hole brings them again.
                view.expected, view.known_last, view.held = first, last, {}
                view.journal_resets += 1
                if self.on_reset is not None:
                    self.on_reset(view.table)
            view.born = max(view.born, session)
            if session >= view.session:
                view.session, view.online = session, True
            if isinstance(first, int) and first > view.expected:
                view.expected = first  # older records are gone from the table's journal
                for seq in [s for s in view.held if s < first]:
                    del view.held[seq]
                while view.expected in view.held:
                    self._apply(view, view.held.pop(view.expected), time.time())
            if isinstance(last, int):
                view.known_last = max(view.known_last, last)
            keepalive = msg.get("keepalive")
            if _whole(keepalive) and 1 <= keepalive <= 3600:
                view.keepalive = keepalive
        elif session >= view.session:
            view.session = session
            view.online = False
            if msg.get("clean") is not True and view.lost_said != session:
                view.lost_said = session  # the Last Will: killed, crashed, hung or cut off
                self._lost_ids -= 1
                lost = {
                    "id": self._lost_ids, "code": "table-lost", "severity": "critical", "latched": True,
                    "message": f"table {view.table} went offline without a clean stop (killed, crashed, hung, "
                               "or its power or network gone): go to the table; its last state is shown",
                    "seat": None, "street": _text(view.state.get("street")), "hand": _int(view.state.get("hand")),
                    "time_us": int(time.time() * 1e6), "acked": None, "count": 1}
                self._add_alert(view, lost)  # counted among the open ones, as any other
                self._note("floor-alert", view, lost)
        else:
            view.stale_wills += 1  # a Will of an older connection, overtaken by the rebirth

    # ------------------------------------------------------------------ gaps

    def _watch(self) -> None:
        silent_at = 0.0
        while not self._stop.wait(0.1):
            if time.monotonic() - silent_at >= 1.0:  # a keepalive is seconds: once a second is enough
                silent_at = time.monotonic()
                self.check_silent(time.time())
                try:
                    self.flush_notes()
                except Exception:  # noqa: BLE001 - a journal that fails must not stop the gap watcher
                    log.exception("floor journal: a record of the floor's own alert could not be appended")
            for table, seq in self.check_gaps(time.monotonic()):
                self.ask_replay(table, seq)

    def ask_replay(self, table: str, seq: int) -> None:
        """Ask ``table`` to publish its journal again from ``seq`` (on every broker)."""
        self.publish(Topics(self.room, table).replay, dumps({"from": seq}))

    def check_gaps(self, now: float) -> list[tuple[str, int]]:
        """The replay requests due at monotonic time ``now``: ``(table, from_seq)`` for each table
        ahead of the floor with no progress for the grace time (:data:`GAP_GRACE_S` with a hole
        behind a later event, :data:`AHEAD_GRACE_S` when only its state or birth is ahead)."""
        asks: list[tuple[str, int]] = []
        with self.lock:
            for view in self.tables.values():
                if view.known_last < view.expected:
                    view.behind_since = None
                    continue
                if view.behind_since is None or view.expected != view.behind_at:
                    view.behind_since, view.behind_at = now, view.expected  # behind, or progress made
                    continue
                grace = GAP_GRACE_S if view.held else AHEAD_GRACE_S
                if now - view.behind_since >= grace and now - view.asked_at >= grace:
                    view.asked_at = now
                    view.replays_asked += 1
                    asks.append((view.table, view.expected))
        return asks

    def check_silent(self, now: float) -> list[str]:
        """Raise ``table-silent`` (critical) for each online table that announced a keepalive
        (:attr:`TableView.keepalive`: it then says something at least that often) and has said
        nothing for :data:`SILENT_KEEPALIVES` of them at time ``now`` (``time.time()``): its Last
        Will can be lost (a broker restarted meanwhile, a publisher hung while its network thread
        still answers the broker's pings). Cleared when the table speaks again. Returns the tables
        found silent now."""
        found: list[str] = []
        with self.lock:
            for view in self.tables.values():
                if view.silent is not None or not view.online or view.keepalive is None or not view.last_seen:
                    continue
                quiet = now - view.last_seen
                if quiet <= SILENT_KEEPALIVES * view.keepalive:
                    continue
                self._lost_ids -= 1
                alert = {"id": self._lost_ids, "code": "table-silent", "severity": "critical", "latched": False,
                         "message": f"table {view.table} has said nothing for {quiet:.0f} s ({SILENT_KEEPALIVES} "
                                    f"keepalives of {view.keepalive} s) and its Last Will did not come: go to the "
                                    "table; its last state is shown",
                         "seat": None, "street": _text(view.state.get("street")), "hand": _int(view.state.get("hand")),
                         "time_us": int(now * 1e6), "acked": None, "count": 1}
                self._add_alert(view, alert)
                self._note("floor-alert", view, alert)
                view.silent = alert
                self.version += 1
                view.version = self.version
                found.append(view.table)
        return found

    def _spoke(self, view: TableView, now: float) -> None:
        """A silent table said something: its ``table-silent`` alert is cleared (kept among the
        acknowledged ones, ``by`` None)."""
        alert, view.silent = view.silent, None
        if alert is not None and alert.get("acked") is None:
            alert["acked"] = {"by": None, "cleared": "the table spoke again", "at": now,
                              "at_text": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now)) + " UTC"}
            self._close(view, alert)
            self._note("floor-clear", view, alert)

    def _note(self, kind: str, view: TableView, alert: dict[str, Any]) -> None:
        """Queue a record of an alert the floor raised (``floor-alert``) or cleared itself
        (``floor-clear``) for the floor journal (under the lock; :meth:`flush_notes` appends them
        outside it). At most :data:`MAX_NOTES` wait; beyond, the oldest are dropped and counted."""
        if self.journal is None:
            return
        if len(self._notes) == self._notes.maxlen:
            self.notes_dropped += 1
        record = {"table": view.table, "alert": alert["id"], "code": alert["code"], "hand": alert.get("hand"),
                  "at_us": int(time.time() * 1e6)}
        if kind == "floor-alert":
            record.update(severity=alert["severity"], message=alert["message"])
        else:
            record["why"] = alert["acked"]["cleared"]
        self._notes.append((kind, record))

    def flush_notes(self) -> int:
        """Append the queued ``floor-alert`` / ``floor-clear`` records to the floor journal (the
        gap watcher's thread, once a second); returns how many."""
        journal, done = self.journal, 0
        while self._notes and journal is not None:
            kind, record = self._notes[0]
            journal.append_record(kind, record)  # raises: the record stays first in line
            self._notes.popleft()
            done += 1
        return done

    # ------------------------------------------------------------------ the page's side

    def snapshot(self) -> dict[str, Any]:
        """Every table's row (:meth:`TableView.public`), by name, and the room's open alerts by
        severity."""
        now = time.time()
        with self.lock:
            rows = [self.tables[name].public(now) for name in sorted(self.tables)]
            version = self.version
        totals = {s: sum(r["counts"][s] for r in rows) for s in SEVERITIES}
        return {"room": self.room, "version": version, "tables": rows, "alerts": totals,
                "connected": any(c.connected.is_set() for c in (self, *self.peers))}

    def acknowledge(self, table: str, alert_id: int, who: str, source: str | None = None) -> dict[str, Any] | None:
        """Floor staff ``who`` acknowledges alert ``alert_id`` of ``table``: kept with the time and
        appended to the floor journal (kind ``floor-ack``: table, alert, code, who, at, and
        ``source``: the input path, e.g. ``floor-page:<client address>``, when given).

        :returns: the alert, or ``None`` when no such open alert.
        :raises ValueError: ``who`` is empty.
        """
        done = self._acknowledge(table, lambda a: a["id"] == alert_id, who, source)
        return done[0] if done else None

    def acknowledge_all(self, table: str, who: str, source: str | None = None) -> list[dict[str, Any]]:
        """Floor staff ``who`` acknowledges every open alert of ``table`` at once (the page's
        *Acknowledge all*): each as :meth:`acknowledge` does, one ``floor-ack`` record per alert
        entry (with its ``count``).

        :returns: the alerts acknowledged (none when the table has no open alert).
        :raises ValueError: ``who`` is empty.
        """
        return self._acknowledge(table, lambda _a: True, who, source)

    def _acknowledge(self, table: str, which: Callable[[dict[str, Any]], bool], who: str,
                     source: str | None) -> list[dict[str, Any]]:
        who = who.strip()
        if not who:
            raise ValueError("an acknowledgement names who acknowledges")
        at = time.time()
        with self.lock:
            view = self.tables.get(table)
            alerts = [a for a in view.alerts if a["acked"] is None and which(a)] if view else []
            for alert in alerts:
                alert["acked"] = {"by": who[:80], "at": at,
                                  "at_text": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at)) + " UTC"}
                assert view is not None
                self._close(view, alert)
            if alerts:
                self.version += 1
                assert view is not None
                view.version = self.version
        if self.journal is not None:
            for alert in alerts:
                record = {"table": table, "alert": alert["id"], "code": alert.get("code"), "who": who[:80],
                          "at_us": int(at * 1e6), "count": alert.get("count", 1)}
                if source is not None:
                    record["source"] = source
                self.journal.append_record("floor-ack", record)
        return [dict(a) for a in alerts]

    def known_last(self, table: str) -> int | None:
        """The newest journal sequence ``table`` is known to have (its events, state and birth), or
        ``None`` for a table not seen."""
        with self.lock:
            view = self.tables.get(table)
            return view.known_last if view is not None else None

    def seqs(self, table: str) -> list[int]:
        """The sequences applied for ``table``, in order (``keep_seqs`` only)."""
        with self.lock:
            view = self.tables.get(table)
            return list(view.seqs or []) if view is not None else []


def open_consumer(urls: list[str], *, room: str, credentials: Credentials | None, ca_file: str | None = None,
                  keepalive: int = 15, **kwargs: Any) -> FloorConsumer:
    """The floor's consumer of the first broker of ``urls``, following the others
    (:meth:`FloorConsumer.follow`): one view of the room, whichever broker each table is on.
    ``kwargs`` (``journal``, ``keep_seqs``, ``on_event``, ...) go to the first, which keeps the view.

    :raises ValueError: a bad URL.
    """
    consumers: list[FloorConsumer] = []
    for url in urls:
        host, port, tls = parse_broker(url)
        consumers.append(FloorConsumer(host=host, port=port, room=room, credentials=credentials, tls=tls,
                                       ca_file=ca_file, keepalive=keepalive, **(kwargs if not consumers else {})))
    for other in consumers[1:]:
        consumers[0].follow(other)
    return consumers[0]


def open_floor_journal(path: str | os.PathLike[str], room: str) -> Journal:
    """The floor's journal (acknowledgements), a :class:`~shoe_ctl.service.journal.Journal` of
    table ``floor-<room>`` and profile ``floor``."""
    return Journal(path, table=f"floor-{room}", profile="floor", retention_days=0)


def _bounded_recall(hands: object) -> list[dict[str, Any]]:
    """A table's published recall, kept within bounds (10 hands of 600 entries, each a flat object):
    a forged or broken message cannot grow the floor's memory."""
    out: list[dict[str, Any]] = []
    if not isinstance(hands, list):
        return out
    for h in hands[-RECALL_HANDS:]:
        if not isinstance(h, dict) or not isinstance(h.get("entries"), list):
            continue
        entries = [{str(k): v for k, v in e.items() if isinstance(v, (str, int, bool)) or v is None}
                   for e in h["entries"][:MAX_ENTRIES] if isinstance(e, dict)]
        out.append({"hand": h.get("hand"), "started": str(h.get("started", ""))[:40],
                    "finished": bool(h.get("finished")), "entries": entries})
    return out
