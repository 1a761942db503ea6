"""The protocol v1 codec: published test vectors, the named CRC, and properties (any message
round-trips; garbage, truncation and bit flips never yield a wrong message)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT

from drivers import protocol as p
from drivers.exc import FrameError, MessageError, UnknownMessageError
from shoe_ctl.events import CardRead, FaultKind
from shoe_ctl.rules.cards import Card

VECTORS = json.loads((ROOT / "tests" / "vectors" / "protocol_v1.json").read_text())["vectors"]


DOC = (ROOT / "docs" / "protocol.md").read_text()


def crc32_bitwise(data: bytes) -> int:
    """CRC-32/ISO-HDLC written out bit by bit, as a firmware would (independent of binascii):
    reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def cobs_decode_by_hand(encoded: bytes) -> bytes:
    """Basic COBS decoding as docs/protocol.md section 2 words it (independent of the cobs
    package): a code byte c is followed by c - 1 data bytes and an implied zero unless c is 0xFF
    or the block ends the frame."""
    out = bytearray()
    i = 0
    while i < len(encoded):
        code = encoded[i]
        assert code != 0 and i + code <= len(encoded), f"bad COBS code {code} at {i}"
        out += encoded[i + 1 : i + code]
        i += code
        if code != 0xFF and i < len(encoded):
            out.append(0)
    return bytes(out)


def test_crc_is_the_named_one() -> None:
    assert p.crc32(b"123456789") == 0xCBF43926 == crc32_bitwise(b"123456789")
    assert p.CRC.size == 4 and p.MIN_BODY == 9 and p.MAX_PAYLOAD == 245


@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_decodes_and_reencodes(vec: dict) -> None:
    frame = bytes.fromhex(vec["frame"])
    body = bytes.fromhex(vec["body"])
    msgs = p.FrameDecoder().feed(frame)
    assert len(msgs) == 1
    assert p.message_to_json(msgs[0]) == vec["message"]
    assert p.encode(p.message_from_json(vec["message"])) == frame
    assert p.encode(msgs[0]) == frame  # decode -> re-encode is the identity
    assert p.encode_body(msgs[0]) == body
    # independent of the codec: the frame's delimiters and COBS, the body's CRC-32 (big-endian)
    assert frame[0] == frame[-1] == 0 and 0 not in frame[1:-1]
    assert cobs_decode_by_hand(frame[1:-1]) == body
    assert len(frame) - 2 <= p.MAX_ENCODED and p.MIN_BODY <= len(body) <= p.MAX_BODY
    assert crc32_bitwise(body[:-4]).to_bytes(4, "big") == body[-4:]
    assert body[0] == p.TYPES_BY_NAME[vec["message"]["type"]].TYPE
    assert int.from_bytes(body[1:5], "big") == vec["message"]["seq"]


def test_every_message_type_has_a_vector_and_the_doc_shows_every_frame() -> None:
    names = {v["message"]["type"] for v in VECTORS}
    assert names == set(p.TYPES_BY_NAME)
    for vec in VECTORS:
        assert vec["frame"] in DOC, f"docs/protocol.md lacks the frame of vector {vec['name']}"
        assert vec["body"] in DOC, f"docs/protocol.md lacks the body of vector {vec['name']}"


def test_the_vectors_file_and_doc_section_are_what_the_generator_writes() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "protocol_vectors.py"), "--check"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def _doc_c_code() -> str:
    m = re.search(r"<!-- crc32-c:begin -->\s*```c\n(.*?)```\s*<!-- crc32-c:end -->", DOC, re.S)
    assert m, "docs/protocol.md lacks its C reference CRC (crc32-c markers)"
    return m.group(1)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_docs_c_reference_crc_agrees_with_every_vector(tmp_path: Path) -> None:
    """The C code a firmware engineer copies from the document computes the vectors' CRCs."""
    bodies = [bytes.fromhex(v["body"]) for v in VECTORS]
    src = tmp_path / "crc.c"
    src.write_text("#include <stdint.h>\n#include <stddef.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
                   + _doc_c_code() + """
int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        uint8_t buf[512]; size_t n = 0;
        for (const char *s = argv[a]; s[0] && s[1]; s += 2) { char h[3] = {s[0], s[1], 0}; buf[n++] = (uint8_t)strtoul(h, NULL, 16); }
        uint32_t got = shoe_crc32(buf, n - 4);
        printf("%08lx %d\\n", (unsigned long)got, shoe_frame_check_ok(buf, n));
    }
    return 0;
}
""")
    exe = tmp_path / "crc"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-o", str(exe), str(src)], check=True, timeout=60)
    args = [(b"123456789" + b"\0\0\0\0").hex(), *(b.hex() for b in bodies)]
    out = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True, timeout=30).stdout.split("\n")
    assert out[0].split() == ["cbf43926", "0"]
    for body, line in zip(bodies, out[1:], strict=False):
        assert line.split() == [body[-4:].hex(), "1"]


