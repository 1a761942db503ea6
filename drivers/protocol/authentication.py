"""The shoe protocol's version 2: authenticated frames, their keys, and the decoder that reads
them (``docs/protocol.md``, "Authentication (version 2)").

Part of :mod:`drivers.protocol` (its public face). The messages are those of version 1 (and PAIR);
the body gains an authentication trailer before the CRC::

    type:u8  seq:u32  payload  [challenge:8 [nonce:8]]  ctr:u32  mac:8  crc:u32

``challenge`` is present in HOST_HELLO and HELLO, ``nonce`` in HELLO only. ``mac`` is the first 8
bytes of HMAC-SHA256(key, everything before it); ``crc`` covers everything before it, mac included,
exactly as in version 1.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field
from typing import Any

from cobs import cobs

from drivers.exc import FrameError, MessageError
from drivers.protocol.codec import (
    CRC,
    HEADER,
    MAX_BODY,
    MIN_BODY,
    _check,
    _decode_payload,
    _payload,
    crc32,
    decode_body,
)
from drivers.protocol.framing import DELIMITER, MAX_ENCODED, FrameDecoder
from drivers.protocol.messages import (
    SEQ_MAX,
    T_HELLO,
    T_HOST_HELLO,
    T_PAIR,
    ButtonMsg,
    CardMsg,
    FaultMsg,
    ForeignMsg,
    Heartbeat,
    Hello,
    Pair,
    StubMsg,
)

AUTH_VERSION = 2
"""The protocol version whose frames are authenticated."""
MAC_SIZE = 8
"""Bytes of the truncated HMAC-SHA256 in every version-2 frame (64 bits)."""
NONCE_SIZE = 8
"""Bytes of the host's challenge and of the shoe's nonce."""
SECRET_SIZE = 32
"""Bytes of a pairing secret."""
CTR = struct.Struct(">I")
"""The freshness counter of a version-2 frame (u32, big-endian)."""
AUTH_TRAILER = CTR.size + MAC_SIZE
"""Bytes a version-2 frame adds to every message (12), besides the HELLO challenge fields."""
_LABEL = b"shoe-ctl/2 "


def _prf(key: bytes, *parts: bytes) -> bytes:
    return hmac.new(key, b"".join(parts), hashlib.sha256).digest()


def hello_key(secret: bytes) -> bytes:
    """The key of the frames sent outside a session (HOST_HELLO, an unasked HELLO, and what a
    shoe sends before any host challenged it): HMAC-SHA256(secret, ``"shoe-ctl/2 hello"``).

    :raises ValueError: a secret that is not :data:`SECRET_SIZE` bytes.
    """
    if len(secret) != SECRET_SIZE:
        raise ValueError(f"a pairing secret is {SECRET_SIZE} bytes, not {len(secret)}")
    return _prf(secret, _LABEL, b"hello")


class MacKey:
    """A MAC key made ready once: HMAC-SHA256 keyed with it, whose state is copied for each frame
    (:meth:`tag`) instead of keying a new HMAC per frame (docs/performance.md, "The loaded full
    stack: the shoe link's CPU"). Its tags are those of :func:`mac` with the same key bytes."""

    __slots__ = ("_keyed",)

    def __init__(self, key: bytes) -> None:
        self._keyed = hmac.new(key, digestmod=hashlib.sha256)

    def tag(self, signed: bytes) -> bytes:
        """The :data:`MAC_SIZE`-byte tag of ``signed``."""
        h = self._keyed.copy()
        h.update(signed)
        return h.digest()[:MAC_SIZE]


@dataclass(frozen=True, slots=True)
class SessionKeys:
    """The two keys of one session: ``host_to_shoe`` and ``shoe_to_host`` (32 bytes each), and
    each made ready for the frames of the session (``host_mac``, ``shoe_mac``: :class:`MacKey`)."""

    host_to_shoe: bytes = field(repr=False)
    shoe_to_host: bytes = field(repr=False)
    host_mac: MacKey = field(init=False, repr=False, compare=False)
    shoe_mac: MacKey = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "host_mac", MacKey(self.host_to_shoe))
        object.__setattr__(self, "shoe_mac", MacKey(self.shoe_to_host))


def session_keys(secret: bytes, challenge: bytes, nonce: bytes) -> SessionKeys:
    """The keys of the session a HELLO opens: ``base = HMAC(secret, "shoe-ctl/2 session" ||
    challenge || nonce)``, then ``HMAC(base, "host->shoe")`` and ``HMAC(base, "shoe->host")``.

    :raises ValueError: a secret, challenge or nonce of the wrong size.
    """
    hello_key(secret)  # checks the size
    if len(challenge) != NONCE_SIZE or len(nonce) != NONCE_SIZE:
        raise ValueError(f"challenge and nonce are {NONCE_SIZE} bytes each")
    base = _prf(secret, _LABEL, b"session", challenge, nonce)
    return SessionKeys(_prf(base, b"host->shoe"), _prf(base, b"shoe->host"))


