"""The shoe wire protocol, versions 1 and 2: frames and messages (pure functions, no I/O).

The normative text is ``docs/protocol.md``; this module is the codec of both sides (the host's
:class:`drivers.session.LinkSession` and the virtual shoe's :class:`hil.shoe_device.ShoeDevice`).

A frame on the line is ``0x00 COBS(body) 0x00``. The body is::

    type:u8  seq:u32  payload  crc:u32        (all integers big-endian)

where ``crc`` is CRC-32/ISO-HDLC (the CRC of ``binascii.crc32``, zlib and Ethernet: poly
0x04C11DB7 reflected, init and xorout 0xFFFFFFFF; check value 0xCBF43926 for ``b"123456789"``)
over ``type``, ``seq`` and ``payload``, sent most significant byte first. A body is at most
:data:`MAX_BODY` bytes, so an encoded frame between its delimiters is at most
:data:`MAX_ENCODED` bytes. Every message of v1 has a fixed layout (strings carry a length byte)
and every value is range-checked on decode: a frame that fails any check is dropped and counted,
never turned into an event.

Public API: the message classes (:class:`Hello`, :class:`Heartbeat`, :class:`CardMsg`,
:class:`FaultMsg`, :class:`ButtonMsg`, :class:`HostHello`, :class:`Ack`, :class:`Led`,
:class:`ResetCounter`), :func:`encode` (message -> frame bytes), :func:`encode_body`,
:func:`decode_body` (COBS-decoded body -> message), :class:`FrameDecoder` (a byte stream ->
messages, counting bad frames, resyncing at the next delimiter), :func:`to_event` (a shoe event
message -> :mod:`shoe_ctl.events` value).

Version 2 (``docs/protocol.md``, "Authentication (version 2)") wraps the same messages in an
authenticated frame: a freshness counter and a truncated HMAC-SHA256 before the CRC, and the
HELLO challenge fields. :func:`seal` / :func:`seal_body` make one, :func:`unseal_body` and
:class:`SealedDecoder` read them (:class:`Sealed`, verified with :meth:`Sealed.verify`);
:func:`hello_key` and :func:`session_keys` derive the keys from a shoe's pairing secret.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from cobs import cobs

from drivers.exc import FrameError, MessageError, UnknownMessageError
from shoe_ctl.events import CardRead, FaultKind, ShoeButton, ShoeFault, ShoeInfo
from shoe_ctl.rules.cards import Card

PROTOCOL_VERSION = 1
"""The version this module speaks (the only one so far)."""

DELIMITER = b"\x00"
MAX_BODY = 254
"""Largest body (type, seq, payload, crc) in bytes; COBS then adds exactly one byte."""
MAX_ENCODED = MAX_BODY + 1
"""Largest COBS-encoded frame between two delimiters, in bytes."""
HEADER = struct.Struct(">BI")
CRC = struct.Struct(">I")
"""The frame check at the end of a body: CRC-32/ISO-HDLC as a big-endian u32."""
MIN_BODY = HEADER.size + CRC.size
"""Shortest body (a message without payload) in bytes: 9."""
MAX_PAYLOAD = MAX_BODY - HEADER.size - CRC.size
"""Largest payload in bytes (245): :data:`MAX_BODY` less the 5-byte header and the 4-byte CRC."""
MAX_STR = 32
"""Longest firmware / serial-number / fault-detail string, in UTF-8 bytes."""
SEQ_MAX = 0xFFFFFFFF
UNREADABLE = 0xFF
"""Card code on the wire for a card that passed the sensor unread."""

# message types ------------------------------------------------------------------------------
T_HELLO = 0x01
T_HEARTBEAT = 0x02
T_CARD = 0x10
T_FAULT = 0x11
T_BUTTON = 0x12
T_HOST_HELLO = 0x81
T_ACK = 0x82
T_LED = 0x83
T_RESET = 0x84

READERS: tuple[str, ...] = ("rfid", "optical")
"""Reader kinds by bit of the HELLO ``readers`` mask (bit 0 = rfid, bit 1 = optical)."""
READER_CODES: Mapping[str, int] = {"none": 0, "rfid": 1, "optical": 2}
READER_NAMES: Mapping[int, str] = {v: k for k, v in READER_CODES.items()}

FAULT_CODES: Mapping[FaultKind, int] = {
    FaultKind.MISREAD: 1,
    FaultKind.JAM: 2,
    FaultKind.DOUBLE_PULL: 3,
    FaultKind.COVER_OPEN: 4,
    FaultKind.READER_ERROR: 5,
}
FAULT_KINDS: Mapping[int, FaultKind] = {v: k for k, v in FAULT_CODES.items()}

LED_NAMES: tuple[str, ...] = ("green", "amber", "blue", "white", "red")
"""The shoe's LEDs by bit of the LED ``leds`` mask (bit 0 = green ... bit 4 = red)."""
LED_MODES: tuple[str, ...] = ("steady", "blink", "pulse")
LED_SIGNALS: tuple[str, ...] = (
    "", "idle", "deal", "burn", "scramble", "cut", "community", "betting", "showdown", "stop",
    "shoe-fault", "degraded",
)
"""Signal names by LED ``signal`` code (0 = none/unnamed pattern)."""

