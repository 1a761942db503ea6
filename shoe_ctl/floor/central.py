"""Many properties: each property's floor stream replicated to a central NATS JetStream, and the
central view of every room (``docs/floor.md``, "Many properties").

:class:`Replicator` runs beside a property's floor consumer: every event the floor applies (and
every one the floor drops as already applied: a replay it asked for) is offered to it; it sends
each table's events once and in order to the stream :data:`STREAM` with ``Nats-Msg-Id``
``<property>:<room>:<table>:<seq>`` (a resent event is a no-op within the stream's duplicate
window), resuming after a restart from the newest event the stream holds for the table, and asks
the table for a replay when it finds a hole. The floor's rows (state, open alerts) go to
:data:`VIEW_STREAM`, one message kept per table. :func:`central_view` reads both for
``shoe-ctl floor central``. What leaves the floor passes :func:`shoe_ctl.floor.topics.redact`
again: no card of a text, whatever a table's topic carried.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import nats
import nats.errors
import nats.js.errors
from nats.js.api import StorageType, StreamConfig

from shoe_ctl.floor.topics import check_name, dumps, redact

log = logging.getLogger(__name__)

__all__ = ["STREAM", "VIEW_STREAM", "Replicator", "central_view", "check_nats_url", "event_subject", "msg_id",
           "view_subject"]

STREAM = "FLOOR"
"""The central stream of every property's floor events (subjects ``floor.<property>.<room>.<table>``)."""

VIEW_STREAM = "FLOOR_VIEW"
"""The central stream of every table's floor row, one message kept per table
(subjects ``floorview.<property>.<room>.<table>``)."""

DUPLICATE_WINDOW_S = 120.0
"""How long the stream remembers a message id (seconds; JetStream's default)."""

KEEP_DAYS = 90
"""How long the central store keeps events and rows (days)."""

QUEUE_MAX = 100_000
"""Events waiting for the central store; beyond, an event is dropped here and asked again from
its table once the queue moves (the table's journal is the outbox)."""

ASK_EVERY_S = 2.0
"""A table with a hole in what the central store holds is asked for a replay at most this often."""

MAX_ASKS = 5
"""After this many replays asked in vain the hole is taken as the table's (its journal no longer
holds those records): logged and counted in :attr:`Replicator.holes`, and the stream goes on."""

_RESET = "\x00new-journal"
"""The queue's marker of a new journal file (no event has this key)."""

ROWS_EVERY_S = 2.0
"""The floor's rows are sent at most this often (only the rows that changed)."""


def _token(name: str) -> str:
    """A name (``NAME_RE``: letters, digits, ``_``, ``.``, ``-``) as one NATS subject token: its
    dots written ``%2E`` (a dot separates tokens; ``%`` is no name's)."""
    return name.replace(".", "%2E")


def _untoken(token: str) -> str:
    return token.replace("%2E", ".")


def check_nats_url(url: str) -> str:
    """``url`` when it is ``nats://host[:port]`` or ``tls://host[:port]``.

    :raises ValueError: naming the URL and the form expected.
    """
    parts = urlsplit(url)
    try:
        port_ok = parts.port is None or 0 < parts.port
    except ValueError:
        port_ok = False
    if parts.scheme not in ("nats", "tls") or not parts.hostname or not port_ok:
        raise ValueError(f"central store {url!r} is not nats://host:port or tls://host:port")
    return url


def event_subject(prop: str, room: str, table: str) -> str:
    """``floor.<property>.<room>.<table>``: one table's events in :data:`STREAM`.

    :raises ValueError: a name that is not a topic level (``NAME_RE``).
    """
    return "floor." + ".".join(_token(check_name(what, n)) for what, n in
                               (("property", prop), ("room", room), ("table", table)))


def view_subject(prop: str, room: str, table: str) -> str:
    """``floorview.<property>.<room>.<table>``: one table's row in :data:`VIEW_STREAM`."""
    return "floorview." + event_subject(prop, room, table).split(".", 1)[1]


