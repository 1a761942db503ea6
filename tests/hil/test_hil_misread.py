"""HIL, through the virtual shoe on a real pty and ``ShoeLink``: a misread FAULT after its card's
CARD (docs/protocol.md, FAULT *misread*). After a card the shoe identified (a retry) the dealer
is told the card is counted with that identity and the record books it so; after an unreadable
card its identity is unknown. Neither leaves a STOP, and the record equals the felt."""

from __future__ import annotations

from typing import Any

import pytest
from test_hil_dealer_stops import SEATS, Dealer, reads_kept, record_equals_felt, table  # noqa: F401 - the fixture

from hil.faults import Faults
from shoe_ctl.events import DealerAction, FaultKind, ShoeFault, Signal
from shoe_ctl.machine.link import FAULT_TEXT, RETRY_CODE, RETRY_TEXT

pytestmark = pytest.mark.faults


def test_a_retry_and_an_unreadable_card_through_the_pty_each_booked_as_the_shoe_read_them(
        table: Any) -> None:  # noqa: F811 - the fixture imported above
    t, screen, _leds, journal = table
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    t.device.faults = Faults(schedule={2: ["misread"], 3: ["unreadable", "misread"]})
    dealer = Dealer(t, screen, t.device)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS)
    dealer.deal(8)  # 3rd street: two downcards and an upcard for each of four seats
    assert t.controller.wait_idle(5)
    reads_kept(journal, t.device)
    misreads = [a for a in screen.alerts if a.code in ("shoe-misread", RETRY_CODE)]
    assert [a.code for a in misreads] == [RETRY_CODE, "shoe-misread"]  # a retry: a notice on the floor
    retry, unknown = misreads
    assert "read 2" in retry.message and RETRY_TEXT in retry.message and "unknown" not in retry.message
    assert FAULT_TEXT[FaultKind.MISREAD] in unknown.message and RETRY_TEXT not in unknown.message
    assert not [a for a in screen.alerts if a.latched]  # no STOP for either
    assert [a.code for a in screen.alerts].count("unreadable-card") == 1
    faults = [ev for ev in journal.items if isinstance(ev, ShoeFault)]
    assert [(ev.kind, ev.cleared) for ev in faults] == [(FaultKind.MISREAD, False), (FaultKind.MISREAD, True)] * 2
    machine = t.controller.machine
    hand = machine.hand
    assert hand is not None
    assert hand.seats[1].down[0] is not None  # the retried card, booked with its identity
    assert hand.seats[2].down[0] is None  # the unreadable one
    record_equals_felt(machine, dealer.felt, unknown={"seat 3 down"})
    assert screen.instructions[-1].signal is not Signal.SHOE_FAULT
