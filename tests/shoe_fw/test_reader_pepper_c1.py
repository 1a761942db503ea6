"""The Pepper C1 reader module through Eccel's real ``pepper_c1`` driver on the virtual C1's pty,
and the virtual C1's frames checked against the driver's own framing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pepper_c1.protocol import build_frame, calc_crc, parse_frame

from drivers.shoe_fw.reader import ReaderError
from drivers.shoe_fw.readers.pepper_c1 import PepperC1Reader
from hil.virtual_pepper import VERSION, VirtualPepper, VirtualPepperReader, frame

ICODE = bytes.fromhex("e004010812345678")  # ISO 15693: 8 bytes, E0 first
NTAG = bytes.fromhex("04a1b2c3d4e5f6")
ANSWER_S = 2.0
"""How long the reader waits for each answer here: the virtual C1's thread shares a loaded machine
with the test (a real C1 answers within the module's 0.3 s); a test of a lost answer waits this
long once."""


def test_the_virtual_framing_is_the_drivers() -> None:
    for payload in (b"\x0b", b"\x00\x03\x24\x00" + ICODE, bytes(300)):
        assert frame(payload) == build_frame(payload)
        assert parse_frame(frame(payload)) == payload
    assert calc_crc(b"123456789") == 0x29B1  # CRC-16/CCITT-FALSE's check value


def test_the_device_answers_and_refuses_bad_frames() -> None:
    dev = VirtualPepper()
    assert parse_frame(dev.receive(build_frame(b"\x0b"))) == b"\x00\x0b" + VERSION
    bad = bytearray(build_frame(b"\x02"))
    bad[-1] ^= 1
    assert dev.receive(bytes(bad)) == b"" and dev.bad_frames == 1
    assert parse_frame(dev.receive(b"\x00\x13" + build_frame(b"\x02"))) == b"\x00\x02\x00"
    assert parse_frame(dev.receive(build_frame(b"\x03\x00")))[0] == 0xFF  # no tag 0: an error answer


@pytest.fixture
def rig() -> Iterator[tuple[VirtualPepperReader, PepperC1Reader]]:
    with VirtualPepperReader() as vp:
        reader = PepperC1Reader(vp.url, timeout=ANSWER_S)
        reader.start()
        yield vp, reader
        reader._close()


def test_scan_reports_iso15693_and_14443_tags(rig) -> None:
    vp, reader = rig
    assert reader.version == VERSION.decode()
    assert reader.scan() == []
    vp.place(ICODE)
    assert reader.scan() == [ICODE]
    vp.place(ICODE, NTAG)
    assert reader.scan() == [ICODE, NTAG]
    reader.check()


@pytest.mark.parametrize("fault, words", [("no-answer", "GET_TAG_COUNT: no answer"),
                                          ("bad-crc", "GET_TAG_COUNT: no answer")])
def test_a_lost_or_corrupt_answer_is_a_reader_error_and_reset_recovers(rig, fault: str, words: str) -> None:
    vp, reader = rig
    vp.place(ICODE)
    vp.fault(fault)
    with pytest.raises(ReaderError, match="pepper-c1: " + words):
        reader.scan()
    reboots = vp.device.reboots
    reader.reset()
    assert vp.device.reboots == reboots + 1
    assert reader.scan() == [ICODE]


def test_a_stale_answer_to_the_health_poll_is_an_error(rig) -> None:
    vp, reader = rig
    vp.place(ICODE)
    reader.scan()
    vp.fault("stale")
    with pytest.raises(ReaderError, match="GET_VERSION: answered"):
        reader.check()
    reader.check()


def test_a_hung_reader_stays_dead_until_unplugged(rig) -> None:
    vp, reader = rig
    vp.fault("hang")
    with pytest.raises(ReaderError, match="no answer"):
        reader.check()
    with pytest.raises(ReaderError, match="GET_VERSION: no answer"):
        reader.reset()
    vp.power_cycle()
    reader.reset()
    reader.check()


def test_a_port_that_does_not_exist_is_named(tmp_path) -> None:
    reader = PepperC1Reader(str(tmp_path / "ttyACM9"))
    with pytest.raises(ReaderError, match="pepper-c1: open .*ttyACM9"):
        reader.start()
