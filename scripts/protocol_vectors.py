"""Regenerate the byte columns of the protocol v1 test vectors from the codec.

The messages (their fields, names and descriptions) in ``tests/vectors/protocol_v1.json`` are the
input; this script recomputes every vector's ``body`` and ``frame`` with ``drivers.protocol`` and
rewrites section 9 of ``docs/protocol.md`` from the file; it also writes the negative vectors
(``tests/vectors/protocol_v1_rejects.json``, one or more per row of the constraint table of
section 11), checked by ``tests/drivers/test_protocol_rejects.py``. It does not check itself:
``tests/drivers/test_protocol.py`` checks every vector with an independent bitwise CRC-32, an independent
COBS decoder, the C reference code of the document and decode -> re-encode identity.

Usage (from the repository root)::

    .venv/bin/python scripts/protocol_vectors.py           # rewrite the file and the doc section
    .venv/bin/python scripts/protocol_vectors.py --check   # exit 1 if either is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import struct  # noqa: E402

from cobs import cobs  # noqa: E402

from drivers import protocol as p  # noqa: E402
from shoe_ctl.rules.cards import Card  # noqa: E402

VECTORS = ROOT / "tests" / "vectors" / "protocol_v1.json"
REJECTS = ROOT / "tests" / "vectors" / "protocol_v1_rejects.json"
DOC = ROOT / "docs" / "protocol.md"
BEGIN = "<!-- vectors:begin (scripts/protocol_vectors.py writes this part) -->"
END = "<!-- vectors:end -->"
CRC_TEXT = ("CRC-32/ISO-HDLC (poly 0x04C11DB7, init 0xFFFFFFFF, refin true, refout true, "
            "xorout 0xFFFFFFFF, check 0xCBF43926), sent big-endian")
NOTE = "frame = 00 COBS(body) 00; body = type:u8 seq:u32 payload crc:u32, big-endian"


def hexbytes(data: bytes) -> str:
    """``b"\\x01\\xab"`` -> ``"01 ab"``."""
    return " ".join(f"{b:02x}" for b in data)


def regenerate(data: dict) -> dict:
    """``data`` with every vector's body and frame recomputed from its message."""
    out = {"protocol": p.PROTOCOL_VERSION, "crc": CRC_TEXT, "note": NOTE, "vectors": []}
    for vec in data["vectors"]:
        msg = p.message_from_json(vec["message"])
        out["vectors"].append({**vec, "message": p.message_to_json(msg),
                               "body": hexbytes(p.encode_body(msg)), "frame": hexbytes(p.encode(msg))})
    return out


def doc_section(data: dict) -> str:
    """The markdown of the vectors, as section 9 of the document shows them."""
    parts = [BEGIN, ""]
    for vec in data["vectors"]:
        fields = json.dumps(vec["message"], ensure_ascii=False)
        parts += [f"**{vec['name']}** ({vec['direction']}): {vec['description']}.", "", "```",
                  f"fields: {fields}", f"body:   {vec['body']}", f"frame:  {vec['frame']}", "```", ""]
    parts.append(END)
    return "\n".join(parts)


def _raw(mtype: int, seq: int, payload: bytes) -> bytes:
    """A frame with a correct CRC around any payload (the codec would refuse to make it)."""
    data = p.HEADER.pack(mtype, seq) + payload
    return p.DELIMITER + bytes(cobs.encode(data + p.CRC.pack(p.crc32(data)))) + p.DELIMITER


def _hello_payload(*, version: int = 1, vmin: int = 1, vmax: int = 1, boot_id: int = 7, first_seq: int = 5,
                   readers: int = 1, serial: bytes = b"SH-1", ext: bytes = b"") -> bytes:
    return (struct.pack(">BBBIIHBB", version, vmin, vmax, boot_id, first_seq, 0, 0, readers)
            + b"\x03fw1" + bytes([len(serial)]) + serial + ext)


def _rec(tag: int, value: bytes) -> bytes:
    return bytes([tag, len(value)]) + value


CAPS_PC = _rec(p.EXT_CAPS, struct.pack(">I", 1))
COUNTERS = _rec(p.EXT_COUNTERS, struct.pack(">IIH", 3, 100, 4))