CAPS: tuple[str, ...] = ("persistent-counters", "counts-unpowered", "keeps-buffer")
"""Capability flags of the HELLO ``caps`` record by bit (bit 0 = persistent-counters ...);
docs/protocol.md section 12. A receiver ignores bits it does not know (a later revision's)."""
EXT_CAPS = 0x01
"""HELLO extension record tag: ``caps:u32``."""
EXT_COUNTERS = 0x02
"""HELLO extension record tag: ``boot_count:u32 card_total:u32 dispense:u16``."""
EXT_SECURITY = range(0x40, 0x80)
"""HELLO extension tags kept for link security; none is defined: version 2 carries its challenge and
nonce as frame fields (:func:`seal_body`), and its HELLO holds the records above in its payload as
version 1 does (docs/protocol.md section 13, "Versioning"). A receiver skips these tags."""

HB_COVER_OPEN = 0x01
HB_JAMMED = 0x02
HB_READER_ERROR = 0x04
HB_FLAGS = HB_COVER_OPEN | HB_JAMMED | HB_READER_ERROR


def crc32(data: bytes) -> int:
    """CRC-32/ISO-HDLC of ``data`` (``binascii.crc32``), 0..0xFFFFFFFF; the frame check of v1."""
    return binascii.crc32(data) & 0xFFFFFFFF


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Hello:
    """Shoe -> host, type 0x01: the shoe's identity and where its sequence stands.

    :param seq: the shoe's *next* sequence number (the one its next new event will take).
    :param version: the version chosen for this connection (0 = none of the host's range).
    :param version_min: lowest version the shoe speaks.
    :param version_max: highest version the shoe speaks.
    :param boot_id: random per power-up of the shoe (nonzero).
    :param first_seq: the oldest event it still holds unacked (= ``seq`` when it holds none).
    :param epoch: the dispense-counter epoch (the last RESET_COUNTER it applied; 0 after boot).
    :param led_token: the token of the LED pattern it shows (0 = none since boot).
    :param readers: reader kinds fitted, from :data:`READERS`.
    :param firmware: firmware version text (UTF-8, at most 32 bytes).
    :param serial: serial number text (UTF-8, 1..32 bytes; it identifies the shoe to the host).
    :param caps: the capability flags (names from :data:`CAPS`) of the ``caps`` record, or
        None when the HELLO has none (a shoe of the first revision: no capability).
    :param boot_count: power-ups of the shoe so far (1 at the first), from the ``counters``
        record (None without one); kept in non-volatile memory.
    :param card_total: cards the shoe's sensor has counted over its life, 0..2^32-1 (None
        without a ``counters`` record); kept in non-volatile memory across power cycles.
    :param dispense: the dispense counter now, 0..65535 (None without a ``counters`` record).
    """

    seq: int
    version: int
    version_min: int
    version_max: int
    boot_id: int
    first_seq: int
    epoch: int
    led_token: int
    readers: tuple[str, ...]
    firmware: str
    serial: str
    caps: tuple[str, ...] | None = None
    boot_count: int | None = None
    card_total: int | None = None
    dispense: int | None = None
    TYPE: ClassVar[int] = T_HELLO

    @property
    def has_counters(self) -> bool:
        """True when the HELLO carries the ``counters`` record (persistent counters)."""
        return self.boot_count is not None

    def info(self) -> ShoeInfo:
        """The :class:`~shoe_ctl.events.ShoeInfo` of this hello."""
        return ShoeInfo(self.version, self.firmware, self.serial, self.readers, self.boot_id)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Shoe -> host, type 0x02, sent at least once a second.

    :param seq: the shoe's next sequence number (as in HELLO).
    :param dispense: the dispense counter (cards since the last counter reset), 0..65535.
    :param epoch: the dispense-counter epoch.
    :param led_token: the token of the LED pattern shown.
    :param cover_open: the cover is open.
    :param jammed: a jam is present.
    :param reader_error: a reader is failing.
    :param unacked: events the shoe holds unacked, 0..65535.
    """

    seq: int
    dispense: int
    epoch: int
    led_token: int
    cover_open: bool = False
    jammed: bool = False
    reader_error: bool = False
    unacked: int = 0
    TYPE: ClassVar[int] = T_HEARTBEAT


@dataclass(frozen=True, slots=True)
class CardMsg:
    """Shoe -> host, type 0x10, an event: one card left the shoe.

    :param card: the card, or ``None`` when it passed the sensor unread.
    :param reader: ``"rfid"`` or ``"optical"``; ``"none"`` exactly when ``card`` is ``None``.
    :param dispense: the dispense counter after this card, 1..65535.
    :param epoch: the dispense-counter epoch the counter belongs to.
    """

    seq: int
    card: Card | None
    reader: str
    dispense: int
    epoch: int = 0
    TYPE: ClassVar[int] = T_CARD


@dataclass(frozen=True, slots=True)
class FaultMsg:
    """Shoe -> host, type 0x11, an event: a fault appeared (or cleared)."""

    seq: int
    kind: FaultKind
    cleared: bool = False
    detail: str = ""
    TYPE: ClassVar[int] = T_FAULT


@dataclass(frozen=True, slots=True)
class ButtonMsg:
    """Shoe -> host, type 0x12, an event: shoe button ``button`` (1..255) was pressed."""

    seq: int
    button: int
    TYPE: ClassVar[int] = T_BUTTON


@dataclass(frozen=True, slots=True)
class HostHello:
    """Host -> shoe, type 0x81: the host's version range; the shoe answers with HELLO.

    ``seq`` of host frames is the host's own frame counter (informative only)."""

    seq: int
    version_min: int = PROTOCOL_VERSION
    version_max: int = PROTOCOL_VERSION
    TYPE: ClassVar[int] = T_HOST_HELLO


