"""The shoe protocol's body codec: a message to and from its body (``type:u8 seq:u32 payload
crc:u32``, big-endian), every field range-checked, each refusal named by its row of the
constraint table (``docs/protocol.md`` sections 2-5 and 11).

Part of :mod:`drivers.protocol` (its public face). The CRC is CRC-32/ISO-HDLC (``binascii.crc32``,
check value 0xCBF43926 for ``b"123456789"``) over type, seq and payload, sent most significant byte
first.
"""

from __future__ import annotations

import binascii
import re
import struct
from collections.abc import Iterable
from typing import Any

from drivers.exc import FrameError, MessageError, UnknownMessageError
from drivers.protocol.messages import (
    ACK_NAMES_FOREIGN,
    ACK_RESEND,
    CAPS,
    EXT_CAPS,
    EXT_COUNTERS,
    FAULT_CODES,
    FAULT_KINDS,
    FOREIGN_WHAT,
    HB_COVER_OPEN,
    HB_FLAGS,
    HB_JAMMED,
    HB_READER_ERROR,
    LED_MODES,
    LED_NAMES,
    LED_SIGNALS,
    READER_CODES,
    READER_NAMES,
    READERS,
    SEQ_MAX,
    T_ACK,
    T_BUTTON,
    T_CARD,
    T_FAULT,
    T_FOREIGN,
    T_HEARTBEAT,
    T_HELLO,
    T_HOST_HELLO,
    T_LED,
    T_RESET,
    T_STUB,
    TYPE_NAMES,
    Ack,
    ButtonMsg,
    CardMsg,
    FaultMsg,
    ForeignMsg,
    Heartbeat,
    Hello,
    HostHello,
    Led,
    Message,
    ResetCounter,
    StubMsg,
)
from shoe_ctl.events import FaultKind, ForeignWhat
from shoe_ctl.rules.cards import Card

MAX_BODY = 254
"""Largest body (type, seq, payload, crc) in bytes; COBS then adds exactly one byte."""
HEADER = struct.Struct(">BI")
CRC = struct.Struct(">I")
"""The frame check at the end of a body: CRC-32/ISO-HDLC as a big-endian u32."""
MIN_BODY = HEADER.size + CRC.size
"""Shortest body (a message without payload) in bytes: 9."""
MAX_PAYLOAD = MAX_BODY - HEADER.size - CRC.size
"""Largest payload in bytes (245): :data:`MAX_BODY` less the 5-byte header and the 4-byte CRC."""
MAX_STR = 32
"""Longest firmware / serial-number / fault-detail string, in UTF-8 bytes."""
UNREADABLE = 0xFF
"""Card code on the wire for a card that passed the sensor unread."""


def crc32(data: bytes) -> int:
    """CRC-32/ISO-HDLC of ``data`` (``binascii.crc32``), 0..0xFFFFFFFF; the frame check of v1."""
    return binascii.crc32(data) & 0xFFFFFFFF


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
_FOREIGN = struct.Struct(">BBB")
_STUB = struct.Struct(">H")
TAG_SIZES = range(4, 11)
"""A FOREIGN tag's UID length in bytes (ISO/IEC 14443 A: 4, 7, 10; ISO 15693: 8)."""
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
            return _ACK.pack(msg.acked, msg.want, ACK_RESEND * msg.resend | ACK_NAMES_FOREIGN * msg.names_foreign)
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
        if isinstance(msg, StubMsg):
            _check(msg.deck != "", "STUB names a deck", "ST-DECK")
            return _STUB.pack(msg.epoch) + _text(msg.deck, "deck")
        if isinstance(msg, ForeignMsg):
            _check(len(msg.tag) in TAG_SIZES, f"FOREIGN tag of {len(msg.tag)} bytes, 4..10", "FG-TAG")
            unknown = ForeignWhat(msg.what) is ForeignWhat.UNKNOWN
            _check(unknown == (msg.card is None), "FOREIGN names a card exactly when its tag is of a deck",
                   "FG-CARD")
            code = UNREADABLE if msg.card is None else msg.card.code
            return (_FOREIGN.pack(FOREIGN_WHAT.index(ForeignWhat(msg.what)) + 1, code, len(msg.tag)) + msg.tag
                    + _text(msg.deck, "deck") + _text(msg.stub, "stub"))
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
    if msg.seq == 0 and isinstance(msg, CardMsg | FaultMsg | ForeignMsg | ButtonMsg | Heartbeat | StubMsg | Hello):
        raise MessageError(f"{type(msg).__name__} with seq 0: shoe sequence numbers start at 1", "M-SEQ0")
    data = HEADER.pack(msg.TYPE, msg.seq) + _payload(msg)
    body = data + CRC.pack(crc32(data))
    if len(body) > MAX_BODY:
        raise MessageError(f"body of {len(body)} bytes exceeds {MAX_BODY}")
    return body


