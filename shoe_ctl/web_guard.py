"""The web pages' limits against floods and hostile pages (docs/security.md, "Floods and
connections"; the API limits in docs/display.md): plain helpers with no I/O, used by the dealer
display (:mod:`shoe_ctl.display.server`) and the floor page (:mod:`shoe_ctl.floor.page`):

- :class:`Limits`: every bound in one place (connections, timeouts, input rate, token rules);
- :class:`~shoe_ctl.service.ratelimit.RateLimiter`: a token bucket per client address (inputs);
- :class:`TokenGate`: the token comparison with a lockout after repeated wrong tokens;
- :class:`Slots`: connections and event streams shared so the kiosk always gets in, and
  :class:`Admission` / :class:`CappedProtocol`: connections admitted by their address as they are
  accepted (both pages);
- :func:`host_allowed` / :func:`origin_allowed`: the ``Host`` / ``Origin`` check that stops a page
  served under a foreign name (DNS rebinding) or from another site (CSRF) from reaching the API;
- :func:`no_icon`: the answer to the browser's own ``/favicon.ico`` request, on both pages.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

from shoe_ctl.service.ratelimit import RateLimiter

log = logging.getLogger(__name__)

__all__ = ["Admission", "CappedProtocol", "Limits", "RateLimiter", "Slots", "TokenGate", "quiet_accept_errors", "host_allowed", "is_kiosk", "no_icon", "origin_allowed",
           "split_host"]


@dataclass(frozen=True)
class Limits:
    """The display server's bounds (seconds, counts, bytes).

    :param max_connections: open TCP connections served at once; more are closed at accept.
    :param reserved_connections: of those, kept for the kiosk (:func:`is_kiosk`: the dealer's own
        screen on this machine) — every other address shares the rest (at most a quarter is kept
        when ``max_connections`` is small) ...
    :param per_address_connections: ... and each other address holds at most this many, so no
        client, and no crowd of clients, locks the dealer's screen out.
    :param request_timeout_s: a connection must deliver a complete request head within this time
        of opening (and again after each answer): aiohttp's ``keepalive_timeout`` (slowloris).
    :param body_timeout_s: a POST body must arrive within this time.
    :param max_body: bytes of a POST body (aiohttp's ``client_max_size``).
    :param max_events: ``/events`` streams at once (more get 503); ``reserved_events`` of them
        kept for the kiosk and ``per_address_events`` for each other address, as connections.
    :param events_backlog: snapshots queued for one stream; a slow stream skips to the newest.
    :param events_write_timeout_s: a stream that takes longer to accept one snapshot is closed.
    :param inputs_per_s: sustained POSTs (``/input``, ``/ack``) per client address ...
    :param inputs_burst: ... with bursts up to this many; more get 429.
    :param inputs_total_per_s: sustained POSTs from every address but the kiosk's together ...
    :param inputs_total_burst: ... with bursts up to this many (many source addresses do not
        multiply the per-address rate); more get 429.
    :param token_min_len: shortest token the display starts with.
    :param token_failures: wrong tokens a client address may send ...
    :param token_lockout_s: ... before every POST from it gets 429 for this long.
    :param publish_gap_s: the server folds commands in and publishes a snapshot at most once per
        this many seconds; a command handed sooner after the last waits for the next turn (the
        first one after a quiet spell goes at once), so a burst costs one snapshot.
    :param allowed_hosts: host names accepted in ``Host`` besides IP addresses, ``localhost``, this
        machine's name and ``NAME.local`` (see :func:`host_allowed`).
    """

    max_connections: int = 64
    reserved_connections: int = 16
    per_address_connections: int = 8
    request_timeout_s: float = 10.0
    body_timeout_s: float = 5.0
    max_body: int = 16 * 1024
    max_events: int = 16
    reserved_events: int = 4
    per_address_events: int = 2
    events_backlog: int = 256
    events_write_timeout_s: float = 10.0
    inputs_per_s: float = 5.0
    inputs_burst: int = 10
    inputs_total_per_s: float = 10.0
    inputs_total_burst: int = 20
    token_min_len: int = 16
    token_failures: int = 5
    token_lockout_s: float = 60.0
    publish_gap_s: float = 0.01
    allowed_hosts: tuple[str, ...] = ()


KIOSK_ADDRESSES = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
"""The addresses the kiosk browser on the Pi itself connects from (docs/install-pi.md)."""


def is_kiosk(address: str | None) -> bool:
    """True for the dealer's own screen: a client on this machine at ``127.0.0.1`` or ``::1``
    (not every loopback address: a program may connect from ``127.0.0.2`` and beyond)."""
    return address in KIOSK_ADDRESSES


class Slots:
    """Connection (or stream) slots shared fairly: the kiosk may take all ``total``; every other
    address shares ``total`` less the reserve, at most ``per_address`` each.

    :param total: slots in all; :param reserved: kept for the kiosk (at most a quarter of
        ``total``); :param per_address: the most one other address holds.
    """

    def __init__(self, total: int, reserved: int, per_address: int) -> None:
        self.total = total
        self.others_max = total - min(reserved, total // 4)
        self.per_address = per_address
        self.used = 0
        self.others = 0
        self.by_address: dict[str, int] = {}

    def take(self, address: str | None) -> bool:
        """Take a slot for ``address``; False (nothing taken) when its share is used up."""
        if self.used >= self.total:
            return False
        if not is_kiosk(address):
            key = address or "?"
            held = self.by_address.get(key, 0)
            if self.others >= self.others_max or held >= self.per_address:
                return False
            self.by_address[key] = held + 1
            self.others += 1
        self.used += 1
        return True

    def give_back(self, address: str | None) -> None:
        """Return a slot :meth:`take` gave ``address``."""
        self.used -= 1
        if not is_kiosk(address):
            key = address or "?"
            self.others -= 1
            held = self.by_address.pop(key, 1) - 1
            if held > 0:
                self.by_address[key] = held


class Admission:
    """Connections to one server admitted by address (:class:`Slots`), the refusals counted and
    logged once per thousand.

    :param what: the server's name in the log; the other parameters as :class:`Slots`'.
    """

    def __init__(self, what: str, total: int, reserved: int, per_address: int) -> None:
        self.what = what
        self.slots = Slots(total, reserved, per_address)
        self.refused = 0

    def admit(self, address: str | None) -> bool:
        """Take a connection slot for ``address``; False (logged) when its share is used up."""
        if self.slots.take(address):
            return True
        if self.refused % 1000 == 0:
            log.warning("%s: %d connections open, refusing more from %s (%d refused so far)",
                        self.what, self.slots.used, address, self.refused + 1)
        self.refused += 1
        return False

    def factory(self, make: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server``: each connection a :class:`CappedProtocol`
        around ``make()`` (aiohttp's request handler)."""
        return lambda: CappedProtocol(make, self)


class CappedProtocol(asyncio.Protocol):
    """One connection: admitted by its address when it arrives (:meth:`Admission.admit`, before
    aiohttp sees it) and then served by ``make()``, counted while open; else closed at once."""

    def __init__(self, make: Callable[[], asyncio.Protocol], admission: Admission) -> None:
        self._make = make
        self._admission = admission
        self._inner: asyncio.Protocol | None = None
        self._address: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        self._address = str(peer[0]) if isinstance(peer, tuple) and peer else None
        if not self._admission.admit(self._address):
            transport.close()
            return
        self._inner = self._make()
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._inner is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._inner is not None:
            self._admission.slots.give_back(self._address)
            self._inner.connection_lost(exc)


def quiet_accept_errors(loop: asyncio.AbstractEventLoop, what: str) -> None:
    """Log a descriptor shortage at ``accept()`` (EMFILE: asyncio pauses accepting for a second
    and calls the loop's exception handler, a traceback each time) as one line per minute; every
    other loop error as before."""
    last = [0.0]

    def handler(lp: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and "accept" in str(context.get("message", "")):
            now = time.monotonic()
            if now - last[0] >= 60.0:
                last[0] = now
                log.warning("%s: cannot accept connections: %s (retrying; raise LimitNOFILE)", what, exc)
            return
        lp.default_exception_handler(context)

    loop.set_exception_handler(handler)


class TokenGate:
    """The shared-secret check with a lockout.

    :param token: the secret (None: no token configured, every check passes).
    :param failures: wrong tokens a client may send within ``lockout_s`` ...
    :param lockout_s: ... after which it is refused (``check`` returns ``"locked"``) until
        ``lockout_s`` passed since its last wrong token; the right token does not lift it.
    """

    def __init__(self, token: str | None, *, failures: int, lockout_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._token = token.encode() if token else None
        self.failures = failures
        self.lockout_s = lockout_s
        self.wrong = 0
        self._clock = clock
        self._bad: dict[str, list[float]] = {}  # client -> times of its recent wrong tokens

    def check(self, client: str, given: str) -> str:
        """``"ok"``, ``"wrong"`` (counted) or ``"locked"`` (not compared at all)."""
        if self._token is None:
            return "ok"
        now = self._clock()
        recent = [t for t in self._bad.get(client, ()) if now - t < self.lockout_s]
        if len(recent) >= self.failures:
            self._bad[client] = recent
            return "locked"
        if hmac.compare_digest(given.encode(), self._token):
            return "ok"
        self.wrong += 1
        recent.append(now)
        self._bad[client] = recent
        if len(recent) == self.failures:
            log.warning("display: %d wrong tokens from %s; its inputs are refused for %g s",
                        self.failures, client, self.lockout_s)
        if len(self._bad) > 1024:
            self._bad = {k: v for k, v in self._bad.items() if v and now - v[-1] < self.lockout_s}
        return "wrong"


def split_host(value: str) -> tuple[str, str]:
    """``"name:port"`` / ``"[::1]:port"`` / ``"name"`` -> ``(name lower-cased, port or "")``."""
    value = value.strip()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name.lower(), rest.removeprefix(":")
    if value.count(":") == 1:
        name, _, port = value.partition(":")
        return name.lower(), port
    return value.lower(), ""


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def known_names(extra: Iterable[str] = ()) -> frozenset[str]:
    """Names this machine answers to: ``localhost``, its host name and ``NAME.local``, ``extra``."""
    me = socket.gethostname().lower()
    return frozenset({"localhost", me, f"{me}.local", *(e.lower() for e in extra)})


def host_allowed(host: str | None, names: frozenset[str]) -> bool:
    """True when a ``Host`` header names this machine: an IP address (a rebinding page cannot
    have one: its address bar holds the attacker's name) or one of ``names``."""
    if not host:
        return False
    name, _ = split_host(host)
    return _is_ip(name) or name in names


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """True when there is no ``Origin`` (not a browser's cross-site request) or it is
    ``http(s)://`` + the request's own ``Host`` (a same-origin page)."""
    if origin is None:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc or not host:
        return False
    return split_host(parts.netloc) == split_host(host) or (
        split_host(parts.netloc)[0] == split_host(host)[0]
        and {split_host(parts.netloc)[1], split_host(host)[1]} <= {"", "80" if parts.scheme == "http" else "443"})


async def no_icon(_request: web.Request) -> web.Response:
    """``GET /favicon.ico`` of the dealer display and the floor page: the browser asks for it by
    itself; 204 "no content" (kept a day), so the kiosk's console shows no 404."""
    return web.Response(status=204, headers={"Cache-Control": "max-age=86400"})
