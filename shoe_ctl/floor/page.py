"""The floor page: the room map (aiohttp, its own thread and loop; the page is ``page_html.py``).

``GET /`` the page; ``/layout`` the pits; ``/tiles?since=V`` the tiles changed after a version;
``/table?name=NAME`` one table's detail; ``/recall?table=NAME`` its last hands; ``/state`` the
whole snapshot (:meth:`FloorConsumer.snapshot`). ``POST /signin`` ``{"user", "pin"}`` signs a floor
supervisor in (a session id for ``X-Floor-Session``), ``/signout`` out; ``POST /ack`` ``{"table",
"id" or "all": true}`` acknowledges under that session (or with ``"user", "pin"``). ``Host`` and
``Origin`` are checked, connections capped (:data:`LIMITS`), a token required off loopback
(``X-Floor-Token``). ``docs/floor.md``, "The floor page".
"""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from shoe_ctl.floor.consumer import FloorConsumer, TableView
from shoe_ctl.floor.page_html import PAGE_HTML
from shoe_ctl.floor.room import Pit, floor_words, layout_json, tile, tile_status
from shoe_ctl.floor.severity import SEVERITIES
from shoe_ctl.users import FLOOR_ROLES, Authenticator, AuthError, User, UserFileError, parse_credential
from shoe_ctl.web_guard import (
    Admission,
    Limits,
    TokenGate,
    host_allowed,
    known_names,
    no_icon,
    origin_allowed,
    quiet_accept_errors,
)

__all__ = ["PAGE_HTML", "FloorPage", "SignIns", "tiles"]


TOKEN_MIN_LEN = 16
"""The shortest token taken; a client that sent 5 wrong tokens within 60 s is refused (429) for 60 s."""

LIMITS = Limits(max_connections=128, reserved_connections=16, per_address_connections=16, request_timeout_s=10.0)
"""The page's connection bounds (the dealer display's guards, ``shoe_ctl.web_guard``): 128
open at once, 16 kept for a browser on the floor PC itself, 16 for any other address; a request
head must arrive within 10 s of opening and of each answer. Far below the descriptor limit
(``LimitNOFILE``), so the consumer always has descriptors to reconnect to the broker."""


SIGNIN_IDLE_S = 900.0
"""A supervisor signed in on the page is signed out after this long without an acknowledgement (s)."""

MAX_SIGNINS = 64
"""Sessions kept at once; the least recently used goes first."""


