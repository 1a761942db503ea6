"""The reset line's pin seam: what a reader module asks of the pin wired to the chip's reset.

A pin is any object with a writable ``value`` (True high, False low) and a writable
``direction`` (accepted and ignored where it means nothing): CircuitPython's
``digitalio.DigitalInOut`` is one as it is (on the RP2040 board). On the Pi, :class:`OutputPin`
makes one of a gpiozero ``DigitalOutputDevice`` (``gpiozero.pins.mock.MockFactory`` in tests).
Wiring: docs/build-a-shoe.md, "Wiring".
"""

try:
    from typing import Any
except ImportError:  # CircuitPython: annotations only
    pass


class OutputPin:
    """A ``digitalio``-shaped output over a gpiozero output device.

    :param device: a ``gpiozero.DigitalOutputDevice`` (or anything with ``on()``, ``off()``
        and ``value``); created with ``initial_value=True`` so the chip is not held in reset.
    """

    def __init__(self, device: "Any") -> None:
        self._device = device
        self.direction = None  # type: object

    @property
    def value(self) -> bool:
        """The line's level: True high, False low."""
        return bool(self._device.value)

    @value.setter
    def value(self, level: bool) -> None:
        if level:
            self._device.on()
        else:
            self._device.off()

    def switch_to_output(self, value: bool = False, **_: object) -> None:
        """As ``digitalio.DigitalInOut.switch_to_output``: the level ``value``."""
        self.value = value

    def close(self) -> None:
        """Release the GPIO (the device's ``close()``)."""
        self._device.close()
