"""The firmware's own codec (drivers/shoe_fw/codec.py) against the published vectors
(docs/protocol.md section 9, tests/vectors/*.json, scripts/protocol_vectors*.py) and against the
host's codec (drivers/protocol.py) with hypothesis: two implementations of one document."""

from __future__ import annotations

import binascii
import json
import re
from pathlib import Path
from typing import Any

import pytest
from cobs import cobs
from hypothesis import given
from hypothesis import strategies as st

from drivers import protocol as p
from drivers.shoe_fw import codec as c
from drivers.shoe_fw.crypto import HmacKey
from shoe_ctl.events import FaultKind
from shoe_ctl.rules.cards import Card

ROOT = Path(__file__).resolve().parents[2]
V1 = json.loads((ROOT / "tests/vectors/protocol_v1.json").read_text())["vectors"]
V2 = json.loads((ROOT / "tests/vectors/protocol_v2_auth.json").read_text())
REJECTS = json.loads((ROOT / "tests/vectors/protocol_v1_rejects.json").read_text())["rejects"]
READERS = {"rfid": 1, "optical": 2, "none": 0}
FAULTS = {"misread": 1, "jam": 2, "double-pull": 3, "cover-open": 4, "reader-error": 5}


def shoe_payload(m: dict[str, Any]) -> bytes:
    """The firmware's payload for a vector's message fields."""
    t = m["type"]
    if t == "HELLO":
        readers = sum(1 << ["rfid", "optical"].index(r) for r in m["readers"])
        caps = counters = None
        if "caps" in m:
            caps = sum(1 << p.CAPS.index(x) for x in m["caps"])
            counters = (m["boot_count"], m["card_total"], m["dispense"])
        return c.hello_payload(m["version"], m["version_min"], m["version_max"], m["boot_id"], m["first_seq"],
                               m["epoch"], m["led_token"], readers, m["firmware"], m["serial"], caps, counters)
    if t == "HEARTBEAT":
        flags = c.HB_COVER_OPEN * m["cover_open"] | c.HB_JAMMED * m["jammed"] | c.HB_READER_ERROR * m["reader_error"]
        return c.heartbeat_payload(m["dispense"], m["epoch"], m["led_token"], flags, m["unacked"])
    if t == "CARD":
        code = c.UNREADABLE if m["card"] is None else Card.parse(m["card"]).code
        return c.card_payload(code, READERS[m["reader"]], m["dispense"], m["epoch"])
    if t == "FAULT":
        return c.fault_payload(FAULTS[m["kind"]], m["cleared"], m["detail"])
    if t == "STUB":
        return c.stub_payload(m["epoch"], m["deck"])
    if t == "FOREIGN":
        code = c.UNREADABLE if m["card"] is None else Card.parse(m["card"]).code
        what = (c.FOREIGN_UNKNOWN, c.FOREIGN_OTHER_DECK, c.FOREIGN_RETIRED)[("unknown", "other-deck", "retired").index(m["what"])]
        return c.foreign_payload(what, code, bytes.fromhex(m["tag"]), m["deck"], m["stub"])
    assert t == "BUTTON"
    return c.button_payload(m["button"])


TYPES = {"HELLO": c.T_HELLO, "HEARTBEAT": c.T_HEARTBEAT, "CARD": c.T_CARD, "FAULT": c.T_FAULT, "BUTTON": c.T_BUTTON,
         "FOREIGN": c.T_FOREIGN, "STUB": c.T_STUB}


@pytest.mark.parametrize("vec", [v for v in V1 if v["direction"] == "shoe->host"], ids=lambda v: v["name"])
def test_every_shoe_vector_is_built_byte_for_byte(vec: dict[str, Any]) -> None:
    m = vec["message"]
    body = c.body_v1(TYPES[m["type"]], m["seq"], shoe_payload(m))
    assert body == bytes.fromhex(vec["body"])
    assert c.frame_of(body) == bytes.fromhex(vec["frame"])


def host_fields(m: dict[str, Any]) -> tuple[Any, ...]:
    t = m["type"]
    if t == "HOST_HELLO":
        return (m["version_min"], m["version_max"])
    if t == "ACK":
        return (m["acked"], m["want"], m["resend"], m.get("names_foreign", False))
    if t == "LED":
        leds = sum(1 << p.LED_NAMES.index(x) for x in m["leds"])
        return (m["token"], p.LED_SIGNALS.index(m["signal"]), leds, p.LED_MODES.index(m["mode"]), m["on_ms"],
                m["off_ms"])
    assert t == "RESET_COUNTER"
    return (m["epoch"],)