# --------------------------------------------------------------------------- strategies

u32 = st.integers(0, p.SEQ_MAX)
seq1 = st.integers(1, p.SEQ_MAX)
text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=10).filter(
    lambda s: len(s.encode()) <= p.MAX_STR)  # M-STR: no control characters
cards = st.one_of(st.none(), st.integers(0, 51).map(Card))


@st.composite
def card_msgs(draw: st.DrawFn) -> p.CardMsg:
    card = draw(cards)
    reader = "none" if card is None else draw(st.sampled_from(["rfid", "optical"]))
    return p.CardMsg(draw(seq1), card, reader, draw(st.integers(1, 0xFFFF)), draw(st.integers(0, 0xFFFF)))


@st.composite
def hellos(draw: st.DrawFn) -> p.Hello:
    vmin = draw(st.integers(1, 255))
    vmax = draw(st.integers(vmin, 255))
    version = draw(st.one_of(st.just(0), st.integers(vmin, vmax)))
    seq = draw(seq1)
    caps = draw(st.sampled_from([None, (), ("keeps-buffer",), ("persistent-counters",),
                                 ("persistent-counters", "counts-unpowered", "keeps-buffer")]))
    counters: tuple[int | None, ...] = (None, None, None)
    if caps is not None and "persistent-counters" in caps:
        counters = (draw(st.integers(1, p.SEQ_MAX)), draw(u32), draw(st.integers(0, 0xFFFF)))
    return p.Hello(seq, version, vmin, vmax, draw(st.integers(1, p.SEQ_MAX)), draw(st.integers(1, seq)),
                   draw(st.integers(0, 0xFFFF)), draw(st.integers(0, 255)),
                   draw(st.sampled_from([("rfid",), ("optical",), ("rfid", "optical")])), draw(text),
                   draw(text.filter(bool)), caps, *counters)


@st.composite
def faults(draw: st.DrawFn) -> p.FaultMsg:
    kind = draw(st.sampled_from(list(FaultKind)))
    cleared = kind != FaultKind.DOUBLE_PULL and draw(st.booleans())
    return p.FaultMsg(draw(seq1), kind, cleared, draw(text))


@st.composite
def acks(draw: st.DrawFn) -> p.Ack:
    want = draw(seq1)
    return p.Ack(draw(u32), draw(st.integers(0, want - 1)), want, draw(st.booleans()))


messages = st.one_of(
    card_msgs(), hellos(), acks(),
    st.builds(p.Heartbeat, seq1, st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 255),
              st.booleans(), st.booleans(), st.booleans(), st.integers(0, 0xFFFF)),
    faults(),
    st.builds(p.ButtonMsg, seq1, st.integers(1, 255)),
    st.builds(p.HostHello, u32, st.just(1), st.integers(1, 255)),
    st.builds(p.Led, u32, st.integers(1, 255), st.sampled_from(p.LED_SIGNALS),
              st.lists(st.sampled_from(p.LED_NAMES), unique=True).map(tuple), st.sampled_from(p.LED_MODES),
              st.integers(0, 0xFFFF), st.integers(0, 0xFFFF)),
    st.builds(p.ResetCounter, u32, st.integers(1, 0xFFFF)),
)


def _canon(msg: p.Message) -> p.Message:
    """Masks decode in table order: compare with the names sorted that way."""
    if isinstance(msg, p.Led):
        return p.Led(msg.seq, msg.token, msg.signal, tuple(n for n in p.LED_NAMES if n in msg.leds), msg.mode,
                     msg.on_ms, msg.off_ms)
    return msg


@given(st.lists(messages, min_size=1, max_size=5), st.data())
@settings(max_examples=200, deadline=None)
def test_any_message_round_trips_in_any_chunking(msgs: list[p.Message], data: st.DataObject) -> None:
    stream = b"".join(p.encode(m) for m in msgs)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    decoder = p.FrameDecoder()
    out: list[p.Message] = []
    last = 0
    for cut in [*cuts, len(stream)]:
        out += decoder.feed(stream[last:cut])
        last = cut
    assert out == [_canon(m) for m in msgs]
    assert decoder.stats.bad_frames == 0


