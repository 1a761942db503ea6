"""``python -m bench.bench_reader_path [--cards N] [--json]``: the time a reader-backed shoe adds
to each card, on the virtual path.

A table (``shoe_ctl.table.Table``, in this process, no journal, no display) reads the shoe bridge
(``drivers/shoe_bridge.py``) on a virtual PN532 and a mock beam (:class:`hil.reader_shoe.ReaderShoe`,
paired, protocol version 2), and the simulated dealer deals random hands. For every card:

- ``reader_us``: from the beam's restoring edge (the card has left) to the bridge making the
  card's CARD frame: the firmware's loop noticing the edge, its closing scan of the PN532
  (Adafruit's driver over the pty, the chip's frames), the deck-map lookup, the state file
  written and fsynced;
- ``host_us``: from that frame to the LED command (the ``Instruction``) handed to the LED sinks:
  the pty, ``ShoeLink``, the controller and the machine;
- ``total_us``: the beam edge to the LED;
- ``wire_us``: the CARD frame's time on a 115200-baud line, for comparison.

Each as p50 / p99 / max. ``machine`` says where it ran, with a calibration: the time of a fixed
CPU task (SHA-256 of 16 MiB) at the start and the end, and the load average, since a loaded
machine stretches every figure. The figures are recorded in docs/build-a-shoe.md, "Bench".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.machine import machine_info

BAUD = 115200
BITS_PER_BYTE = 10


def calibration_ms() -> float:
    """Milliseconds for SHA-256 over 16 MiB (one thread): the machine's speed right now."""
    block = bytes(1 << 20)
    t0 = time.perf_counter()
    h = hashlib.sha256()
    for _ in range(16):
        h.update(block)
    h.digest()
    return round((time.perf_counter() - t0) * 1000, 1)


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))
    return s[k]


def _summary(us: list[float]) -> dict[str, float]:
    return {"p50": round(_pct(us, 0.5), 1), "p99": round(_pct(us, 0.99), 1), "max": round(max(us), 1) if us else 0.0}


def bench_reader_path(cards: int, seed: int = 3) -> dict[str, Any]:
    """Deal at least ``cards`` cards through the virtual reader path; returns the figures."""
    from hil.dealer import SimulatedDealer, random_hands
    from hil.reader_shoe import ReaderShoe
    from shoe_ctl.config import load_profile, load_table_config
    from shoe_ctl.events import Instruction
    from shoe_ctl.machine import Dealing
    from shoe_ctl.service.shoe_secrets import SecretStore, new_secret
    from shoe_ctl.table import Table

    work = Path(tempfile.mkdtemp(prefix="bench-reader-"))
    secret = new_secret()
    SecretStore(work / "shoes").save("BR-1", secret)
    (work / "table.toml").write_text(f'[shoe]\nserial = "BR-1"\nsecrets = "{work / "shoes"}"\n')
    cfg = load_table_config(work / "table.toml")
    profiles = {"tda": load_profile("tda"), "house": load_profile("house")}
    rig = ReaderShoe(work, serial="BR-1", secret=secret, seed=seed).start()
    edges: list[tuple[float, float]] = []  # (beam restored, CARD made), perf_counter seconds
    made_at: list[float] = []
    leds: list[float] = []
    lock = threading.Lock()
    made = rig.bridge.core.made

    def record_made(seq: int, mtype: int, payload: bytes) -> None:
        if mtype == 0x10:
            with lock:
                made_at.append(time.perf_counter())
        made(seq, mtype, payload)

    rig.bridge.core.made = record_made
    pass_tags = rig.pass_tags

    def timed_pass(tags: Any, timeout_s: float = 10.0) -> float:
        with rig._lock:
            n = len(made_at)
            rig.virtual.place(*tags)
            rig.beam_pin.drive_low()
            rig.virtual.wait_listings(rig.scans, timeout_s)
            t_edge = time.perf_counter()
            rig.beam_pin.drive_high()
            end = time.monotonic() + timeout_s
            while len(made_at) == n and time.monotonic() < end:
                time.sleep(0.0002)
            rig.virtual.clear()
            rig.passes += 1
            if len(made_at) > n:
                edges.append((t_edge, made_at[n]))
            return time.time()

    rig.pass_tags = timed_pass  # type: ignore[method-assign]

    class Stamp:
        def handle(self, command: Any) -> None:
            if isinstance(command, Instruction):
                leds.append(time.perf_counter())

        def close(self) -> None:
            return None

    hands = list(random_hands(seed, seats=range(1, 9), count=max(1, cards // 30 + 1)))
    machine = Dealing(profiles, default_rules="tda")

    def dealer(device: Any, post: Any) -> SimulatedDealer:
        return SimulatedDealer(device, post, hands, seed=seed, auto_ack=True)

    calib_start = calibration_ms()
    where = machine_info()  # with the load average at the start
    t0 = time.monotonic()
    table = Table.from_config(cfg, profiles=profiles, rules="tda", shoe_url=rig.url, machine=machine,
                              dealer_io=False, sinks=[Stamp()], dealer=dealer, device=rig, wait_connected=20.0)
    try:
        with table:
            table.dealer.done.wait(60 + cards * 0.5)
            table.controller.wait_idle(5)
    finally:
        rig.pass_tags = pass_tags  # type: ignore[method-assign]
        rig.close()
    seconds = time.monotonic() - t0
    reader_us, host_us, total_us = [], [], []
    for edge, frame in edges:
        led = next((t for t in leds if t >= frame), None)
        reader_us.append((frame - edge) * 1e6)
        if led is not None:
            host_us.append((led - frame) * 1e6)
            total_us.append((led - edge) * 1e6)
    frame_bytes = 30  # a version-2 CARD on the line (docs/protocol.md, "Authentication (version 2)")
    return {
        "cards": len(edges),
        "reader_us": _summary(reader_us),
        "host_us": _summary(host_us),
        "total_us": _summary(total_us),
        "wire_us": round(frame_bytes * BITS_PER_BYTE / BAUD * 1e6, 1),
        "seconds": round(seconds, 1),
        "machine": {**where, "calibration_sha256_16mib_ms": [calib_start, calibration_ms()],
                    "load_avg_end": [round(x, 2) for x in os.getloadavg()]},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_reader_path", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cards", type=int, default=300, help="cards at least (default 300)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    res = bench_reader_path(args.cards, args.seed)
    if args.json:
        print(json.dumps(res, separators=(",", ":")))
    else:
        for key in ("reader_us", "host_us", "total_us"):
            s = res[key]
            print(f"{key:10s} p50 {s['p50']:>9} us  p99 {s['p99']:>9} us  max {s['max']:>9} us")
        print(f"wire_us    {res['wire_us']} us (the CARD frame at {BAUD} baud)  cards {res['cards']}  "
              f"calibration {res['machine']['calibration_sha256_16mib_ms']} ms  load {res['machine']['load_avg_start']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
