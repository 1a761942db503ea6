"""``shoe-ctl bridge``'s card-out beam: broken exactly while the receiver says so, for both
wirings (gpiozero's MockFactory pins)."""

from __future__ import annotations

import sys

import pytest
from gpiozero import DigitalInputDevice
from gpiozero.pins.mock import MockFactory

from shoe_ctl.cli.bridge import beam_input


@pytest.mark.parametrize("broken", ["low", "high"])
def test_the_beam_is_broken_while_the_receiver_is_at_its_broken_level(broken: str) -> None:
    factory = MockFactory()
    pin = factory.pin(17)
    whole, cut = (pin.drive_high, pin.drive_low) if broken == "low" else (pin.drive_low, pin.drive_high)
    whole()
    beam = beam_input(DigitalInputDevice, 17, broken, pin_factory=factory)
    assert beam.broken() is False
    cut()
    assert beam.broken() is True
    whole()
    assert beam.broken() is False
    beam.device.close()


def test_the_bridge_without_gpiozero_names_it(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Without gpiozero the beam cannot be read: exit 2, the package named, no traceback."""
    from shoe_ctl.cli import main

    monkeypatch.setitem(sys.modules, "gpiozero", None)
    code = main(["bridge", "--serial", "BR-1", "--reader", f"pn532:{tmp_path / 'ttyUSB9'}",
                 "--state", str(tmp_path / "state"), "--link", str(tmp_path / "shoe"),
                 "--decks", str(tmp_path / "decks")])
    assert code == 2
    err = capsys.readouterr().err
    assert "card-out beam on GPIO 17: the Python package gpiozero is not installed" in err
