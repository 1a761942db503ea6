"""Regenerate the byte columns of the protocol v1 test vectors from the codec.

The messages (their fields, names and descriptions) in ``tests/vectors/protocol_v1.json`` are the
input; this script recomputes every vector's ``body`` and ``frame`` with ``drivers.protocol`` and
rewrites section 9 of ``docs/protocol.md`` from the file. It does not check itself:
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

from drivers import protocol as p  # noqa: E402

VECTORS = ROOT / "tests" / "vectors" / "protocol_v1.json"
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
    stale = [str(path.relative_to(ROOT)) for path, old, new in
             ((VECTORS, VECTORS.read_text(), new_json), (DOC, doc, new_doc)) if old != new]
    if args.check:
        if stale:
            print("out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        return 0
    VECTORS.write_text(new_json)
    DOC.write_text(new_doc)
    print("rewrote " + (", ".join(stale) if stale else "nothing (up to date)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