def msg_id(prop: str, room: str, table: str, seq: int, journal: int = 0) -> str:
    """The ``Nats-Msg-Id`` of one event: ``<property>:<room>:<table>:<seq>``, and for the table's
    ``journal``-th replaced journal file ``<property>:<room>:<table>:<journal>.<seq>``."""
    return f"{prop}:{room}:{table}:{seq}" if journal == 0 else f"{prop}:{room}:{table}:{journal}.{seq}"


async def ensure_streams(js: Any, *, duplicate_window_s: float = DUPLICATE_WINDOW_S,
                         keep_days: float = KEEP_DAYS) -> None:
    """Create :data:`STREAM` and :data:`VIEW_STREAM` (file storage) or bring an existing one's
    limits to these."""
    age = keep_days * 86400.0
    for cfg in (StreamConfig(name=STREAM, subjects=["floor.>"], storage=StorageType.FILE, max_age=age,
                             duplicate_window=min(duplicate_window_s, age)),
                StreamConfig(name=VIEW_STREAM, subjects=["floorview.>"], storage=StorageType.FILE, max_age=age,
                             max_msgs_per_subject=1)):
        try:
            await js.stream_info(cfg.name)
        except nats.js.errors.NotFoundError:
            await js.add_stream(cfg)
        else:
            await js.update_stream(cfg)


