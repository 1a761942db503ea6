"""The version-2 vectors (tests/vectors/protocol_v2_auth.json, docs/protocol.md "Authentication
(version 2)") checked with hmac/hashlib directly, not through the codec's own derivation, and by
decoding each frame."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

from cobs import cobs

from drivers import protocol as p
from drivers.exc import MessageError
from drivers.protocol import codec

DATA = json.loads((Path(__file__).resolve().parents[1] / "vectors" / "protocol_v2_auth.json").read_text())


def _h(key: bytes, *parts: bytes) -> bytes:
    return hmac.new(key, b"".join(parts), hashlib.sha256).digest()


def test_the_keys_follow_the_documented_derivation() -> None:
    secret, challenge, nonce = (bytes.fromhex(DATA[k]) for k in ("secret", "challenge", "nonce"))
    assert _h(secret, b"shoe-ctl/2 hello").hex() == DATA["hello_key"]
    base = _h(secret, b"shoe-ctl/2 session", challenge, nonce)
    assert _h(base, b"host->shoe").hex() == DATA["host_to_shoe"]
    assert _h(base, b"shoe->host").hex() == DATA["shoe_to_host"]


def test_each_vector_has_its_tag_crc_and_counter_where_the_document_says() -> None:
    for vec in DATA["vectors"]:
        body = bytes.fromhex(vec["body"])
        assert cobs.decode(bytes.fromhex(vec["frame"])[1:-1]) == body
        data, crc = body[:-4], int.from_bytes(body[-4:], "big")
        assert p.crc32(data) == crc
        signed, tag = data[:-8], data[-8:]
        assert _h(bytes.fromhex(vec["key"]), signed)[:8] == tag, vec["name"]
        assert int.from_bytes(signed[-4:], "big") == vec["ctr"]
        fields = bytes.fromhex(vec["challenge"] + vec["nonce"])
        assert signed[-4 - len(fields):-4] == fields
        sealed = p.SealedDecoder().feed(bytes.fromhex(vec["frame"]))[0]
        assert isinstance(sealed, p.Sealed) and sealed.verify(bytes.fromhex(vec["key"])) and sealed.ctr == vec["ctr"]
        flipped = bytearray(body)
        flipped[-13] ^= 1  # one bit of the counter, CRC made right again: the tag catches it
        flipped[-4:] = p.crc32(bytes(flipped[:-4])).to_bytes(4, "big")
        assert not p.unseal_body(bytes(flipped)).verify(bytes.fromhex(vec["key"]))


def test_the_rotation_vector_carries_the_new_secret_only_under_its_pad() -> None:
    vec = next(v for v in DATA["vectors"] if v["name"] == "pair-rotate")
    sealed = p.unseal_body(bytes.fromhex(vec["body"]))
    assert isinstance(sealed.msg, p.Pair) and sealed.msg.secret.hex() != DATA["new_secret"]
    pad = _h(bytes.fromhex(DATA["host_to_shoe"]), b"shoe-ctl/2 pair", vec["ctr"].to_bytes(4, "big"))
    assert p.xor(sealed.msg.secret, pad).hex() == DATA["new_secret"]


def test_a_version_2_hello_carries_the_restart_records_before_its_challenge_fields() -> None:
    vec = next(v for v in DATA["vectors"] if v["name"] == "hello-counters")
    sealed = p.unseal_body(bytes.fromhex(vec["body"]))
    assert sealed.verify(bytes.fromhex(DATA["shoe_to_host"]))
    hello = sealed.msg
    assert isinstance(hello, p.Hello) and hello.version == p.AUTH_VERSION
    assert (hello.caps, hello.boot_count, hello.card_total, hello.dispense) == (("persistent-counters",), 3, 100, 4)
    assert (sealed.challenge.hex(), sealed.nonce.hex()) == (DATA["challenge"], DATA["nonce"])
    # the payload is the version-1 payload, records included: the same bytes as a plain HELLO
    plain = p.encode_body(hello)[p.HEADER.size:-p.CRC.size]
    assert sealed.signed[p.HEADER.size:p.HEADER.size + len(plain)] == plain
    plain_hello = next(v for v in DATA["vectors"] if v["name"] == "hello")
    assert len(bytes.fromhex(vec["body"])) == len(bytes.fromhex(plain_hello["body"])) + 6 + 12  # caps, counters


REJECTS = json.loads((Path(__file__).resolve().parents[1] / "vectors" / "protocol_v1_rejects.json").read_text())
LAYOUT_ROWS = {"M-LENGTH", "M-STR", "H-EXT-FORM"}


def _resealed(body: bytes, key: bytes) -> bytes:
    """The message of a version-1 ``body`` in a version-2 frame (challenge fields as its type has)."""
    data = body[:-4]
    fields = bytes(8) if data[0] == p.T_HOST_HELLO else bytes(16) if data[0] == p.T_HELLO else b""
    signed = data + fields + (7).to_bytes(4, "big")
    sealed = signed + _h(key, signed)[:8]
    return b"\x00" + cobs.encode(sealed + p.crc32(sealed).to_bytes(4, "big")) + b"\x00"


def test_every_value_row_of_the_constraint_table_drops_a_version_2_frame_by_its_own_id() -> None:
    key = bytes(range(32))
    checked = 0
    for vec in REJECTS["rejects"]:
        if vec["rule"].startswith("F-") or vec["rule"] in LAYOUT_ROWS or vec["context"]:
            continue
        body = cobs.decode(bytes.fromhex(vec["frame"]).strip(b"\x00"))
        decoder = p.SealedDecoder()
        assert decoder.feed(_resealed(body, key)) == [], vec["name"]
        assert decoder.stats.rules == {vec["rule"]: 1}, vec["name"]
        checked += 1
    assert checked >= 20


def test_the_makers_page_publishes_every_vector() -> None:
    """docs/protocol-v2-vectors.md holds the inputs, the keys and every vector's body and frame
    (the check below also holds it to the script's own rendering); protocol.md points at it."""
    import json

    root = Path(__file__).resolve().parents[2]
    data = json.loads((root / "tests" / "vectors" / "protocol_v2_auth.json").read_text())
    page = (root / "docs" / "protocol-v2-vectors.md").read_text()
    for key in ("secret", "challenge", "nonce", "hello_key", "host_to_shoe", "shoe_to_host", "new_secret"):
        assert f"`{data[key]}`" in page, key
    for v in data["vectors"]:
        assert f"## {v['name']} ({v['direction']})" in page
        assert f"```\n{v['body']}\n```" in page and f"```\n{v['frame']}\n```" in page
    assert "docs/protocol-v2-vectors.md" in (root / "docs" / "protocol.md").read_text()


def test_the_file_is_what_the_script_writes() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    assert subprocess.run([sys.executable, str(root / "scripts" / "protocol_vectors_v2.py"), "--check"],
                          cwd=root).returncode == 0


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.binary(min_size=32, max_size=32))
def test_any_bytes_never_crash_the_sealed_decoder_and_never_verify_without_the_key(data: bytes, key: bytes) -> None:
    decoder = p.SealedDecoder()
    for item in decoder.feed(data + b"\x00"):
        if isinstance(item, p.Sealed):
            assert not item.verify(key)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 29), st.integers(0, 7))