@dataclass(frozen=True, slots=True)
class Ack:
    """Host -> shoe, type 0x82.

    :param acked: every event up to and including ``acked`` is durably recorded (0 = none); the
        shoe may forget them.
    :param want: the next sequence the host needs; it has received every event below ``want``.
    :param resend: the host saw a hole (an event after ``want`` arrived, or a heartbeat announced
        more): the shoe resends its events from ``want`` at once.
    """

    seq: int
    acked: int
    want: int
    resend: bool = False
    TYPE: ClassVar[int] = T_ACK


@dataclass(frozen=True, slots=True)
class Led:
    """Host -> shoe, type 0x83: show this pattern on the shoe's LEDs.

    :param token: 1..255, changes with every new pattern; the shoe echoes it in HEARTBEAT.
    :param signal: the signal's name (one of :data:`LED_SIGNALS`, ``""`` for none).
    :param leds: names from :data:`LED_NAMES` that light.
    :param mode: ``"steady"``, ``"blink"`` or ``"pulse"``.
    :param on_ms: milliseconds on (or fade-in), 0..65535.
    :param off_ms: milliseconds off (or fade-out), 0..65535.
    """

    seq: int
    token: int
    signal: str
    leds: tuple[str, ...] = ()
    mode: str = "steady"
    on_ms: int = 0
    off_ms: int = 0
    TYPE: ClassVar[int] = T_LED


@dataclass(frozen=True, slots=True)
class ResetCounter:
    """Host -> shoe, type 0x84: set the dispense counter to 0 under ``epoch`` (1..65535).

    Idempotent: the shoe applies it only when ``epoch`` differs from its current epoch."""

    seq: int
    epoch: int
    TYPE: ClassVar[int] = T_RESET


Message = Hello | Heartbeat | CardMsg | FaultMsg | ButtonMsg | HostHello | Ack | Led | ResetCounter
EventMsg = CardMsg | FaultMsg | ButtonMsg
EVENT_TYPES: tuple[type, ...] = (CardMsg, FaultMsg, ButtonMsg)


# --------------------------------------------------------------------------- payload codecs

_HELLO = struct.Struct(">BBBIIHBB")
_HEARTBEAT = struct.Struct(">HHBBH")
_CARD = struct.Struct(">BBHH")
_FAULT = struct.Struct(">BB")
_BUTTON = struct.Struct(">B")
_HOST_HELLO = struct.Struct(">BB")
_ACK = struct.Struct(">IIB")
_LED = struct.Struct(">BBBBHH")
_RESET = struct.Struct(">H")
_EXT = struct.Struct(">BB")
_CAPS = struct.Struct(">I")
_COUNTERS = struct.Struct(">IIH")
_EXT_SIZES = {EXT_CAPS: _CAPS.size, EXT_COUNTERS: _COUNTERS.size}


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 control characters and DEL: a ``str`` field never carries them (M-STR), so a shoe's
serial, firmware or fault detail cannot move a terminal's cursor or add a line to a log."""


def _text(value: str, what: str) -> bytes:
    raw = value.encode("utf-8")
    if len(raw) > MAX_STR:
        raise MessageError(f"{what} is {len(raw)} bytes; at most {MAX_STR}", "M-STR")
    if _CONTROL.search(value):
        raise MessageError(f"{what} holds a control character", "M-STR")
    return bytes([len(raw)]) + raw


def _read_text(buf: bytes, pos: int, what: str) -> tuple[str, int]:
    if pos >= len(buf):
        raise MessageError(f"{what}: missing length byte", "M-LENGTH")
    n = buf[pos]
    if n > MAX_STR:
        raise MessageError(f"{what}: length {n} > {MAX_STR}", "M-STR")
    end = pos + 1 + n
    if end > len(buf):
        raise MessageError(f"{what}: {n} bytes announced, {len(buf) - pos - 1} present", "M-STR")
    try:
        text = buf[pos + 1 : end].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MessageError(f"{what}: not UTF-8", "M-STR") from exc
    if _CONTROL.search(text):
        raise MessageError(f"{what}: a control character", "M-STR")
    return text, end


def _mask(names: Iterable[str], table: tuple[str, ...], what: str, rule: str = "") -> int:
    mask = 0
    for name in names:
        try:
            mask |= 1 << table.index(name)
        except ValueError:
            raise MessageError(f"{what}: unknown name {name!r} (known: {', '.join(table)})", rule) from None
    return mask


