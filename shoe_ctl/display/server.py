"""The dealer display server: aiohttp on its own thread and event loop, serving the page (and its
service worker, ``/sw.js``), the public state (``/state``, ``/events``), the inputs' specifications (``/inputs``) and the dealer's
inputs (``/input``, ``/ack``), behind the limits of :mod:`shoe_ctl.web_guard`. Routes, answers and
limits: docs/display.md, *HTTP API*.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from shoe_ctl.display.address import DisplayError, parse_display  # noqa: F401 - parse_display: its old home
from shoe_ctl.display.model import DisplayModel
from shoe_ctl.events import Command, DealerAction, DealerInput
from shoe_ctl.input_spec import SPECS, check_input
from shoe_ctl.lifecycle import Closeable
from shoe_ctl.machine.inputs import ROWS, accepting_states
from shoe_ctl.recall import public as public_recall
from shoe_ctl.release import TILT_CODE
from shoe_ctl.users import (
    HOLE_CARD_ROLES,
    Authenticator,
    AuthError,
    Role,
    User,
    UserFileError,
    parse_credential,
    required_role,
    signed,
    what_needs,
)
from shoe_ctl.utf8 import Reports, encode_replacing, unencodable_at
from shoe_ctl.web_guard import (
    Admission,
    Limits,
    RateLimiter,
    Slots,
    TokenGate,
    host_allowed,
    is_kiosk,
    known_names,
    no_icon,
    origin_allowed,
    quiet_accept_errors,
)

log = logging.getLogger(__name__)


_REPORTS = Reports(log)
"""The warnings of :func:`_json_stdlib` (one a minute)."""


def _json_stdlib(value: object) -> bytes:
    """``value`` as compact UTF-8 JSON by the standard library; a code point UTF-8 cannot encode (a
    lone surrogate) in a key or a text written U+FFFD, with a warning (:mod:`shoe_ctl.utf8`)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        data, count = encode_replacing(text)
        _REPORTS("display", f"display: a state held {count} code point(s) UTF-8 cannot encode (a lone surrogate), "
                            f"first at {unencodable_at(value) or 'its top'}: sent with each written U+FFFD")
        return data


try:  # a dependency; an environment made before it was one encodes with the standard library
    import orjson

    def _json_bytes(value: object) -> bytes:
        try:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate; anything else the library refuses too
            return _json_stdlib(value)
except ImportError:  # pragma: no cover - the environments the project makes have it
    _json_bytes = _json_stdlib

STATIC_DIR = Path(__file__).with_name("static")
BEAT_S = 1.0
"""Seconds between ``beat`` events on an ``/events`` stream with nothing else to send; the page
shows "no service" after :data:`PAGE_TIMEOUT_S` seconds without any event."""
PAGE_TIMEOUT_S = 3.0
"""The page's watchdog (``static/app.js`` ``NO_SERVICE_MS``): seconds without an event before it
turns into "no service — do not deal"."""
SUBSCRIBER_BACKLOG = 256
INPUTS_JSON = {action.value: {**spec.public(), "states": sorted(accepting_states(action)),
                              "wrong_time": ROWS[action].refused if action in ROWS else ""}
               for action, spec in SPECS.items()}