_CARD_OF: tuple[Card, ...] = tuple(Card(code) for code in range(52))
"""The card of each code 0..51 (a card is a frozen value: one instance per code serves every frame)."""
_SHOE_NUMBERED = frozenset({T_CARD, T_FAULT, T_FOREIGN, T_BUTTON, T_HEARTBEAT, T_STUB})


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
        if flags & ~(ACK_RESEND | ACK_NAMES_FOREIGN):
            raise MessageError(f"ACK flags 0x{flags:02x} has unknown bits", "A-FLAGS")
        return Ack(seq, acked, want, bool(flags & ACK_RESEND), bool(flags & ACK_NAMES_FOREIGN))
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
    if mtype == T_FOREIGN:
        return _decode_foreign(seq, p)
    if mtype == T_STUB:
        _check(len(p) >= _STUB.size + 1, f"STUB payload is {len(p)} bytes, at least {_STUB.size + 1}", "M-LENGTH")
        (epoch,) = _STUB.unpack_from(p)
        deck, pos = _read_text(p, _STUB.size, "deck")
        _check(pos == len(p), f"STUB has {len(p) - pos} bytes after its last field", "M-LENGTH")
        _check(deck != "", "STUB names a deck", "ST-DECK")
        return StubMsg(seq, epoch, deck)
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


def _decode_foreign(seq: int, p: bytes) -> ForeignMsg:
    """FOREIGN's payload ``what:u8 card:u8 tag_len:u8 tag deck:str stub:str`` (section 16)."""
    _check(len(p) >= _FOREIGN.size, f"FOREIGN payload is {len(p)} bytes, at least 9", "M-LENGTH")
    what, code, size = _FOREIGN.unpack_from(p)
    _check(1 <= what <= len(FOREIGN_WHAT), f"FOREIGN what {what} unknown", "FG-WHAT")
    _check(size in TAG_SIZES, f"FOREIGN tag of {size} bytes, 4..10", "FG-TAG")
    _check(_FOREIGN.size + size <= len(p), "FOREIGN tag runs past the payload", "M-LENGTH")
    tag = bytes(p[_FOREIGN.size : _FOREIGN.size + size])
    deck, pos = _read_text(p, _FOREIGN.size + size, "deck")
    stub, pos = _read_text(p, pos, "stub")
    _check(pos == len(p), f"FOREIGN has {len(p) - pos} bytes after its last field", "M-LENGTH")
    kind = FOREIGN_WHAT[what - 1]
    if kind is ForeignWhat.UNKNOWN:
        _check(code == UNREADABLE and deck == "", "FOREIGN of a tag of no deck names no card and no deck", "FG-CARD")
        card = None
    else:
        _check(code < 52 and deck != "", f"FOREIGN {kind} needs a card code 0..51 and its deck", "FG-CARD")
        card = _CARD_OF[code]
    return ForeignMsg(seq, kind, card, tag, deck, stub)


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


