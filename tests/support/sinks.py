"""A controller sink for tests that keeps every command handed to it, in order."""

from __future__ import annotations

from typing import Any


class Collect:
    """Keeps every command in :attr:`commands` (the ``Sink`` protocol: ``handle``, ``close``)."""

    def __init__(self) -> None:
        self.commands: list[Any] = []

    def handle(self, command: Any) -> None:
        self.commands.append(command)

    def close(self) -> None:
        return None
