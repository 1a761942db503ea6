"""Every negative vector of ``tests/vectors/protocol_v1_rejects.json`` (docs/protocol.md section
11): each is fed to the receiver it names, which must drop it by exactly that row and give
nothing out of it; and the constraint table and the vectors name the same rows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from drivers import protocol as p
from drivers.exc import FrameError, MessageError, UnknownMessageError
from drivers.session import LinkSession
from hil.deck import Deck
from hil.shoe_device import ShoeDevice

ROOT = Path(__file__).resolve().parents[2]
REJECTS: list[dict[str, Any]] = json.loads((ROOT / "tests/vectors/protocol_v1_rejects.json").read_text())["rejects"]
VECTORS = {v["name"]: v for v in json.loads((ROOT / "tests/vectors/protocol_v1.json").read_text())["vectors"]}
FRAME_REASON = {"F-LONG": "long", "F-COBS": "cobs", "F-SHORT": "short", "F-CRC": "crc"}


def table_rows() -> list[str]:
    doc = (ROOT / "docs/protocol.md").read_text()
    table = doc.split("<!-- constraints:begin -->")[1].split("<!-- constraints:end -->")[0]
    return re.findall(r"^\| ([A-Z0-9-]+) \|", table, flags=re.M)


def test_the_table_and_the_vectors_name_the_same_rows() -> None:
    rows = table_rows()
    assert len(rows) == len(set(rows)) and len(rows) >= 30
    assert set(rows) == {r["rule"] for r in REJECTS}


@pytest.mark.parametrize("vec", REJECTS, ids=[f"{r['rule']}:{r['name']}" for r in REJECTS])
def test_the_receiver_drops_it_by_its_row(vec: dict[str, Any]) -> None:
    frame = bytes.fromhex(vec["frame"])
    rule = vec["rule"]
    if vec["context"] and vec["receiver"].startswith("host"):
        s = LinkSession(name="x")
        s.connection_made(0.0)
        s.receive_data(bytes.fromhex(VECTORS[vec["context"]]["frame"]), 0.01)
        s.events()
        before = s.stats.delivered
        s.receive_data(frame, 0.02)
        assert s.events() == [] and s.stats.delivered == before
        assert s.stats.rejected == {rule: 1}
        return
    if vec["context"]:  # a shoe-side session row: the shoe at the context's state ignores it
        hello = p.message_from_json(VECTORS[vec["context"]]["message"])
        assert isinstance(hello, p.Hello)
        dev = ShoeDevice(Deck.seeded(0), now=0.0)
        dev.next_seq = hello.first_seq
        dev.pull(0.0)
        dev.pull(0.0)
        assert dev.next_seq == hello.seq
        dev.frames_to_send()
        dev.receive_data(frame, 0.1)
        assert dev.unacked() == [hello.first_seq, hello.first_seq + 1] and dev.frames_to_send() == []
        return
    decoder = p.FrameDecoder()
    assert decoder.feed(frame) == []
    if rule == "F-TYPE":
        assert decoder.stats.unknown == 1 and decoder.stats.bad_frames == 0
        with pytest.raises(UnknownMessageError):
            p.decode_frame(frame.strip(b"\x00"))
        return
    assert decoder.stats.bad_frames == 1
    if rule in FRAME_REASON:
        assert decoder.stats.reasons == {FRAME_REASON[rule]: 1}
        if rule != "F-LONG":
            with pytest.raises(FrameError):
                p.decode_frame(frame.strip(b"\x00"))
        return
    assert decoder.stats.rules == {rule: 1}
    with pytest.raises(MessageError) as err:
        p.decode_frame(frame.strip(b"\x00"))
    assert err.value.rule == rule


def test_a_shoe_ignores_every_malformed_host_frame() -> None:
    """The shoe-side rows: a shoe fed each of them changes nothing and answers nothing."""
    dev = ShoeDevice(Deck.seeded(0), now=0.0)
    dev.pull(0.0)
    dev.frames_to_send()
    for vec in (r for r in REJECTS if r["receiver"] == "shoe" and not r["context"]):
        dev.receive_data(bytes.fromhex(vec["frame"]), 0.1)
        assert dev.frames_to_send() == [] and dev.unacked() == [1] and dev.led is None and dev.epoch == 0, vec["name"]
