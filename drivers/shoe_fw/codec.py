"""The shoe's own codec: frames, messages and version-2 sealing of docs/protocol.md.

A second implementation, written from the document (sections 2, 4, 11 and 14) and sharing no
code with the host's (``drivers/protocol.py``): COBS, a table-driven CRC-32/ISO-HDLC, the shoe's
messages built with ``struct``, the host's messages checked row by row of the constraint table,
and HMAC-SHA256 keys and tags on ``hashlib`` (:mod:`.crypto`). Runs on CircuitPython. The tests
check it against the published vectors and against the host's codec.
"""

import struct

from .crypto import HmacKey, same

# message types (section 4)
T_HELLO = 0x01
T_HEARTBEAT = 0x02
T_STUB = 0x03
T_CARD = 0x10
T_FAULT = 0x11
T_BUTTON = 0x12
T_FOREIGN = 0x13
T_HOST_HELLO = 0x81
T_ACK = 0x82
T_LED = 0x83
T_RESET = 0x84
T_PAIR = 0x85

MAX_BODY = 254
MAX_ENCODED = 255
MIN_BODY = 9
MAX_STR = 32
UNREADABLE = 0xFF
READER_NONE, READER_RFID, READER_OPTICAL = 0, 1, 2
FAULT_MISREAD, FAULT_JAM, FAULT_DOUBLE_PULL, FAULT_COVER_OPEN, FAULT_READER_ERROR = 1, 2, 3, 4, 5
HB_COVER_OPEN, HB_JAMMED, HB_READER_ERROR = 0x01, 0x02, 0x04
CAP_PERSISTENT, CAP_UNPOWERED, CAP_KEEPS_BUFFER, CAP_NAMES_FOREIGN = 0x01, 0x02, 0x04, 0x08
ACK_RESEND, ACK_NAMES_FOREIGN = 0x01, 0x02
FOREIGN_UNKNOWN, FOREIGN_OTHER_DECK, FOREIGN_RETIRED = 1, 2, 3
"""FOREIGN ``what``: a tag of no deck, a card of another live deck, a card of a retired deck."""
EXT_CAPS, EXT_COUNTERS = 0x01, 0x02

V1, V2 = 1, 2
NONCE_SIZE = 8
MAC_SIZE = 8
SECRET_SIZE = 32
LABEL = b"shoe-ctl/2 "


class DropFrame(Exception):
    """A frame the shoe drops; ``args[0]`` is the constraint-table row (``"F-CRC"``,
    ``"A-ORDER"``, ...) or ``"F-TYPE"`` for a type it does not know."""


# ---------------------------------------------------------------- CRC-32 and COBS


def _crc_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def crc32(data: bytes, crc: int = 0) -> int:
    """CRC-32/ISO-HDLC of ``data`` (section 2), 0..0xFFFFFFFF; ``crc``: a running value."""
    c = crc ^ 0xFFFFFFFF
    table = _CRC_TABLE
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def cobs_encode(data: bytes) -> bytes:
    """Basic COBS of ``data`` (section 2): no 0x00 in the result."""
    out = bytearray()
    start = 0
    n = len(data)
    while True:
        end = start
        while end < n and data[end] != 0 and end - start < 254:
            end += 1
        out.append(end - start + 1)
        out.extend(data[start:end])
        if end - start == 254:
            start = end
            if start == n:
                return bytes(out)
            continue
        if end >= n:
            return bytes(out)
        start = end + 1


def cobs_decode(data: bytes) -> bytes:
    """The bytes COBS-encoded in ``data``.

    :raises DropFrame: ``"F-COBS"``: a code byte 0 or one that runs past the end.
    """
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0 or i + code > n:
            raise DropFrame("F-COBS")
        out.extend(data[i + 1:i + code])
        i += code
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def frame_of(body: bytes) -> bytes:
    """``0x00 COBS(body) 0x00``."""
    return b"\x00" + cobs_encode(body) + b"\x00"


def with_crc(data: bytes) -> bytes:
    """``data`` followed by its CRC-32, big-endian."""
    return data + struct.pack(">I", crc32(data))


def checked_body(encoded: bytes) -> bytes:
    """The body of one encoded frame (the bytes between two 0x00), its CRC checked and removed.

    :raises DropFrame: F-LONG, F-COBS, F-SHORT or F-CRC.
    """
    if len(encoded) > MAX_ENCODED:
        raise DropFrame("F-LONG")
    body = cobs_decode(encoded)
    if len(body) < MIN_BODY:
        raise DropFrame("F-SHORT")
    if len(body) > MAX_BODY:
        raise DropFrame("F-LONG")
    if crc32(body[:-4]) != struct.unpack(">I", body[-4:])[0]:
        raise DropFrame("F-CRC")
    return body[:-4]


