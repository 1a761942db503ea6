"""The sink that hands the machine's commands for the shoe itself to the shoe link.

The card path and where each sink sits: docs/service.md.
"""

from __future__ import annotations

import logging

from drivers.exc import NotConnectedError
from drivers.shoe import ShoeLink
from shoe_ctl.events import Command, ShoeCommand

log = logging.getLogger(__name__)

__all__ = ["ShoeCommandSink"]


class ShoeCommandSink:
    """Hands ``ShoeCommand("reset-counter")`` to the shoe link (``link.reset_counter()``); the
    shoe's LEDs are fed by :class:`drivers.leds.ShoeLedSink`, so every other shoe command is
    logged and ignored. A shoe that is away right now is not an error: the link keeps the command
    and sends it when the shoe is back (e.g. a restarted service whose dealer starts a hand before
    the shoe's handshake)."""

    def __init__(self, link: ShoeLink) -> None:
        self.link = link

    def handle(self, command: Command) -> None:
        if not isinstance(command, ShoeCommand):
            return
        if command.name != "reset-counter":
            log.warning("shoe command %r not known; ignored", command.name)
            return
        try:
            self.link.reset_counter()
        except NotConnectedError as exc:
            log.info("%s", exc)

    def close(self) -> None:
        return None