def rejects() -> list[dict]:
    """One or more negative vectors for every row of the receiver's constraint table
    (docs/protocol.md section 11): ``rule`` the row, ``receiver`` who drops it, ``context`` the
    positive vector the receiver took first (session rows), ``frame`` the bytes on the line."""
    card_ok = p.encode(p.CardMsg(40, Card.parse("As"), "rfid", 16, 3))
    rows: list[tuple[str, str, str, str, bytes, str]] = [
        ("F-LONG", "long", "host", "300 bytes without a delimiter", b"\x00" + b"\x01" * 300 + b"\x00", ""),
        ("F-COBS", "cobs", "host", "a COBS code byte that runs past the end", bytes.fromhex("00 05 01 02 00"), ""),
        ("F-SHORT", "short", "host", "a body of 5 bytes", b"\x00" + bytes(cobs.encode(b"\x10\x00\x00\x00\x01"))
         + b"\x00", ""),
        ("F-CRC", "crc", "host", "the card vector with its last CRC byte changed", card_ok[:-2]
         + bytes([card_ok[-2] ^ 0x01]) + b"\x00", ""),
        ("F-TYPE", "unknown-type", "host", "type 0x14, not defined (counted apart, no error)",
         _raw(0x14, 9, b"\x01"), ""),
        ("M-LENGTH", "card-5-bytes", "host", "a CARD payload of 5 bytes", _raw(p.T_CARD, 40, bytes(5)), ""),
        ("M-LENGTH", "heartbeat-7-bytes", "host", "a HEARTBEAT payload of 7 bytes", _raw(p.T_HEARTBEAT, 40, bytes(7)),
         ""),
        ("M-LENGTH", "fault-trailing", "host", "a FAULT with a byte after its detail",
         _raw(p.T_FAULT, 40, b"\x02\x00\x00\x00"), ""),
        ("M-LENGTH", "ack-8-bytes", "shoe", "an ACK payload of 8 bytes", _raw(p.T_ACK, 2, bytes(8)), ""),
        ("M-STR", "detail-33", "host", "a FAULT detail announced as 33 bytes",
         _raw(p.T_FAULT, 40, b"\x02\x00\x21" + b"a" * 33), ""),
        ("M-STR", "detail-not-utf8", "host", "a FAULT detail that is not UTF-8",
         _raw(p.T_FAULT, 40, b"\x02\x00\x02\xc3\x28"), ""),
        ("M-STR", "detail-control", "host", "a FAULT detail holding a newline and a terminal escape",
         _raw(p.T_FAULT, 40, b"\x02\x00\x07a\nb\x1b[2J"), ""),
        ("M-SEQ0", "card-seq-0", "host", "a CARD with sequence number 0 (not a duplicate: a bad frame)",
         _raw(p.T_CARD, 0, bytes([51, 1, 0, 1, 0, 3])), ""),
        ("M-SEQ0", "heartbeat-seq-0", "host", "a HEARTBEAT with seq 0", _raw(p.T_HEARTBEAT, 0, bytes(8)), ""),
        ("H-VERSION-RANGE", "hello-vmin-0", "host", "HELLO version_min 0",
         _raw(p.T_HELLO, 9, _hello_payload(version=0, vmin=0)), ""),
        ("H-VERSION", "hello-version-outside", "host", "HELLO version 3 with range 1..1",
         _raw(p.T_HELLO, 9, _hello_payload(version=3)), ""),
        ("H-BOOT-ID", "hello-boot-0", "host", "HELLO boot_id 0", _raw(p.T_HELLO, 9, _hello_payload(boot_id=0)), ""),
        ("H-FIRST-SEQ", "hello-first-after-seq", "host", "HELLO first_seq 10 above seq 9",
         _raw(p.T_HELLO, 9, _hello_payload(first_seq=10)), ""),
        ("H-READERS", "hello-no-reader", "host", "HELLO readers 0", _raw(p.T_HELLO, 9, _hello_payload(readers=0)), ""),
        ("H-READERS", "hello-reader-bit-2", "host", "HELLO readers bit 2 (undefined)",
         _raw(p.T_HELLO, 9, _hello_payload(readers=4)), ""),
        ("H-SERIAL", "hello-empty-serial", "host", "HELLO with an empty serial number",
         _raw(p.T_HELLO, 9, _hello_payload(serial=b"")), ""),
        ("H-EXT-FORM", "hello-ext-header-cut", "host", "one byte after the serial: a record header cut short",
         _raw(p.T_HELLO, 9, _hello_payload(ext=b"\x01")), ""),
        ("H-EXT-FORM", "hello-ext-past-end", "host", "a record announcing 4 bytes with 2 present",
         _raw(p.T_HELLO, 9, _hello_payload(ext=b"\x01\x04\x00\x00")), ""),
        ("H-EXT-DUP", "hello-caps-twice", "host", "the caps record twice",
         _raw(p.T_HELLO, 9, _hello_payload(ext=_rec(1, bytes(4)) * 2)), ""),
        ("H-EXT-SHORT", "hello-caps-2-bytes", "host", "a caps record of 2 bytes",
         _raw(p.T_HELLO, 9, _hello_payload(ext=_rec(1, bytes(2)))), ""),
        ("H-COUNTERS", "hello-counters-without-cap", "host", "a counters record without persistent-counters",
         _raw(p.T_HELLO, 9, _hello_payload(ext=_rec(1, bytes(4)) + COUNTERS)), ""),
        ("H-COUNTERS", "hello-cap-without-counters", "host", "persistent-counters without a counters record",
         _raw(p.T_HELLO, 9, _hello_payload(ext=CAPS_PC)), ""),
        ("H-COUNTERS", "hello-boot-count-0", "host", "a counters record with boot_count 0",
         _raw(p.T_HELLO, 9, _hello_payload(ext=CAPS_PC + _rec(2, struct.pack(">IIH", 0, 0, 0)))), ""),
        ("H-CAPS", "hello-unpowered-alone", "host", "counts-unpowered without persistent-counters",
         _raw(p.T_HELLO, 9, _hello_payload(ext=_rec(1, struct.pack(">I", 2)))), ""),
        ("HB-FLAGS", "heartbeat-flag-bit-3", "host", "HEARTBEAT flags bit 3 (undefined)",
         _raw(p.T_HEARTBEAT, 42, struct.pack(">HHBBH", 1, 3, 0, 8, 0)), ""),
        ("C-CODE", "card-code-52", "host", "card code 52", _raw(p.T_CARD, 40, bytes([52, 1, 0, 1, 0, 3])), ""),
        ("C-READER", "card-reader-3", "host", "reader code 3", _raw(p.T_CARD, 40, bytes([5, 3, 0, 1, 0, 3])), ""),
        ("C-UNREAD", "unreadable-with-reader", "host", "card 0xFF with reader RFID",
         _raw(p.T_CARD, 40, bytes([255, 1, 0, 1, 0, 3])), ""),
        ("C-UNREAD", "card-without-reader", "host", "card 5 with reader 0",
         _raw(p.T_CARD, 40, bytes([5, 0, 0, 1, 0, 3])), ""),
        ("C-DISPENSE", "card-dispense-0", "host", "a CARD with dispense 0", _raw(p.T_CARD, 40, bytes([5, 1, 0, 0, 0, 3])),
         ""),
        ("C-READER-DECLARED", "card-undeclared-reader", "host",
         "an optical CARD from a shoe whose HELLO (vector hello-counters) declares RFID only",
         p.encode(p.CardMsg(40, Card.parse("2c"), "optical", 18, 3)), "hello-counters"),
        ("FT-KIND", "fault-kind-6", "host", "FAULT kind 6", _raw(p.T_FAULT, 40, b"\x06\x00\x00"), ""),
        ("FT-CLEARED", "fault-cleared-2", "host", "FAULT cleared 2", _raw(p.T_FAULT, 40, b"\x02\x02\x00"), ""),
        ("FT-INSTANT", "double-pull-cleared", "host", "a double pull \"cleared\" (an instant never clears)",
         _raw(p.T_FAULT, 40, b"\x03\x01\x00"), ""),
        ("B-NUMBER", "button-0", "host", "BUTTON 0", _raw(p.T_BUTTON, 40, b"\x00"), ""),
        ("FG-WHAT", "foreign-what-4", "host", "FOREIGN what 4", _raw(p.T_FOREIGN, 41, FOREIGN_TAIL(4, 0xFF)), ""),
        ("FG-TAG", "foreign-tag-3-bytes", "host", "FOREIGN with a tag of 3 bytes",
         _raw(p.T_FOREIGN, 41, bytes([1, 0xFF, 3, 4, 0xA1, 0xB2, 0, 0])), ""),
        ("FG-CARD", "foreign-unknown-with-card", "host", "FOREIGN of a tag of no deck naming card 28",
         _raw(p.T_FOREIGN, 41, FOREIGN_TAIL(1, 28)), ""),
        ("FG-CARD", "foreign-other-deck-unread", "host", "FOREIGN of another deck's card with code 0xFF",
         _raw(p.T_FOREIGN, 41, FOREIGN_TAIL(2, 0xFF, b"D12")), ""),
        ("ST-DECK", "stub-empty-deck", "host", "a STUB with an empty deck id", _raw(p.T_STUB, 42, b"\x00\x03\x00"), ""),
        ("FG-UNOFFERED", "stub-unoffered", "host",
         "a STUB from a shoe whose HELLO (vector hello) did not offer names-foreign",
         _raw(p.T_STUB, 42, b"\x00\x03\x05red-1"), "hello"),
        ("FG-UNOFFERED", "foreign-unoffered", "host",
         "a FOREIGN from a shoe whose HELLO (vector hello) did not offer names-foreign",
         _raw(p.T_FOREIGN, 41, FOREIGN_TAIL(1, 0xFF)), "hello"),
        ("M-DIRECTION", "ack-to-the-host", "host",
         "an ACK (a type only the host sends) coming to a host after the shoe's HELLO (vector hello)",
         p.encode(p.Ack(2, 1, 2)), "hello"),
        ("HH-RANGE", "host-hello-vmin-0", "shoe", "HOST_HELLO 0..1", _raw(p.T_HOST_HELLO, 1, b"\x00\x01"), ""),
        ("HH-RANGE", "host-hello-reversed", "shoe", "HOST_HELLO 2..1", _raw(p.T_HOST_HELLO, 1, b"\x02\x01"), ""),
        ("A-ORDER", "ack-want-0", "shoe", "ACK want 0", _raw(p.T_ACK, 2, struct.pack(">IIB", 0, 0, 0)), ""),
        ("A-ORDER", "ack-acked-eq-want", "shoe", "ACK acked 42 = want 42", _raw(p.T_ACK, 2, struct.pack(">IIB", 42, 42, 0)),
         ""),
        ("A-FLAGS", "ack-flag-bit-2", "shoe", "ACK flags bit 2", _raw(p.T_ACK, 2, struct.pack(">IIB", 39, 42, 4)), ""),
        ("A-BEYOND", "ack-beyond-next-seq", "shoe",
         "ACK acked 42 to a shoe whose next event is 42 (vector hello): acks what was never sent",
         p.encode(p.Ack(2, 42, 43)), "hello"),
        ("L-TOKEN", "led-token-0", "shoe", "LED token 0", _raw(p.T_LED, 5, bytes(8)), ""),
        ("L-SIGNAL", "led-signal-12", "shoe", "LED signal 12", _raw(p.T_LED, 5, bytes([1, 12, 1, 0, 0, 0, 0, 0])), ""),
        ("L-MODE", "led-mode-3", "shoe", "LED mode 3", _raw(p.T_LED, 5, bytes([1, 2, 1, 3, 0, 0, 0, 0])), ""),
        ("L-LEDS", "led-bit-5", "shoe", "LED leds bit 5", _raw(p.T_LED, 5, bytes([1, 2, 0x20, 0, 0, 0, 0, 0])), ""),
        ("R-EPOCH", "reset-epoch-0", "shoe", "RESET_COUNTER epoch 0", _raw(p.T_RESET, 8, b"\x00\x00"), ""),
    ]
    return [{"rule": rule, "name": name, "receiver": receiver, "context": context, "description": text,
             "frame": hexbytes(frame)} for rule, name, receiver, text, frame, context in rows]