@pytest.mark.parametrize("vec", [v for v in V1 if v["direction"] == "host->shoe"], ids=lambda v: v["name"])
def test_every_host_vector_is_read_to_its_fields(vec: dict[str, Any]) -> None:
    frames = c.FrameSplitter().feed(bytes.fromhex(vec["frame"]))
    assert len(frames) == 1
    body = c.checked_body(frames[0])
    assert body == bytes.fromhex(vec["body"])[:-4]
    assert c.parse_host(body[0], body[5:]) == host_fields(vec["message"])


SHOE_ROWS = [r for r in REJECTS if r["receiver"] == "shoe" and not r["context"]]


@pytest.mark.parametrize("vec", SHOE_ROWS, ids=lambda r: r["rule"] + ":" + r["name"])
def test_every_shoe_side_negative_vector_is_dropped_by_its_row(vec: dict[str, Any]) -> None:
    frames = c.FrameSplitter().feed(bytes.fromhex(vec["frame"]))
    assert len(frames) == 1
    body = c.checked_body(frames[0])
    with pytest.raises(c.DropFrame) as err:
        c.parse_host(body[0], body[5:])
    assert err.value.args[0] == vec["rule"]


@pytest.mark.parametrize("vec", [r for r in REJECTS if r["rule"] in ("F-LONG", "F-COBS", "F-SHORT", "F-CRC")],
                         ids=lambda r: r["rule"])
def test_the_frame_rows_drop_broken_frames(vec: dict[str, Any]) -> None:
    splitter = c.FrameSplitter()
    frames = splitter.feed(bytes.fromhex(vec["frame"]))
    if vec["rule"] == "F-LONG":
        assert frames == [] and splitter.too_long == 1
        return
    with pytest.raises(c.DropFrame) as err:
        c.checked_body(frames[0])
    assert err.value.args[0] == vec["rule"]


def test_the_crc_check_value_and_cobs_agree_with_the_reference_libraries() -> None:
    assert c.crc32(b"123456789") == 0xCBF43926


@given(st.binary(max_size=600))
def test_cobs_and_crc_equal_the_cobs_package_and_binascii(data: bytes) -> None:
    assert c.cobs_encode(data) == cobs.encode(data)
    assert c.cobs_decode(c.cobs_encode(data)) == data
    assert c.crc32(data) == binascii.crc32(data)


# ---------------------------------------------------------------- version 2

SECRET = bytes.fromhex(V2["secret"])
CHALLENGE = bytes.fromhex(V2["challenge"])
NONCE = bytes.fromhex(V2["nonce"])


def test_the_keys_are_the_vectors_keys() -> None:
    session = c.Session(SECRET, CHALLENGE, NONCE)
    assert session.host_to_shoe == bytes.fromhex(V2["host_to_shoe"])
    hello_key = c.prf(SECRET, c.LABEL, b"hello")
    assert hello_key == bytes.fromhex(V2["hello_key"])
    assert c.prf(bytes.fromhex(V2["shoe_to_host"]), b"x") == HmacKey(bytes.fromhex(V2["shoe_to_host"])).digest(b"x")


@pytest.mark.parametrize("vec", [v for v in V2["vectors"] if v["direction"] == "shoe->host"], ids=lambda v: v["name"])
def test_every_sealed_shoe_vector_is_built_byte_for_byte(vec: dict[str, Any]) -> None:
    want = bytes.fromhex(vec["body"])
    mtype, seq = want[0], int.from_bytes(want[1:5], "big")
    extra = bytes.fromhex(vec["challenge"]) + bytes.fromhex(vec["nonce"])
    payload = want[5:len(want) - 4 - 8 - 4 - len(extra)]
    body = c.body_v2(mtype, seq, payload, HmacKey(bytes.fromhex(vec["key"])), vec["ctr"], extra)
    assert body == want and c.frame_of(body) == bytes.fromhex(vec["frame"])


@pytest.mark.parametrize("vec", [v for v in V2["vectors"] if v["direction"] == "host->shoe"], ids=lambda v: v["name"])
def test_every_sealed_host_vector_verifies_under_its_key_only(vec: dict[str, Any]) -> None:
    body = c.checked_body(c.FrameSplitter().feed(bytes.fromhex(vec["frame"]))[0])
    sealed = c.Sealed(body)
    assert sealed.ctr == vec["ctr"] and sealed.verify(HmacKey(bytes.fromhex(vec["key"])))
    assert not sealed.verify(HmacKey(bytes(32)))
    fields = c.parse_host(sealed.mtype, sealed.payload)
    if vec["name"] == "pair-rotate":
        pad = c.pair_pad(bytes.fromhex(V2["host_to_shoe"]), sealed.ctr)
        assert bytes(a ^ b for a, b in zip(fields[0], pad, strict=True)) == bytes.fromhex(V2["new_secret"])
    if vec["name"] == "host-hello":
        assert sealed.challenge == CHALLENGE and fields == (2, 2)


