"""The virtual PN532's frames, byte for byte as UM0701-02 writes them, over its real pty: what a
host sends is built here by hand (not by the driver the chip is meant to test)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import serial

from hil.virtual_pn532 import (
    ACK,
    NACK,
    SYNTAX_ERROR,
    DeckScript,
    Tag,
    VirtualPN532,
    VirtualReader,
    information_frame,
)

WAKE = b"\x55\x55" + bytes(15)
SAM = information_frame(0xD4, b"\x14\x01\x14\x01")
FIRMWARE = information_frame(0xD4, b"\x02")
RETRIES_1 = information_frame(0xD4, b"\x32\x05\xff\x01\x01")


def list_targets(max_tg: int = 2) -> bytes:
    return information_frame(0xD4, bytes([0x4A, max_tg, 0x00]))


def test_information_frame_checksums() -> None:
    frame = information_frame(0xD5, b"\x03\x32\x01\x06\x07")
    assert frame[:3] == b"\x00\x00\xff"
    assert (frame[3] + frame[4]) & 0xFF == 0
    assert sum(frame[5:-1]) & 0xFF == 0
    assert frame[-1] == 0
    # GetFirmwareVersion's answer as UM0701-02 prints it
    assert frame.hex() == "0000ff06fad50332010607e800"
    with pytest.raises(ValueError):
        information_frame(0xD4, bytes(255))


def test_asleep_until_wakeup_then_ack_and_answer() -> None:
    chip = VirtualPN532()
    assert chip.receive(FIRMWARE) == b""  # no HSU wake-up yet: the UART is not listening
    out = chip.receive(WAKE + FIRMWARE)
    assert out == ACK + information_frame(0xD5, b"\x03\x32\x01\x06\x07")
    assert chip.commands == 1


def test_frame_split_across_reads_and_garbage_between() -> None:
    chip = VirtualPN532()
    chip.receive(WAKE)
    out = b""
    for i in range(len(FIRMWARE)):
        out += chip.receive(b"\x13" + FIRMWARE[i:i + 1] if i == 0 else FIRMWARE[i:i + 1])
    assert out.startswith(ACK) and out[len(ACK):][5:7] == b"\xd5\x03"


def test_bad_lcs_or_dcs_is_ignored_and_counted() -> None:
    chip = VirtualPN532()
    chip.receive(WAKE)
    bad_dcs = bytearray(FIRMWARE)
    bad_dcs[-2] ^= 1
    bad_lcs = bytearray(FIRMWARE)
    bad_lcs[4] ^= 1
    assert chip.receive(bytes(bad_dcs)) == b""
    assert chip.receive(bytes(bad_lcs)) == b""
    assert chip.bad_frames == 2
    assert chip.receive(FIRMWARE).startswith(ACK)  # and the next good frame is answered


def test_nack_repeats_the_last_answer() -> None:
    chip = VirtualPN532()
    first = chip.receive(WAKE + FIRMWARE)
    assert chip.receive(NACK) == first[len(ACK):]


def test_targets_need_sam_then_list_one_and_two() -> None:
    chip = VirtualPN532()
    chip.receive(WAKE)
    assert chip.receive(list_targets()) == ACK + SYNTAX_ERROR  # SAMConfiguration first
    chip.receive(SAM + RETRIES_1)
    assert chip.receive(list_targets())[len(ACK):] == information_frame(0xD5, b"\x4b\x00")
    chip.field = [Tag(bytes.fromhex("04112233445566"))]
    one = chip.receive(list_targets())[len(ACK):]
    assert one == information_frame(0xD5, bytes.fromhex("4b01" "01" "0044" "00" "07" "04112233445566"))
    chip.field = [Tag(bytes.fromhex("a1b2c3d4")), Tag(bytes.fromhex("04112233445566"))]
    two = chip.receive(list_targets())[len(ACK):]
    assert two[5:9] == b"\xd5\x4b\x02\x01"
    assert bytes.fromhex("0004" "08" "04" "a1b2c3d4") in two
    assert bytes.fromhex("02" "0044" "00" "07" "04112233445566") in two
    assert chip.receive(list_targets(max_tg=1))[len(ACK):][7] == 1  # MaxTg 1 lists one
    assert chip.receive(list_targets(max_tg=3)) == ACK + SYNTAX_ERROR


def test_empty_field_with_default_retries_gets_only_the_ack() -> None:
    chip = VirtualPN532()
    chip.receive(WAKE + SAM)
    assert chip.receive(list_targets()) == ACK  # MxRtyPassiveActivation 0xFF: waits for a tag


def test_random_uid_tag_changes_at_each_activation() -> None:
    tag = Tag(bytes.fromhex("01020304"), random_uid=True)
    a, b = tag.activate(), tag.activate()
    assert a[4] == 0x08 and b[4] == 0x08
    assert a != b


def test_faults_no_ack_bad_checksum_hang_and_stale() -> None:
    chip = VirtualPN532()
    chip.receive(WAKE + SAM)
    chip.fault("no-ack")
    assert chip.receive(FIRMWARE) == b""
    chip.fault("bad-checksum")
    answer = chip.receive(FIRMWARE)[len(ACK):]
    assert sum(answer[5:-1]) & 0xFF != 0
    chip.fault("hang")
    assert chip.receive(FIRMWARE) == b""
    chip.hold_reset()
    chip.power_on()
    assert not chip.hung and not chip.sam_configured and chip.resets == 1
    assert chip.receive(FIRMWARE) == b""  # asleep again after the reset
    chip.receive(WAKE + SAM)
    before = chip.receive(RETRIES_1)[len(ACK):]
    chip.fault("stale")
    chip.hold_reset()
    chip.power_on()
    assert chip.receive(WAKE + FIRMWARE) == ACK + before  # the answer from before the reset
    assert chip.receive(FIRMWARE)[len(ACK):][5:7] == b"\xd5\x03"
    with pytest.raises(ValueError):
        chip.fault("smoke")


def test_deck_script_from_json(tmp_path) -> None:
    path = tmp_path / "deck.json"
    path.write_text('[["04a1b2c3"], [], ["11223344", {"uid": "04112233445566", "random": true}]]')
    script = DeckScript.from_json(path)
    assert len(script) == 3
    assert [t.uid.hex() for t in script.next_pass()] == ["04a1b2c3"]
    assert script.next_pass() == []
    last = script.next_pass()
    assert last[1].random_uid and len(last) == 2
    path.write_text('[["zz"]]')
    with pytest.raises(ValueError, match=r"deck.json: pass 0"):
        DeckScript.from_json(path)
    path.write_text("{")
    with pytest.raises(ValueError, match=r"deck.json: not a deck script"):
        DeckScript.from_json(path)


@pytest.fixture
def reader() -> Iterator[VirtualReader]:
    with VirtualReader() as vr:
        yield vr


def _read_until(port: serial.Serial, n: int, limit_s: float = 5.0) -> bytes:
    out = b""
    deadline = time.monotonic() + limit_s
    while len(out) < n and time.monotonic() < deadline:
        out += port.read(n - len(out))
    return out


def test_on_the_pty_with_the_reset_line(reader: VirtualReader) -> None:
    with serial.Serial(reader.url, 115200, timeout=0.2) as port:
        port.write(WAKE + FIRMWARE)
        expected = ACK + information_frame(0xD5, b"\x03\x32\x01\x06\x07")
        assert _read_until(port, len(expected)) == expected
        reader.fault("hang")
        port.write(FIRMWARE)
        assert port.read(1) == b""
        reader.reset_line.value = False
        reader.reset_line.value = True
        port.write(WAKE + FIRMWARE)
        assert _read_until(port, len(expected)) == expected
        assert reader.chip.resets == 1