def _names(mask: int, table: tuple[str, ...], what: str, rule: str = "", *, strict: bool = True) -> tuple[str, ...]:
    if strict and mask >> len(table):
        raise MessageError(f"{what}: unknown bits in mask 0x{mask:02x}", rule)
    return tuple(name for i, name in enumerate(table) if mask >> i & 1)


def _check(cond: bool, text: str, rule: str = "") -> None:
    if not cond:
        raise MessageError(text, rule)


def _hello_ext(msg: Hello) -> bytes:
    """The extension records of ``msg`` (``caps``, then ``counters``), checked."""
    out = b""
    if msg.caps is not None:
        out += _EXT.pack(EXT_CAPS, _CAPS.size) + _CAPS.pack(_mask(msg.caps, CAPS, "caps", "H-CAPS"))
    counters = (msg.boot_count, msg.card_total, msg.dispense)
    _check(all(v is None for v in counters) or all(v is not None for v in counters),
           "HELLO counters: boot_count, card_total and dispense go together", "H-COUNTERS")
    persistent = msg.caps is not None and "persistent-counters" in msg.caps
    _check(persistent == (msg.boot_count is not None),
           "HELLO has the counters record exactly when caps says persistent-counters", "H-COUNTERS")
    _check(msg.caps is None or "counts-unpowered" not in msg.caps or persistent,
           "caps counts-unpowered needs persistent-counters", "H-CAPS")
    if msg.boot_count is not None:
        _check(msg.boot_count >= 1, "HELLO boot_count is at least 1", "H-COUNTERS")
        out += _EXT.pack(EXT_COUNTERS, _COUNTERS.size) + _COUNTERS.pack(msg.boot_count, msg.card_total,
                                                                         msg.dispense)
    return out


def _read_hello_ext(p: bytes, pos: int) -> dict[str, Any]:
    """The known extension records of a HELLO payload from ``pos`` on (unknown tags skipped;
    a known record longer than this revision defines is read up to its known fields)."""
    seen: set[int] = set()
    out: dict[str, Any] = {}
    while pos < len(p):
        _check(pos + _EXT.size <= len(p), "HELLO extension record: header runs past the end", "H-EXT-FORM")
        tag, size = _EXT.unpack_from(p, pos)
        pos += _EXT.size
        _check(pos + size <= len(p), f"HELLO extension record 0x{tag:02x}: {size} bytes announced, "
               f"{len(p) - pos} present", "H-EXT-FORM")
        _check(tag not in seen, f"HELLO extension record 0x{tag:02x} twice", "H-EXT-DUP")
        seen.add(tag)
        value = p[pos : pos + size]
        pos += size
        if tag in _EXT_SIZES:
            _check(size >= _EXT_SIZES[tag], f"HELLO extension record 0x{tag:02x} is {size} bytes, at least "
                   f"{_EXT_SIZES[tag]}", "H-EXT-SHORT")
        if tag == EXT_CAPS:
            (mask,) = _CAPS.unpack_from(value)
            out["caps"] = _names(mask, CAPS, "caps", strict=False)
        elif tag == EXT_COUNTERS:
            out["boot_count"], out["card_total"], out["dispense"] = _COUNTERS.unpack_from(value)
    persistent = "persistent-counters" in out.get("caps", ())
    _check(persistent == ("boot_count" in out),
           "HELLO has the counters record exactly when caps says persistent-counters", "H-COUNTERS")
    _check("counts-unpowered" not in out.get("caps", ()) or persistent,
           "caps counts-unpowered needs persistent-counters", "H-CAPS")
    _check(out.get("boot_count", 1) >= 1, "HELLO boot_count is at least 1", "H-COUNTERS")
    return out


