"""The order a shoe's kept state and its frames go out in (docs/protocol.md section 3; the
bridge's state file, docs/build-a-shoe.md "What it keeps"): the state file written, fsynced and
renamed into place before any frame of the event it holds is written; a power cut during the
write (a crash injected into the fsync) sends nothing, and the shoe started again from the file
neither loses nor doubles an event the host saw."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from drivers import protocol as p
from drivers.shoe_bridge import StateFile
from drivers.shoe_fw.core import ShoeCore
from drivers.shoe_fw.firmware import Firmware
from drivers.shoe_fw.loop import turn
from drivers.shoe_fw.reader import ScriptedReader

AS = bytes.fromhex("04a10033")


class Beam:
    def __init__(self) -> None:
        self.state = False

    def broken(self) -> bool:
        return self.state


class Port:
    """The line: every write kept, with what the state file held on disk at that moment."""

    def __init__(self, state: StateFile, trace: list[tuple[str, Any]]) -> None:
        self.state = state
        self.trace = trace
        self.in_waiting = 0

    def read(self, n: int) -> bytes:
        return b""

    def write(self, data: bytes) -> None:
        kept = self.state.load()
        self.trace.append(("write", (p.FrameDecoder().feed(data), kept[0][0] if kept else None)))


class Shoe:
    def __init__(self, folder: Path, trace: list[tuple[str, Any]]) -> None:
        self.state = StateFile(folder)
        self.core = ShoeCore("BR-1", keeps_buffer=True)
        kept = self.state.load()
        if kept is not None:
            self.core.restore(kept[0], kept[1], 0.0)
        self.reader = ScriptedReader(name="fake")
        self.beam = Beam()
        self.fw = Firmware(self.core, self.reader, self.beam, {AS: ("D1", 51)}.get)
        self.fw.start(0.0)
        self.port = Port(self.state, trace)
        self.now = 0.0

    def turn(self) -> None:
        self.now += 0.01
        turn(self.fw, self.port, self.state, self.now)

    def pull(self) -> None:
        self.reader.present = [AS]
        self.beam.state = True
        self.turn()
        self.beam.state = False
        self.turn()


def cards_written(trace: list[tuple[str, Any]]) -> list[tuple[int, int | None]]:
    """(CARD seq, next_seq on disk when its frame was written)."""
    return [(m.seq, on_disk) for kind, (msgs, on_disk) in trace if kind == "write" for m in msgs
            if isinstance(m, p.CardMsg)]


def test_the_state_is_on_disk_before_the_card_that_needs_it_goes_out(tmp_path: Path) -> None:
    trace: list[tuple[str, Any]] = []
    shoe = Shoe(tmp_path, trace)
    shoe.turn()
    shoe.pull()
    shoe.pull()
    written = cards_written(trace)
    assert [seq for seq, _ in written] == [1, 2]
    assert all(on_disk is not None and on_disk > seq for seq, on_disk in written)  # next_seq kept first


def test_a_power_cut_during_the_state_write_sends_nothing_and_the_restart_neither_loses_nor_doubles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace: list[tuple[str, Any]] = []
    shoe = Shoe(tmp_path, trace)
    shoe.turn()
    shoe.pull()  # card 1: written, kept
    assert cards_written(trace) == [(1, 2)]
    real_fsync = os.fsync

    def cut(fd: int) -> None:
        raise OSError(5, "power cut during the state write")

    monkeypatch.setattr(os, "fsync", cut)
    with pytest.raises(OSError):
        shoe.pull()  # card 2 made in memory; the write of its state dies
    assert cards_written(trace) == [(1, 2)]  # nothing of card 2 reached the line
    monkeypatch.setattr(os, "fsync", real_fsync)
    kept = StateFile(tmp_path).load()
    assert kept is not None and kept[0][0] == 2 and [e[0] for e in kept[1]] == [1]  # the state before it
    again = Shoe(tmp_path, trace)  # power back: from the file
    assert again.core.next_seq == 2 and again.core.unacked() == [1]
    again.core.receive_data(p.encode(p.HostHello(1, 1, 1)), 0.0)
    again.turn()
    again.pull()  # the next card takes number 2: no hole the host could see, no number used twice
    seqs = [seq for seq, _ in cards_written(trace)]
    assert seqs == [1, 1, 2] and seqs.count(2) == 1  # card 1 resent after the HOST_HELLO, card 2 once
