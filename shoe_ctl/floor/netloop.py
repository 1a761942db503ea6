"""The floor's MQTT network loop: paho-mqtt clients driven on a selector (epoll on Linux).

paho's own loop (``loop_start``) calls ``select()``, which cannot watch a descriptor numbered
1,024 or more: such a client reconnects forever and delivers nothing, without an error. A
:class:`NetLoop` drives any number of clients through paho's external-loop API instead
(``socket()``, ``loop_read``/``loop_write``/``loop_misc`` and the socket open, close and
register-write callbacks, as aiomqtt does on asyncio), on a :class:`selectors.DefaultSelector`,
which has no such limit. Connections (and reconnections, with a doubling delay) are made by a
second thread, each try in a short thread of its own (``connect`` blocks up to the client's
``connect_timeout``). Work of a client's owner may run in the loop's thread too
(:meth:`NetLoop.call_soon`, :meth:`NetLoop.call_at`): the table's publisher does all its work
there, so its publications are written in the turn that makes them. docs/floor.md, "The network
loop".
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import heapq
import itertools
import logging
import selectors
import socket
import ssl
import termios
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

log = logging.getLogger(__name__)

__all__ = ["NetLoop", "Timer", "shared_loop"]

MISC_EVERY_S = 1.0
"""How often each open client's ``loop_misc`` runs (keepalive PINGREQ, an unanswered ping)."""

SWEEP_EVERY_S = 1.0
"""How often the loop looks for a client with packets queued and no write interest, and writes
them: a safety net (a packet queued by another thread as paho unregistered the socket is caught
when it unregisters, :meth:`NetLoop._want_write`)."""


READS_PER_TURN = 64
"""The most packets read from one client in one turn of the loop (the others wait their turn)."""


def _held(sock: Any) -> bool:
    """TLS holds bytes of ``sock`` already decrypted (no system call; the selector does not see them)."""
    return isinstance(sock, ssl.SSLSocket) and sock.pending() > 0


def _readable(sock: Any) -> bool:
    """Bytes wait to be read on ``sock`` (received, or decrypted and held by TLS)."""
    if _held(sock):
        return True
    try:
        buf = array.array("i", [0])
        fcntl.ioctl(sock.fileno(), termios.FIONREAD, buf)
        return buf[0] > 0
    except (OSError, ValueError):
        return False


def _no_delay(sock: Any) -> None:
    """Send each packet at once (``TCP_NODELAY``): paho leaves Nagle's algorithm on, which holds a
    small PUBLISH or PUBACK until the peer acknowledges the one before, and a peer that answers
    nothing (QoS 0) acknowledges only after its delayed-ACK timer (40 ms on Linux)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Timer:
    """A call due at a monotonic time in a loop's thread (:meth:`NetLoop.call_at`)."""

    __slots__ = ("cancelled", "fn", "order", "when")

    def __init__(self, when: float, order: int, fn: Callable[[], None]) -> None:
        self.when, self.order, self.fn = when, order, fn
        self.cancelled = False

    def __lt__(self, other: Timer) -> bool:
        return (self.when, self.order) < (other.when, other.order)

    def cancel(self) -> None:
        """It will not run (its place in the loop is let go at the loop's next turn)."""
        self.cancelled = True


class _Conn:
    """What the loop keeps of one client."""

    __slots__ = ("before", "client", "delay", "drain", "events", "gone", "leaving", "max_delay", "min_delay",
                 "reconnect", "sock", "trying")

    def __init__(self, client: mqtt.Client, min_delay: float, max_delay: float, reconnect: bool,
                 drain: bool = True) -> None:
        self.client = client
        self.reconnect = reconnect
        self.drain = drain  # after a read, look for more packets already received (FIONREAD)
        self.before: Callable[[], None] | None = None
        self.min_delay, self.max_delay = min_delay, max_delay
        self.delay = min_delay
        self.sock: Any = None  # the socket registered on the selector, or None
        self.events = 0  # what it is registered for
        self.leaving = False  # disconnect or abort asked: never reconnected
        self.trying = False  # a connection is due now, being made or open (not failed, not closed)
        self.gone = threading.Event()  # out of the loop for good


