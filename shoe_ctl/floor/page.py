"""The floor page: every table of a room on one screen (aiohttp, its own thread and loop).

``GET /`` the page; ``GET /state`` the consumer's snapshot (:meth:`FloorConsumer.snapshot`);
``POST /ack`` ``{"table", "id" or "all": true, "user", "pin"}`` acknowledges an alert as a named
floor supervisor (400 without a user and PIN, 401/429 for a wrong one or a lockout, 403 for
another role, 404 when no such open alert); ``GET /recall?table=NAME`` the table's last hands. A request whose ``Host`` does not name this machine, or whose ``Origin`` is
another site, is refused (403). Connections are capped by address and must send a request head
within a deadline (:data:`LIMITS`). Off loopback a token is required, sent as ``X-Floor-Token`` on POSTs (the
page keeps one given as ``#token=...``). ``docs/floor.md`` describes the page.
"""

from __future__ import annotations

import asyncio
import ipaddress
import threading
from collections.abc import Awaitable, Callable

from aiohttp import web

from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.users import FLOOR_ROLES, Authenticator, AuthError, UserFileError, parse_credential
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

__all__ = ["FloorPage", "PAGE_HTML"]


TOKEN_MIN_LEN = 16
"""The shortest token taken; a client that sent 5 wrong tokens within 60 s is refused (429) for 60 s."""

LIMITS = Limits(max_connections=128, reserved_connections=16, per_address_connections=16, request_timeout_s=10.0)
"""The page's connection bounds (the dealer display's guards, ``shoe_ctl.web_guard``): 128
open at once, 16 kept for a browser on the floor PC itself, 16 for any other address; a request
head must arrive within 10 s of opening and of each answer. Far below the descriptor limit
(``LimitNOFILE``), so the consumer always has descriptors to reconnect to the broker."""


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
                 limits: Limits = LIMITS, authenticator: Authenticator | None = None) -> None:
        if not _loopback(host) and not token:
            raise ValueError(f"floor page on {host}: an address other than loopback needs a token")
        if token and len(token) < TOKEN_MIN_LEN:  # as the dealer display's (docs/security.md)
            raise ValueError(f"floor page on {host}: the token has {len(token)} characters, at least "
                             f"{TOKEN_MIN_LEN} are needed (python3 -c 'import secrets; "
                             "print(secrets.token_urlsafe(24))')")
        self.consumer = consumer
        self.host, self.port, self.token = host, port, token
        self._names = known_names((host, *allowed_hosts))
        self.authenticator = authenticator
        """The floor's named users (:class:`shoe_ctl.users.Authenticator`); None: no acknowledgement
        is taken (the page acknowledges only as a named floor supervisor)."""
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
        app.router.add_get("/recall", self._recall)
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

    async def _ack(self, req: web.Request) -> web.Response:
        verdict = self._gate.check(req.remote or "?", req.headers.get("X-Floor-Token", ""))
        if verdict == "locked":
            return web.json_response({"error": "too many wrong tokens from this client; try again later"},
                                     status=429, headers={"Retry-After": f"{self._gate.lockout_s:.0f}"})
        if verdict != "ok":
            return web.json_response({"error": "token"}, status=401)
        if req.content_type != "application/json":
            return web.json_response({"error": "Content-Type must be application/json"}, status=415)
        try:
            body = await req.json()
            table = body["table"]
            every = body.get("all") is True
            alert_id = 0 if every else body["id"]
            name, pin = parse_credential({"user": body["user"], "pin": body["pin"]})
            if not isinstance(table, str) or not isinstance(alert_id, int) or isinstance(alert_id, bool):
                raise TypeError
        except (ValueError, KeyError, TypeError, RecursionError, AttributeError):
            return web.json_response({"error": "expected {\"table\": text, \"id\": int or \"all\": true, "
                                               "\"user\": text, \"pin\": digits}"}, status=400)
        if self.authenticator is None:
            return web.json_response({"error": "this floor page has no users file (shoe-ctl floor --users FILE): "
                                      "alerts are acknowledged only by a named floor supervisor"}, status=403)
        source = f"floor-page:{req.remote or '?'}"
        loop = asyncio.get_running_loop()
        try:
            user = await loop.run_in_executor(None, self.authenticator.authenticate, name, pin, source)
        except AuthError as exc:
            return web.json_response({"error": str(exc)}, status=429 if exc.status == "locked" else 401)
        except UserFileError as exc:
            return web.json_response({"error": str(exc)}, status=503)
        if user.role not in FLOOR_ROLES:
            return web.json_response({"error": f"{user.name} is a {user.role.value}: a floor supervisor "
                                      "acknowledges"}, status=403)
        who = user.name
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


