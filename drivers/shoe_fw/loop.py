"""One turn of the shoe's loop over a byte port, shared by the RP2040 entry and the Pi bridge.

:func:`turn`: the host's bytes into the link core, the firmware's step, the kept state written
when it changed (before any frame that depends on it goes out: docs/protocol.md section 3),
then the frames written. :class:`TicksClock` turns a wrapping millisecond counter into a
millisecond count that never wraps (the board's clock).
"""

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    from typing import Any

    from .firmware import Firmware

READ_MAX = 256
"""Bytes read from the port in one turn at most (a fixed bound on the read buffer)."""


def turn(fw: "Firmware", port: "Any", store: "Any", now: float) -> int:
    """One turn at ``now`` (seconds): returns the bytes written.

    :param port: ``in_waiting``, ``read(n)``, ``write(data)`` (``usb_cdc.data``, a pyserial port,
        a pty).
    :param store: ``save(kept, held)`` (kept: :meth:`~.core.ShoeCore.kept`, held: the unacked
        events or None when the store keeps no buffer); must be durable when it returns.
    """
    core = fw.core
    waiting = port.in_waiting
    if waiting:
        data = port.read(min(waiting, READ_MAX))
        if data:
            core.receive_data(bytes(data), now)
    fw.step(now)
    if core.dirty:
        store.save(core.kept(), core.ring.held() if core.cfg.keeps_buffer else None)
        core.dirty = False
    written = 0
    for frame in core.frames_to_send():
        port.write(frame)
        written += len(frame)
    return written


class TicksClock:
    """Milliseconds, an int counted from the first call, from a millisecond counter that wraps
    (CircuitPython's ``supervisor.ticks_ms``, every 2**29 ms: 6.2 days; read at least once a
    period). An int stays exact however long the board runs, where seconds in CircuitPython's
    float (about 22 bits of mantissa) lose the millisecond after about an hour and the 20 ms
    scan after about a day: the board runs the firmware on this clock, every duration it is
    given in milliseconds (:data:`~.rp2040.HEARTBEAT_MS` and the rest).

    :param ticks_ms: the counter; ``period``: where it wraps.
    """

    def __init__(self, ticks_ms: "Any", period: int = 1 << 29) -> None:
        self._ticks = ticks_ms
        self._period = period
        self._last = ticks_ms()
        self._ms = 0

    def __call__(self) -> int:
        now = self._ticks()
        self._ms += (now - self._last) % self._period
        self._last = now
        return self._ms