class Replicator:
    """Sends one property's floor to the central JetStream (its own thread and asyncio loop).

    :param url: the central NATS server (``nats://host:4222``; ``tls://`` for TLS).
    :param prop: the property's name; ``room``: the room's.
    :param ask_replay: ``(table, seq)``: asks a table to publish again from ``seq``
        (:meth:`shoe_ctl.floor.consumer.FloorConsumer.ask_replay`), or ``None``.
    :param rows: returns the floor's rows (``FloorConsumer.snapshot()["tables"]``), or ``None``.
    :param known_last: ``(table)``: the newest sequence the floor knows the table's journal has
        (its birth's ``last``), or ``None``: a stream ahead of it holds an earlier journal file.
    :param duplicate_window_s, keep_days: the streams' limits (:func:`ensure_streams`).

    :meth:`offer` is the floor consumer's ``on_event`` and ``on_resent``: it never blocks.
    Counters: :attr:`published`, :attr:`duplicates` (the stream had the id), :attr:`skipped`
    (already stored before a restart), :attr:`dropped` (queue full), :attr:`asked` (replays asked),
    :attr:`holes`, :attr:`errors`.
    """

    def __init__(self, url: str, *, prop: str, room: str, ask_replay: Callable[[str, int], None] | None = None,
                 rows: Callable[[], list[dict[str, Any]]] | None = None,
                 known_last: Callable[[str], int | None] | None = None,
                 duplicate_window_s: float = DUPLICATE_WINDOW_S, keep_days: float = KEEP_DAYS,
                 queue_max: int = QUEUE_MAX) -> None:
        self.url = url
        self.prop, self.room = check_name("property", prop), check_name("room", room)
        self.ask_replay = ask_replay
        self.rows = rows
        self.known_last = known_last
        self.journals: dict[str, int] = {}
        """Each table's journal file number in the stream (0: the first; one more at each new file)."""
        self.duplicate_window_s, self.keep_days = duplicate_window_s, keep_days
        self.queue_max = queue_max
        self.positions: dict[str, int] = {}
        """The newest sequence of each table the central stream holds (learnt from the stream)."""
        self.resumed_from: dict[str, int] = {}
        """Each table's position as the stream gave it at this replicator's start (0: none held)."""
        self.asked = 0
        self.published = self.duplicates = self.skipped = self.dropped = self.holes = self.errors = 0
        self.ready = threading.Event()
        """Set once connected and the streams exist."""
        self._queue: collections.deque[tuple[str, dict[str, Any]]] = collections.deque()
        self._asks: dict[str, tuple[int, float]] = {}
        self._rows_sent: dict[str, bytes] = {}
        self._rows_at = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ any thread

    def new_journal(self, table: str) -> None:
        """``table``'s journal file was replaced (the floor consumer's ``on_reset``): what follows
        is stored as its next journal, from its first sequence. Never blocks."""
        self._queue.append((table, {_RESET: True}))  # in order with the events; not counted against the bound

    def offer(self, table: str, event: dict[str, Any], _received: float = 0.0) -> None:
        """Queue one event of ``table`` (a floor consumer's payload); never blocks."""
        if len(self._queue) >= self.queue_max:
            self.dropped += 1  # asked again from the table once the queue moves
            return
        self._queue.append((table, event))

    @property
    def backlog(self) -> int:
        """Events waiting for the central store."""
        return len(self._queue)

    def start(self) -> Replicator:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), name="floor-central", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 5.0) -> None:
        """Stop (what is queued stays in the tables' journals: the next start resumes). Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    # ------------------------------------------------------------------ the replicator's thread

    async def _main(self) -> None:
        while not self._stop.is_set():
            try:
                nc = await nats.connect(self.url, connect_timeout=3, max_reconnect_attempts=-1,
                                        reconnect_time_wait=1, allow_reconnect=True)
            except (TimeoutError, OSError, nats.errors.Error) as exc:
                log.warning("central store %s unreachable (%s); trying again", self.url, exc)
                await asyncio.sleep(2)
                continue
            try:
                js = nc.jetstream(timeout=5)
                await ensure_streams(js, duplicate_window_s=self.duplicate_window_s, keep_days=self.keep_days)
                self.ready.set()
                await self._pump(js)
            except (TimeoutError, OSError, nats.errors.Error) as exc:
                self.errors += 1
                log.warning("central store %s: %s; connecting again", self.url, exc)
                await asyncio.sleep(1)
            finally:
                self.ready.clear()
                try:
                    await nc.close()
                except (TimeoutError, OSError, nats.errors.Error):
                    pass

    async def _pump(self, js: Any) -> None:
        while not self._stop.is_set():
            if time.monotonic() - self._rows_at >= ROWS_EVERY_S:
                await self._send_rows(js)
            if not self._queue:
                await asyncio.sleep(0.02)
                continue
            table, event = self._queue[0]
            await self._ship(js, table, event)  # raises: the event stays at the head, sent again
            self._queue.popleft()

    async def _position(self, js: Any, table: str) -> tuple[int, int]:
        """The newest sequence the stream holds for ``table`` and its journal file number
        (``(0, 0)``: none)."""
        try:
            msg = await js.get_last_msg(STREAM, event_subject(self.prop, self.room, table))
        except nats.js.errors.NotFoundError:
            return 0, 0
        try:
            data = json.loads(msg.data or b"{}")
            seq, journal = data["seq"], data.get("journal", 0)
        except (ValueError, KeyError, TypeError):
            return 0, 0
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (seq, journal)):
            return 0, 0
        return seq, journal

    async def _learn(self, js: Any, table: str, check: bool) -> int:
        """``table``'s position, from the stream the first time; with ``check``, a floor that knows
        the table's journal ends before it means a newer journal file."""
        pos, journal = await self._position(js, table)
        last = self.known_last(table) if self.known_last is not None and check else None
        if isinstance(last, int) and last < pos:
            pos, journal = 0, journal + 1
        self.positions[table] = self.resumed_from[table] = pos
        self.journals[table] = journal
        return pos

    async def _ship(self, js: Any, table: str, event: dict[str, Any]) -> None:
        pos = self.positions.get(table)
        if pos is None:
            pos = await self._learn(js, table, check=not event.get(_RESET))
        if event.get(_RESET):
            self.positions[table] = 0
            self.journals[table] += 1
            self._asks.pop(table, None)
            return
        seq = event.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            return
        if seq <= pos:
            self.skipped += 1
            return
        if seq > pos + 1 and pos > 0:  # a hole: asked from the table, this event dropped meanwhile
            asks, at = self._asks.get(table, (0, 0.0))
            if self.ask_replay is not None and asks < MAX_ASKS:
                now = time.monotonic()
                if now - at >= ASK_EVERY_S:
                    self._asks[table] = (asks + 1, now)
                    self.asked += 1
                    self.ask_replay(table, pos + 1)
                return
            self.holes += 1
            log.warning("central store: table %s's records %d..%d never came (no longer in its journal?); "
                        "going on from %d", table, pos + 1, seq - 1, seq)
        self._asks.pop(table, None)
        journal = self.journals[table]
        body = {**redact(event), "journal": journal}
        subject = event_subject(self.prop, self.room, table)
        ack = await js.publish(subject, dumps(body, subject), stream=STREAM,
                               headers={"Nats-Msg-Id": msg_id(self.prop, self.room, table, seq, journal)})
        if ack.duplicate:
            self.duplicates += 1
        else:
            self.published += 1
        self.positions[table] = seq

    async def _send_rows(self, js: Any) -> None:
        self._rows_at = time.monotonic()
        if self.rows is None:
            return
        for row in self.rows():
            table = row.get("table")
            if not isinstance(table, str):
                continue
            kept = {k: v for k, v in row.items() if k not in ("seen_ago_s", "last_seen")}  # the events tell time
            subject = view_subject(self.prop, self.room, table)
            body = dumps(redact({**kept, "property": self.prop, "room": self.room}), subject)
            if self._rows_sent.get(table) == body:
                continue
            await js.publish(subject, body, stream=VIEW_STREAM)
            self._rows_sent[table] = body