def FOREIGN_TAIL(what: int, code: int, deck: bytes = b"") -> bytes:  # noqa: N802 - reads as a constant
    """A FOREIGN payload (section 16) for tag 04a1b2c3, stub D17."""
    return bytes([what, code, 4]) + bytes.fromhex("04a1b2c3") + bytes([len(deck)]) + deck + b"\x03D17"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report whether the files are up to date")
    args = ap.parse_args(argv)
    data = regenerate(json.loads(VECTORS.read_text()))
    new_json = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    doc = DOC.read_text()
    head, sep, rest = doc.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        print(f"{DOC}: markers {BEGIN!r} ... {END!r} not found", file=sys.stderr)
        return 2
    new_doc = head + doc_section(data) + tail
    new_rejects = json.dumps({"protocol": p.PROTOCOL_VERSION, "note": "negative vectors: each row of the "
                              "constraint table (docs/protocol.md section 11); the receiver drops every frame",
                              "rejects": rejects()}, indent=1) + "\n"
    old_rejects = REJECTS.read_text() if REJECTS.exists() else ""
    stale = [str(path.relative_to(ROOT)) for path, old, new in
             ((VECTORS, VECTORS.read_text(), new_json), (DOC, doc, new_doc), (REJECTS, old_rejects, new_rejects))
             if old != new]
    if args.check:
        if stale:
            print("out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        return 0
    VECTORS.write_text(new_json)
    DOC.write_text(new_doc)
    REJECTS.write_text(new_rejects)
    print("rewrote " + (", ".join(stale) if stale else "nothing (up to date)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
