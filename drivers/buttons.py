"""Optional physical dealer buttons (gpiozero 2.x ``Button``) for the most frequent inputs.

Each configured button posts one :class:`~shoe_ctl.events.DealerInput` on the controller's queue
when pressed. Only inputs that name no seat have a button (a fold needs a seat: use the display):
``betting-complete``, ``ack-alert`` (acknowledges the oldest alert: ``args`` empty),
``undo``, ``stub-reloaded``, ``cut-done``, ``hand-complete``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from shoe_ctl.events import DealerAction, DealerInput

BUTTON_ACTIONS: Mapping[str, DealerAction] = {
    a.value: a for a in (DealerAction.BETTING_COMPLETE, DealerAction.ACK_ALERT, DealerAction.UNDO,
                         DealerAction.STUB_RELOADED, DealerAction.CUT_DONE, DealerAction.HAND_COMPLETE)
}
"""Button name (the dealer input's value) -> the input it posts."""


class DealerButtons:
    """Physical buttons posting dealer inputs.

    :param pins: dealer input name (a key of :data:`BUTTON_ACTIONS`) -> GPIO pin.
    :param post: the controller's thread-safe ``post(event)``; called from gpiozero's thread.
    :param bounce_s: debounce time in seconds (None: none).
    :param pull_up: True when a press connects the pin to ground.
    :param pin_factory: a gpiozero pin factory (``MockFactory`` in tests), else the default.
    :raises ValueError: for a name not in :data:`BUTTON_ACTIONS`.
    :raises gpiozero.GPIOZeroError: when a pin cannot be had.
    """

    def __init__(self, pins: Mapping[str, int | str], post: Callable[[Any], Any], *,
                 bounce_s: float | None = 0.05, pull_up: bool = True, pin_factory: Any = None) -> None:
        from gpiozero import Button

        unknown = sorted(set(pins) - set(BUTTON_ACTIONS))
        if unknown:
            raise ValueError(f"[buttons] pins: unknown dealer input(s) {unknown}; allowed: {list(BUTTON_ACTIONS)}")
        self._post = post
        self.pressed = 0
        self.buttons: dict[str, Any] = {}
        try:
            for name, pin in pins.items():
                button = Button(pin, pull_up=pull_up, bounce_time=bounce_s or None, pin_factory=pin_factory)
                button.when_pressed = self._handler(BUTTON_ACTIONS[name])
                self.buttons[name] = button
        except Exception:
            self.close()
            raise

    def _handler(self, action: DealerAction) -> Callable[[], None]:
        def pressed() -> None:
            self.pressed += 1
            self._post(DealerInput(action))
        return pressed

    def close(self) -> None:
        """Release the pins. Idempotent."""
        for button in self.buttons.values():
            button.close()
        self.buttons.clear()