@given(messages, st.data())
@settings(max_examples=300, deadline=None)
def test_a_bit_flip_never_yields_a_wrong_message(msg: p.Message, data: st.DataObject) -> None:
    frame = bytearray(p.encode(msg))
    bit = data.draw(st.integers(0, len(frame) * 8 - 1))
    frame[bit // 8] ^= 1 << (bit % 8)
    decoder = p.FrameDecoder()
    out = decoder.feed(bytes(frame) + b"\x00")
    assert all(m == _canon(msg) for m in out)
    assert out or decoder.stats.bad_frames + decoder.stats.unknown >= 1 or frame.count(0) >= 3


@given(messages, st.data())
@settings(max_examples=200, deadline=None)
def test_truncation_never_yields_a_message(msg: p.Message, data: st.DataObject) -> None:
    frame = p.encode(msg)
    keep = data.draw(st.integers(2, len(frame) - 2))  # a cut inside the encoded body
    out = p.FrameDecoder().feed(frame[:keep] + b"\x00")
    assert out == []


@given(st.binary(max_size=300), messages, st.binary(max_size=300))
@settings(max_examples=200, deadline=None)
def test_garbage_around_a_frame_never_hides_or_changes_it(before: bytes, msg: p.Message, after: bytes) -> None:
    decoder = p.FrameDecoder()
    out = decoder.feed(before + p.encode(msg) + after + b"\x00")
    assert _canon(msg) in out
    # whatever else came out passed the CRC and every range check of v1
    for other in out:
        assert p.decode_body(p.encode_body(other)) == other


def test_bad_frames_are_counted_and_decoding_resyncs() -> None:
    good = p.encode(p.CardMsg(7, Card.parse("Kh"), "rfid", 3))
    corrupt = bytearray(good)
    corrupt[-3] ^= 0x40  # a CRC byte
    assert cobs_decode_by_hand(bytes(corrupt[1:-1]))[-4:] != p.encode_body(p.CardMsg(7, Card.parse("Kh"), "rfid", 3))[-4:]
    decoder = p.FrameDecoder()
    out = decoder.feed(b"\x13\x37" * 200 + bytes(corrupt) + good)
    assert out == [p.CardMsg(7, Card.parse("Kh"), "rfid", 3)]
    assert decoder.stats.bad_frames == 2  # the over-long run, the corrupted frame
    assert decoder.stats.reasons["long"] == 1


def test_unknown_type_with_valid_crc_is_dropped_and_counted_apart() -> None:
    data = bytes([0x7E]) + (5).to_bytes(4, "big")
    body = data + p.crc32(data).to_bytes(4, "big")
    with pytest.raises(UnknownMessageError):
        p.decode_body(body)
    decoder = p.FrameDecoder()
    from cobs import cobs
    assert decoder.feed(b"\x00" + cobs.encode(body) + b"\x00") == []
    assert (decoder.stats.unknown, decoder.stats.bad_frames) == (1, 0)


@pytest.mark.parametrize("payload, why", [
    (bytes([52, 1, 0, 1, 0, 0]), "card code 52"),
    (bytes([0xFF, 1, 0, 1, 0, 0]), "unreadable card with a reader"),
    (bytes([3, 0, 0, 1, 0, 0]), "a read card without a reader"),
    (bytes([3, 1, 0, 0, 0, 0]), "dispense counter 0"),
    (bytes([3, 1, 0, 1, 0]), "short payload"),
])
def test_card_payload_out_of_range_is_a_message_error(payload: bytes, why: str) -> None:
    data = bytes([p.T_CARD]) + (9).to_bytes(4, "big") + payload
    with pytest.raises(MessageError):
        p.decode_body(data + p.crc32(data).to_bytes(4, "big"))


def test_a_hello_without_serial_number_is_refused_both_ways() -> None:
    """docs/protocol.md section 4: the serial number (1..32 bytes) identifies the shoe."""
    hello = p.Hello(5, 1, 1, 1, 9, 5, 0, 0, ("rfid",), "fw", "")
    with pytest.raises(MessageError, match="serial"):
        p.encode(hello)
    data = bytes([p.T_HELLO]) + (5).to_bytes(4, "big") + bytes([1, 1, 1, 0, 0, 0, 9, 0, 0, 0, 5, 0, 0, 0, 1]) \
        + b"\x02fw\x00"
    with pytest.raises(MessageError, match="serial"):
        p.decode_body(data + p.crc32(data).to_bytes(4, "big"))
    ok = data[:-1] + b"\x01S"
    assert p.decode_body(ok + p.crc32(ok).to_bytes(4, "big")) == p.Hello(5, 1, 1, 1, 9, 5, 0, 0, ("rfid",), "fw", "S")


def test_errors_are_also_builtin_value_errors() -> None:
    with pytest.raises(ValueError):
        p.decode_frame(b"\x05\x01")
    with pytest.raises(FrameError) as info:
        p.decode_body(b"\x10\x00\x00\x00\x01\x33\x01\x00\x01\x00\x00\x00\x00")
    assert info.value.reason == "crc"
    with pytest.raises(ValueError):
        p.encode(p.CardMsg(1, Card.parse("As"), "none", 1))


def test_to_event_gives_the_queue_contract() -> None:
    ev = p.to_event(p.CardMsg(12, None, "none", 4))
    assert ev == CardRead(12, None, "none", 4, 0)  # the epoch of the CARD (0 by default)
