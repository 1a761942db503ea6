"""Every negative vector of ``tests/vectors/protocol_v1_rejects.json`` (docs/protocol.md section
11): each is fed to the receiver it names, which must drop it by exactly that row and give
nothing out of it; and the constraint table and the vectors name the same rows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cobs import cobs

from drivers import protocol as p
from drivers.exc import FrameError, MessageError, UnknownMessageError
from drivers.session import LinkSession
from hil.deck import Deck
from hil.shoe_device import ShoeDevice
from shoe_ctl.events import LinkStatus

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
    assert decoder.stats.rules == {rule: 1}  # every drop by its row, the frame rows too
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


@pytest.mark.parametrize("vec", [r for r in REJECTS if not r["context"]],
                         ids=[f"{r['rule']}:{r['name']}" for r in REJECTS if not r["context"]])
@pytest.mark.parametrize("version", [p.PROTOCOL_VERSION, p.AUTH_VERSION])
def test_the_host_counts_every_dropped_frame_by_its_row(vec: dict[str, Any], version: int) -> None:
    """The link's own counters name the row of every frame it drops, once, in both versions
    (``LinkStats.rejected``, docs/protocol.md section 11). On a paired link a frame that fits
    neither layout is counted by the row it breaks in the layout it fits best, which for a
    version-1 value row may be another row of the table."""
    s = LinkSession(name="x", secret=bytes(32) if version == p.AUTH_VERSION else None)
    s.connection_made(0.0)
    s.receive_data(bytes.fromhex(vec["frame"]), 0.01)
    s.events()
    frame_row = vec["rule"].startswith("F-")
    if version == p.AUTH_VERSION and not frame_row:
        assert sum(s.stats.rejected.values()) == 1 and set(s.stats.rejected) <= set(table_rows())
        return
    assert s.stats.rejected == {vec["rule"]: 1}
    assert s.stats.bad_frames == (0 if vec["rule"] == "F-TYPE" else 1)
    assert s.stats.unknown_frames == (1 if vec["rule"] == "F-TYPE" else 0)


def test_a_host_type_frame_from_the_shoe_is_counted_and_never_noise() -> None:
    """Every type only the host sends, coming to the host before and after the shoe's HELLO, is
    dropped and counted by row M-DIRECTION, never as a bad frame (a line echoing the host's own
    frames is not a noisy line)."""
    s = LinkSession(name="x")
    s.connection_made(0.0)
    host_frames = [p.encode(m) for m in (p.HostHello(1), p.Ack(2, 1, 2), p.Led(3, 1, "deal", ("green",)),
                                          p.ResetCounter(4, 1))]
    s.receive_data(b"".join(host_frames), 0.01)
    assert s.stats.rejected == {"M-DIRECTION": 4} and not s.connected
    s.receive_data(bytes.fromhex(VECTORS["hello"]["frame"]), 0.02)
    s.receive_data(b"".join(host_frames), 0.03)
    assert s.stats.rejected == {"M-DIRECTION": 8} and s.stats.bad_frames == 0 and s.stats.delivered == 0
    s.tick(0.04)
    assert s.status is LinkStatus.CONNECTED


def test_a_shoe_ignores_every_malformed_host_frame() -> None:
    """The shoe-side rows: a shoe fed each of them changes nothing and answers nothing."""
    dev = ShoeDevice(Deck.seeded(0), now=0.0)
    dev.pull(0.0)
    dev.frames_to_send()
    for vec in (r for r in REJECTS if r["receiver"] == "shoe" and not r["context"]):
        dev.receive_data(bytes.fromhex(vec["frame"]), 0.1)
        assert dev.frames_to_send() == [] and dev.unacked() == [1] and dev.led is None and dev.epoch == 0, vec["name"]


def test_a_pair_of_the_wrong_size_is_counted_by_its_row() -> None:
    """A sealed PAIR whose payload is not 32 bytes is dropped by row P-LENGTH (section 11, the
    version-2 rows), not taken for a frame of an unknown type."""
    body = p.seal(p.Pair(3, bytes(32)), bytes(32), 1).strip(b"\x00")
    raw = cobs.decode(body)
    signed = raw[: p.HEADER.size] + raw[p.HEADER.size + 1 : -p.CRC.size - p.MAC_SIZE]  # one secret byte short
    data = signed + p.mac(bytes(32), signed)
    frame = p.DELIMITER + cobs.encode(data + p.CRC.pack(p.crc32(data))) + p.DELIMITER
    decoder = p.SealedDecoder()
    assert decoder.feed(frame) == []
    assert decoder.stats.rules == {"P-LENGTH": 1} and decoder.stats.unknown == 0
