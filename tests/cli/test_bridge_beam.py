"""``shoe-ctl bridge``'s card-out beam: broken exactly while the receiver says so, for both
wirings (gpiozero's MockFactory pins)."""

from __future__ import annotations

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