class FrameSplitter:
    """Cuts a byte stream into encoded frames at 0x00, in a fixed buffer of
    :data:`MAX_ENCODED` + 1 bytes: a longer run without a delimiter is one dropped frame
    (F-LONG), and the splitter resyncs at the next 0x00."""

    def __init__(self) -> None:
        self._buf = bytearray(MAX_ENCODED + 1)
        self._len = 0
        self._discarding = False
        self.too_long = 0

    def reset(self) -> None:
        """Forget any partial frame."""
        self._len = 0
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes]:
        """The complete encoded frames in ``data`` (after what was kept), oldest first."""
        out = []  # type: list[bytes]
        buf = self._buf
        for b in data:
            if b == 0:
                if self._len and not self._discarding:
                    out.append(bytes(buf[:self._len]))
                self._len = 0
                self._discarding = False
            elif self._discarding:
                continue
            elif self._len > MAX_ENCODED - 1:
                self._discarding = True
                self._len = 0
                self.too_long += 1
            else:
                buf[self._len] = b
                self._len += 1
        return out


# ---------------------------------------------------------------- the shoe's messages


def _str(text: str) -> bytes:
    """A ``str`` field: length byte and UTF-8, cut on a character boundary at 32 bytes."""
    raw = text.encode("utf-8")
    while len(raw) > MAX_STR:
        text = text[:-1]
        raw = text.encode("utf-8")
    return bytes([len(raw)]) + raw


def hello_payload(version: int, vmin: int, vmax: int, boot_id: int, first_seq: int, epoch: int, led_token: int,
                  readers: int, firmware: str, serial: str, caps: int | None = None,
                  counters: tuple[int, int, int] | None = None) -> bytes:
    """HELLO's payload; ``caps`` (int) adds the caps record, ``counters``
    (``(boot_count, card_total, dispense)``) the counters record (section 12)."""
    out = struct.pack(">BBBIIHBB", version, vmin, vmax, boot_id, first_seq, epoch, led_token, readers)
    out += _str(firmware) + _str(serial)
    if caps is not None:
        out += struct.pack(">BBI", EXT_CAPS, 4, caps)
    if counters is not None:
        out += struct.pack(">BBIIH", EXT_COUNTERS, 10, counters[0], counters[1] & 0xFFFFFFFF, counters[2])
    return out


def heartbeat_payload(dispense: int, epoch: int, led_token: int, flags: int, unacked: int) -> bytes:
    """HEARTBEAT's payload (``unacked`` stops at 65535)."""
    return struct.pack(">HHBBH", dispense, epoch, led_token, flags, min(unacked, 0xFFFF))


def card_payload(code: int, reader: int, dispense: int, epoch: int) -> bytes:
    """CARD's payload: ``code`` 0..51 or 0xFF (then ``reader`` 0)."""
    return struct.pack(">BBHH", code, reader, dispense, epoch)


def fault_payload(kind: int, cleared: bool, detail: str = "") -> bytes:
    """FAULT's payload."""
    return struct.pack(">BB", kind, 1 if cleared else 0) + _str(detail)


def foreign_payload(what: int, code: int, uid: bytes, deck: str, stub: str) -> bytes:
    """FOREIGN's payload (section 16): ``what`` (:data:`FOREIGN_UNKNOWN` ...), the card ``code``
    (0xFF for a tag of no deck), the tag's ``uid`` (4..10 bytes), its ``deck`` ("" when none) and
    the ``stub``'s deck ("" before its first known card)."""
    return struct.pack(">BBB", what, code, len(uid)) + bytes(uid) + _str(deck) + _str(stub)


def stub_payload(epoch: int, deck: str) -> bytes:
    """STUB's payload (section 16): the deck id of the stub counted under ``epoch``."""
    return struct.pack(">H", epoch) + _str(deck)


def foreign_fields(payload: bytes) -> "tuple[int, int, bytes, str, str]":
    """``(what, code, uid, deck, stub)`` of a FOREIGN payload this shoe made."""
    what, code, size = payload[0], payload[1], payload[2]
    uid = bytes(payload[3:3 + size])
    pos = 3 + size
    deck = str(payload[pos + 1:pos + 1 + payload[pos]], "utf-8")
    pos += 1 + payload[pos]
    stub = str(payload[pos + 1:pos + 1 + payload[pos]], "utf-8")
    return (what, code, uid, deck, stub)


def button_payload(button: int) -> bytes:
    """BUTTON's payload."""
    return struct.pack(">B", button)


def body_v1(mtype: int, seq: int, payload: bytes) -> bytes:
    """A version-1 body: header, payload, CRC."""
    return with_crc(struct.pack(">BI", mtype, seq) + payload)


# ---------------------------------------------------------------- version 2


def prf(key: bytes, *parts: bytes) -> bytes:
    """HMAC-SHA256(``key``, parts joined) -> 32 bytes."""
    return HmacKey(key).digest(*parts)


def hello_key(secret: bytes) -> HmacKey:
    """The hello key, made ready: HMAC-SHA256(secret, ``"shoe-ctl/2 hello"``)."""
    return HmacKey(prf(secret, LABEL, b"hello"))


