"""Physical dealer buttons on gpiozero's mock pins."""

from __future__ import annotations

from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from drivers.buttons import BUTTON_ACTIONS, DealerButtons
from shoe_ctl.events import DealerAction, DealerInput


def test_press_posts_dealer_input_once_per_press() -> None:
    factory = MockFactory()
    posted: list[Any] = []
    buttons = DealerButtons({"betting-complete": 5, "ack-alert": 6}, posted.append, bounce_s=None,
                            pin_factory=factory)
    try:
        pin = factory.pin(5)
        pin.drive_low()   # pressed (pull-up: to ground)
        pin.drive_high()  # released: nothing
        factory.pin(6).drive_low()
        factory.pin(6).drive_high()
        pin.drive_low()
    finally:
        buttons.close()
    assert posted == [DealerInput(DealerAction.BETTING_COMPLETE), DealerInput(DealerAction.ACK_ALERT),
                      DealerInput(DealerAction.BETTING_COMPLETE)]
    buttons.close()


def test_pull_down_button_and_unknown_names() -> None:
    factory = MockFactory()
    posted: list[Any] = []
    buttons = DealerButtons({"undo": 13}, posted.append, pull_up=False, bounce_s=None, pin_factory=factory)
    try:
        factory.pin(13).drive_high()
    finally:
        buttons.close()
    assert posted == [DealerInput(DealerAction.UNDO)]
    with pytest.raises(ValueError, match="fold"):
        DealerButtons({"fold": 4}, posted.append, pin_factory=factory)
    assert all(not a.value.startswith(("fold", "all-in")) for a in BUTTON_ACTIONS.values())