def _payload(msg: Message) -> bytes:
    """The payload bytes of ``msg`` (validated).

    :raises MessageError: a value out of its range.
    """
    try:
        if isinstance(msg, CardMsg):
            code = UNREADABLE if msg.card is None else msg.card.code
            reader = READER_CODES.get(msg.reader)
            if reader is None:  # written out: no error text formatted for a card that passes
                raise MessageError(f"unknown reader {msg.reader!r}", "C-READER")
            _check((msg.card is None) == (reader == 0), "reader must be 'none' exactly for an unreadable card",
                   "C-UNREAD")
            _check(msg.dispense >= 1, "dispense counter of a card is at least 1", "C-DISPENSE")
            return _CARD.pack(code, reader, msg.dispense, msg.epoch)
        if isinstance(msg, Ack):
            _check(msg.want >= 1 and msg.acked < msg.want, "ACK needs acked < want and want >= 1", "A-ORDER")
            return _ACK.pack(msg.acked, msg.want, int(msg.resend))
        if isinstance(msg, Heartbeat):
            flags = (HB_COVER_OPEN * msg.cover_open) | (HB_JAMMED * msg.jammed) | (HB_READER_ERROR * msg.reader_error)
            return _HEARTBEAT.pack(msg.dispense, msg.epoch, msg.led_token, flags, msg.unacked)
        if isinstance(msg, Hello):
            _check(1 <= msg.version_min <= msg.version_max, "HELLO needs 1 <= version_min <= version_max",
                   "H-VERSION-RANGE")
            _check(msg.version == 0 or msg.version_min <= msg.version <= msg.version_max,
                   "HELLO version outside its own range", "H-VERSION")
            _check(msg.boot_id != 0, "boot id 0 is reserved", "H-BOOT-ID")
            _check(1 <= msg.first_seq <= msg.seq, "HELLO needs 1 <= first_seq <= seq", "H-FIRST-SEQ")
            readers = _mask(msg.readers, READERS, "readers", "H-READERS")
            _check(readers != 0, "a shoe has at least one reader", "H-READERS")
            _check(msg.serial != "", "a shoe's serial number is not empty", "H-SERIAL")
            return (_HELLO.pack(msg.version, msg.version_min, msg.version_max, msg.boot_id, msg.first_seq,
                                msg.epoch, msg.led_token, readers)
                    + _text(msg.firmware, "firmware") + _text(msg.serial, "serial") + _hello_ext(msg))
        if isinstance(msg, FaultMsg):
            _check(not (msg.cleared and FaultKind(msg.kind) == FaultKind.DOUBLE_PULL),
                   "double pull is an instant: never cleared", "FT-INSTANT")
            return _FAULT.pack(FAULT_CODES[FaultKind(msg.kind)], int(msg.cleared)) + _text(msg.detail, "detail")
        if isinstance(msg, ButtonMsg):
            _check(1 <= msg.button <= 255, "button number is 1..255", "B-NUMBER")
            return _BUTTON.pack(msg.button)
        if isinstance(msg, HostHello):
            _check(1 <= msg.version_min <= msg.version_max, "HOST_HELLO needs 1 <= version_min <= version_max",
                   "HH-RANGE")
            return _HOST_HELLO.pack(msg.version_min, msg.version_max)
        if isinstance(msg, Led):
            _check(1 <= msg.token <= 255, "LED token is 1..255", "L-TOKEN")
            if msg.signal not in LED_SIGNALS:
                raise MessageError(f"unknown LED signal {msg.signal!r}", "L-SIGNAL")
            if msg.mode not in LED_MODES:
                raise MessageError(f"unknown LED mode {msg.mode!r}", "L-MODE")
            return _LED.pack(msg.token, LED_SIGNALS.index(msg.signal), _mask(msg.leds, LED_NAMES, "leds", "L-LEDS"),
                             LED_MODES.index(msg.mode), msg.on_ms, msg.off_ms)
        if isinstance(msg, ResetCounter):
            _check(1 <= msg.epoch <= 0xFFFF, "epoch is 1..65535", "R-EPOCH")
            return _RESET.pack(msg.epoch)
    except struct.error as exc:
        raise MessageError(f"{type(msg).__name__}: value out of range: {exc}") from exc
    raise MessageError(f"not a protocol message: {msg!r}")


def encode_body(msg: Message) -> bytes:
    """The body of ``msg``: header, payload and CRC (not yet COBS-encoded).

    :raises MessageError: a value out of its range, or a body over :data:`MAX_BODY` bytes.
    """
    if not 0 <= msg.seq <= SEQ_MAX:
        raise MessageError(f"seq {msg.seq} outside 0..{SEQ_MAX}")
    if msg.seq == 0 and isinstance(msg, CardMsg | FaultMsg | ButtonMsg | Heartbeat | Hello):
        raise MessageError(f"{type(msg).__name__} with seq 0: shoe sequence numbers start at 1", "M-SEQ0")
    data = HEADER.pack(msg.TYPE, msg.seq) + _payload(msg)
    body = data + CRC.pack(crc32(data))
    if len(body) > MAX_BODY:
        raise MessageError(f"body of {len(body)} bytes exceeds {MAX_BODY}")
    return body


def encode(msg: Message) -> bytes:
    """The frame of ``msg`` as sent on the line: ``0x00 COBS(body) 0x00``.

    :raises MessageError: see :func:`encode_body`.
    """
    return DELIMITER + bytes(cobs.encode(encode_body(msg))) + DELIMITER


_CARD_OF: tuple[Card, ...] = tuple(Card(code) for code in range(52))
"""The card of each code 0..51 (a card is a frozen value: one instance per code serves every frame)."""
_SHOE_NUMBERED = frozenset({T_CARD, T_FAULT, T_BUTTON, T_HEARTBEAT})