class Session:
    """The keys of one session: ``host_to_shoe`` (bytes, for a rotated PAIR's pad), and both
    made ready (``host_mac``, ``shoe_mac``)."""

    def __init__(self, secret: bytes, challenge: bytes, nonce: bytes) -> None:
        base = prf(secret, LABEL, b"session", challenge, nonce)
        self.host_to_shoe = prf(base, b"host->shoe")
        self.host_mac = HmacKey(self.host_to_shoe)
        self.shoe_mac = HmacKey(prf(base, b"shoe->host"))


def pair_pad(host_to_shoe: bytes, ctr: int) -> bytes:
    """The pad of a rotated secret: HMAC-SHA256(host->shoe key, ``"shoe-ctl/2 pair"`` || ctr)."""
    return prf(host_to_shoe, LABEL, b"pair", struct.pack(">I", ctr))


def body_v2(mtype: int, seq: int, payload: bytes, key: HmacKey, ctr: int, extra: bytes = b"") -> bytes:
    """A version-2 body: ``type seq payload extra ctr mac:8 crc`` (``extra``: HELLO's challenge
    and nonce) under ``key`` (an :class:`~.crypto.HmacKey`)."""
    signed = struct.pack(">BI", mtype, seq) + payload + extra + struct.pack(">I", ctr)
    return with_crc(signed + key.digest(signed)[:MAC_SIZE])


def _extra_size(mtype: int) -> int:
    return NONCE_SIZE if mtype == T_HOST_HELLO else 2 * NONCE_SIZE if mtype == T_HELLO else 0


class Sealed:
    """A version-2 host frame opened but not trusted: ``mtype``, ``seq``, ``payload``,
    ``challenge`` (HOST_HELLO), ``ctr``; :meth:`verify` checks its MAC."""

    def __init__(self, data: bytes) -> None:
        # data: the body without its CRC
        if len(data) < 5 + 4 + MAC_SIZE:
            raise DropFrame("M-LENGTH")
        self.mtype = data[0]
        self.seq = struct.unpack(">I", data[1:5])[0]
        self._signed = data[:-MAC_SIZE]
        self._tag = data[-MAC_SIZE:]
        end = len(self._signed) - 4 - _extra_size(self.mtype)
        if end < 5:
            raise DropFrame("M-LENGTH")
        self.ctr = struct.unpack(">I", self._signed[-4:])[0]
        self.challenge = self._signed[end:len(self._signed) - 4]
        self.payload = self._signed[5:end]

    def verify(self, key: HmacKey) -> bool:
        """True when the frame's MAC is the tag under ``key`` (an HmacKey)."""
        return same(key.digest(self._signed)[:MAC_SIZE], self._tag)


# ---------------------------------------------------------------- the host's messages


def parse_host(mtype: int, payload: bytes) -> tuple:  # type: ignore[type-arg]
    """The fields of a host message, checked by the rows of section 11 a shoe applies.

    :returns: HOST_HELLO ``(vmin, vmax)``; ACK ``(acked, want, resend, names_foreign)``; LED
        ``(token, signal, leds, mode, on_ms, off_ms)``; RESET_COUNTER ``(epoch,)``; PAIR
        ``(secret,)``.
    :raises DropFrame: the row broken (M-LENGTH, HH-RANGE, A-ORDER, A-FLAGS, L-TOKEN, L-SIGNAL,
        L-MODE, L-LEDS, R-EPOCH), or F-TYPE for a type the shoe does not know.
    """
    n = len(payload)
    if mtype == T_HOST_HELLO:
        if n != 2:
            raise DropFrame("M-LENGTH")
        vmin, vmax = payload[0], payload[1]
        if not 1 <= vmin <= vmax:
            raise DropFrame("HH-RANGE")
        return (vmin, vmax)
    if mtype == T_ACK:
        if n != 9:
            raise DropFrame("M-LENGTH")
        acked, want, flags = struct.unpack(">IIB", payload)
        if want == 0 or acked >= want:
            raise DropFrame("A-ORDER")
        if flags & ~(ACK_RESEND | ACK_NAMES_FOREIGN):
            raise DropFrame("A-FLAGS")
        return (acked, want, bool(flags & ACK_RESEND), bool(flags & ACK_NAMES_FOREIGN))
    if mtype == T_LED:
        if n != 8:
            raise DropFrame("M-LENGTH")
        fields = struct.unpack(">BBBBHH", payload)
        if fields[0] == 0:
            raise DropFrame("L-TOKEN")
        if fields[1] > 11:
            raise DropFrame("L-SIGNAL")
        if fields[3] > 2:
            raise DropFrame("L-MODE")
        if fields[2] & 0xE0:
            raise DropFrame("L-LEDS")
        return tuple(fields)
    if mtype == T_RESET:
        if n != 2:
            raise DropFrame("M-LENGTH")
        epoch = struct.unpack(">H", payload)[0]
        if epoch == 0:
            raise DropFrame("R-EPOCH")
        return (epoch,)
    if mtype == T_PAIR:
        if n != SECRET_SIZE:
            raise DropFrame("M-LENGTH")
        return (bytes(payload),)
    raise DropFrame("F-TYPE")
