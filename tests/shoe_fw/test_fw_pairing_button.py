"""The RP2040 board's pairing button: held at start, the shoe starts in pairing mode
(docs/build-a-shoe.md, "Flashing the RP2040"); run in CPython with fakes of the board's modules."""

from __future__ import annotations

import sys
import types

import pytest

from drivers.shoe_fw import rp2040
from drivers.shoe_fw.reader import ScriptedReader

PULL_UP = object()


class FakePin:
    """A ``digitalio.DigitalInOut``: reads ``level``; records how it was set up and released."""

    level = True  # the pull-up: not pressed

    def __init__(self, name: str) -> None:
        self.name = name
        self.pull: object = None
        self.released = False

    def switch_to_input(self, pull: object = None) -> None:
        self.pull = pull

    @property
    def value(self) -> bool:
        return self.level

    def deinit(self) -> None:
        self.released = True


class Port:
    in_waiting = 0

    def __init__(self) -> None:
        self.tx = bytearray()

    def read(self, n: int) -> bytes:
        return b""

    def write(self, data: bytes) -> None:
        self.tx += data


class Beam:
    def broken(self) -> bool:
        return False


@pytest.mark.parametrize(("level", "held"), [(False, True), (True, False)])
def test_the_button_reads_held_when_the_pin_is_pulled_low(level: bool, held: bool) -> None:
    pin = FakePin("GP4")
    pin.level = level
    assert rp2040.pairing_held(pin, PULL_UP) is held
    assert pin.pull is PULL_UP  # the internal pull-up on: a button to GND
    assert pin.released  # the pin is given back


@pytest.mark.parametrize("pressed", [True, False])
def test_the_board_starts_in_pairing_mode_only_with_the_button_held(monkeypatch: pytest.MonkeyPatch,
                                                                     pressed: bool) -> None:
    pins: list[FakePin] = []

    def make(name: str) -> FakePin:
        pin = FakePin(name)
        pin.level = not pressed
        pins.append(pin)
        return pin

    monkeypatch.setitem(sys.modules, "board", types.SimpleNamespace(GP4="GP4"))
    monkeypatch.setitem(sys.modules, "digitalio", types.SimpleNamespace(DigitalInOut=make,
                                                                      Pull=types.SimpleNamespace(UP=PULL_UP)))
    nvm = bytearray(256)
    monkeypatch.setitem(sys.modules, "microcontroller",
                        types.SimpleNamespace(nvm=nvm, cpu=types.SimpleNamespace(uid=bytes(range(8)))))
    ticks = iter(range(0, 10_000, 10))
    fw = rp2040.main(port=Port(), nvm=nvm, reader=ScriptedReader(), beam=Beam(), lookup={}.get,
                     clock=lambda: next(ticks), turns=1)
    assert [p.name for p in pins] == [rp2040.PAIR_PIN]
    assert fw.core.auth.pairing is pressed
    assert pins[0].released


def test_pairing_passed_in_wins_over_the_button(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "board", raising=False)  # not read: no board module needed
    nvm = bytearray(256)
    monkeypatch.setitem(sys.modules, "microcontroller",
                        types.SimpleNamespace(nvm=nvm, cpu=types.SimpleNamespace(uid=bytes(range(8)))))
    ticks = iter(range(0, 10_000, 10))
    fw = rp2040.main(port=Port(), nvm=nvm, reader=ScriptedReader(), beam=Beam(), lookup={}.get,
                     clock=lambda: next(ticks), turns=1, pairing=True)
    assert fw.core.auth.pairing is True