def mac(key: bytes | MacKey, signed: bytes) -> bytes:
    """The :data:`MAC_SIZE`-byte tag of ``signed``: HMAC-SHA256 truncated to its first bytes
    (``key``: the key's bytes, or the key made ready as a :class:`MacKey`)."""
    if isinstance(key, MacKey):
        return key.tag(signed)
    return _prf(key, signed)[:MAC_SIZE]


def _auth_fields(mtype: int) -> int:
    """Bytes of the HELLO challenge fields in a version-2 frame of type ``mtype``."""
    return NONCE_SIZE if mtype == T_HOST_HELLO else 2 * NONCE_SIZE if mtype == T_HELLO else 0



def pair_pad(session_key: bytes, ctr: int) -> bytes:
    """The 32-byte pad that hides a rotated secret inside a session's PAIR frame:
    HMAC-SHA256(host->shoe key, ``"shoe-ctl/2 pair"`` || ctr as u32)."""
    return _prf(session_key, _LABEL, b"pair", CTR.pack(ctr))


def xor(a: bytes, b: bytes) -> bytes:
    """``a`` XOR ``b`` (same length)."""
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


@dataclass(slots=True)
class Sealed:
    """One version-2 frame, decoded but not yet trusted. Made once per frame received and never
    changed after; not a frozen dataclass, whose fields are set one ``object.__setattr__`` at a
    time (about 1 µs a frame more; docs/performance.md, "The loaded full stack: the shoe link's
    CPU").

    :param msg: the message inside.
    :param ctr: its freshness counter (a receiver accepts only a counter above the last one).
    :param challenge: HOST_HELLO and HELLO: the host's challenge (8 bytes), else empty.
    :param nonce: HELLO: the shoe's nonce (8 bytes), else empty.
    :param signed: the bytes the tag covers; ``tag``: the tag received.
    """

    msg: Any
    ctr: int
    challenge: bytes = b""
    nonce: bytes = b""
    signed: bytes = field(default=b"", repr=False)
    tag: bytes = field(default=b"", repr=False)

    def verify(self, key: bytes | MacKey) -> bool:
        """True when the tag is the MAC of the frame under ``key`` (bytes or a :class:`MacKey`;
        constant-time compare)."""
        return hmac.compare_digest(mac(key, self.signed), self.tag)


def _payload_v2(msg: Any) -> bytes:
    if isinstance(msg, Pair):
        _check(len(msg.secret) == SECRET_SIZE, f"PAIR carries {SECRET_SIZE} bytes")
        return bytes(msg.secret)
    return _payload(msg)


def seal_body(msg: Any, key: bytes | MacKey, ctr: int, *, challenge: bytes = b"", nonce: bytes = b"") -> bytes:
    """The version-2 body of ``msg`` under ``key`` with counter ``ctr`` (HOST_HELLO: with
    ``challenge``; HELLO: with ``challenge`` and ``nonce``).

    :raises MessageError: a value out of range, challenge fields of the wrong size for the type,
        or a body over :data:`MAX_BODY` bytes.
    """
    if not 0 <= msg.seq <= SEQ_MAX or not 0 <= ctr <= SEQ_MAX:
        raise MessageError(f"seq {msg.seq} or counter {ctr} outside 0..{SEQ_MAX}")
    if msg.seq == 0 and isinstance(msg, CardMsg | FaultMsg | ForeignMsg | ButtonMsg | Heartbeat | StubMsg | Hello):
        raise MessageError(f"{type(msg).__name__} with seq 0: shoe sequence numbers start at 1", "M-SEQ0")
    extra = challenge + nonce
    if len(extra) != _auth_fields(msg.TYPE) or (nonce and len(challenge) != NONCE_SIZE):
        raise MessageError(f"{type(msg).__name__}: challenge fields of {len(extra)} bytes, "
                           f"expected {_auth_fields(msg.TYPE)}")
    signed = HEADER.pack(msg.TYPE, msg.seq) + _payload_v2(msg) + extra + CTR.pack(ctr)
    data = signed + mac(key, signed)
    body = data + CRC.pack(crc32(data))
    if len(body) > MAX_BODY:
        raise MessageError(f"body of {len(body)} bytes exceeds {MAX_BODY}")
    return body


