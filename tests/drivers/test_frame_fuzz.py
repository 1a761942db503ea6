"""Property-based fuzzing of the shoe frame decoder (docs/protocol.md): random
bytes and valid frames with flipped, inserted and deleted bytes never raise anything but the
decoder's documented errors, never yield a message from a frame whose check fails, and never
lose a valid frame that follows garbage."""

from __future__ import annotations

import binascii
import json
from pathlib import Path

from cobs import cobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.exc import FrameError, MessageError
from drivers.protocol import DELIMITER, MAX_BODY, MAX_ENCODED, FrameDecoder, decode_frame

VECTORS = json.loads((Path(__file__).parents[1] / "vectors" / "protocol_v1.json").read_text())["vectors"]
FRAMES = [bytes.fromhex(v["frame"]) for v in VECTORS]
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_holds(part: bytes) -> bool:
    """An independent oracle: the part (between delimiters) is COBS, within the limits, and its
    body's last four bytes are the CRC-32 of the rest (big-endian)."""
    if not part or len(part) > MAX_ENCODED:
        return False
    try:
        body = cobs.decode(part)
    except cobs.DecodeError:
        return False
    if not 9 <= len(body) <= MAX_BODY:
        return False
    return binascii.crc32(body[:-4]) == int.from_bytes(body[-4:], "big")


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid frame with 1..6 byte flips, insertions or deletions (the delimiters included)."""
    data = bytearray(draw(st.sampled_from(FRAMES)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(("flip", "insert", "delete")))
        i = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data.insert(i, draw(st.integers(0, 255)))
        elif data:
            del data[i]
    return bytes(data)


def chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, last = [], 0
    for p in points:
        out.append(data[last:p])
        last = p
    out.append(data[last:])
    return out


def decode_part(part: bytes) -> None:
    """``decode_frame`` raises only its documented errors."""
    try:
        decode_frame(part)
    except (FrameError, MessageError):  # UnknownMessageError is a MessageError
        pass


@FUZZ
@given(st.lists(st.one_of(mutated(), st.binary(max_size=300), st.sampled_from(FRAMES)), min_size=1, max_size=8),
       st.lists(st.integers(0, 10_000), max_size=6))
def test_random_and_mutated_streams_never_raise(pieces: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(pieces)
    decoder = FrameDecoder()
    got = []
    for chunk in chunks(stream, cuts):
        got += decoder.feed(chunk)  # any exception fails the test
    valid = sum(1 for part in stream.split(DELIMITER)[:-1] if check_holds(part))
    assert len(got) <= valid
    for part in stream.split(DELIMITER):
        decode_part(part)


@FUZZ
@given(mutated())
def test_a_frame_whose_check_fails_yields_nothing(frame: bytes) -> None:
    for part in frame.split(DELIMITER):
        out = FrameDecoder().feed(DELIMITER + part + DELIMITER)
        if not check_holds(part):
            assert out == [], (part.hex(), out)
        else:
            assert len(out) <= 1


@FUZZ
@given(st.one_of(st.binary(max_size=700), mutated()), st.sampled_from(range(len(FRAMES))),
       st.lists(st.integers(0, 10_000), max_size=6))
def test_a_valid_frame_after_garbage_is_never_lost(garbage: bytes, which: int, cuts: list[int]) -> None:
    frame = FRAMES[which]
    expected = decode_frame(frame.strip(DELIMITER))
    decoder = FrameDecoder()
    got = []
    for chunk in chunks(garbage + frame, cuts):
        got += decoder.feed(chunk)
    assert got and got[-1] == expected
    assert decoder.stats.frames >= 1