PAGE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Floor</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#111;color:#eee}
header{display:flex;gap:1.5em;align-items:center;padding:.6em 1em;background:#222}
header h1{font-size:1.2em;margin:0}
.sev{padding:.1em .5em;border-radius:.3em;font-weight:bold}
.critical{background:#b00020;color:#fff}.warning{background:#e0a000;color:#000}.info{background:#446;color:#fff}
table{border-collapse:collapse;width:100%}
th,td{padding:.35em .6em;border-bottom:1px solid #333;text-align:left;vertical-align:top}
tr.offline td{color:#888}
.short{color:#ff6060;font-weight:bold}
.alert{margin:.15em 0}
button{font-size:1em}
#conn.down{color:#ff6060}
#recall{position:fixed;inset:2em;background:#181820;border:2px solid #fb0;overflow:auto;padding:1em}
#recall[hidden]{display:none}
.rc{font-family:monospace}
</style></head>
<body>
<header><h1>Floor <span id="room"></span></h1>
<span id="conn">connecting...</span>
<span>open alerts: <span class="sev critical" id="n-critical">0</span>
<span class="sev warning" id="n-warning">0</span> <span class="sev info" id="n-info">0</span></span>
<label>User <input id="ack-user" autocomplete="username" autocapitalize="off"></label>
<label>PIN <input id="ack-pin" type="password" inputmode="numeric" autocomplete="off"></label></header>
<table><thead><tr><th>Table</th><th>Online</th><th>State</th><th>Street</th><th>Stub / required</th>
<th>Shoe</th><th>Last seen</th><th>Alerts</th></tr></thead><tbody id="rows"></tbody></table>
<div id="recall" hidden><button id="recall-close">Close</button> <b id="recall-title"></b><div id="recall-body"></div></div>
<script>
"use strict";
const token = (location.hash.match(/token=([^&]+)/) || [])[1];
if (token) { sessionStorage.setItem("floorToken", token); history.replaceState(null, "", location.pathname); }
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k && k.nodeType ? k : document.createTextNode(k == null ? "" : String(k)));
  return e;
}
async function ack(table, id) {
  const user = document.getElementById("ack-user").value.trim();
  const pinBox = document.getElementById("ack-pin");
  if (!user || !pinBox.value) { (user ? pinBox : document.getElementById("ack-user")).focus(); alert("User and PIN first"); return; }
  const headers = {"Content-Type": "application/json"};
  const t = sessionStorage.getItem("floorToken"); if (t) headers["X-Floor-Token"] = t;
  const pin = pinBox.value;
  pinBox.value = "";
  const body = id === "all" ? {table, all: true, user, pin} : {table, id, user, pin};
  const r = await fetch("/ack", {method: "POST", headers, body: JSON.stringify(body)});
  if (!r.ok) { const j = await r.json().catch(() => ({})); alert(j.error || ("refused: " + r.status)); }
  refresh();
}
function row(t) {
  const stub = t.stub || {};
  const short = stub.count != null && stub.required != null && stub.count < stub.required;
  const alerts = el("td", {});
  if (t.alerts.length > 1) {
    const all = el("button", {"data-ack-all": t.table}, "Acknowledge all " + t.alerts.length);
    all.onclick = () => ack(t.table, "all");
    alerts.append(all);
  }
  for (const a of t.alerts) {
    const b = el("button", {"data-ack": t.table + ":" + a.id}, "Acknowledge");
    b.onclick = () => ack(t.table, a.id);
    alerts.append(el("div", {class: "alert", "data-alert": t.table + ":" + a.id},
      el("span", {class: "sev " + a.severity}, a.severity), " ", a.code, ": ", a.message || "",
      a.count > 1 ? " \u00d7" + a.count : "", " ", b));
  }
  for (const a of t.acknowledged) {
    alerts.append(el("div", {class: "alert acked", "data-acked": t.table + ":" + a.id},
      "\\u2713 ", a.code, " acknowledged by ", a.acked.by, " at ", a.acked.at_text));
  }
  const rb = el("button", {"data-recall": t.table}, "Recall");
  rb.onclick = () => recall(t.table);
  alerts.append(rb);
  const shoe = t.shoe ? (t.shoe.status || "") : "";
  return el("tr", {class: t.online ? "online" : "offline", "data-table": t.table},
    el("td", {}, t.table), el("td", {class: "online-cell"}, t.online ? "online" : "OFFLINE"),
    el("td", {class: "state-cell"}, t.state || ""), el("td", {class: "street-cell"}, t.street || ""),
    el("td", {class: "stub-cell" + (short ? " short" : "")},
       stub.count == null ? "" : stub.count + " / " + stub.required + (stub.forecast ? " (short on " + stub.forecast + ")" : "")),
    el("td", {class: "shoe-cell"}, shoe),
    el("td", {class: "seen-cell"}, t.seen_ago_s == null ? "never" : t.seen_ago_s + " s ago",
       t.chain ? el("div", {class: "chain-cell"}, "record #" + t.chain.seq + " " + t.chain.tag) : ""), alerts);
}
async function recall(table) {
  const r = await fetch("/recall?table=" + encodeURIComponent(table), {cache: "no-store"});
  const j = await r.json().catch(() => ({hands: []}));
  const body = document.getElementById("recall-body");
  body.replaceChildren();
  document.getElementById("recall-title").textContent = "Recall " + table + ": the last " + (j.hands || []).length
    + " hands (downcards stay at the table)";
  for (const h of (j.hands || []).slice().reverse()) {
    body.append(el("h3", {}, "Hand " + h.hand + ", started " + h.started + (h.finished ? "" : " (in progress)")));
    for (const e of h.entries) {
      const what = e.kind === "card" ? (e.street || "") + " " + (e.seat ? "seat " + e.seat + " " : "") + e.role + " " + e.card
        : e.kind === "input" ? e.action + (e.seat ? " seat " + e.seat : "") + (e.by ? " (" + e.by + ")" : "")
        : (e.latched ? "STOP " : "") + e.code + ": " + e.message;
      body.append(el("div", {class: "rc"}, e.t + "  " + what));
    }
  }
  document.getElementById("recall").hidden = false;
}
document.getElementById("recall-close").onclick = () => { document.getElementById("recall").hidden = true; };
let shown = -1;
async function refresh() {
  let s;
  try { s = await (await fetch("/state", {cache: "no-store"})).json(); }
  catch (e) { document.getElementById("conn").textContent = "page offline"; return; }
  document.getElementById("room").textContent = s.room;
  const c = document.getElementById("conn");
  c.textContent = s.connected ? "broker connected" : "broker DISCONNECTED"; c.className = s.connected ? "" : "down";
  for (const k of ["critical", "warning", "info"]) document.getElementById("n-" + k).textContent = s.alerts[k];
  const rows = document.getElementById("rows");
  rows.replaceChildren(...s.tables.map(row));
  shown = s.version;
}
refresh(); setInterval(refresh, 1000);
</script></body></html>
"""