async def _central_view(url: str, timeout: float) -> dict[str, Any]:
    nc = await nats.connect(url, connect_timeout=timeout, allow_reconnect=False, max_reconnect_attempts=0)
    try:
        js = nc.jetstream(timeout=timeout)
        try:
            counts = (await js.stream_info(STREAM, subjects_filter="floor.>")).state.subjects or {}
            rows_at = (await js.stream_info(VIEW_STREAM, subjects_filter="floorview.>")).state.subjects or {}
        except nats.js.errors.NotFoundError:
            return {"properties": {}}
        props: dict[str, dict[str, dict[str, Any]]] = {}
        for subject in sorted(set(counts) | {"floor." + s.split(".", 1)[1] for s in rows_at}):
            parts = subject.split(".")
            if len(parts) != 4:
                continue
            prop, room, table = (_untoken(p) for p in parts[1:])
            entry: dict[str, Any] = {"table": table, "stored": counts.get(subject, 0), "seq": None,
                                     "time_us": None, "online": None, "state": None, "hand": None, "alerts": []}
            if subject in counts:
                last = json.loads((await js.get_last_msg(STREAM, subject)).data or b"{}")
                entry.update(seq=last.get("seq"), time_us=last.get("time_us"))
            view = "floorview." + subject.split(".", 1)[1]
            if view in rows_at:
                row = json.loads((await js.get_last_msg(VIEW_STREAM, view)).data or b"{}")
                entry.update(online=row.get("online"), state=row.get("state"), hand=row.get("hand"),
                             alerts=[a for a in row.get("alerts") or [] if isinstance(a, dict)])
            props.setdefault(prop, {}).setdefault(room, {})[table] = entry
        return {"properties": props}
    finally:
        await nc.close()


def central_view(url: str, timeout: float = 5.0) -> dict[str, Any]:
    """Every property, room and table the central store holds: ``{"properties": {property: {room:
    {table: {"table", "stored" (events held), "seq", "time_us" (the newest event's), "online",
    "state", "hand", "alerts" (open, as on the floor page)}}}}}``.

    :raises OSError, nats.errors.Error: the server cannot be reached or answers wrongly.
    """
    return asyncio.run(_central_view(url, timeout))
