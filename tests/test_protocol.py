"""The protocol v1 codec: published test vectors, the named CRC, and properties (any message
round-trips; garbage, truncation and bit flips never yield a wrong message)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers import protocol as p
from drivers.exc import FrameError, MessageError, UnknownMessageError
from shoe_ctl.events import CardRead, FaultKind
from shoe_ctl.rules.cards import Card

ROOT = Path(__file__).resolve().parents[1]
VECTORS = json.loads((ROOT / "tests" / "vectors" / "protocol_v1.json").read_text())["vectors"]


def crc16_bitwise(data: bytes) -> int:
    """CRC-16/IBM-3740 written out bit by bit, as a firmware would (independent of binascii)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def test_crc_is_the_named_one() -> None:
    assert p.crc16(b"123456789") == 0x29B1 == crc16_bitwise(b"123456789")


@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_decodes_and_reencodes(vec: dict) -> None:
    frame = bytes.fromhex(vec["frame"])
    body = bytes.fromhex(vec["body"])
    msgs = p.FrameDecoder().feed(frame)
    assert len(msgs) == 1
    assert p.message_to_json(msgs[0]) == vec["message"]
    assert p.encode(p.message_from_json(vec["message"])) == frame
    assert p.encode_body(msgs[0]) == body
    assert crc16_bitwise(body[:-2]).to_bytes(2, "big") == body[-2:]


def test_every_message_type_has_a_vector_and_the_doc_shows_every_frame() -> None:
    names = {v["message"]["type"] for v in VECTORS}
    assert names == set(p.TYPES_BY_NAME)
    doc = (ROOT / "docs" / "protocol.md").read_text()
    for vec in VECTORS:
        assert vec["frame"] in doc, f"docs/protocol.md lacks the frame of vector {vec['name']}"


# --------------------------------------------------------------------------- strategies

u32 = st.integers(0, p.SEQ_MAX)
seq1 = st.integers(1, p.SEQ_MAX)
text = st.text(max_size=10).filter(lambda s: len(s.encode()) <= p.MAX_STR)
cards = st.one_of(st.none(), st.integers(0, 51).map(Card))


@st.composite
def card_msgs(draw: st.DrawFn) -> p.CardMsg:
    card = draw(cards)
    reader = "none" if card is None else draw(st.sampled_from(["rfid", "optical"]))
    return p.CardMsg(draw(u32), card, reader, draw(st.integers(1, 0xFFFF)), draw(st.integers(0, 0xFFFF)))


@st.composite
def hellos(draw: st.DrawFn) -> p.Hello:
    vmin = draw(st.integers(1, 255))
    vmax = draw(st.integers(vmin, 255))
    version = draw(st.one_of(st.just(0), st.integers(vmin, vmax)))
    seq = draw(seq1)
    return p.Hello(seq, version, vmin, vmax, draw(st.integers(1, p.SEQ_MAX)), draw(st.integers(1, seq)),
                   draw(st.integers(0, 0xFFFF)), draw(st.integers(0, 255)),
                   draw(st.sampled_from([("rfid",), ("optical",), ("rfid", "optical")])), draw(text), draw(text))


@st.composite
def acks(draw: st.DrawFn) -> p.Ack:
    want = draw(seq1)
    return p.Ack(draw(u32), draw(st.integers(0, want - 1)), want, draw(st.booleans()))


messages = st.one_of(
    card_msgs(), hellos(), acks(),
    st.builds(p.Heartbeat, u32, st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 255),
              st.booleans(), st.booleans(), st.booleans(), st.integers(0, 0xFFFF)),
    st.builds(p.FaultMsg, u32, st.sampled_from(list(FaultKind)), st.booleans(), text),
    st.builds(p.ButtonMsg, u32, st.integers(1, 255)),
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
    corrupt[-3] ^= 0x40  # a CRC byte (never a COBS code byte here)
    decoder = p.FrameDecoder()
    out = decoder.feed(b"\x13\x37" * 200 + bytes(corrupt) + good)
    assert out == [p.CardMsg(7, Card.parse("Kh"), "rfid", 3)]
    assert decoder.stats.bad_frames == 2  # the over-long run, the corrupted frame
    assert decoder.stats.reasons["long"] == 1


def test_unknown_type_with_valid_crc_is_dropped_and_counted_apart() -> None:
    data = bytes([0x7E]) + (5).to_bytes(4, "big")
    body = data + p.crc16(data).to_bytes(2, "big")
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
        p.decode_body(data + p.crc16(data).to_bytes(2, "big"))


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
    assert ev == CardRead(12, None, "none", 4)
