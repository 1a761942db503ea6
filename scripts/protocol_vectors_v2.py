"""Write the version-2 (authenticated) test vectors: ``tests/vectors/protocol_v2_auth.json`` and
the same for a shoe maker to read, ``docs/protocol-v2-vectors.md``.

Fixed inputs (a secret, a challenge, a nonce) and the keys, tags and frames the codec derives
from them, for firmware writers to check their HMAC-SHA256, key derivation and framing against.
``tests/drivers/test_protocol_v2.py`` checks every vector with ``hmac`` directly and by decoding.

Usage (from the repository root)::

    .venv/bin/python scripts/protocol_vectors_v2.py           # rewrite both files
    .venv/bin/python scripts/protocol_vectors_v2.py --check   # exit 1 if either is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drivers import protocol as p  # noqa: E402
from shoe_ctl.rules.cards import Card  # noqa: E402

OUT = ROOT / "tests" / "vectors" / "protocol_v2_auth.json"
DOC = ROOT / "docs" / "protocol-v2-vectors.md"
SECRET = bytes(range(32))
CHALLENGE = bytes.fromhex("c1c2c3c4c5c6c7c8")
NONCE = bytes.fromhex("5a5b5c5d5e5f6061")


def build() -> dict:
    """Every vector, from the codec."""
    hk = p.hello_key(SECRET)
    keys = p.session_keys(SECRET, CHALLENGE, NONCE)
    new_secret = bytes(range(32, 64))
    hello = p.Hello(42, 2, 2, 2, 0x1A2B3C4D, 40, 3, 7, ("rfid", "optical"), "2.1.0", "SH-000123")
    # the HELLO records of docs/protocol.md section 12 ride in a version-2 HELLO's payload unchanged
    hello_counters = p.Hello(42, 2, 2, 2, 0x5EED0003, 40, 3, 0, ("rfid",), "2.2.0", "SH-000124",
                             caps=("persistent-counters",), boot_count=3, card_total=100, dispense=4)
    rows = [
        ("host-hello", "host->shoe", "HOST_HELLO for version 2 with the challenge, under the hello key, counter 0",
         p.HostHello(1, 2, 2), hk, 0, CHALLENGE, b""),
        ("hello", "shoe->host", "the answer: the challenge echoed, the shoe's nonce, under the session's "
         "shoe->host key, counter 1", hello, keys.shoe_to_host, 1, CHALLENGE, NONCE),
        ("hello-counters", "shoe->host", "the same answer from a shoe that keeps its counters: the caps and "
         "counters records (section 12) in the payload, then the challenge fields", hello_counters,
         keys.shoe_to_host, 1, CHALLENGE, NONCE),
        ("card", "shoe->host", "As read by RFID, counter 2 of the session",
         p.CardMsg(40, Card.parse("As"), "rfid", 16, 3), keys.shoe_to_host, 2, b"", b""),
        ("ack", "host->shoe", "events up to 39 recorded, next wanted 42; counter 1 of the host's side",
         p.Ack(2, 39, 42), keys.host_to_shoe, 1, b"", b""),
        ("pair-rotate", "host->shoe", "a rotation to the secret 20 21 .. 3f, hidden under the pad of counter 2",
         p.Pair(3, p.xor(new_secret, p.pair_pad(keys.host_to_shoe, 2))), keys.host_to_shoe, 2, b"", b""),
    ]
    vectors = []
    for name, direction, text, msg, key, ctr, challenge, nonce in rows:
        body = p.seal_body(msg, key, ctr, challenge=challenge, nonce=nonce)
        frame = p.seal(msg, key, ctr, challenge=challenge, nonce=nonce)
        vectors.append({"name": name, "direction": direction, "description": text, "ctr": ctr,
                        "challenge": challenge.hex(), "nonce": nonce.hex(), "key": key.hex(),
                        "body": body.hex(" "), "frame": frame.hex(" ")})
    return {"protocol": p.AUTH_VERSION, "secret": SECRET.hex(), "challenge": CHALLENGE.hex(), "nonce": NONCE.hex(),
            "hello_key": hk.hex(), "host_to_shoe": keys.host_to_shoe.hex(), "shoe_to_host": keys.shoe_to_host.hex(),
            "new_secret": new_secret.hex(), "note": "body = type:u8 seq:u32 payload [challenge:8 [nonce:8]] ctr:u32 "
            "mac:8 crc:u32; mac = HMAC-SHA256(key, everything before it)[:8]", "vectors": vectors}


def render_doc(data: dict) -> str:
    """``docs/protocol-v2-vectors.md``: the inputs, the derived keys and every vector's bytes."""
    out = ["# Protocol version 2: test vectors", "",
           "Written by `scripts/protocol_vectors_v2.py` from the codec (`drivers/protocol.py`); the same",
           "values as `tests/vectors/protocol_v2_auth.json`, which `tests/drivers/test_protocol_v2.py` checks",
           "with `hmac` directly. The frame, the keys and the handshake: `docs/protocol.md`, sections 14",
           "and 15. Bytes in hex; a frame is `00 COBS(body) 00` (section 2).", "",
           f"Body layout: {data['note']}.", "",
           "| input or key | value |", "|---|---|",
           f"| pairing secret `S` | `{data['secret']}` |",
           f"| host challenge | `{data['challenge']}` |",
           f"| shoe nonce | `{data['nonce']}` |",
           f"| hello key `H` = HMAC-SHA256(S, \"shoe-ctl/2 hello\") | `{data['hello_key']}` |",
           f"| `K_hs` (host -> shoe) | `{data['host_to_shoe']}` |",
           f"| `K_sh` (shoe -> host) | `{data['shoe_to_host']}` |",
           f"| the rotation's new secret | `{data['new_secret']}` |", ""]
    for v in data["vectors"]:
        out += [f"## {v['name']} ({v['direction']})", "", f"{v['description']}.", "",
                f"- counter `ctr` = {v['ctr']}; key `{v['key']}`"]
        if v["challenge"]:
            out.append(f"- challenge `{v['challenge']}`" + (f", nonce `{v['nonce']}`" if v["nonce"] else ""))
        out += ["", "body:", "", "```", v["body"], "```", "", "frame on the line:", "", "```", v["frame"], "```", ""]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    args = ap.parse_args()
    data = build()
    text = json.dumps(data, indent=2) + "\n"
    doc = render_doc(data)
    if args.check:
        same = OUT.exists() and OUT.read_text() == text and DOC.exists() and DOC.read_text() == doc
        return 0 if same else 1
    OUT.write_text(text)
    DOC.write_text(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