"""``GET /inputs``: the dealer inputs' specifications as the page reads them, each with the machine
states that take it and the machine's words for a refusal elsewhere (``states``, ``wrong_time``:
:func:`shoe_ctl.machine.inputs.accepting_states`)."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Stream:
    """One ``/events`` client: the queue its coroutine writes from (:meth:`DisplaySink._stream`)
    and, once that coroutine has sent the response's headers, the connection a snapshot may be
    written to at once (:meth:`send`)."""

    __slots__ = ("queue", "sent_at", "transport", "writing")

    def __init__(self, backlog: int) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=backlog)
        self.transport: asyncio.Transport | None = None  # set once the headers went out, chunked
        self.writing = False  # the coroutine is writing an item taken from the queue
        self.sent_at = 0.0  # time.monotonic() of the last write to the client

    def offer(self, item: bytes | None) -> None:
        """Queue ``item`` for the coroutine; a stalled client skips to the newest."""
        if self.queue.full():
            self.queue.get_nowait()
        self.queue.put_nowait(item)

    def send(self, payload: bytes) -> bool:
        """Write ``payload`` to the client now, as one chunk of the response, when it keeps up:
        nothing waits in the queue or is being written, the connection's buffer is empty (the
        client took everything so far). Otherwise queue it: the coroutine writes it, and closes a
        client that does not take it within ``events_write_timeout_s``. Either way the events
        leave in the order they were sent. True when written now."""
        t = self.transport
        if (t is not None and not self.writing and self.queue.empty() and not t.is_closing()
                and t.get_write_buffer_size() == 0):
            t.write(b"%x\r\n%b\r\n" % (len(payload), payload))
            self.sent_at = time.monotonic()
            return True
        self.offer(payload)
        return False


DECK_CHECK_EVERY_S = 2.0
"""How often the display looks for a new deck check to push (``DisplaySink.deck_check``)."""

DECK_CHECK_WAIT_S = 0.5
"""Longest a ``/state`` request waits for a look at the deck check (it runs in a worker thread;
a journal whose disk stalls holds it): past this the answer carries the check last seen, and so
does every later request at once while that look is still held."""


class _OffLoop:
    """The last value of a call that may wait on the disk (the deck check reads the journal through
    the store's lock, which a commit holds through its fsync): each call made in a daemon worker
    thread, one at a time, never in the loop; ``on_change()`` in the loop when a call's value
    differs from the value before."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self.value: Any = None
        self._on_change = on_change
        self._running: asyncio.Future[Any] | None = None
        self._taken: object = None  # the last call whose value was kept
        self._overdue: object = None  # the last call a wait gave up on

    def look(self, loop: asyncio.AbstractEventLoop, provider: Callable[[], Any]) -> asyncio.Future[Any]:
        """In the loop: the call running, started now unless one runs already."""
        running = self._running
        if running is None or running.done():
            running = self._running = loop.create_future()
            running.add_done_callback(self.take)
            threading.Thread(target=self._call, args=(loop, running, provider), name="display-look",
                             daemon=True).start()  # daemon: a call the disk holds never holds the exit
        return running

    async def wait(self, look: asyncio.Future[Any], timeout: float) -> None:
        """Wait for ``look`` at most ``timeout`` seconds, its value kept if it ended. A look a wait
        already gave up on (overdue: the disk holds it) is not waited for again: the caller
        answers at once with the value the last look found."""
        if look is self._overdue:
            return
        await asyncio.wait((look,), timeout=timeout)
        if look.done():
            self.take(look)
        else:
            self._overdue = look

    def take(self, look: asyncio.Future[Any]) -> None:
        """In the loop, a call ended: keep its value (once a call), ``on_change()`` when it changed."""
        if look.cancelled() or look is self._taken:
            return
        self._taken = look
        exc = look.exception()
        if exc is not None:
            log.error("display: a look at the journal failed: %s", exc)
            return
        if look.result() != self.value:
            self.value = look.result()
            self._on_change()

    @staticmethod
    def _call(loop: asyncio.AbstractEventLoop, look: asyncio.Future[Any], provider: Callable[[], Any]) -> None:
        try:
            result, exc = provider(), None
        except Exception as error:  # noqa: BLE001 - handed to the loop, which logs it
            result, exc = None, error
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(_OffLoop._settle, look, result, exc)

    @staticmethod
    def _settle(look: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
        if look.done():
            return
        if exc is not None:
            look.set_exception(exc)
        else:
            look.set_result(result)


class DisplaySink(Closeable):
    """The display as a controller sink: ``handle(command)`` never blocks.

    ``handle`` hands each command to the server's loop; the loop folds the commands waiting into
    the :class:`DisplayModel` and pushes the new snapshot to every ``/events`` client, at once after
    a quiet spell and at most once per ``limits.publish_gap_s`` in a burst (docs/display.md,
    "Updates").

    :param post: the controller's thread-safe ``post(event)``; receives :class:`DealerInput`.
    :param host: address to bind (default loopback).
    :param port: TCP port (0: any free port, see :attr:`port`).
    :param token: required for a non-loopback ``host``; checked on every POST when set.
    :param table_seats: seats at the table (2..10): the page's *New hand* sheet offers seats
        ``1..table_seats`` and deals them all when no hand was seen yet (snapshot ``table_seats``).
    :param limits: connection, rate and token bounds (default :class:`Limits`).
    :param model: the display's model to go on from (a restarted service's, with what the stopped
        one showed: :meth:`DisplayModel.restarted`), else a new one.
    :raises DisplayError: non-loopback host without a token; a token shorter than
        ``limits.token_min_len``.
    """

    def __init__(self, post: Callable[[Any], Any], *, host: str = "127.0.0.1", port: int = 8080,
                 token: str | None = None, static_dir: Path = STATIC_DIR, table_seats: int = 8,
                 limits: Limits | None = None, model: DisplayModel | None = None) -> None:
        if not is_loopback(host) and not token:
            raise DisplayError(
                f"display on {host}:{port}: binding an address other than loopback needs a token "
                "([display] token or SHOE_CTL_DISPLAY_TOKEN); refusing to start")
        self.limits = limits or Limits()
        self._setup_guard(host, port, token)
        self._post = post
        self.host = host
        self.port = port
        self._token = token or None
        self._static = static_dir
        self.model = model if model is not None else DisplayModel(table_seats=table_seats)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._subscribers: set[_Stream] = set()
        self._pending: deque[Command] = deque()  # commands handed, not yet folded in (:meth:`_drain`)
        self._wake_set = False  # a _drain is scheduled and has not started
        self._bell: tuple[int, int] | None = None  # the loop's wake-up pipe (read, write) while it serves
        self._bell_lock = threading.Lock()  # its ends are not closed while a hand-over writes to it
        self._drained_at = 0.0  # time.monotonic() of the last _drain
        self.wakes = 0
        """Times the server's loop was woken for commands so far (one per controller event)."""
        self.published = 0
        self.sent_direct = 0
        """Snapshots written straight to a client that kept up, without its stream's coroutine."""
        """Snapshots pushed to the ``/events`` clients so far (one per wake-up that changed the
        model while a client was connected, besides the one each client gets at connect)."""
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        super().__init__(self._lock)
        self._next_ref = 0
        self.alive = True  # False while the controller is stuck (ControllerWatchdog)
        self.journal_chain: Callable[[], dict[str, Any] | None] | None = None
        """Set by the table to the journal's ``chain_public``: the snapshot's ``journal_chain``."""
        self._deck = _OffLoop(self._publish)  # the deck check the last look found
        self.deck_check: Callable[[], dict[str, Any] | None] | None = None
        """Set by the table with a journal: the newest deck check before a hand
        (:class:`shoe_ctl.service.deck_check.DeckCheckShown`), the snapshot's ``deck_check``.
        Called in a worker thread, one call at a time, never in the loop (it reads the journal,
        whose store's lock a commit holds through its fsync)."""
        self.software: Callable[[], dict[str, Any]] | None = None
        """Set by the table: the software identity (the snapshot's ``software``, the about panel)."""
        self.recall: Callable[[], list[dict[str, Any]]] | None = None
        """Set by the table with a journal: the last hands, full (:func:`shoe_ctl.recall.recall_hands`)."""
        self.report: Callable[[str, str], None] | None = None
        """Set by the table: journals an alert (a view of the hole cards in a recall)."""
        self._recall_lock: asyncio.Lock | None = None
        self.authenticator: Authenticator | None = None
        """Set by the table with a users file: inputs only some roles may make need a credential
        (docs/compliance.md, "People and roles")."""
        self.floor_problem: Callable[[], str | None] | None = None
        """Set by the table with the floor on: why the floor gets nothing of this table although
        the broker takes its publications (the snapshot's ``floor_problem``; docs/floor.md)."""

    def _setup_guard(self, host: str, port: int, token: str | None) -> None:
        """The token rules and the per-client limits (:mod:`shoe_ctl.web_guard`)."""
        lim = self.limits
        if token and len(token) < lim.token_min_len:
            raise DisplayError(
                f"display on {host}:{port}: the token has {len(token)} characters, at least "
                f"{lim.token_min_len} are needed (e.g. `python3 -c 'import secrets; print(secrets.token_urlsafe(24))'`); "
                "refusing to start")
        self._gate = TokenGate(token, failures=lim.token_failures, lockout_s=lim.token_lockout_s)
        self._input_rate = RateLimiter(lim.inputs_per_s, lim.inputs_burst, "display inputs")
        self._input_total = RateLimiter(lim.inputs_total_per_s, lim.inputs_total_burst,
                                        "display inputs from all other clients")
        self._names = known_names((*lim.allowed_hosts, host))
        self._server: asyncio.AbstractServer | None = None
        self._admission = Admission("display", lim.max_connections, lim.reserved_connections,
                                    lim.per_address_connections)
        self._conns = self._admission.slots
        self._streams = Slots(lim.max_events, lim.reserved_events, lim.per_address_events)

    @property
    def _open(self) -> int:
        """Connections served now."""
        return self._conns.used

    @property
    def _conn_refused(self) -> int:
        """Connections closed at accept so far (over their share)."""
        return self._admission.refused

    # ------------------------------------------------------------------ lifecycle
    @property
    def url(self) -> str:
        """``http://HOST:PORT/`` of the running page."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def start(self, timeout: float = 10.0) -> DisplaySink:
        """Bind, start the server thread and return once it serves.

        :raises OSError: the address cannot be bound (in use, no such address).
        :raises DisplayError: the server did not come up within ``timeout`` seconds.
        """
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.port))
            sock.listen(32)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, args=(sock,), name="display", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise DisplayError(f"display on {self.url} did not start within {timeout} s")
        if self._error is not None:
            raise DisplayError(f"display on {self.url} failed to start: {self._error}") from self._error
        log.info("dealer display serving at %s", self.url)
        return self

    def _serve(self, sock: socket.socket) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            app = self._make_app()
            self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0,
                                         keepalive_timeout=self.limits.request_timeout_s)
            loop.run_until_complete(self._runner.setup())
            loop.run_until_complete(self._listen(sock))
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
            sock.close()
            loop.close()
            return
        bell = os.pipe()
        for fd in bell:
            os.set_blocking(fd, False)
        loop.add_reader(bell[0], self._rung)
        self._bell = bell
        self._ready.set()
        loop.call_soon(self._watch_deck_check)
        try:
            loop.run_forever()
        finally:
            with self._bell_lock:
                self._bell = None
                loop.remove_reader(bell[0])
                for fd in bell:
                    os.close(fd)
            if self._server is not None:
                self._server.close()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

    async def _listen(self, sock: socket.socket) -> None:
        """Serve ``sock`` with aiohttp's request handler, closing a connection beyond its share of
        ``limits.max_connections`` as it is accepted (aiohttp has no cap of its own): the kiosk
        keeps its reserve, every other address its own share (:class:`~shoe_ctl.web_guard.Slots`)."""
        server = self._runner.server if self._runner is not None else None
        assert server is not None
        loop = asyncio.get_running_loop()
        quiet_accept_errors(loop, "display")
        self._server = await loop.create_server(self._admission.factory(server), sock=sock)

    def _close(self) -> None:
        """``close()``: stop serving: end the event streams, stop the loop, join the thread."""
        loop = self._loop
        if loop is not None and self._thread is not None and self._thread.is_alive():
            def stop() -> None:
                for stream in list(self._subscribers):
                    stream.offer(b"event: bye\ndata: {}\n\n")  # the page shows "no service" at once
                    stream.offer(None)
                loop.call_later(0.05, loop.stop)
            loop.call_soon_threadsafe(stop)
            self._thread.join(timeout=5.0)

    def __enter__(self) -> DisplaySink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ sink
    def handle(self, command: Command) -> None:
        """Hand ``command`` to the server loop; returns at once (dropped after :meth:`close`).

        Commands wait in order in a deque; the loop is woken once for all the commands handed
        while it has not yet taken them (:meth:`_drain`), so a burst of commands costs the
        controller one wake-up and the clients one snapshot (docs/display.md, "Updates")."""
        loop = self._loop
        if self._closed or loop is None:
            return
        self._pending.append(command)
        self._wake_loop(loop)

    def handle_all(self, commands: Sequence[Command]) -> None:
        """Hand the commands of one event to the server loop at once, as :meth:`handle` one by one
        would, with one wake-up of the loop: the controller's hand-over, once it is done with the
        event (:meth:`shoe_ctl.service.controller.Controller.add_sink`)."""
        loop = self._loop
        if self._closed or loop is None:
            return
        self._pending.extend(commands)
        self._wake_loop(loop)

    def _wake_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wake the loop for the commands handed, unless a wake-up is pending: one byte on the
        loop's own pipe, which the loop reads with one call (``call_soon_threadsafe`` costs the
        loop thread half as much again per wake-up: its socket pair is read until it is empty,
        and the read that finds it empty raises)."""
        if self._wake_set:
            return
        self._wake_set = True
        self.wakes += 1
        with self._bell_lock:
            bell = self._bell
            if bell is not None:
                try:
                    os.write(bell[1], b"\0")
                except BlockingIOError:  # bytes not read yet: the loop is woken all the same
                    pass
                return
        try:  # not serving yet, or stopped
            loop.call_soon_threadsafe(self._wake)
        except RuntimeError:  # loop already closed
            pass

    def _rung(self) -> None:
        """In the loop: the wake-up pipe has a byte (:meth:`_wake_loop`)."""
        bell = self._bell
        if bell is not None:
            try:
                os.read(bell[0], 4096)
            except BlockingIOError:
                pass
        self._wake()

    def _wake(self) -> None:
        """In the loop: drain now, or at ``limits.publish_gap_s`` after the last drain."""
        loop = self._loop
        wait = self._drained_at + self.limits.publish_gap_s - time.monotonic()
        if wait <= 0 or loop is None:
            self._drain()
        else:
            loop.call_later(wait, self._drain)

    def service_lost(self, lost: bool) -> None:
        """The controller is stuck (``True``) or runs again: every ``/events`` client gets a
        ``beat`` saying so at once (the page shows "service stuck — do not deal" while it is
        false). Called by :class:`shoe_ctl.service.watchdog.ControllerWatchdog`; returns at once."""
        self.alive = not lost
        loop = self._loop
        if self._closed or loop is None:
            return
        try:
            loop.call_soon_threadsafe(self._send_beat)
        except RuntimeError:
            pass

    def _beat(self) -> bytes:
        return f"event: beat\ndata: {json.dumps({'alive': self.alive})}\n\n".encode()

    def _send_beat(self) -> None:
        payload = self._beat()
        for stream in list(self._subscribers):
            stream.send(payload)

    def sync(self, timeout: float = 2.0) -> None:
        """Wait until every command handed so far has been applied (tests, startup)."""
        loop = self._loop
        if loop is None or self._closed:
            return
        done = threading.Event()

        def drained() -> None:
            self._drain()  # the commands waiting for their turn, too
            done.set()

        loop.call_soon_threadsafe(drained)
        done.wait(timeout)

    def _drain(self) -> None:
        """In the loop: fold every command waiting into the model, in order, then publish one
        snapshot if any of them changed it."""
        self._wake_set = False  # a command handed from now on wakes the loop again
        self._drained_at = time.monotonic()
        pending, batch = self._pending, []
        while pending:
            batch.append(pending.popleft())
        if batch and self.model.apply_all(batch):
            self._publish()

    def snapshot(self) -> dict[str, Any]:
        """The model's snapshot plus ``journal_chain``: ``{"seq", "head"}``, the journal's hash-chain
        head (docs/journal.md, "The hash chain"), or ``None`` without a journal; ``software``: the
        software identity (:meth:`shoe_ctl.release.SoftwareIdentity.public`) or ``None``; and
        ``floor_problem``: a text when the floor broker drops this table's publications, else ``None``;
        ``deck_check``: the newest deck check while no hand has started since (docs/build-a-shoe.md,
        "Deck check"), as the last look found it (:meth:`_look_at_deck_check`), else ``None``.
        Reads nothing from the journal."""
        snap = self.model.snapshot()
        provider = self.journal_chain
        snap["journal_chain"] = provider() if provider is not None else None
        software = self.software
        snap["software"] = software() if software is not None else None
        floor = self.floor_problem
        snap["floor_problem"] = floor() if floor is not None else None
        snap["deck_check"] = self._deck.value if self.deck_check is not None else None
        return snap

    def _look_at_deck_check(self) -> asyncio.Future[dict[str, Any] | None] | None:
        """In the loop: the look at the deck check running in a worker thread (:class:`_OffLoop`),
        started now unless one runs already (None without a provider); a check shown or gone
        since the last look is pushed to the clients when it ends. The loop never waits for it: a
        commit stuck in its fsync (a stalled disk) holds the look, not the page."""
        provider, loop = self.deck_check, self._loop
        if provider is None or loop is None:
            return None
        return self._deck.look(loop, provider)

    def _watch_deck_check(self) -> None:
        """In the loop, every :data:`DECK_CHECK_EVERY_S`: a look at the deck check
        (:meth:`_look_at_deck_check`)."""
        loop = self._loop
        if self._closed or loop is None:
            return
        self._look_at_deck_check()
        loop.call_later(DECK_CHECK_EVERY_S, self._watch_deck_check)

    def _publish(self) -> None:
        """Push the snapshot to every ``/events`` client; with none connected nothing is built
        (a client that connects gets the snapshot of that moment, :meth:`_stream`)."""
        if not self._subscribers:
            return
        self.published += 1
        payload = state_event(self.snapshot())
        for stream in list(self._subscribers):
            self.sent_direct += stream.send(payload)  # at once, without the stream's coroutine, when it keeps up

    # ------------------------------------------------------------------ web
    def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=self.limits.max_body, middlewares=[self._guard])
        app.router.add_get("/", self._index)
        app.router.add_get("/state", self._state)
        app.router.add_get("/events", self._events)
        app.router.add_get("/inputs", self._inputs)
        app.router.add_get("/favicon.ico", no_icon)
        app.router.add_get("/sw.js", self._service_worker)
        app.router.add_post("/input", self._input)
        app.router.add_post("/ack", self._ack)
        app.router.add_get("/recall", self._recall)
        app.router.add_post("/recall", self._recall)
        app.router.add_static("/static/", self._static, show_index=False)
        return app

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(self._static / "index.html", headers={"Cache-Control": "no-cache"})

    async def _service_worker(self, request: web.Request) -> web.StreamResponse:
        """``static/sw.js`` at the root, so that it serves every page load of this origin."""
        return web.FileResponse(self._static / "sw.js", headers={"Cache-Control": "no-cache",
                                                                 "Content-Type": "text/javascript"})

    async def _state(self, request: web.Request) -> web.Response:
        look = self._look_at_deck_check()
        if look is not None:  # the deck check as of now, unless the journal's disk holds the look
            await self._deck.wait(look, DECK_CHECK_WAIT_S)
        if self._pending:
            self._drain()  # never older than the commands handed
        return web.json_response(self.snapshot(), headers={"Cache-Control": "no-store"})

    async def _inputs(self, request: web.Request) -> web.Response:
        return web.json_response(INPUTS_JSON, headers={"Cache-Control": "no-cache"})

    @web.middleware
    async def _guard(self, request: web.Request,
                     handler: Callable[[web.Request], Any]) -> web.StreamResponse:
        """Every request: ``Host`` names this machine and ``Origin`` (when sent) is the page's own
        (403); POSTs: at most ``limits.inputs_per_s`` per client address, and at most
        ``limits.inputs_total_per_s`` from every address but the kiosk's together (429)."""
        host = request.headers.get("Host")
        if not host_allowed(host, self._names):
            return web.json_response({"error": f"Host {host!r} is not this display's name"}, status=403)
        if not origin_allowed(request.headers.get("Origin"), host):
            return web.json_response({"error": "cross-origin requests are refused"}, status=403)
        if request.method == "POST":
            remote = request.remote or "?"
            if not self._input_rate.allow(remote):
                return web.json_response(
                    {"error": f"too many inputs: at most {self.limits.inputs_per_s:g} per second; "
                              "this one was not taken"}, status=429, headers={"Retry-After": "1"})
            if not is_kiosk(remote) and not self._input_total.allow("every other client"):
                return web.json_response(
                    {"error": f"too many inputs from other clients: at most {self.limits.inputs_total_per_s:g} per "
                              "second from them all; this one was not taken"}, status=429, headers={"Retry-After": "1"})
        result: web.StreamResponse = await handler(request)
        return result

    async def _events(self, request: web.Request) -> web.StreamResponse:
        if not self._streams.take(request.remote):
            return web.json_response({"error": f"{self._streams.used} event streams open already"},
                                     status=503, headers={"Retry-After": "5"})
        try:
            return await self._stream(request)
        finally:
            self._streams.give_back(request.remote)

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                           "X-Accel-Buffering": "no"})
        await resp.prepare(request)
        stream = _Stream(self.limits.events_backlog)
        self._look_at_deck_check()  # pushed to this client too when it finds a change
        stream.offer(b"retry: 1000\n" + state_event(self.snapshot()))
        self._subscribers.add(stream)
        chunked = resp.headers.get("Transfer-Encoding") == "chunked"  # HTTP/1.1; 1.0 reads to the close
        try:
            while True:
                try:  # a beat BEAT_S after the last write, whichever way it went
                    async with asyncio.timeout(max(0.0, stream.sent_at + BEAT_S - time.monotonic())):
                        item = await stream.queue.get()  # no task per event, as wait_for makes
                except TimeoutError:
                    if time.monotonic() - stream.sent_at < BEAT_S:
                        continue  # a snapshot went straight to the client meanwhile
                    item = self._beat()
                if item is None:
                    break
                stream.writing = True
                written = await self._write_or_drop(request, resp, item)
                stream.writing = False
                if not written:
                    break
                stream.sent_at = time.monotonic()
                if chunked and stream.transport is None and isinstance(request.transport, asyncio.Transport):
                    stream.transport = request.transport  # the headers are out: snapshots may go straight
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            stream.transport = None
            self._subscribers.discard(stream)
        return resp

    async def _write_or_drop(self, request: web.Request, resp: web.StreamResponse, item: bytes) -> bool:
        """Write one event; a client that does not take it within ``events_write_timeout_s`` is
        disconnected (False), so a stalled stream holds at most its socket buffers."""
        try:
            async with asyncio.timeout(self.limits.events_write_timeout_s):
                await resp.write(item)
        except TimeoutError:
            log.warning("display: an event stream to %s took no data for %g s; closed",
                        request.remote, self.limits.events_write_timeout_s)
            if request.transport is not None:
                request.transport.abort()
            return False
        return True

    def _check(self, request: web.Request) -> web.Response | None:
        if self._token is not None:
            given = request.headers.get("X-Shoe-Token", "")
            auth = request.headers.get("Authorization", "")
            if auth.startswith("Bearer "):
                given = given or auth[7:]
            verdict = self._gate.check(request.remote or "?", given)
            if verdict == "locked":
                return web.json_response({"error": "too many wrong tokens from this client; try again later"},
                                         status=429, headers={"Retry-After": f"{self.limits.token_lockout_s:.0f}"})
            if verdict != "ok":
                return web.json_response({"error": "missing or wrong token"}, status=401)
        if request.content_type != "application/json":
            return web.json_response({"error": "Content-Type must be application/json"}, status=415)
        return None

    async def _body(self, request: web.Request) -> dict[str, Any] | web.Response:
        """The POST's JSON object once the token check passed, else the error response to send."""
        bad = self._check(request)
        if bad is not None:
            return bad
        try:
            body = await asyncio.wait_for(request.json(), self.limits.body_timeout_s)
        except TimeoutError:
            return web.json_response({"error": f"body not received within {self.limits.body_timeout_s:g} s"},
                                     status=408)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            return web.json_response({"error": f"body is not JSON: {exc}"}, status=400)
        if not isinstance(body, dict):
            return web.json_response({"error": "body must be a JSON object"}, status=400)
        return body

    async def _authorize(self, event: DealerInput, credential: object,
                         roles: frozenset[Role] | None) -> DealerInput | web.Response:
        """``event`` signed with the user a ``credential`` (``{"user", "pin"}``) names, or the
        response refusing it: 401 when ``roles`` (:func:`required_role`) need a credential and
        none or a wrong one came (``need``: the roles), 429 when locked out, 403 for a user
        without the role (the input is posted signed all the same, so the controller, which
        checks the role itself, journals the refusal with who asked)."""
        auth = self.authenticator
        if auth is None or (credential is None and roles is None):
            return event
        need = sorted(r.value for r in roles) if roles else []
        if credential is None:
            assert roles is not None
            return web.json_response({"error": f"{what_needs(event.action, roles)}: enter your user and PIN",
                                      "need": need}, status=401)
        try:
            name, pin = parse_credential(credential)
            user = await asyncio.get_running_loop().run_in_executor(None, auth.authenticate, name, pin,
                                                                    event.source or "display")
        except ValueError as exc:
            return web.json_response({"error": f"credential: {exc}", "need": need}, status=400)
        except AuthError as exc:
            return web.json_response({"error": str(exc), "need": need}, status=429 if exc.status == "locked" else 401)
        except UserFileError as exc:
            return web.json_response({"error": str(exc)}, status=503)
        if roles is not None and user.role not in roles:
            self._post(signed(event, user))  # the controller refuses it too, journaled with who asked
            return web.json_response({"error": f"{what_needs(event.action, roles)}; {user.name} is a "
                                      f"{user.role.value}", "need": need}, status=403)
        return signed(event, user)

    def _roles(self, action: DealerAction, args: dict[str, Any]) -> frozenset[Role] | None:
        return required_role(action, args, self.model.alerts(), tilt_code=TILT_CODE)

    async def _input(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        credential = body.pop("credential", None)
        try:
            event = input_event(body, source=f"display:{request.remote or '?'}")
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        authorized = await self._authorize(event, credential, self._roles(event.action, event.args))
        if isinstance(authorized, web.Response):
            return authorized
        event = authorized
        if "ref" not in event.args:  # the machine answers with the instruction carrying this ref
            self._next_ref += 1
            event.args["ref"] = self._next_ref
        if self._post(event) is False:  # the controller's queue of dealer inputs is full
            return self._busy()
        if event.action is DealerAction.ACK_ALERT and isinstance(event.args.get("id"), int):
            self.model.acknowledge(event.args["id"])
            self._publish()
        return web.json_response({"posted": {"action": str(event.action), "seat": event.seat,
                                             "args": event.args}, "ref": event.args["ref"]}, status=202)

    async def _recall(self, request: web.Request) -> web.Response:
        """``GET /recall``: the last hands, downcards written ``??``; ``POST /recall`` with a
        ``credential`` of a floor supervisor or surveillance: with the downcards, the view
        journaled with who and when (docs/compliance.md, "Recall")."""
        provider = self.recall
        full = request.method == "POST"
        who: User | None = None
        if full:
            body = await self._body(request)
            if isinstance(body, web.Response):
                return body
            if self.authenticator is None:
                return web.json_response({"error": "hole cards are shown only to a named floor supervisor or "
                                          "surveillance user, and this table has no users file"}, status=403)
            source = f"display:{request.remote or '?'}"
            try:
                name, pin = parse_credential(body.get("credential"))
                who = await asyncio.get_running_loop().run_in_executor(None, self.authenticator.authenticate,
                                                                       name, pin, source)
            except ValueError as exc:
                return web.json_response({"error": f"credential: {exc}", "need": sorted(HOLE_CARD_ROLES)}, status=401)
            except AuthError as exc:
                return web.json_response({"error": str(exc), "need": sorted(HOLE_CARD_ROLES)},
                                         status=429 if exc.status == "locked" else 401)
            except UserFileError as exc:
                return web.json_response({"error": str(exc)}, status=503)
            if who.role not in HOLE_CARD_ROLES:
                if self.report is not None:
                    self.report("role-refused", f"{who.name} ({who.role.value}) asked for the downcards in a "
                                f"recall from {source}: refused, a floor supervisor or surveillance sees them")
                return web.json_response({"error": f"{who.name} is a {who.role.value}: the downcards are for a "
                                          "floor supervisor or surveillance"}, status=403)
        if provider is None:
            return web.json_response({"error": "no journal: nothing to recall"}, status=404)
        if self._recall_lock is None:
            self._recall_lock = asyncio.Lock()
        async with self._recall_lock:  # one replay of the journal at a time
            hands = await asyncio.get_running_loop().run_in_executor(None, provider)
        if who is None:
            return web.json_response({"hands": public_recall(hands), "hole_cards": False},
                                     headers={"Cache-Control": "no-store"})
        numbers = [h["hand"] for h in hands]
        span = f"hands {numbers[0]}-{numbers[-1]}" if numbers else "no hand"
        if self.report is not None:
            self.report("recall-hole-cards", f"{who.name} ({who.role.value}) viewed the downcards of {span} in a "
                        f"recall from display:{request.remote or '?'}")
        return web.json_response({"hands": hands, "hole_cards": True, "by": who.name},
                                 headers={"Cache-Control": "no-store"})

    async def _ack(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        source = f"display:{request.remote or '?'}"
        credential = body.get("credential")
        if "ids" in body:
            ids = body["ids"]
            if isinstance(ids, list) and len(ids) <= 256:
                need: set[Role] = set()
                for i in ids:
                    need |= self._roles(DealerAction.ACK_ALERT, {"id": i}) or set()
                probe = DealerInput(DealerAction.ACK_ALERT, None, {}, source=source)
                authorized = await self._authorize(probe, credential, frozenset(need) or None)
                if isinstance(authorized, web.Response):
                    return authorized
                source = authorized.source or source
            return self._ack_band(ids, source)
        alert_id = body.get("id")
        if not isinstance(alert_id, int) or isinstance(alert_id, bool):
            return web.json_response({"error": "id: expected the alert's integer id"}, status=400)
        shown = next((a for a in self.model.alerts() if a.get("id") == alert_id), None)
        if shown is None:
            return web.json_response({"error": f"id: no alert {alert_id} is shown"}, status=404)
        event = DealerInput(DealerAction.ACK_ALERT, shown.get("seat"),
                            {"id": alert_id, "code": shown.get("code")}, source=source)
        roles = self._roles(event.action, event.args)
        authorized = await self._authorize(event, credential, roles)
        if isinstance(authorized, web.Response):
            return authorized
        event = authorized
        if self._post(event) is False:  # the machine would keep its STOP: the band stays, its button too
            return self._busy()
        self.model.acknowledge(alert_id)
        self._publish()
        return web.json_response({"posted": {"action": str(event.action), "seat": event.seat,
                                             "args": event.args}}, status=202)

    @staticmethod
    def _busy() -> web.Response:
        return web.json_response({"error": "the table is busy with earlier inputs; this one was not taken"},
                                 status=429, headers={"Retry-After": "1"})

    def _ack_band(self, ids: object, source: str | None = None) -> web.Response:
        """Acknowledge one merged alert band: every listed alert still shown, in one step of the
        event loop (no machine update in between), and one ``ACK_ALERT`` per alert to the machine,
        naming its id (the machine acknowledges exactly that alert: another of the same code, not
        in the band, stays up). Ids no longer shown (the machine already cleared them) are reported
        in ``"gone"``, never an error: the band is gone either way."""
        if (not isinstance(ids, list) or not ids or len(ids) > 256
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
            return web.json_response({"error": "ids: expected a list of the band's integer alert ids"}, status=400)
        wanted = set(ids)
        shown = [a for a in self.model.alerts() if a.get("id") in wanted]
        gone = [i for i in ids if i not in {a.get("id") for a in shown}]
        posted, acked = [], []
        for alert in shown:
            event = DealerInput(DealerAction.ACK_ALERT, alert.get("seat"),
                                {"id": alert.get("id"), "code": alert.get("code")}, source=source)
            if self._post(event) is False:  # not taken: that alert stays shown, its button too
                continue
            posted.append({"action": str(event.action), "seat": event.seat, "args": event.args})
            done = self.model.acknowledge(alert["id"])
            if done:
                acked.append(done)
        if shown and not posted:
            return self._busy()
        if acked:
            self._publish()
        return web.json_response({"posted": posted, "acknowledged": [a.get("id") for a in acked], "gone": gone},
                                 status=202 if acked else 200)




def state_event(snap: dict[str, Any]) -> bytes:
    """One ``state`` event of an ``/events`` stream: the snapshot ``snap`` as compact JSON in UTF-8
    (orjson: a fifth of the standard library's encoder's instructions on a snapshot), its
    ``version`` as the event's id (docs/display.md, "Updates").

    :raises TypeError: a value JSON cannot hold (orjson's ``JSONEncodeError`` is one)."""
    return b"id: %d\nevent: state\ndata: %b\n\n" % (snap["version"], _json_bytes(snap))


def input_event(body: dict[str, Any], source: str | None = None) -> DealerInput:
    """Validate a ``POST /input`` body into a :class:`DealerInput` from ``source`` (the server's
    ``display:<client address>``; a ``source`` in the body is ignored).

    :raises ValueError: naming the bad field (unknown action, seat missing or not 1..10, args not
        an object, an argument of the action missing or wrong: :func:`shoe_ctl.input_spec.check_input`).
    """
    try:
        action = DealerAction(str(body.get("action")))
    except ValueError:
        allowed = ", ".join(a.value for a in DealerAction)
        given = body.get("action")
        shown = repr(given)[:40] if isinstance(given, (str, int, float)) else type(given).__name__
        raise ValueError(f"action: {shown} is not one of {allowed}") from None
    seat = body.get("seat")
    args = body.get("args", {})
    check_input(action, seat, args)
    return DealerInput(action, seat, dict(args), source=source)


def start_display(host: str, port: int, post: Callable[[Any], Any], token: str | None = None, *,
                  table_seats: int = 8, model: DisplayModel | None = None) -> DisplaySink:
    """Start the dealer display and return its sink, already serving.

    Call it before dealing starts (``shoe-ctl run --display HOST:PORT``), then
    ``controller.add_sink(sink)``; ``sink.close()`` on shutdown.

    :param host: bind address; anything but loopback needs ``token``.
    :param port: TCP port (0 = any free port; read ``sink.port``).
    :param post: the controller's thread-safe ``post(event)``.
    :param token: shared secret for POSTs (required off loopback).
    :param table_seats: seats at the table, offered by the page's *New hand* sheet.
    :param model: the model to go on from (:class:`DisplaySink`), else a new one.
    :raises DisplayError: refused configuration or the server did not start.
    :raises OSError: the address cannot be bound.
    """
    return DisplaySink(post, host=host, port=port, token=token, table_seats=table_seats, model=model).start()