def test_one_flipped_bit_in_a_sealed_card_is_never_accepted(seq: int, ctr: int, pos: int, bit: int) -> None:
    key = bytes(range(32))
    frame = bytearray(p.seal(p.CardMsg(seq, None, "none", 1), key, ctr))
    pos = 1 + pos % (len(frame) - 2)
    frame[pos] ^= 1 << bit
    decoder = p.SealedDecoder()
    assert not [item for item in decoder.feed(bytes(frame)) if isinstance(item, p.Sealed) and item.verify(key)]
    assert decoder.stats.bad_frames >= 1


def test_a_session_key_made_ready_once_tags_and_verifies_as_its_bytes_do() -> None:
    """MacKey (the session's keys prepared once, copied per frame) gives the tags of the vectors'
    own HMAC, frame after frame, and refuses a frame sealed under another key."""
    secret, challenge, nonce = (bytes.fromhex(DATA[k]) for k in ("secret", "challenge", "nonce"))
    keys = p.session_keys(secret, challenge, nonce)
    assert keys == p.SessionKeys(keys.host_to_shoe, keys.shoe_to_host)  # the ready keys are not compared
    for ctr, msg in enumerate([p.CardMsg(7, None, "none", 1), p.Heartbeat(8, 1, 0, 3), p.Ack(2, 6, 7)], 1):
        signed = p.seal_body(msg, keys.shoe_to_host, ctr)[:-4 - p.MAC_SIZE]
        assert keys.shoe_mac.tag(signed) == _h(keys.shoe_to_host, signed)[:p.MAC_SIZE] == p.mac(keys.shoe_mac, signed)
        frame = p.seal(msg, keys.shoe_mac, ctr)
        assert frame == p.seal(msg, keys.shoe_to_host, ctr)
        (sealed,) = p.SealedDecoder().feed(frame)
        assert sealed.verify(keys.shoe_mac) and sealed.verify(keys.shoe_to_host)
        assert not sealed.verify(keys.host_mac)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["CARD", "ACK", "HEARTBEAT", "LED"]), st.binary(max_size=12))
def test_the_written_out_checks_drop_each_broken_payload_by_the_row_the_helper_names(
        seq: int, name: str, payload: bytes) -> None:
    """CARD, ACK, HEARTBEAT and LED check their payload without the _check helper (no error text
    formatted for a frame that passes): any payload either decodes to a message that encodes back
    to it, or is refused with a MessageError that names a row of the table (or M-LENGTH)."""
    mtype = p.TYPES_BY_NAME[name].TYPE
    try:
        msg = codec._decode_payload(mtype, seq, payload)
    except MessageError as exc:
        assert exc.rule, str(exc)
        return
    assert p.encode_body(msg)[5:-4] == payload