def _decode_payload(mtype: int, seq: int, p: bytes) -> Message:
    # The checks of the frequent types (CARD, ACK, HEARTBEAT, LED) are written out as ``if ...: raise``
    # so that no error text is formatted for a frame that passes them (docs/performance.md, "The
    # loaded full stack: the shoe link's CPU"); their texts and rows are those of _check.
    if seq < 1 and mtype in _SHOE_NUMBERED:
        raise MessageError(f"{TYPE_NAMES[mtype]} with seq 0: shoe sequence numbers start at 1", "M-SEQ0")
    if mtype == T_CARD:
        if len(p) != _CARD.size:
            raise MessageError(f"CARD payload is {len(p)} bytes, expected {_CARD.size}", "M-LENGTH")
        code, reader, dispense, epoch = _CARD.unpack(p)
        if code >= 52 and code != UNREADABLE:
            raise MessageError(f"card code {code} is not 0..51 or 255", "C-CODE")
        reader_name = READER_NAMES.get(reader)
        if reader_name is None:
            raise MessageError(f"reader code {reader} unknown", "C-READER")
        if (code == UNREADABLE) != (reader == 0):
            raise MessageError("reader 0 exactly for an unreadable card", "C-UNREAD")
        if dispense < 1:
            raise MessageError("dispense counter of a card is at least 1", "C-DISPENSE")
        return CardMsg(seq, None if code == UNREADABLE else _CARD_OF[code], reader_name, dispense, epoch)
    if mtype == T_ACK:
        if len(p) != _ACK.size:
            raise MessageError(f"ACK payload is {len(p)} bytes, expected {_ACK.size}", "M-LENGTH")
        acked, want, flags = _ACK.unpack(p)
        if not (want >= 1 and acked < want):
            raise MessageError("ACK needs acked < want and want >= 1", "A-ORDER")
        if flags not in (0, 1):
            raise MessageError(f"ACK flags 0x{flags:02x} has unknown bits", "A-FLAGS")
        return Ack(seq, acked, want, bool(flags))
    if mtype == T_HEARTBEAT:
        if len(p) != _HEARTBEAT.size:
            raise MessageError(f"HEARTBEAT payload is {len(p)} bytes, expected {_HEARTBEAT.size}", "M-LENGTH")
        dispense, epoch, token, flags, unacked = _HEARTBEAT.unpack(p)
        if flags & ~HB_FLAGS:
            raise MessageError(f"HEARTBEAT flags 0x{flags:02x} has unknown bits", "HB-FLAGS")
        return Heartbeat(seq, dispense, epoch, token, bool(flags & HB_COVER_OPEN), bool(flags & HB_JAMMED),
                         bool(flags & HB_READER_ERROR), unacked)
    if mtype == T_HELLO:
        _check(len(p) >= _HELLO.size + 2, f"HELLO payload is {len(p)} bytes, at least {_HELLO.size + 2}",
               "M-LENGTH")
        version, vmin, vmax, boot_id, first_seq, epoch, token, readers = _HELLO.unpack_from(p)
        firmware, pos = _read_text(p, _HELLO.size, "firmware")
        serial, pos = _read_text(p, pos, "serial")
        ext = _read_hello_ext(p, pos)
        _check(1 <= vmin <= vmax, "HELLO needs 1 <= version_min <= version_max", "H-VERSION-RANGE")
        _check(version == 0 or vmin <= version <= vmax, "HELLO version outside its own range", "H-VERSION")
        _check(boot_id != 0, "boot id 0 is reserved", "H-BOOT-ID")
        _check(1 <= first_seq <= seq, "HELLO needs 1 <= first_seq <= seq", "H-FIRST-SEQ")
        names = _names(readers, READERS, "readers", "H-READERS")
        _check(bool(names), "a shoe has at least one reader", "H-READERS")
        _check(serial != "", "a shoe's serial number is not empty", "H-SERIAL")
        return Hello(seq, version, vmin, vmax, boot_id, first_seq, epoch, token, names, firmware, serial, **ext)
    if mtype == T_FAULT:
        _check(len(p) >= _FAULT.size + 1, f"FAULT payload is {len(p)} bytes, at least {_FAULT.size + 1}",
               "M-LENGTH")
        kind, cleared = _FAULT.unpack_from(p)
        _check(kind in FAULT_KINDS, f"fault kind {kind} unknown", "FT-KIND")
        _check(cleared in (0, 1), f"FAULT cleared flag {cleared} is not 0 or 1", "FT-CLEARED")
        _check(not (cleared and FAULT_KINDS[kind] == FaultKind.DOUBLE_PULL),
               "double pull is an instant: a FAULT never clears it", "FT-INSTANT")
        detail, pos = _read_text(p, _FAULT.size, "detail")
        _check(pos == len(p), f"FAULT has {len(p) - pos} bytes after its last field", "M-LENGTH")
        return FaultMsg(seq, FAULT_KINDS[kind], bool(cleared), detail)
    if mtype == T_BUTTON:
        _check(len(p) == _BUTTON.size, f"BUTTON payload is {len(p)} bytes, expected {_BUTTON.size}", "M-LENGTH")
        _check(p[0] >= 1, "button number is 1..255", "B-NUMBER")
        return ButtonMsg(seq, p[0])
    if mtype == T_HOST_HELLO:
        _check(len(p) == _HOST_HELLO.size, f"HOST_HELLO payload is {len(p)} bytes, expected {_HOST_HELLO.size}",
               "M-LENGTH")
        vmin, vmax = _HOST_HELLO.unpack(p)
        _check(1 <= vmin <= vmax, "HOST_HELLO needs 1 <= version_min <= version_max", "HH-RANGE")
        return HostHello(seq, vmin, vmax)
    if mtype == T_LED:
        if len(p) != _LED.size:
            raise MessageError(f"LED payload is {len(p)} bytes, expected {_LED.size}", "M-LENGTH")
        token, signal, leds, mode, on_ms, off_ms = _LED.unpack(p)
        _check(token >= 1, "LED token is 1..255", "L-TOKEN")
        if signal >= len(LED_SIGNALS):
            raise MessageError(f"LED signal code {signal} unknown", "L-SIGNAL")
        if mode >= len(LED_MODES):
            raise MessageError(f"LED mode code {mode} unknown", "L-MODE")
        return Led(seq, token, LED_SIGNALS[signal], _names(leds, LED_NAMES, "leds", "L-LEDS"), LED_MODES[mode],
                   on_ms, off_ms)
    if mtype == T_RESET:
        _check(len(p) == _RESET.size, f"RESET_COUNTER payload is {len(p)} bytes, expected {_RESET.size}",
               "M-LENGTH")
        (epoch,) = _RESET.unpack(p)
        _check(epoch >= 1, "epoch is 1..65535", "R-EPOCH")
        return ResetCounter(seq, epoch)
    raise UnknownMessageError(mtype)