class SignIns:
    """The page's signed-in supervisors: a random session id -> (user name, client address, last
    use), at most :data:`MAX_SIGNINS`, each ending after :data:`SIGNIN_IDLE_S` idle. A session is
    good only from the address it was opened from. Only the name is kept (never the PIN); an
    acknowledgement under a session is recorded with that name."""

    def __init__(self, idle_s: float = SIGNIN_IDLE_S, limit: int = MAX_SIGNINS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_s, self.limit, self.clock = idle_s, limit, clock
        self._by_id: dict[str, tuple[str, str, float]] = {}
        self._lock = threading.Lock()

    def open(self, name: str, client: str = "") -> str:
        """A new session for ``name`` signed in from address ``client``; its id (URL-safe text)."""
        sid = secrets.token_urlsafe(24)
        with self._lock:
            while len(self._by_id) >= self.limit:
                oldest = min(self._by_id, key=lambda k: self._by_id[k][2])
                del self._by_id[oldest]
            self._by_id[sid] = (name, client, self.clock())
        return sid

    def user(self, sid: str, client: str = "") -> str | None:
        """The name signed in under ``sid`` (its idle time starts again), or ``None``: unknown,
        signed out, idle too long, or asked from another address than ``client`` it was opened
        from (a session id carried elsewhere)."""
        now = self.clock()
        with self._lock:
            found = self._by_id.get(sid)
            if found is None or found[1] != client:
                return None
            if now - found[2] > self.idle_s:
                del self._by_id[sid]
                return None
            self._by_id[sid] = (found[0], found[1], now)
            return found[0]

    def close(self, sid: str) -> None:
        with self._lock:
            self._by_id.pop(sid, None)


_RANK = {s: i for i, s in enumerate(SEVERITIES)}


def _tile_row(view: TableView) -> dict[str, Any]:
    """What :func:`~shoe_ctl.floor.room.tile` reads of a table (under the consumer's lock): the
    row of ``TableView.public`` without the parts a tile does not show, so a burst of 1,700
    tables holds the lock briefly."""
    st = view.state
    open_alerts = [a for a in view.alerts if a.get("acked") is None]
    if len(open_alerts) > 1:
        open_alerts.sort(key=lambda a: (_RANK.get(a.get("severity", "info"), 9), -int(a["id"])))
    return {"table": view.table, "online": view.online, "state": st.get("state"), "hand": st.get("hand"),
            "street": st.get("street"), "stub": st.get("stub"), "alerts": open_alerts,
            "notices": list(view.notices)[-1:], "version": view.version}


def tiles(consumer: FloorConsumer, since: int = 0) -> dict[str, Any]:
    """The page's update: the tiles of the tables changed after consumer version ``since`` (every
    table for 0), the room's open alerts by severity, the version to ask from next, and
    ``now_us``, the floor's clock (the page ages alerts from it). The page counts the tiles by
    status itself, from the tiles it holds."""
    now = time.time()
    with consumer.lock:
        version = consumer.version
        if since > version:
            since = 0  # a page that followed an earlier run of the floor: everything again
        out = [tile(_tile_row(view)) for view in consumer.tables.values() if view.version > since]
        totals = dict.fromkeys(SEVERITIES, 0)
        for view in consumer.tables.values():
            for a in view.alerts:
                if a.get("acked") is None and a.get("severity") in totals:
                    totals[a["severity"]] += 1
        count = len(consumer.tables)
    return {"room": consumer.room, "version": version, "since": since, "now_us": int(now * 1e6),
            "connected": any(c.connected.is_set() for c in (consumer, *consumer.peers)),  # on any broker
            "alerts": totals, "tables": count, "tiles": out}


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class FloorPage:
    """Serves the floor page for ``consumer`` on ``host:port`` (port 0: any free one).

    :param allowed_hosts: names the page is opened by besides this machine's (a DNS name of the
        floor PC); an IP address, ``localhost``, the host name and ``NAME.local`` always are.
    :param limits: connection bounds (default :data:`LIMITS`).
    :raises ValueError: a non-loopback ``host`` without ``token``, a token shorter than
        :data:`TOKEN_MIN_LEN`.
    :raises OSError: the address cannot be bound.
    """

    def __init__(self, consumer: FloorConsumer, *, host: str = "127.0.0.1", port: int = 8090,
                 token: str | None = None, allowed_hosts: tuple[str, ...] = (),
                 limits: Limits = LIMITS, authenticator: Authenticator | None = None,
                 pits: tuple[Pit, ...] = ()) -> None:
        if not _loopback(host) and not token:
            raise ValueError(f"floor page on {host}: an address other than loopback needs a token")
        if token and len(token) < TOKEN_MIN_LEN:  # as the dealer display's (docs/security.md)
            raise ValueError(f"floor page on {host}: the token has {len(token)} characters, at least "
                             f"{TOKEN_MIN_LEN} are needed (python3 -c 'import secrets; "
                             "print(secrets.token_urlsafe(24))')")
        self.consumer = consumer
        self.layout = layout_json(pits)
        self.host, self.port, self.token = host, port, token
        self._names = known_names((host, *allowed_hosts))
        self.authenticator = authenticator
        """The floor's named users (:class:`shoe_ctl.users.Authenticator`); None: no acknowledgement
        is taken (the page acknowledges only as a named floor supervisor)."""
        self.sessions = SignIns()
        self._gate = TokenGate(token, failures=5, lockout_s=60.0)  # as the dealer display's (docs/security.md)
        self.limits = limits
        self.admission = Admission("floor page", limits.max_connections, limits.reserved_connections,
                                   limits.per_address_connections)
        self._server: asyncio.AbstractServer | None = None
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="floor-page", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self) -> FloorPage:
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(10)
        except BaseException:
            self.close()
            raise
        return self

    @web.middleware
    async def _guard(self, request: web.Request,
                     handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        """Every request: ``Host`` names this machine and ``Origin`` (when sent) is the page's own,
        else 403 -- as the dealer display (``shoe_ctl.web_guard``): a page of another site whose
        name resolves to this address (DNS rebinding) neither reads the room nor acknowledges."""
        host = request.headers.get("Host")
        if not host_allowed(host, self._names):
            return web.json_response({"error": "Host is not this floor page's name"}, status=403)
        if not origin_allowed(request.headers.get("Origin"), host):
            return web.json_response({"error": "cross-origin requests are refused"}, status=403)
        return await handler(request)

    async def _serve(self) -> None:
        app = web.Application(client_max_size=4096, middlewares=[self._guard])
        app.router.add_get("/", self._index)
        app.router.add_get("/state", self._state)
        app.router.add_post("/ack", self._ack)
        app.router.add_post("/signin", self._signin)
        app.router.add_post("/signout", self._signout)
        app.router.add_get("/recall", self._recall)
        app.router.add_get("/layout", self._layout)
        app.router.add_get("/tiles", self._tiles)
        app.router.add_get("/table", self._table)
        app.router.add_get("/favicon.ico", no_icon)
        self._runner = web.AppRunner(app, access_log=None, keepalive_timeout=self.limits.request_timeout_s)
        await self._runner.setup()
        handler = self._runner.server
        assert handler is not None
        loop = asyncio.get_running_loop()
        quiet_accept_errors(loop, "floor page")
        self._server = await loop.create_server(self.admission.factory(handler), self.host, self.port,
                                                reuse_address=True)
        if self.port == 0 and self._server.sockets:
            self.port = self._server.sockets[0].getsockname()[1]

    async def _index(self, _req: web.Request) -> web.Response:
        return web.Response(text=PAGE_HTML, content_type="text/html",
                            headers={"Cache-Control": "no-store", "Content-Security-Policy":
                                     "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"})

    async def _state(self, _req: web.Request) -> web.Response:
        return web.json_response(self.consumer.snapshot(), headers={"Cache-Control": "no-store"})

    async def _layout(self, _req: web.Request) -> web.Response:
        """``GET /layout``: the room's pits and each table's place (:func:`~shoe_ctl.floor.room.layout_json`)."""
        return web.json_response(self.layout, headers={"Cache-Control": "no-store"})

    async def _tiles(self, req: web.Request) -> web.Response:
        """``GET /tiles?since=V``: the tiles changed after version V (:func:`~shoe_ctl.floor.room.tiles`)."""
        raw = req.query.get("since", "0")
        since = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 19 else 0
        return web.json_response(tiles(self.consumer, since), headers={"Cache-Control": "no-store"})

    async def _table(self, req: web.Request) -> web.Response:
        """``GET /table?name=NAME``: one table's row (``TableView.public``) with its floor words
        and status, for the detail."""
        name = req.query.get("name", "")
        with self.consumer.lock:
            view = self.consumer.tables.get(name)
            row = view.public(time.time()) if view is not None else None
        if row is None:
            return web.json_response({"error": f"no table {name[:64]!r}"}, status=404)
        row["words"], row["status"] = floor_words(row.get("state")), tile_status(row)
        return web.json_response(row, headers={"Cache-Control": "no-store"})

    async def _recall(self, req: web.Request) -> web.Response:
        """``GET /recall?table=NAME``: the table's last hands as it published them (downcards
        hidden: they never leave the table)."""
        name = req.query.get("table", "")
        with self.consumer.lock:
            view = self.consumer.tables.get(name)
            hands = list(view.recall) if view is not None else None
        if hands is None:
            return web.json_response({"error": f"no table {name[:64]!r}"}, status=404)
        return web.json_response({"table": name, "hands": hands}, headers={"Cache-Control": "no-store"})

    def _token_refused(self, req: web.Request) -> web.Response | None:
        verdict = self._gate.check(req.remote or "?", req.headers.get("X-Floor-Token", ""))
        if verdict == "locked":
            return web.json_response({"error": "too many wrong tokens from this client; try again later"},
                                     status=429, headers={"Retry-After": f"{self._gate.lockout_s:.0f}"})
        if verdict != "ok":
            return web.json_response({"error": "token"}, status=401)
        if req.content_type != "application/json":
            return web.json_response({"error": "Content-Type must be application/json"}, status=415)
        return None

    async def _supervisor(self, req: web.Request, name: str, pin: str) -> tuple[User | None, web.Response | None]:
        """The floor supervisor ``name`` with ``pin``, or the refusal (401/429 wrong or locked out,
        403 another role or no users file, 503 an unreadable users file)."""
        if self.authenticator is None:
            return None, web.json_response({"error": "this floor page has no users file (shoe-ctl floor --users "
                                            "FILE): alerts are acknowledged only by a named floor supervisor"},
                                           status=403)
        source = f"floor-page:{req.remote or '?'}"
        loop = asyncio.get_running_loop()
        try:
            user = await loop.run_in_executor(None, self.authenticator.authenticate, name, pin, source)
        except AuthError as exc:
            return None, web.json_response({"error": str(exc)}, status=429 if exc.status == "locked" else 401)
        except UserFileError as exc:
            return None, web.json_response({"error": str(exc)}, status=503)
        if user.role not in FLOOR_ROLES:
            return None, web.json_response({"error": f"{user.name} is a {user.role.value}: a floor supervisor "
                                            "acknowledges"}, status=403)
        return user, None

    async def _signin(self, req: web.Request) -> web.Response:
        """``POST /signin`` ``{"user", "pin"}``: a floor supervisor signs in on this page; the answer's
        ``session`` goes with each acknowledgement (``X-Floor-Session``) until signed out or idle
        for :data:`SIGNIN_IDLE_S`."""
        refused = self._token_refused(req)
        if refused is not None:
            return refused
        try:
            body = await req.json()
            name, pin = parse_credential({"user": body["user"], "pin": body["pin"]})
        except (ValueError, KeyError, TypeError, RecursionError, AttributeError):
            return web.json_response({"error": "expected {\"user\": text, \"pin\": digits}"}, status=400)
        user, refusal = await self._supervisor(req, name, pin)
        if refusal is not None or user is None:
            return refusal or web.json_response({"error": "refused"}, status=403)
        session = self.sessions.open(user.name, req.remote or "?")
        return web.json_response({"user": user.name, "role": user.role.value, "session": session,
                                  "idle_s": SIGNIN_IDLE_S})

    async def _signout(self, req: web.Request) -> web.Response:
        """``POST /signout``: the session of ``X-Floor-Session`` ends (no session: nothing to do)."""
        refused = self._token_refused(req)
        if refused is not None:
            return refused
        self.sessions.close(req.headers.get("X-Floor-Session", ""))
        return web.json_response({"signed_out": True})

    async def _ack(self, req: web.Request) -> web.Response:
        refused = self._token_refused(req)
        if refused is not None:
            return refused
        session = req.headers.get("X-Floor-Session", "")
        try:
            body = await req.json()
            table = body["table"]
            every = body.get("all") is True
            alert_id = 0 if every else body["id"]
            credential = None if session else parse_credential({"user": body["user"], "pin": body["pin"]})
            if not isinstance(table, str) or not isinstance(alert_id, int) or isinstance(alert_id, bool):
                raise TypeError
        except (ValueError, KeyError, TypeError, RecursionError, AttributeError):
            return web.json_response({"error": "expected {\"table\": text, \"id\": int or \"all\": true} "
                                               "from a signed-in supervisor (X-Floor-Session), or with "
                                               "\"user\": text, \"pin\": digits"}, status=400)
        if credential is None:
            who = self.sessions.user(session, req.remote or "?")
            if who is None:
                return web.json_response({"error": "signed out (idle too long, or signed out elsewhere): "
                                          "sign in again"}, status=401)
        else:
            user, refusal = await self._supervisor(req, *credential)
            if refusal is not None or user is None:
                return refusal or web.json_response({"error": "refused"}, status=403)
            who = user.name
        source = f"floor-page:{req.remote or '?'}"
        loop = asyncio.get_running_loop()
        if every:
            acked = await loop.run_in_executor(None, self.consumer.acknowledge_all, table, who, source)
            if not acked:
                return web.json_response({"error": "no open alert"}, status=404)
            return web.json_response({"acked": len(acked)})
        alert = await loop.run_in_executor(None, self.consumer.acknowledge, table, alert_id, who, source)
        if alert is None:
            return web.json_response({"error": "no such open alert"}, status=404)
        return web.json_response({"acked": alert})

    def close(self) -> None:
        """Stop serving (idempotent)."""
        if not self._thread.is_alive():
            return
        if self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(5)
            self._runner = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()  # else the loop is closed at interpreter exit: a traceback on every stop
