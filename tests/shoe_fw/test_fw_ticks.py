"""The board's clock (docs/build-a-shoe.md, "Firmware"): an int of milliseconds that never wraps
over CircuitPython's wrapping ``supervisor.ticks_ms``, and the firmware on it with every duration
in ms, its timers exact after weeks of uptime (seconds in CircuitPython's float would have lost
the 20 ms scan by then)."""

from __future__ import annotations

from drivers import protocol as p
from drivers.shoe_fw import rp2040 as board
from drivers.shoe_fw.core import ShoeCore
from drivers.shoe_fw.firmware import Firmware
from drivers.shoe_fw.loop import TicksClock
from drivers.shoe_fw.reader import ScriptedReader

PERIOD = 1 << 29


class Beam:
    def broken(self) -> bool:
        return False


def test_the_clock_counts_on_across_the_counters_wrap_as_an_int() -> None:
    ticks = [PERIOD - 30]
    clock = TicksClock(lambda: ticks[0])
    assert clock() == 0
    ticks[0] = 20  # the counter wrapped: 50 ms later
    assert clock() == 50
    ticks[0] = PERIOD - 1
    now = clock()
    assert now == 50 + PERIOD - 1 - 20 and isinstance(now, int)


def test_the_firmware_on_the_boards_clock_keeps_its_heartbeat_exact_after_forty_days() -> None:
    start = 40 * 24 * 3600 * 1000  # ms: beyond what a CircuitPython float holds to the ms
    core = ShoeCore("FW-1", heartbeat_s=board.HEARTBEAT_MS, resend_s=board.RESEND_MS,
                    host_silence_s=board.HOST_SILENCE_MS, now=start)
    core.RESEND_HOLDOFF = board.RESEND_HOLDOFF_MS
    fw = Firmware(core, ScriptedReader(name="fake"), Beam(), {}.get, scan_s=board.SCAN_MS, check_s=board.CHECK_MS,
                  jam_s=board.JAM_MS, backoff=board.BACKOFF_MS, now=start)
    fw.start(start)
    beats = []
    for now in range(start, start + 5000, 10):
        fw.step(now)
        if any(isinstance(m, p.Heartbeat) for m in p.FrameDecoder().feed(b"".join(core.frames_to_send()))):
            beats.append(now)
    assert [b - a for a, b in zip(beats, beats[1:], strict=False)] == [500] * (len(beats) - 1)
    assert len(beats) == 10 and fw.reader.scans >= 240  # a scan every 20 ms
