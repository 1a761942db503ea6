"""The shoe link's admission and sealing: which frames a host acts on, and how its own frames go
out (``docs/protocol.md``, "Authentication (version 2)"; ``docs/security.md``).

:class:`Admission` holds the pairing secret, the session keys a HELLO opens, the freshness
counters both ways, the challenges outstanding and the table's shoe (its serial). Without a
secret it speaks version 1 and admits every plain frame. It refuses (and reports once per code,
through the session's callback) an unpaired shoe, a HELLO that fails its MAC, a forged or replayed
frame. Part of :class:`drivers.session.LinkSession`; no I/O.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from drivers import protocol as p
from drivers.link_stats import LinkStats
from drivers.link_timers import HELLO_INTERVAL
from shoe_ctl.events import ShoeInfo

log = logging.getLogger("drivers.session")

REFUSALS = {
    "unpaired": "a shoe that speaks without authentication (not paired with this table)",
    "unknown-shoe": "a shoe with another serial number than the table's",
    "auth-failed": "a HELLO whose MAC does not verify (a shoe paired elsewhere, or a forgery)",
    "forged": "a frame without a valid MAC inside the session (another program writing into the line)",
    "replay": "a frame whose counter is not above the last one (a replay)",
}
"""The ``refused`` codes of :class:`~shoe_ctl.events.LinkChanged` and what each means."""
MAX_CHALLENGES = 16
"""Challenges a host keeps outstanding (answers to older ones are refused as stale)."""

Reporter = Callable[[str, str, "ShoeInfo | None"], None]
"""What the session does with a refusal reported the first time: ``(code, detail, info)``."""


def _type_name(msg: object) -> str:
    return p.TYPE_NAMES.get(getattr(msg, "TYPE", 0), "?")


class Admission:
    """The host's gate and seal for one shoe, across connections.

    :param name: the port's name, for the log.
    :param out: the session's list of frames to write (frames are appended).
    :param stats: the link's counters (``refused``).
    :param report: called with ``(code, detail, info)`` the first time a code is refused until
        a HELLO is accepted again (:meth:`accepted`).
    :param secret: the pairing secret (32 bytes; version 2), or None (version 1).
    :param serial: the table's shoe; None: the first shoe accepted is pinned.
    :raises ValueError: a secret that is not 32 bytes.
    """

    def __init__(self, name: str, out: list[bytes], stats: LinkStats, report: Reporter, *,
                 secret: bytes | None, serial: str | None) -> None:
        if secret is not None:
            p.hello_key(secret)  # checks the size
        self.name = name
        self._out = out
        self._stats = stats
        self._report = report
        self.secret = secret
        self.serial = serial
        self.last_serial: str | None = None
        self.keys: p.SessionKeys | None = None
        self._tx_ctr = 0
        self._rx_ctr = 0
        self._challenges: list[bytes] = []
        self._refused: set[str] = set()
        self._host_seq = 0
        self.hello_at = 0.0
        """When the last HOST_HELLO of the connection went out (seconds)."""
        self.foreign_sealed = 0
        """Frames of this connection sealed under a session or secret this host does not know (in
        version 1: every sealed frame)."""

    @property
    def version(self) -> int:
        """The protocol version spoken: 2 (authenticated) with a secret, else 1."""
        return p.AUTH_VERSION if self.secret is not None else p.PROTOCOL_VERSION

    @property
    def auth(self) -> str:
        """``"hmac"`` (version 2, every frame authenticated) or ``"off"`` (version 1, a bench)."""
        return "hmac" if self.secret is not None else "off"

    @property
    def pinned(self) -> str | None:
        """The serial a HELLO must carry: the table's shoe, else the first one accepted."""
        return self.serial or self.last_serial

    def connection_made(self, now: float) -> None:
        """A port opened at ``now``: no session keys, and a HOST_HELLO goes out."""
        self.keys = None
        self.hello_at = now
        self.foreign_sealed = 0
        self.host_hello()

    def connection_lost(self) -> None:
        """The port closed: the session's keys are gone."""
        self.keys = None

    def accepted(self, hello: p.Hello) -> None:
        """The session took ``hello``: its shoe is pinned, every refusal may be reported again."""
        self.last_serial = hello.serial
        self._refused.clear()

    def next_seq(self) -> int:
        """The host's next frame number (1..2^32-1, wrapping; informative only)."""
        self._host_seq = self._host_seq % p.SEQ_MAX + 1
        return self._host_seq

    def send(self, msg: p.Message | p.Pair) -> None:
        """Queue ``msg``: plain in version 1, sealed under the session in version 2 (dropped when
        no session is open: outside one, the host sends only HOST_HELLO, :meth:`host_hello`)."""
        if self.secret is None:
            self._out.append(p.encode(msg))  # type: ignore[arg-type]
        elif self.keys is not None:
            self._tx_ctr += 1
            self._out.append(p.seal(msg, self.keys.host_mac, self._tx_ctr))

    def host_hello(self) -> None:
        """HOST_HELLO with this host's version; version 2: a fresh challenge, under the hello key."""
        v = self.version
        msg = p.HostHello(self.next_seq(), v, v)
        if self.secret is None:
            self._out.append(p.encode(msg))
            return
        challenge = os.urandom(p.NONCE_SIZE)
        self._challenges = [*self._challenges[-(MAX_CHALLENGES - 1):], challenge]
        self._out.append(p.seal(msg, p.hello_key(self.secret), 0, challenge=challenge))

    def host_hello_due(self) -> float:
        """Before a HELLO: when the next HOST_HELLO goes out."""
        return self.hello_at + HELLO_INTERVAL

    def host_hello_again(self, now: float) -> None:
        """A HOST_HELLO at ``now``."""
        self.hello_at = now
        self.host_hello()

    def challenge_again(self, now: float) -> None:
        """Challenge the shoe again, at most as often as HOST_HELLOs go out anyway."""
        if now - self.hello_at >= HELLO_INTERVAL:
            self.hello_at = now
            self.host_hello()

    def admit(self, item: object, now: float) -> p.Message | None:
        """The message in ``item`` when it may be acted on, else None (refused or ignored).

        Version 1: every plain message. Version 2: a sealed HELLO answering an outstanding
        challenge with a valid MAC under the session it opens (the session starts); any other
        sealed frame with a valid MAC under the session's key and a counter above the last one.
        Refused, and reported: a plain (unauthenticated) HELLO or frame, a HELLO that fails its
        MAC, a forged or replayed frame inside a session. Ignored: frames of a session this host
        did not open (before its first HELLO), the shoe's frames outside a session (then it is
        challenged again), and in version 1 every sealed frame (a paired shoe's: counted in
        :attr:`foreign_sealed` and ``LinkStats.sealed_unchecked``)."""
        secret = self.secret
        if secret is None:
            if isinstance(item, p.Sealed):
                # a paired shoe's frame: no secret to check it with, never acted on; counted, so
                # the silence that follows is named for what it is (LinkHealth.quiet_fire)
                self.foreign_sealed += 1
                self._stats.sealed_unchecked += 1
                return None
            return item  # type: ignore[return-value]
        if not isinstance(item, p.Sealed):
            self._plain(item)
            return None
        msg = item.msg
        if isinstance(msg, p.Hello):
            return self._admit_hello(item, msg, secret, now)
        keys = self.keys
        if keys is None or not item.verify(keys.shoe_mac):
            if item.verify(p.hello_key(secret)):
                self.challenge_again(now)  # the shoe outside a session (power-up, replug)
            elif keys is None:
                self.foreign_sealed += 1  # an earlier host's session, or another secret
            elif self._challenges:
                # A HOST_HELLO of this host is unanswered: the shoe may already be in the session
                # it opened, whose HELLO was lost on a noisy line. Its frames cannot be checked
                # before that HELLO is seen: ignored (never acted on) and the shoe challenged
                # again, not reported as forged.
                self.challenge_again(now)
            else:
                self.refuse("forged", f"a {_type_name(msg)} frame (seq {msg.seq}) whose MAC does not verify: "
                            "a forged frame")
            return None
        if item.ctr <= self._rx_ctr:
            self.refuse("replay", f"a {_type_name(msg)} frame (seq {msg.seq}) with counter {item.ctr}, not "
                        f"above {self._rx_ctr}: a replayed frame")
            return None
        self._rx_ctr = item.ctr
        return msg  # type: ignore[no-any-return]

    def _plain(self, msg: object) -> None:
        """An unauthenticated frame on an authenticated link: refused."""
        if isinstance(msg, p.Hello):
            self.refuse("unpaired", f"shoe {msg.serial!r} speaks protocol {msg.version_max} without "
                        "authentication: it is not paired with this table (shoe-ctl pair)", msg.info())
        elif self.keys is not None:
            self.refuse("forged", f"an unauthenticated {_type_name(msg)} frame inside the session: another "
                        "program writes into the shoe's line")
        else:
            self.refuse("unpaired", "the device on this port speaks without authentication: not a shoe "
                        "paired with this table (shoe-ctl pair)")

    def _admit_hello(self, item: p.Sealed, hello: p.Hello, secret: bytes, now: float) -> p.Hello | None:
        if item.challenge in self._challenges:
            keys = p.session_keys(secret, item.challenge, item.nonce)
            if not item.verify(keys.shoe_mac):
                self._auth_failed(hello)
                return None
            del self._challenges[: self._challenges.index(item.challenge) + 1]
            pinned = self.pinned
            if pinned is not None and hello.serial != pinned:
                return hello  # refused by the session before any of its frames could count
            self.keys = keys
            self._rx_ctr = item.ctr
            self._tx_ctr = 0
            return hello
        if item.challenge == bytes(p.NONCE_SIZE) and item.verify(p.hello_key(secret)):
            self.host_hello()  # an unasked HELLO of our shoe: challenge it
            return None
        if item.verify(p.session_keys(secret, item.challenge, item.nonce).shoe_mac):
            self._stale_hello(hello, now)
            return None
        self._auth_failed(hello)
        return None

    def _auth_failed(self, hello: p.Hello) -> None:
        self.refuse("auth-failed", f"HELLO from shoe {hello.serial!r} fails authentication: a shoe paired "
                    "with another secret (another table's, or a swapped shoe) or a forged frame", hello.info())

    def _stale_hello(self, hello: p.Hello, now: float) -> None:
        """A HELLO the table's secret made, answering a challenge this host no longer holds: the
        shoe answered a replayed HOST_HELLO (it is now in a session this host did not open), or
        its earlier HELLO was replayed. Not a session (its freshness is unproven) and not the
        shoe's fault: a stall, ended by a new challenge at once (frames of that session are then
        ignored while it is unanswered, never called forged)."""
        self._stats.stale_hellos += 1
        log.warning("shoe link %s: a HELLO from shoe %r answers a challenge this host no longer holds (a "
                    "replayed HOST_HELLO or HELLO on the line): no session, the shoe is challenged again",
                    self.name, hello.serial)
        if self._challenges:
            self.challenge_again(now)
        else:
            self.host_hello_again(now)

    def refuse(self, code: str, detail: str, info: ShoeInfo | None = None) -> None:
        """Count a refused frame; report ``code`` once until a HELLO is accepted again."""
        self._stats.refused += 1
        if code in self._refused:
            return
        self._refused.add(code)
        log.warning("shoe link %s: refused (%s): %s", self.name, code, detail)
        self._report(code, detail, info)

    def pair(self, secret: bytes) -> None:
        """Send the new pairing ``secret`` (docs/protocol.md, "Pairing"): inside an authenticated
        session hidden under the session's pad (a rotation), else under its own hello key (a
        shoe in pairing mode); then speak under it: the session ends, the shoe is challenged.

        :raises ValueError: a secret that is not 32 bytes.
        """
        key = p.hello_key(secret)
        seq = self.next_seq()
        if self.secret is not None and self.keys is not None:
            self.send(p.Pair(seq, p.xor(secret, p.pair_pad(self.keys.host_to_shoe, self._tx_ctr + 1))))
        else:
            self._out.append(p.seal(p.Pair(seq, secret), key, 0))
        self.secret = bytes(secret)
        self.keys = None
        self.host_hello()