class NetLoop:
    """One thread running the network of any number of paho clients, and one connecting them.

    :param name: the threads' names (``NAME`` and ``NAME-connect``).

    :meth:`add` a client after ``connect_async``; :meth:`disconnect` (clean, with DISCONNECT) or
    :meth:`abort` (as a crash: the TCP connection dropped, the broker sends the Will) take it out.
    The clients' callbacks run in the loop's thread: they must be quick.
    """

    def __init__(self, name: str = "floor-net") -> None:
        self.name = name
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._calls: deque[Callable[[], None]] = deque()
        self._flush: dict[int, _Conn] = {}  # clients with packets queued, written at the end of the turn
        self._woken = False
        self._conns: dict[int, _Conn] = {}  # id(client) -> its record
        self._lock = threading.Lock()  # _conns and the connector's heap
        self._due: list[tuple[float, int, _Conn]] = []
        self._timers: list[Timer] = []  # the loop thread's own
        self._order = itertools.count()
        self._connect_cond = threading.Condition(self._lock)
        self._stop = False
        self._started = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._connector = threading.Thread(target=self._connect_loop, name=f"{name}-connect", daemon=True)

    # ------------------------------------------------------------------ callers (any thread)

    def start(self) -> NetLoop:
        """Start both threads (idempotent)."""
        with self._lock:
            if self._started:
                return self
            self._started = True
        self._thread.start()
        self._connector.start()
        return self

    def add(self, client: mqtt.Client, *, min_delay: float = 1.0, max_delay: float = 5.0,
            connect: bool = True, reconnect: bool = True, before_connect: Callable[[], None] | None = None,
            drain: bool = True) -> None:
        """Drive ``client``. ``connect``: it had ``connect_async``: connect now, and after a
        failed try again after ``min_delay`` seconds, doubling up to ``max_delay``; else the
        caller connects it (``client.connect``, blocking) after this call. ``reconnect``: a lost
        connection is made again (after ``min_delay``, doubling); else the client leaves the loop.
        ``before_connect()`` runs before each try, outside paho's callbacks: the place to change the
        broker's address (``client.connect_async``; inside a callback it would deadlock paho,
        whose socket-close callback takes the lock its other callbacks hold). ``drain``: after each
        read, the packets already received are read in the same turn (one ``FIONREAD`` look each:
        for a client that receives many, as the floor consumer does); else the next turn of the
        selector reads them (a client that receives about one packet a turn, as a table's
        publisher does: a ``PUBACK``, saves the look)."""
        conn = _Conn(client, min_delay, max_delay, reconnect, drain)
        conn.before = before_connect
        client.on_socket_open = lambda _c, _u, sock: self._call(lambda: self._open(conn, sock))
        client.on_socket_close = lambda _c, _u, sock: self._closed(conn, sock)
        client.on_socket_register_write = lambda _c, _u, sock: self._call(lambda: self._want_write(conn, sock, True))
        client.on_socket_unregister_write = lambda _c, _u, sock: self._call(
            lambda: self._want_write(conn, sock, False))
        with self._lock:
            self._conns[id(client)] = conn
        self.start()
        if connect:
            conn.trying = True  # the first try is due now
            self._schedule(conn, 0.0)

    def disconnect(self, client: mqtt.Client, timeout: float = 2.0) -> None:
        """Send DISCONNECT (no Will), wait up to ``timeout`` seconds for it to leave, then drop
        the connection whatever happened; ``client`` is never reconnected."""
        conn = self._conns.get(id(client))
        if conn is None:
            return
        conn.leaving = True
        if conn.sock is None and client.socket() is None:
            self._drop(conn)
            return
        client.disconnect()
        if not conn.gone.wait(timeout):
            self.abort(client)

    def abort(self, client: mqtt.Client, timeout: float = 2.0) -> None:
        """Drop ``client``'s connection as a crash would (no DISCONNECT: the broker sends the
        Will); never reconnected."""
        conn = self._conns.get(id(client))
        if conn is None:
            return
        conn.leaving = True
        done = threading.Event()

        def kill() -> None:
            sock = conn.sock or client.socket()
            self._unregister(conn)
            if isinstance(sock, socket.socket):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._drop(conn)
            done.set()

        if threading.current_thread() is self._thread:
            kill()
        else:
            self._call(kill)
            done.wait(timeout)

    def stop(self) -> None:
        """Abort every client and end both threads."""
        for conn in list(self._conns.values()):
            self.abort(conn.client)
        with self._lock:
            self._stop = True
            self._connect_cond.notify_all()
        self._call(lambda: None)
        for t in (self._thread, self._connector):
            if t.is_alive() and t is not threading.current_thread():
                t.join(2)

    def trying(self, client: mqtt.Client) -> bool:
        """A connection of ``client`` is due now (the first), being made or open (not failed and
        not closed since)."""
        conn = self._conns.get(id(client))
        return conn is not None and conn.trying

    @property
    def thread_id(self) -> int | None:
        """The loop thread's ``threading.get_ident()`` (its CPU clock: ``time.pthread_getcpuclockid``),
        ``None`` before :meth:`start`."""
        return self._thread.ident

    @property
    def clients(self) -> int:
        """Clients driven now."""
        return len(self._conns)

    # ------------------------------------------------------------------ plumbing

    def _call(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the loop's thread: now when called there, else at its next turn."""
        if threading.current_thread() is self._thread:
            fn()
            return
        self._calls.append(fn)
        if not self._woken:
            self._woken = True
            with contextlib.suppress(BlockingIOError, OSError):
                self._wake_w.send(b"\0")

    def call_soon(self, fn: Callable[[], None]) -> None:
        """Run ``fn()`` in the loop's thread at its next turn (any thread; from the loop's own thread,
        in the turn under way, after the events it serves and before it writes). An exception it
        raises is logged."""
        self._calls.append(fn)
        if not self._woken and threading.current_thread() is not self._thread:
            self._woken = True
            with contextlib.suppress(BlockingIOError, OSError):
                self._wake_w.send(b"\0")

    def call_at(self, when: float, fn: Callable[[], None]) -> Timer:
        """Run ``fn()`` in the loop's thread at ``time.monotonic()`` ``when`` or just after (the loop's
        thread only: from a callback or a :meth:`call_soon` function). :returns: its :class:`Timer`."""
        timer = Timer(when, next(self._order), fn)
        heapq.heappush(self._timers, timer)
        return timer

    def in_loop(self) -> bool:
        """The caller runs in the loop's thread."""
        return threading.current_thread() is self._thread

    def _schedule(self, conn: _Conn, delay: float) -> None:
        with self._lock:
            if conn.leaving or self._stop:
                return
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), conn))
            self._connect_cond.notify()

    def _drop(self, conn: _Conn) -> None:
        with self._lock:
            self._conns.pop(id(conn.client), None)
        conn.gone.set()

    # ------------------------------------------------------------------ loop thread

    def _open(self, conn: _Conn, sock: Any) -> None:
        if conn.leaving or sock.fileno() < 0:
            return
        stale = self._sel.get_map().get(sock.fileno())
        if stale is not None:  # a socket closed behind the selector's back left its number
            self._sel.unregister(stale.fileobj)
        self._unregister(conn)
        _no_delay(sock)
        self._sel.register(sock, selectors.EVENT_READ, conn)
        conn.sock, conn.events = sock, selectors.EVENT_READ
        if conn.client.want_write():
            self._flush[id(conn)] = conn

    def _want_write(self, conn: _Conn, sock: Any, on: bool) -> None:
        """paho has packets to write (``on``; written at the end of this turn, the socket watched
        for writing only if they do not all fit), or has none left."""
        if conn.sock is not sock:
            return
        if on or conn.client.want_write():
            # off: paho clears its "registered" flag before telling; a publication another thread
            # queued after paho found nothing to write saw the flag still set and told nothing
            self._flush[id(conn)] = conn
        elif conn.events & selectors.EVENT_WRITE:
            self._watch(conn, selectors.EVENT_READ)

    def _watch(self, conn: _Conn, events: int) -> None:
        if conn.events != events and conn.sock is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.modify(conn.sock, events, conn)
                conn.events = events

    def _write_queued(self) -> None:
        """Write what each client queued this turn (a PUBACK per message read, a publication):
        one ``send`` each, no change of the selector's interest unless the socket is full."""
        while self._flush:
            flush, self._flush = self._flush, {}
            for conn in flush.values():
                client = conn.client
                if conn.sock is None or not client.want_write():
                    continue
                self._guard(client.loop_write)
                if conn.sock is not None and client.want_write():
                    self._watch(conn, selectors.EVENT_READ | selectors.EVENT_WRITE)
                    self._flush.pop(id(conn), None)  # the selector says when it can take more

    def _unregister(self, conn: _Conn) -> None:
        sock, conn.sock, conn.events = conn.sock, None, 0
        if sock is not None:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(sock)

    def _closed(self, conn: _Conn, sock: Any) -> None:
        """paho closes ``sock`` (any thread; the socket is closed right after this returns)."""
        was_up = conn.sock is sock or conn.client.is_connected()  # a connection made (not a try refused)
        conn.trying = False
        if threading.current_thread() is self._thread:
            if conn.sock is sock:
                self._unregister(conn)
        else:  # the selector forgets a closed socket itself; its number is cleared at the next _open
            self._call(lambda: self._unregister(conn) if conn.sock is sock else None)
        log.debug("floor network loop %s: a connection closed (was up: %s)", self.name, was_up)
        if conn.leaving or not conn.reconnect:
            self._drop(conn)
            return
        if was_up:
            conn.delay = conn.min_delay
        self._schedule(conn, conn.delay)
        conn.delay = min(conn.max_delay, conn.delay * 2)

    def _run(self) -> None:
        next_misc = time.monotonic() + MISC_EVERY_S
        next_sweep = time.monotonic() + SWEEP_EVERY_S
        timers = self._timers
        while True:
            while timers and timers[0].cancelled:
                heapq.heappop(timers)
            wake_at = min(next_misc, next_sweep, timers[0].when) if timers else min(next_misc, next_sweep)
            if self._calls:  # asked for by the turn's last steps (paho's keepalive, a write)
                wake_at = 0.0
            for key, mask in self._sel.select(max(0.0, wake_at - time.monotonic())):
                conn = key.data
                if conn is None:
                    with contextlib.suppress(BlockingIOError, OSError):
                        self._wake_r.recv(4096)
                    # after the read: a caller that found the flag set queued its call before this, and
                    # the turn runs it; cleared before the read, a caller's byte read here left it set
                    # with nothing to read, and no later caller woke the loop
                    self._woken = False
                    continue
                self._serve(conn, key.fileobj, mask)
            self._run_calls()
            now = time.monotonic()
            if timers and timers[0].when <= now:
                while timers and timers[0].when <= now:
                    timer = heapq.heappop(timers)
                    if not timer.cancelled:
                        self._calls.append(timer.fn)
                self._run_calls()
            self._write_queued()
            if self._stop:
                return
            if now >= next_sweep:
                next_sweep = now + SWEEP_EVERY_S
                for conn in list(self._conns.values()):
                    if conn.sock is not None and conn.client.want_write():
                        self._flush[id(conn)] = conn
                self._write_queued()
            if now >= next_misc:
                next_misc = now + MISC_EVERY_S
                for conn in list(self._conns.values()):
                    if conn.sock is not None:
                        self._guard(conn.client.loop_misc)
                self._write_queued()

    def _run_calls(self) -> None:
        calls = self._calls
        while calls:
            try:
                calls.popleft()()
            except Exception:  # noqa: BLE001 - one client's trouble never stops the others
                log.exception("floor network loop (%s)", self.name)

    def _serve(self, conn: _Conn, sock: Any, mask: int) -> None:
        client = conn.client
        if mask & selectors.EVENT_READ:
            self._guard(client.loop_read)
            # paho reads one packet a call: the others already received are read now, not after
            # another turn of the selector each (at most READS_PER_TURN; TLS: a record already
            # decrypted waits in the SSL object, not on the socket); without drain only such a
            # record is read now (the selector does not see it), what waits on the socket next turn
            for _ in range(READS_PER_TURN):
                if conn.sock is not sock or not (_readable(sock) if conn.drain else _held(sock)):
                    break
                self._guard(client.loop_read)
        if conn.sock is sock and mask & selectors.EVENT_WRITE:
            self._guard(client.loop_write)

    def _guard(self, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception:  # noqa: BLE001 - a callback's exception must not end the loop (the floor deaf)
            log.exception("floor network loop (%s): a client's callback failed", self.name)

    # ------------------------------------------------------------------ connector thread

    def _connect_loop(self) -> None:
        while True:
            with self._lock:
                while not self._stop and (not self._due or self._due[0][0] > time.monotonic()):
                    self._connect_cond.wait(None if not self._due else self._due[0][0] - time.monotonic())
                if self._stop:
                    return
                conn = heapq.heappop(self._due)[2]
            if conn.leaving or conn.sock is not None:
                continue
            # each try in a thread of its own: one broker address that never answers a SYN
            # (connect_timeout) holds up no other client; a client has one try at a time
            threading.Thread(target=self._try_connect, args=(conn,), name=f"{self.name}-connect-try",
                             daemon=True).start()

    def _try_connect(self, conn: _Conn) -> None:
        conn.trying = True
        try:
            if conn.before is not None:
                conn.before()
            conn.client.reconnect()
        except (OSError, ValueError) as exc:  # refused, unreachable, a TLS handshake refused
            conn.trying = False
            log.debug("floor network loop: connecting failed: %s", exc)
            failed = conn.client.on_connect_fail  # as paho's own loop tells it (the next broker, with two)
            if failed is not None:
                try:
                    failed(conn.client, conn.client.user_data_get())
                except Exception:  # noqa: BLE001
                    log.exception("floor network loop (%s): on_connect_fail", self.name)
            self._schedule(conn, conn.delay)
            conn.delay = min(conn.max_delay, conn.delay * 2)


_shared: NetLoop | None = None
_shared_lock = threading.Lock()


def shared_loop() -> NetLoop:
    """The process's network loop for table publishers (started on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = NetLoop("floor-pub-net").start()
        return _shared
