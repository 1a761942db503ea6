"""Screenshots of the floor page in headless Chromium (Playwright), for ``docs/floor.md``.

``.venv/bin/python scripts/floor_screenshots.py [--out docs/images] [--tables 120]`` serves the page
over a simulated room (``hil/floor_room.py``: tables dealing, betting, stopped, one tilted, some
offline or silent; no broker) and writes ``floor-1280x800.png``, ``floor-1920x1080.png`` (the map)
and ``floor-detail-1280x800.png`` (a stopped table's detail, a supervisor signed in). Chromium:
``$SHOE_CTL_CHROMIUM`` or ``/usr/bin/chromium`` (``scripts/setup.sh test`` installs it).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from playwright.sync_api import sync_playwright

from hil.floor_room import Room, room_pits
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.page import FloorPage
from shoe_ctl.users import Authenticator, Role, User, UserStore

CHROMIUM = os.environ.get("SHOE_CTL_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
SIZES = ((1280, 800), (1920, 1080))


def wait_tiles(tab: Any, count: int, timeout_s: float = 30.0) -> None:
    """Wait until the page has drawn ``count`` tiles (its own count, ``window.floorStats``; the
    page's CSP allows no evaluated predicate, so it is polled from here)."""
    end = time.monotonic() + timeout_s
    while tab.evaluate("window.floorStats.tiles") < count:
        if time.monotonic() > end:
            raise TimeoutError(f"the page drew fewer than {count} tiles in {timeout_s:.0f} s")
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/images", help="folder of the PNG files (default docs/images)")
    ap.add_argument("--tables", type=int, default=120, help="tables in the room (default 120)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    consumer = FloorConsumer(host="127.0.0.1", port=1, room="room-1")  # never started: no broker
    consumer.connected.set()  # the room is simulated: the header says the broker is connected
    room = Room(consumer, args.tables, seed=args.seed)
    kinds = room.fill()
    with tempfile.TemporaryDirectory() as tmp:
        store = UserStore(Path(tmp) / "users.toml", hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
        store.save([User("pat", Role.FLOOR, store.hash_pin("246810"))])
        page = FloorPage(consumer, port=0, pits=room_pits(args.tables, per_pit=12, columns=6),
                         authenticator=Authenticator(store)).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                try:
                    for w, h in SIZES:
                        ctx = browser.new_context(viewport={"width": w, "height": h})
                        tab = ctx.new_page()
                        tab.goto(page.url)
                        wait_tiles(tab, args.tables)
                        tab.screenshot(path=str(out / f"floor-{w}x{h}.png"))
                        print(out / f"floor-{w}x{h}.png")
                        if (w, h) == SIZES[0]:
                            tab.fill("#signin-user", "pat")
                            tab.fill("#signin-pin", "246810")
                            tab.click("#signin-go")
                            tab.wait_for_selector("#who:text('pat')")
                            tab.click(f"[data-table='{kinds['stop'][0]}']")
                            tab.wait_for_selector("#detail button[data-ack]")
                            tab.click("#detail button[data-recall]")
                            tab.screenshot(path=str(out / f"floor-detail-{w}x{h}.png"))
                            print(out / f"floor-detail-{w}x{h}.png")
                        ctx.close()
                finally:
                    browser.close()
        finally:
            page.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