# ---------------------------------------------------------------- against the host's codec

cards = st.one_of(st.none(), st.integers(0, 51).map(Card))
shoe_msgs = st.one_of(
    st.builds(lambda seq, card, opt, d, e: p.CardMsg(seq, card, "none" if card is None else ("optical" if opt else "rfid"),
                                                     d, e),
              st.integers(1, 2**32 - 1), cards, st.booleans(), st.integers(1, 0xFFFF), st.integers(0, 0xFFFF)),
    st.builds(lambda seq, kind, cleared, detail: p.FaultMsg(seq, kind, cleared and kind != FaultKind.DOUBLE_PULL,
                                                            detail),
              st.integers(1, 2**32 - 1), st.sampled_from(list(p.FAULT_CODES)), st.booleans(),
              st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("éß♣"), max_size=20)),
    st.builds(p.ButtonMsg, st.integers(1, 2**32 - 1), st.integers(1, 255)),
    st.builds(lambda seq, d, e, tok, fl, un: p.Heartbeat(seq, d, e, tok, cover_open=bool(fl & 1), jammed=bool(fl & 2),
                                                         reader_error=bool(fl & 4), unacked=un),
              st.integers(1, 2**32 - 1), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 255),
              st.integers(0, 7), st.integers(0, 0xFFFF)),
)


def fw_body(msg: Any) -> bytes:
    fields = p.message_to_json(msg)
    return c.body_v1(msg.TYPE, msg.seq, shoe_payload(fields))


@given(shoe_msgs)
def test_what_the_firmware_builds_the_host_reads_as_the_same_message(msg: Any) -> None:
    body = fw_body(msg)
    assert p.decode_body(body) == msg
    assert body == p.encode_body(msg)


@given(st.integers(1, 2**32 - 1), st.integers(1, 0xFFFF), st.integers(0, 0xFFFF), st.integers(1, 20),
       st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=32),
       st.booleans(), st.integers(1, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_a_hello_with_records_reads_the_same_on_the_host(seq: int, epoch: int, dispense: int, back: int, serial: str,
                                                           counts: bool, boots: int, total: int) -> None:
    first = max(1, seq - back)
    caps = ("persistent-counters",) if counts else None
    msg = p.Hello(seq, 1, 1, 2, 0x1234, first, epoch, 5, ("rfid",), "shoe_fw-1.0", serial, caps=caps,
                  boot_count=boots if counts else None, card_total=total if counts else None,
                  dispense=dispense if counts else None)
    assert fw_body(msg) == p.encode_body(msg)


host_msgs = st.one_of(
    st.builds(lambda a, b: p.HostHello(1, min(a, b), max(a, b)), st.integers(1, 255), st.integers(1, 255)),
    st.builds(lambda acked, gap, resend: p.Ack(2, acked, acked + gap, resend), st.integers(0, 2**31 - 1), st.integers(1, 2**31),
              st.booleans()),
    st.builds(lambda tok, sig, leds, mode, on, off: p.Led(3, tok, p.LED_SIGNALS[sig],
                                                          tuple(n for b, n in enumerate(p.LED_NAMES) if leds >> b & 1),
                                                          p.LED_MODES[mode], on, off),
              st.integers(1, 255), st.integers(0, 11), st.integers(0, 31), st.integers(0, 2), st.integers(0, 0xFFFF),
              st.integers(0, 0xFFFF)),
    st.builds(lambda e: p.ResetCounter(4, e), st.integers(1, 0xFFFF)),
)


@given(host_msgs, st.integers(0, 2**32 - 1))
def test_what_the_host_sends_the_firmware_reads_plain_and_sealed(msg: Any, ctr: int) -> None:
    body = c.checked_body(p.encode(msg)[1:-1])
    want = host_fields(p.message_to_json(msg))
    assert c.parse_host(body[0], body[5:]) == want
    key = bytes(range(32))
    challenge = bytes(8) if isinstance(msg, p.HostHello) else b""
    sealed = c.Sealed(c.checked_body(p.seal(msg, key, ctr, challenge=challenge)[1:-1]))
    assert sealed.verify(HmacKey(key)) and sealed.ctr == ctr and c.parse_host(sealed.mtype, sealed.payload) == want


@given(st.binary(max_size=300))
def test_any_bytes_never_crash_the_firmwares_reader(data: bytes) -> None:
    for frame in c.FrameSplitter().feed(data + b"\x00"):
        try:
            body = c.checked_body(frame)
            c.parse_host(body[0], body[5:])
            c.Sealed(body)
        except c.DropFrame as exc:  # a drop names its constraint-table row (F-CRC, A-ORDER, ...)
            assert re.fullmatch(r"[A-Z]+-[A-Z]+", str(exc.args[0])), exc.args
