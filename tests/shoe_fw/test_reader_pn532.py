"""The PN532 reader module through Adafruit's real ``adafruit_pn532`` driver and a pyserial port
on the virtual PN532's pty: nothing is mocked above the serial port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import serial

from drivers.shoe_fw.reader import ReaderError
from drivers.shoe_fw.readers.pins import OutputPin
from drivers.shoe_fw.readers.pn532 import PN532Reader, parse_targets
from hil.virtual_pn532 import Tag, VirtualReader

UID7 = bytes.fromhex("04a1b2c3d4e5f6")
UID4 = bytes.fromhex("5a6b7c8d")
ANSWER_S = 2.0
"""How long the reader waits for each ACK and answer here: the virtual PN532's thread shares a
loaded machine with the test (a real PN532 answers well within the module's 0.1 s); a test of a
lost answer waits this long once."""


@pytest.fixture
def rig() -> Iterator[tuple[VirtualReader, PN532Reader]]:
    with VirtualReader() as vr, serial.Serial(vr.url, 115200, timeout=0.02) as port:
        reader = PN532Reader(port, reset_pin=vr.reset_line, timeout=ANSWER_S)
        reader.start()
        yield vr, reader


def test_start_configures_the_chip(rig) -> None:
    vr, reader = rig
    assert reader.firmware == (0x32, 1, 6, 7)
    assert vr.chip.sam_configured and vr.chip.max_retries == 1
    assert vr.chip.resets == 1  # the reset line was pulsed
    assert {0x14, 0x32, 0x02} <= set(vr.chip.log)


def test_scan_reports_zero_one_and_two_tags(rig) -> None:
    vr, reader = rig
    assert reader.scan() == []
    vr.place(Tag(UID7))
    assert reader.scan() == [UID7]
    vr.place(Tag(UID4), Tag(UID7))
    assert reader.scan() == [UID4, UID7]
    vr.clear()
    assert reader.scan() == []


@pytest.mark.parametrize("fault, words", [
    ("no-ack", "InListPassiveTarget: no answer"),
    ("bad-checksum", "InListPassiveTarget: RuntimeError: Response checksum"),
    ("hang", "InListPassiveTarget: no answer"),
])
def test_faults_are_reader_errors_and_a_reset_brings_it_back(rig, fault: str, words: str) -> None:
    vr, reader = rig
    vr.place(Tag(UID4))
    vr.fault(fault)
    with pytest.raises(ReaderError, match=words) as err:
        reader.scan()
    assert str(err.value).startswith("pn532: ")
    if fault == "hang":
        with pytest.raises(ReaderError, match="GetFirmwareVersion: no answer"):
            reader.check()
    resets = vr.chip.resets
    reader.reset()
    assert vr.chip.resets == resets + 1
    reader.check()
    assert reader.scan() == [UID4]


def test_stale_answer_after_reset_is_an_error_then_the_next_reset_works(rig) -> None:
    vr, reader = rig
    vr.place(Tag(UID7))
    assert reader.scan() == [UID7]
    vr.fault("stale")
    with pytest.raises(ReaderError, match="wake-up"):
        reader.reset()  # the first command after the reset got the scan's answer back
    reader.reset()
    reader.check()
    assert reader.scan() == [UID7]


def test_a_stale_answer_to_the_health_poll_is_an_error(rig) -> None:
    vr, reader = rig
    vr.place(Tag(UID7))
    reader.scan()
    with vr.line.lock:  # the chip repeats its previous answer to the next command
        vr.chip._stale_due = True
        vr.chip._before_reset = vr.chip._last_response
    with pytest.raises(ReaderError, match="GetFirmwareVersion"):
        reader.check()


def test_a_reader_that_never_answers() -> None:
    with VirtualReader() as vr, serial.Serial(vr.url, 115200, timeout=0.02) as port:
        vr.fault("hang")
        reader = PN532Reader(port, timeout=0.1)
        with pytest.raises(ReaderError, match="pn532: wake-up: RuntimeError: Failed to detect the PN532"):
            reader.start()
        with pytest.raises(ReaderError, match="not started"):
            reader.scan()


def test_gpiozero_reset_pin_drives_the_line() -> None:
    from gpiozero import DigitalOutputDevice
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    device = DigitalOutputDevice(17, initial_value=True, pin_factory=factory)
    pin = OutputPin(device)
    levels = []
    pin.value = False
    levels.append(factory.pin(17).state)
    pin.switch_to_output(True)
    levels.append(factory.pin(17).state)
    assert levels == [False, True] and pin.value is True
    pin.close()


def test_parse_targets_refuses_short_or_odd_answers() -> None:
    assert parse_targets(b"\x00") == []
    with_ats = bytes.fromhex("01" "01" "0344" "20" "07" "04112233445566" "05" "75778002")
    assert parse_targets(with_ats) == [bytes.fromhex("04112233445566")]
    for bad in (b"", b"\x03", bytes.fromhex("01010004080504"), bytes.fromhex("0101000408040102"),
                bytes.fromhex("01" "01" "0344" "20" "04" "01020304" "09")):
        with pytest.raises(ValueError):
            parse_targets(bad)