def decode_body(body: bytes) -> Message:
    """The message in a COBS-decoded ``body`` (header, payload, CRC).

    :raises FrameError: too short, too long or a CRC mismatch (``reason`` "short", "long", "crc").
    :raises UnknownMessageError: a valid CRC and a type v1 does not define.
    :raises MessageError: a valid CRC and a payload that breaks v1 (length, range).
    """
    if len(body) < MIN_BODY:
        raise FrameError("short", f"body of {len(body)} bytes is shorter than {MIN_BODY}")
    if len(body) > MAX_BODY:
        raise FrameError("long", f"body of {len(body)} bytes exceeds {MAX_BODY}")
    data = body[: -CRC.size]
    (crc,) = CRC.unpack_from(body, len(body) - CRC.size)
    computed = crc32(data)
    if computed != crc:
        raise FrameError("crc", f"CRC 0x{crc:08x} does not match 0x{computed:08x}")
    mtype, seq = HEADER.unpack_from(data)
    return _decode_payload(mtype, seq, data[HEADER.size :])


def decode_frame(encoded: bytes) -> Message:
    """The message in one COBS-encoded frame (without its delimiters).

    :raises FrameError: bad COBS (``reason`` "cobs"), too long, too short or a CRC mismatch.
    :raises MessageError: see :func:`decode_body`.
    """
    if len(encoded) > MAX_ENCODED:
        raise FrameError("long", f"frame of {len(encoded)} bytes exceeds {MAX_ENCODED}")
    try:
        body = cobs.decode(encoded)
    except cobs.DecodeError as exc:
        raise FrameError("cobs", f"bad COBS encoding: {exc}") from exc
    return decode_body(body)


@dataclass
class DecoderStats:
    """What a :class:`FrameDecoder` has seen: ``frames`` valid messages, ``bad_frames`` dropped
    frames (COBS, length, CRC, message checks), ``unknown`` valid frames of unknown type (also
    dropped, counted apart so a newer shoe is recognisable), ``reasons`` bad frames by cause,
    ``last_malformed`` the error of the last frame with a valid CRC that broke v1 (reason
    ``"message"``: with CRC-32 almost surely a sender defect, not line noise)."""

    frames: int = 0
    bad_frames: int = 0
    unknown: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    last_malformed: str = ""
    rules: dict[str, int] = field(default_factory=dict)
    """Frames with a valid CRC dropped by a row of the constraint table, by the row's id."""


class FrameDecoder:
    """Turns a byte stream into messages: splits at 0x00, decodes, drops and counts bad frames.

    Bytes after the last delimiter wait for more input; a run longer than :data:`MAX_ENCODED`
    without a delimiter is dropped (one bad frame) and decoding resyncs at the next delimiter.
    Not thread-safe: one reader feeds it.
    """

    def __init__(self) -> None:
        self._buf = b""
        self._discarding = False
        self.stats = DecoderStats()

    def reset(self) -> None:
        """Forget any partial frame (after a reconnect)."""
        self._buf = b""
        self._discarding = False

    def _decode(self, part: bytes) -> Any:
        """The message of one encoded frame (a subclass decodes authenticated frames)."""
        return decode_frame(part)

    def _bad(self, reason: str) -> None:
        self.stats.bad_frames += 1
        self.stats.reasons[reason] = self.stats.reasons.get(reason, 0) + 1

    def feed(self, data: bytes) -> list[Any]:
        """Decode every complete frame in ``data`` (plus what was buffered), in order: messages
        (and, from :class:`SealedDecoder`, :class:`Sealed` frames)."""
        out: list[Any] = []
        parts = (self._buf + data).split(DELIMITER)
        self._buf = parts.pop()
        for part in parts:
            if self._discarding:
                self._discarding = False
                continue
            if not part:
                continue
            try:
                out.append(self._decode(part))
            except UnknownMessageError:
                self.stats.unknown += 1
                continue
            except FrameError as exc:
                self._bad(exc.reason)
                continue
            except MessageError as exc:
                self._bad("message")
                self.stats.last_malformed = f"{exc} [{exc.rule}]" if exc.rule else str(exc)
                if exc.rule:
                    self.stats.rules[exc.rule] = self.stats.rules.get(exc.rule, 0) + 1
                continue
            self.stats.frames += 1
        if len(self._buf) > MAX_ENCODED:
            self._buf = b""
            if not self._discarding:
                self._discarding = True
                self._bad("long")
        return out


