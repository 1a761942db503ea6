"""The reader seam's scripted fake (drivers/shoe_fw/reader.py): the script, then what is present;
the faults it injects are the ones the firmware's supervision must handle."""

from __future__ import annotations

import pytest

from drivers.shoe_fw.reader import ReaderError, ScriptedReader


def test_a_scripted_reader_plays_its_script_then_reports_what_is_present() -> None:
    r = ScriptedReader([[b"\x04\x01\x02\x03"], [], ReaderError("x: garbled")], name="fake")
    r.present = [b"\x09\x09\x09\x09"]
    assert r.scan() == [b"\x04\x01\x02\x03"]
    assert r.scan() == []
    with pytest.raises(ReaderError, match="garbled"):
        r.scan()
    assert r.scan() == [b"\x09\x09\x09\x09"]
    assert r.scans == 4 and r.name == "fake"


def test_a_dead_reader_fails_every_call_and_a_reset_until_it_answers_again() -> None:
    r = ScriptedReader()
    r.dead = True
    for call in (r.start, r.scan, r.check, r.reset):
        with pytest.raises(ReaderError, match="no answer"):
            call()
    r.dead = False
    r.reset_failures = 2
    for _ in range(2):
        with pytest.raises(ReaderError):
            r.reset()
    r.reset()
    r.check()
    assert r.resets == 4 and r.checks == 2


def test_failures_count_down_over_scans_and_checks() -> None:
    r = ScriptedReader()
    r.failures = 2
    with pytest.raises(ReaderError, match="GetFirmwareVersion"):
        r.check()
    with pytest.raises(ReaderError, match="InListPassiveTarget"):
        r.scan()
    assert r.scan() == [] and r.failures == 0
