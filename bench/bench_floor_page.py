"""``python -m bench.bench_floor_page [--tables 1700] [--bursts 10] [--json]``: the floor page at a
room of 1,700 tables in headless Chromium (``docs/floor.md``, "The page at 1,700 tables").

A simulated room (``hil/floor_room.py``: no broker; messages as tables publish them, handed to the
floor consumer) of ``--tables`` tables, once in pits of 20 and once without a layout (every table
among the tables in no pit), one after the other in one run, served by the real page (``FloorPage``) to
Chromium at 1920x1080 (Playwright; ``$SHOE_CTL_CHROMIUM`` or ``/usr/bin/chromium``). Measured:

- ``first_apply_ms``: the page's first update, every tile drawn from one ``/tiles`` answer
  (the script's own time, ``window.floorStats``);
- ``burst_apply_ms``: a burst, every table's state changed at once, as the page's once-a-second
  poll applies it (script time: the changed tiles updated in place), p50 / max over ``--bursts``;
- ``burst_frame_ms``: the same burst applied in the page and the browser's next two frames
  (style, layout, paint included), p50 / max;
- ``tiles_server_ms`` and ``tiles_kb``: the floor's time to build one burst's ``/tiles`` answer
  (every table changed) in this process, and its size;
- ``calibration``: the bench loop's time at start and end (``bench/calibration.py``).

Nothing is asserted. The machine is shared: compare figures with the calibration beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

from playwright.sync_api import sync_playwright

from bench.calibration import calibrate
from hil.floor_room import Room, room_pits
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.page import FloorPage, tiles

CHROMIUM = os.environ.get("SHOE_CTL_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

FRAME_JS = """async (since) => {
  const u = await (await fetch("/tiles?since=" + since, {cache: "no-store"})).json();
  const t0 = performance.now();
  window.floorApply(u);
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return [performance.now() - t0, u.tiles.length];
}"""


def _wait(tab: Any, expr: str, timeout_s: float = 60.0) -> Any:
    end = time.monotonic() + timeout_s
    while True:
        value = tab.evaluate(expr)
        if value:
            return value
        if time.monotonic() > end:
            raise TimeoutError(expr)
        time.sleep(0.02)


def run(count: int = 1700, bursts: int = 10, pits: bool = True) -> dict[str, Any]:
    calib_start = calibrate()
    consumer = FloorConsumer(host="127.0.0.1", port=1, room="room-1")  # never started: no broker
    consumer.connected.set()
    room = Room(consumer, count)
    room.fill()
    page = FloorPage(consumer, port=0, pits=room_pits(count) if pits else ()).start()
    applies: list[float] = []
    frames: list[float] = []
    server: list[float] = []
    sizes: list[int] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                tab = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
                tab.goto(page.url)
                _wait(tab, f"window.floorStats.tiles >= {count}")
                first = tab.evaluate("window.floorStats.maxMs")
                for _ in range(bursts):
                    before = tab.evaluate("window.floorStats.applies")
                    since = consumer.version
                    with consumer.lock:  # the whole burst in one answer of /tiles
                        room.burst()
                    t0 = time.perf_counter()
                    answer = tiles(consumer, since)
                    server.append((time.perf_counter() - t0) * 1000)
                    sizes.append(len(json.dumps(answer, separators=(",", ":"))))
                    _wait(tab, f"window.floorStats.applies > {before} && window.floorStats.lastCount >= {count}")
                    applies.append(tab.evaluate("window.floorStats.lastMs"))
                    since = consumer.version
                    with consumer.lock:
                        room.burst()  # a second burst, applied here and drawn
                    ms, n = tab.evaluate(FRAME_JS, since)
                    if n >= count:
                        frames.append(ms)
            finally:
                browser.close()
    finally:
        page.close()

    def pm(xs: list[float]) -> dict[str, float]:
        return {"p50": round(statistics.median(xs), 1), "max": round(max(xs), 1)} if xs else {}

    return {"tables": count, "bursts": bursts, "pits": count // 20 if pits else 0, "viewport": "1920x1080", "first_apply_ms": round(first, 1),
            "burst_apply_ms": pm(applies), "burst_frame_ms": pm(frames), "tiles_server_ms": pm(server),
            "tiles_kb": round(statistics.median(sizes) / 1024, 1) if sizes else None,
            "calibration": {"start": calib_start, "end": calibrate()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=1700)
    ap.add_argument("--bursts", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    res = {"with_pits": run(args.tables, args.bursts, pits=True),
           "without_pits": run(args.tables, args.bursts, pits=False)}
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