def to_event(msg: EventMsg) -> CardRead | ShoeFault | ShoeButton:
    """The :mod:`shoe_ctl.events` value of a shoe event message."""
    if isinstance(msg, CardMsg):
        return CardRead(msg.seq, msg.card, msg.reader, msg.dispense, msg.epoch)
    if isinstance(msg, FaultMsg):
        return ShoeFault(msg.seq, msg.kind, msg.cleared, msg.detail)
    return ShoeButton(msg.seq, msg.button)


_OPTIONAL_FIELDS = frozenset({"caps", "boot_count", "card_total", "dispense"})


def message_to_json(msg: Message) -> dict[str, Any]:
    """A JSON-safe dict of ``msg`` (``{"type": "CARD", "seq": 7, ...}``), as the test vectors
    in ``tests/vectors/protocol_v1.json`` write them."""
    out: dict[str, Any] = {"type": TYPE_NAMES[msg.TYPE]}
    for f in fields(msg):
        value = getattr(msg, f.name)
        if value is None and f.name in _OPTIONAL_FIELDS:
            continue  # a HELLO extension record that is not there
        if isinstance(value, Card):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, FaultKind):
            value = str(value)
        out[f.name] = value
    return out


def message_from_json(data: Mapping[str, Any]) -> Message:
    """The message a :func:`message_to_json` dict describes.

    :raises MessageError: unknown type name or fields.
    """
    values = dict(data)
    name = values.pop("type", None)
    cls = TYPES_BY_NAME.get(str(name))
    if cls is None:
        raise MessageError(f"unknown message type name {name!r}")
    if "card" in values:
        values["card"] = None if values["card"] is None else Card.parse(values["card"])
    if "kind" in values:
        values["kind"] = FaultKind(values["kind"])
    for key in ("readers", "leds", "caps"):
        if values.get(key) is not None:
            values[key] = tuple(values[key])
    try:
        msg: Message = cls(**values)
    except TypeError as exc:
        raise MessageError(f"{name}: {exc}") from exc
    return msg


TYPES_BY_NAME: Mapping[str, Any] = {
    "HELLO": Hello, "HEARTBEAT": Heartbeat, "CARD": CardMsg, "FAULT": FaultMsg, "BUTTON": ButtonMsg,
    "HOST_HELLO": HostHello, "ACK": Ack, "LED": Led, "RESET_COUNTER": ResetCounter,
}
TYPE_NAMES: Mapping[int, str] = {cls.TYPE: name for name, cls in TYPES_BY_NAME.items()}


# --------------------------------------------------------------------------- version 2: authentication
#
# docs/protocol.md, "Authentication (version 2)". The messages are those of version 1; the body
# gains an authentication trailer before the CRC:
#
#     type:u8  seq:u32  payload  [challenge:8 [nonce:8]]  ctr:u32  mac:8  crc:u32
#
# ``challenge`` is present in HOST_HELLO and HELLO, ``nonce`` in HELLO only. ``mac`` is the first
# 8 bytes of HMAC-SHA256(key, everything before it); ``crc`` covers everything before it, mac
# included, exactly as in version 1.

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
T_PAIR = 0x85
"""Host -> shoe, version 2: a new pairing secret (docs/protocol.md, "Pairing")."""

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


@dataclass(frozen=True, slots=True)
class Pair:
    """Host -> shoe, type 0x85, version 2 only: the shoe's new pairing secret.

    :param secret: :data:`SECRET_SIZE` bytes as sent: in clear to a shoe in pairing mode, or (a
        rotation inside a session) the new secret XOR :func:`pair_pad` of the session.
    """

    seq: int
    secret: bytes = field(repr=False)
    TYPE: ClassVar[int] = T_PAIR


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
    if msg.seq == 0 and isinstance(msg, CardMsg | FaultMsg | ButtonMsg | Heartbeat | Hello):
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
        raise MessageError(f"version-2 frame of type 0x{mtype:02x} too short for its challenge fields")
    (ctr,) = CTR.unpack_from(signed, len(signed) - CTR.size)
    fields_ = signed[end : len(signed) - CTR.size]
    payload = signed[HEADER.size : end]
    msg: Any
    if mtype == T_PAIR:
        _check(len(payload) == SECRET_SIZE, f"PAIR payload is {len(payload)} bytes, expected {SECRET_SIZE}")
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
    the version whose layout it fits."""

    def _decode(self, part: bytes) -> Any:
        if len(part) > MAX_ENCODED:
            raise FrameError("long", f"frame of {len(part)} bytes exceeds {MAX_ENCODED}")
        try:
            body = cobs.decode(part)
        except cobs.DecodeError as exc:
            raise FrameError("cobs", f"bad COBS encoding: {exc}") from exc
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
