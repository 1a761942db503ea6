"""The controller watchdog: the dealer's outputs stop saying "deal" when the controller is stuck.

A thread of its own asks the controller thread for a beat every :attr:`ControllerWatchdog.interval`
(``Controller.call_soon``); when no beat has run for :attr:`ControllerWatchdog.stuck_after` seconds
every output is told ``service_lost(True)`` (the GPIO LEDs and the shoe's LEDs show *stop*, the
display's heartbeat says the service is stuck and the page turns into "no service — do not deal"),
and ``service_lost(False)`` once beats run again. Independent of the shoe: a table without a shoe
is watched the same way. docs/service.md, *When the service stops or hangs*.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from shoe_ctl.lifecycle import Closeable, join_thread

log = logging.getLogger(__name__)

__all__ = ["ControllerWatchdog", "ServiceOutput"]


@runtime_checkable
class ServiceOutput(Protocol):
    """An output the watchdog switches: ``service_lost(True)`` when the controller is stuck,
    ``service_lost(False)`` when it runs again. Must not block."""

    def service_lost(self, lost: bool) -> None: ...


class ControllerWatchdog(Closeable):
    """Watches a controller thread through beats it runs (any thread may read :attr:`alive`).

    :param call_soon: the controller's ``call_soon(fn)`` (runs ``fn`` in its thread).
    :param outputs: the outputs to switch (each with ``service_lost(bool)``).
    :param interval: seconds between beats asked (> 0).
    :param stuck_after: seconds without a beat before the controller counts as stuck (>
        ``interval``).
    :param clock: the clock (seconds), default ``time.monotonic``.
    :raises ValueError: ``interval`` not above 0 or ``stuck_after`` not above ``interval``.
    """

    def __init__(self, call_soon: Callable[[Callable[[], Any]], Any], outputs: Sequence[ServiceOutput], *,
                 interval: float = 0.25, stuck_after: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if interval <= 0 or stuck_after <= interval:
            raise ValueError(f"watchdog: interval {interval} s must be > 0 and below stuck_after {stuck_after} s")
        super().__init__()
        self._call_soon = call_soon
        self.outputs = list(outputs)
        self.interval = interval
        self.stuck_after = stuck_after
        self._clock = clock
        self._last = clock()
        self._stop = threading.Event()
        self.alive = True
        self.stuck_count = 0
        self._thread: threading.Thread | None = None

    def start(self) -> ControllerWatchdog:
        """Start the watching thread (returns self)."""
        if self._thread is None:
            self._last = self._clock()
            self._thread = threading.Thread(target=self._run, name="controller-watchdog", daemon=True)
            self._thread.start()
        return self

    def _beat(self) -> None:
        self._last = self._clock()  # runs in the controller thread

    def check(self) -> bool:
        """Look at the last beat now; switch the outputs on a change. Returns :attr:`alive`."""
        alive = self._clock() - self._last < self.stuck_after
        if alive != self.alive:
            self.alive = alive
            if not alive:
                self.stuck_count += 1
                log.error("the controller thread ran no beat for %.1f s: outputs show 'no service'",
                          self._clock() - self._last)
            else:
                log.warning("the controller thread runs again: outputs follow the machine")
            for out in self.outputs:
                try:
                    out.service_lost(not alive)
                except Exception:  # noqa: BLE001 - one output must not keep the others lit
                    log.exception("service_lost on %r failed", out)
        return self.alive

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._call_soon(self._beat)
            self.check()

    def _closing(self) -> None:
        self._stop.set()

    def _close(self) -> None:
        join_thread(self._thread, 2.0)
