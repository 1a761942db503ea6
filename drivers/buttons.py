"""Optional physical dealer buttons (gpiozero 2.x ``Button``) for the most frequent inputs.

Each configured button posts one :class:`~shoe_ctl.events.DealerInput` on the controller's queue
when pressed. Only inputs that name no seat have a button (a fold needs a seat: use the display):
``betting-complete``, ``ack-alert`` (acknowledges the oldest alert: ``args`` empty),
``undo``, ``stub-reloaded``, ``cut-done``, ``hand-complete``, and ``new-hand`` (deals the previous
hand's seats, game and rules again: the ``args`` come from ``new_hand_args()`` at the press, so
the input journaled names them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from drivers.gpio_env import named_failure, prepare_gpio, quiet_fallbacks
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.lifecycle import Closeable

if TYPE_CHECKING:
    from gpiozero import Factory  # a gpiozero pin factory (MockFactory in tests)

BUTTON_ACTIONS: Mapping[str, DealerAction] = {
    a.value: a for a in (DealerAction.BETTING_COMPLETE, DealerAction.ACK_ALERT, DealerAction.UNDO,
                         DealerAction.STUB_RELOADED, DealerAction.CUT_DONE, DealerAction.HAND_COMPLETE,
                         DealerAction.NEW_HAND)
}
"""Button name (the dealer input's value) -> the input it posts."""


class DealerButtons(Closeable):
    """Physical buttons posting dealer inputs.

    :param pins: dealer input name (a key of :data:`BUTTON_ACTIONS`) -> GPIO pin.
    :param post: the controller's thread-safe ``post(event)``; called from gpiozero's thread.
    :param bounce_s: debounce time in seconds (None: none).
    :param pull_up: True when a press connects the pin to ground.
    :param pin_factory: a gpiozero pin factory (``MockFactory`` in tests), else the default.
    :param new_hand_args: called at a ``new-hand`` press for the input's ``args`` (``seats``,
        ``game``, ``rules``; e.g. :meth:`shoe_ctl.dealer_io.LastHand.new_hand_args`).
    :raises ValueError: for a name not in :data:`BUTTON_ACTIONS`, or a ``new-hand`` button
        without ``new_hand_args``.
    :raises gpiozero.GPIOZeroError: when a pin cannot be had.
    :raises drivers.gpio_env.GpioSetupError: when lgpio itself failed to load (the cause named).
    """

    def __init__(self, pins: Mapping[str, int | str], post: Callable[[Any], Any], *,
                 bounce_s: float | None = 0.05, pull_up: bool = True, pin_factory: Factory | None = None,
                 new_hand_args: Callable[[], dict[str, Any]] | None = None) -> None:
        if pin_factory is None:
            prepare_gpio()  # lgpio's FIFO in a folder of its own, whatever the working folder
        from gpiozero import Button

        unknown = sorted(set(pins) - set(BUTTON_ACTIONS))
        if unknown:
            raise ValueError(f"[buttons] pins: unknown dealer input(s) {unknown}; allowed: {list(BUTTON_ACTIONS)}")
        if "new-hand" in pins and new_hand_args is None:
            raise ValueError("[buttons] pins: a new-hand button needs the previous hand's seats (new_hand_args)")
        super().__init__()
        self._post = post
        self._new_hand_args = new_hand_args
        self.pressed = 0
        self.buttons: dict[str, Any] = {}
        with quiet_fallbacks() as tried:
            try:
                for name, pin in pins.items():
                    button = Button(pin, pull_up=pull_up, bounce_time=bounce_s or None, pin_factory=pin_factory)
                    button.when_pressed = self._handler(BUTTON_ACTIONS[name])
                    self.buttons[name] = button
            except Exception as exc:
                self.close()
                raise named_failure(exc, tried=tried) from exc

    def _handler(self, action: DealerAction) -> Callable[[], None]:
        source = f"button:{action.value}"  # journaled with the input

        def pressed() -> None:
            self.pressed += 1
            if action is DealerAction.NEW_HAND and self._new_hand_args is not None:
                self._post(DealerInput(action, None, self._new_hand_args(), source=source))
            else:
                self._post(DealerInput(action, source=source))
        return pressed

    def _close(self) -> None:
        """``close()``: release the pins."""
        for button in self.buttons.values():
            button.close()
        self.buttons.clear()
