"""Re-run the shoe-link attacks (docs/security.md, "The shoe link") against the real stack and print figures.

Each scenario runs a :class:`hil.virtual_shoe.VirtualShoe` on a pty and a
:class:`drivers.shoe.ShoeLink` reading it in its own thread, as ``shoe-ctl run`` does, and prints
one JSON object per scenario: what the attacker tried, what got through (cards delivered from the
wrong shoe, cards lost or replaced, unrecorded cards erased from the shoe) and what the link said
(its ``refused`` codes). The figures are in docs/security.md, "The shoe link".

Usage (from the repository root): ``.venv/bin/python scripts/link_attacks.py [--cards 6000]``
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import serial  # noqa: E402

from drivers import protocol as p  # noqa: E402
from drivers.shoe import ShoeLink  # noqa: E402
from hil.deck import Deck  # noqa: E402
from hil.virtual_shoe import VirtualShoe  # noqa: E402
from shoe_ctl.events import CardRead, LinkChanged  # noqa: E402

SECRET = os.urandom(32)


def drain(q: queue.Queue[Any], seconds: float = 0.5) -> list[Any]:
    end, out = time.monotonic() + seconds, []
    while time.monotonic() < end:
        try:
            out.append(q.get(timeout=0.05))
        except queue.Empty:
            pass
    return out


def refused(events: list[Any]) -> list[str]:
    return [e.refused for e in events if isinstance(e, LinkChanged) and e.refused]


def unknown_serial() -> dict[str, Any]:
    with VirtualShoe(serial="VS-9") as shoe:
        q: queue.Queue[Any] = queue.Queue()
        with ShoeLink(shoe.url, q, auto_ack=True, secret=SECRET, serial="VS-1"):
            time.sleep(0.3)
            for _ in range(10):
                shoe.pull()
            ev = drain(q, 3.5)
    return {"scenario": "unknown serial (unpaired VS-9, table's shoe VS-1)", "pulled": 10,
            "delivered": sum(isinstance(e, CardRead) for e in ev), "refused": refused(ev)}


def swap_mid_hand() -> dict[str, Any]:
    link_path = Path(tempfile.mkdtemp()) / "shoe"
    q: queue.Queue[Any] = queue.Queue()
    a = VirtualShoe(serial="VS-1", secret=SECRET, link_path=link_path).start()
    with ShoeLink(str(link_path), q, auto_ack=True, secret=SECRET, serial="VS-1") as link:
        link.wait_connected()
        for _ in range(5):
            a.pull()
        first = drain(q, 0.5)
        a.close()
        b = VirtualShoe(serial="VS-2", link_path=link_path).start()  # unpaired, numbers from 1
        try:
            time.sleep(0.5)
            for _ in range(4):
                b.pull()
            second = drain(q, 1.5)
            c = None
        finally:
            b.close()
        c = VirtualShoe(serial="VS-3", secret=SECRET, link_path=link_path).start()  # the right secret, wrong serial
        try:
            time.sleep(0.5)
            for _ in range(4):
                c.pull()
            third = drain(q, 1.5)
        finally:
            c.close()
    return {"scenario": "shoe swapped mid-hand (VS-1 dealt 5; then unpaired VS-2 pulled 4; then VS-3 with the "
            "same secret pulled 4)", "delivered_from_table_shoe": sum(isinstance(e, CardRead) for e in first),
            "delivered_from_swapped_shoes": sum(isinstance(e, CardRead) for e in second + third),
            "refused": refused(first + second + third)}


def stray_hello(cards: int, auth: bool) -> dict[str, Any]:
    secret = SECRET if auth else None
    q: queue.Queue[Any] = queue.Queue()
    with VirtualShoe(serial="VS-1", secret=secret, record=False) as shoe, \
            ShoeLink(shoe.url, q, auto_ack=True, secret=secret, serial=None) as link:
        link.wait_connected()
        stray = p.Hello(1, 1, 1, 1, 0x1234, 1, 0, 0, ("rfid",), "x", "OTHER-7")
        for i in range(cards):
            shoe.pull()
            if i == cards // 10:
                with shoe._lock:
                    shoe.line.tx(p.encode(stray))
            if i % 64 == 63:
                shoe.wait_acked(5)
            if shoe.remaining() == 0:
                shoe.reload(Deck.seeded(i))
        shoe.wait_acked(10)
        ev = drain(q, 0.5)
        seqs = [e.seq for e in ev if isinstance(e, CardRead)]
        connected = link.connected
    return {"scenario": f"stray HELLO of another serial after card {cards // 10} ({'hmac' if auth else 'auth off'})",
            "pulled": cards, "delivered": len(set(seqs)), "lost": cards - len(set(seqs)),
            "in_order": seqs == sorted(seqs), "connected_after": connected, "refused": refused(ev)}


def forged_ack() -> dict[str, Any]:
    q: queue.Queue[Any] = queue.Queue()
    with VirtualShoe(serial="VS-1", secret=SECRET) as shoe, \
            ShoeLink(shoe.url, q, auto_ack=False, secret=SECRET, serial="VS-1") as link:
        link.wait_connected()
        for _ in range(4):
            shoe.pull()
        drain(q, 0.3)
        before = shoe.unacked_count()
        device = os.path.realpath(shoe.url)
        try:
            os.close(os.open(device, os.O_RDWR | os.O_NOCTTY))
            second_open = "opened (root passes TIOCEXCL)" if os.geteuid() == 0 else "opened"
        except OSError as exc:
            second_open = f"refused: {exc.strerror}"
        try:
            serial.Serial(device, exclusive=True).close()
            flock = "opened"
        except serial.SerialException:
            flock = "refused (flock held)"
        nxt = shoe.next_seq
        with shoe._lock:  # an attacker on the line (root, or a tap): plain and sealed under a guessed key
            shoe.device.receive_data(p.encode(p.Ack(999, nxt - 1, nxt)), time.monotonic())
            shoe.device.receive_data(p.seal(p.Ack(999, nxt - 1, nxt), os.urandom(32), 10**6), time.monotonic())
        time.sleep(0.3)
        after = shoe.unacked_count()
    return {"scenario": "forged ACK from a second program", "unrecorded_before": before,
            "erased_by_forgery": before - after, "second_open_of_the_device": second_open,
            "second_pyserial_exclusive_open": flock, "refused_at_shoe": shoe.host_refused}


def forged_card() -> dict[str, Any]:
    q: queue.Queue[Any] = queue.Queue()
    with VirtualShoe(serial="VS-1", secret=SECRET) as shoe, \
            ShoeLink(shoe.url, q, auto_ack=True, secret=SECRET, serial="VS-1") as link:
        link.wait_connected()
        shoe.pull()
        drain(q, 0.3)
        nxt = shoe.next_seq
        forged = p.CardMsg(nxt, None, "none", 2)
        with shoe._lock:
            shoe.line.tx(p.encode(forged) + p.seal(forged, os.urandom(32), 10**6))
        time.sleep(0.2)
        real = shoe.pull()
        ev = drain(q, 0.5)
        got = [e for e in ev if isinstance(e, CardRead) and e.seq == nxt]
    return {"scenario": "forged CARD with the next sequence number", "replaced": int(bool(got) and got[0].card != real),
            "delivered_at_that_seq": [str(e.card) for e in got], "real_card": str(real), "refused": refused(ev)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cards", type=int, default=6000, help="cards of the stray-HELLO run (default 6000)")
    args = ap.parse_args()
    for run in (unknown_serial, swap_mid_hand, lambda: stray_hello(args.cards, True),
                lambda: stray_hello(args.cards, False), forged_ack, forged_card):
        print(json.dumps(run()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
