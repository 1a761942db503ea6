"""The shoe's side of version 2 (docs/protocol.md sections 14-15): the pairing secret, the
session keys, the freshness counters, which host frames it may act on, and sealing its own.

:class:`ShoeAuth` is fed each host body (CRC checked) and says what the shoe may act on
(:meth:`~ShoeAuth.admit`); it seals the shoe's frames (:meth:`~ShoeAuth.frame`): version 1 while
unpaired, under the session's key or (no session) the hello key once paired.
"""

from . import codec as c

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    from collections.abc import Callable

    from .crypto import HmacKey  # noqa: F401 (type comments)


class ShoeAuth:
    """The pairing and the session of one shoe.

    :param on_secret: called with each new secret (a pairing or a rotation), to keep it.
    :param pairing: pairing mode: a PAIR sealed under its own secret's hello key is taken.
    """

    def __init__(self, on_secret: "Callable[[bytes], None]", pairing: bool = False) -> None:
        self.on_secret = on_secret
        self.pairing = pairing
        self.secret = None  # type: bytes | None
        self._hello_key = None  # type: HmacKey | None
        self.session = None  # type: c.Session | None
        self._tx_ctr = 0
        self._rx_ctr = 0
        self.challenge = bytes(c.NONCE_SIZE)
        self.unkept = 0
        """PAIR secrets the shoe's store could not keep (the old secret stayed)."""

    def set_secret(self, secret: bytes) -> None:
        """Pair with ``secret`` (32 bytes); any session ends. The secret is kept (``on_secret``)
        before it is taken: a shoe whose store fails keeps its old secret and answers nothing
        under the new one, so the host keeps its old secret too (docs/protocol.md section 15).

        :raises ValueError: a secret of another size.
        :raises OSError: (or what ``on_secret`` raises) the secret could not be kept.
        """
        if len(secret) != c.SECRET_SIZE:
            raise ValueError("a pairing secret is 32 bytes, not " + str(len(secret)))
        secret = bytes(secret)
        self.on_secret(secret)
        self.secret = secret
        self._hello_key = c.hello_key(secret)
        self.session = None

    def take(self, secret: bytes) -> bool:
        """:meth:`set_secret` for a PAIR: False (counted in :attr:`unkept`) when the store fails,
        so the shoe says no HELLO under a secret it did not keep and the host keeps its own."""
        try:
            self.set_secret(secret)
        except OSError:
            self.unkept += 1
            return False
        return True

    def open_session(self, challenge: bytes, nonce: bytes) -> None:
        """The session a HELLO answering ``challenge`` with ``nonce`` opens: new keys, both
        counters from 0."""
        assert self.secret is not None
        self.session = c.Session(self.secret, challenge, nonce)
        self._tx_ctr = self._rx_ctr = 0

    def frame(self, mtype: int, seq: int, payload: bytes, extra: bytes = b"") -> bytes:
        """A frame of the shoe's: plain while unpaired; paired, sealed with the next counter
        under the session's key, or the hello key when there is no session."""
        if self.secret is None:
            return c.frame_of(c.body_v1(mtype, seq, payload))
        self._tx_ctr += 1
        key = self.session.shoe_mac if self.session is not None else self._hello_key
        assert key is not None
        return c.frame_of(c.body_v2(mtype, seq, payload, key, self._tx_ctr, extra))

    def admit(self, body: bytes) -> "tuple[int, tuple] | None":  # type: ignore[type-arg]
        """``(type, fields)`` of a host frame this shoe may act on, or None (refused): unpaired,
        plain frames (and in pairing mode a PAIR sealed under its own secret's hello key);
        paired, sealed frames with a valid MAC (HOST_HELLO: the hello key, its challenge kept;
        others: the session's key and a counter above the last). A rotated PAIR comes out with
        the new secret unmasked.

        :raises DropFrame: a frame that breaks a row (in the version whose layout it fits).
        """
        mtype = body[0]
        try:
            sealed = c.Sealed(body)
            fields = c.parse_host(mtype, sealed.payload)
        except c.DropFrame as sealed_error:
            try:
                plain = c.parse_host(mtype, body[5:])
            except c.DropFrame:
                if sealed_error.args[0] not in ("M-LENGTH", "F-TYPE"):
                    raise sealed_error from None
                raise
            return (mtype, plain) if self.secret is None else None
        if self.secret is None:
            if mtype == c.T_PAIR and self.pairing and sealed.verify(c.hello_key(fields[0])):
                return (mtype, fields)
            return None
        if mtype == c.T_HOST_HELLO:
            if self._hello_key is None or not sealed.verify(self._hello_key):
                return None
            self.challenge = sealed.challenge
            return (mtype, fields)
        session = self.session
        if session is None or sealed.ctr <= self._rx_ctr or not sealed.verify(session.host_mac):
            return None
        self._rx_ctr = sealed.ctr
        if mtype == c.T_PAIR:
            pad = c.pair_pad(session.host_to_shoe, sealed.ctr)
            secret = fields[0]
            return (mtype, (bytes([secret[i] ^ pad[i] for i in range(c.SECRET_SIZE)]),))
        return (mtype, fields)