def seal(msg: Any, key: bytes | MacKey, ctr: int, *, challenge: bytes = b"", nonce: bytes = b"") -> bytes:
    """The version-2 frame of ``msg`` as sent on the line: ``0x00 COBS(body) 0x00``.

    :raises MessageError: see :func:`seal_body`.
    """
    body = seal_body(msg, key, ctr, challenge=challenge, nonce=nonce)
    return DELIMITER + bytes(cobs.encode(body)) + DELIMITER


def unseal_body(body: bytes) -> Sealed:
    """The :class:`Sealed` frame in a COBS-decoded version-2 ``body`` (not verified: call
    :meth:`Sealed.verify` with the key the receiver expects).

    :raises FrameError: too short, too long or a CRC mismatch.
    :raises UnknownMessageError: a type version 2 does not define.
    :raises MessageError: a payload that breaks the protocol.
    """
    if len(body) > MAX_BODY:
        raise FrameError("long", f"body of {len(body)} bytes exceeds {MAX_BODY}")
    if len(body) < MIN_BODY + AUTH_TRAILER:
        raise FrameError("short", f"body of {len(body)} bytes is shorter than {MIN_BODY + AUTH_TRAILER}")
    data = body[: -CRC.size]
    (crc,) = CRC.unpack_from(body, len(body) - CRC.size)
    computed = crc32(data)
    if computed != crc:
        raise FrameError("crc", f"CRC 0x{crc:08x} does not match 0x{computed:08x}")
    signed, tag = data[:-MAC_SIZE], data[-MAC_SIZE:]
    mtype, seq = HEADER.unpack_from(signed)
    extra = _auth_fields(mtype)
    end = len(signed) - CTR.size - extra
    if end < HEADER.size:
        raise MessageError(f"version-2 frame of type 0x{mtype:02x} too short for its challenge fields", "M-LENGTH")
    (ctr,) = CTR.unpack_from(signed, len(signed) - CTR.size)
    fields_ = signed[end : len(signed) - CTR.size]
    payload = signed[HEADER.size : end]
    msg: Any
    if mtype == T_PAIR:
        _check(len(payload) == SECRET_SIZE, f"PAIR payload is {len(payload)} bytes, expected {SECRET_SIZE}",
               "P-LENGTH")
        msg = Pair(seq, payload)
    else:
        msg = _decode_payload(mtype, seq, payload)
    return Sealed(msg, ctr, fields_[:NONCE_SIZE], fields_[NONCE_SIZE:], signed, tag)


_LAYOUT_RULES = frozenset({"", "M-LENGTH", "M-STR", "H-EXT-FORM"})
"""Rows that say the bytes do not fit a message's layout (rather than a value out of range)."""


class SealedDecoder(FrameDecoder):
    """A :class:`FrameDecoder` for an authenticated link: each frame comes out as a
    :class:`Sealed` (version 2, not yet verified), or as a plain message when it is a valid
    version-1 frame instead (an unpaired shoe, or another program writing into the line: the
    receiver refuses it and says so). Counted as in :class:`FrameDecoder`; a frame that is
    neither is counted by the constraint-table row (docs/protocol.md section 11) it breaks in
    the version whose layout it fits.

    :param sealed: the link speaks version 2: a frame is read as version 2 first, as version 1
        only when it is not one. False (a version-1 link, a bench): as version 1 first, so a
        valid plain frame is decoded once, and as version 2 only when it is not one (a paired
        shoe's frame, which a version-1 host ignores); what comes out, and the row a frame that
        is neither is counted by, are the same either way, but for a frame valid in both
        versions, read as the link's own version. A link that pairs sets :attr:`sealed`.
    """

    def __init__(self, sealed: bool = True) -> None:
        super().__init__()
        self.sealed = sealed

    def _decode(self, part: bytes) -> Any:
        if len(part) > MAX_ENCODED:
            raise FrameError("long", f"frame of {len(part)} bytes exceeds {MAX_ENCODED}")
        try:
            body = cobs.decode(part)
        except cobs.DecodeError as exc:
            raise FrameError("cobs", f"bad COBS encoding: {exc}") from exc
        if not self.sealed:
            try:
                return decode_body(body)
            except (FrameError, MessageError):
                pass  # not a valid version-1 frame: read below, which also names its row
        try:
            return unseal_body(body)
        except FrameError as exc:
            if exc.reason != "short":
                raise
            return decode_body(body)  # a version-1 frame, or its error
        except MessageError as sealed_error:
            try:
                return decode_body(body)  # a version-1 frame
            except MessageError:
                # neither: the frame is dropped by the row of the version whose layout it fits
                # (a version-2 frame breaking a value row reads as version 1 only as M-LENGTH)
                if sealed_error.rule not in _LAYOUT_RULES:
                    raise sealed_error from None
                raise
