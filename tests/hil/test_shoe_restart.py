"""A shoe restart inside a hand through the real pty (docs/protocol.md section 12):
a 2-second power loss with a card pulled while the shoe was off. The link posts ShoeRestarted at
once, before the next card, with the counts the shoe kept; what the shoe cannot know is said."""

from __future__ import annotations

import queue
import time
from typing import Any

import pytest

from drivers.shoe import ShoeLink
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.events import CardRead, ShoeRestarted


def _events_until(q: queue.Queue[Any], pred: Any, timeout: float = 8.0) -> list[Any]:
    out: list[Any] = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            ev = q.get(timeout=0.05)
        except queue.Empty:
            continue
        out.append(ev)
        if pred(ev):
            return out
    raise AssertionError(f"not seen within {timeout} s: {out}")


@pytest.mark.parametrize("counts_unpowered", [True, False])
def test_a_power_loss_inside_a_hand_is_reported_with_the_cards_the_shoe_counted(counts_unpowered: bool) -> None:
    shoe = VirtualShoe(Deck.seeded(5), heartbeat_s=0.1, counts_unpowered=counts_unpowered).start()
    q: queue.Queue[Any] = queue.Queue()
    try:
        with ShoeLink(shoe.url, q, auto_ack=True) as link:
            link.wait_connected(5.0)
            shoe.pull()
            shoe.pull()
            _events_until(q, lambda e: isinstance(e, CardRead) and e.dispense == 2)
            assert shoe.wait_acked(3.0)
            off = shoe.reboot(lose_unacked=True, away_s=2.0, pulls_while_off=1)
            assert len(off) == 1
            time.sleep(2.2)
            after = shoe.pull()
            seen = _events_until(q, lambda e: isinstance(e, CardRead))
        (restart,) = [e for e in seen if isinstance(e, ShoeRestarted)]
        read = seen[-1]
        assert seen.index(restart) < seen.index(read)  # the alert comes before the next card
        assert restart.boot_count_after == restart.boot_count_before + 1 == 2
        assert read.card == after
        if counts_unpowered:
            # the card pulled while off was counted: one card left with no read, and the shoe is sure
            assert restart.unreported == 1 and restart.certain
            assert read.dispense == 4  # the counter went on across the power loss, the jump shows it
            assert "1 card(s) left the shoe" in restart.procedure()
        else:
            # the shoe saw nothing while off: it cannot say, and the procedure says so
            assert restart.unreported == 0 and not restart.certain
            assert read.dispense == 3
            assert "cannot be known" in restart.procedure()
    finally:
        shoe.close()
