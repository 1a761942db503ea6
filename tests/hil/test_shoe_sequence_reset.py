"""A shoe whose sequence numbers go back (it lost its stored counter, docs/protocol.md section 6)
is an alert the dealer and the floor see (``shoe-sequence-reset``), not only a note in the
``connected`` event's detail."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from typing import Any

from rule_profiles import PROFILES

from drivers.shoe import ShoeLink
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.events import (
    Alert,
    CardRead,
    DealerAction,
    DealerInput,
    Instruction,
    LinkChanged,
    LinkStatus,
    Signal,
)
from shoe_ctl.machine import Dealing


def _drain(q: queue.Queue[Any], m: Dealing, until: Any, timeout: float = 5.0) -> list[Any]:
    """Feed every event of the link's queue to the machine until ``until(event)``; returns the
    commands the machine gave."""
    out: list[Any] = []
    end = time.monotonic() + timeout
    while True:
        ev = q.get(timeout=max(0.01, end - time.monotonic()))
        out += m.handle(ev)
        if until(ev):
            return out


def test_sequence_going_back_mid_hand_is_a_latched_alert_that_stops_the_deal(virtual_shoe: Callable[..., VirtualShoe]) -> None:
    q: queue.Queue[Any] = queue.Queue()
    m = Dealing(PROFILES)
    shoe = virtual_shoe(Deck.seeded(3))
    with ShoeLink(shoe.url, q, auto_ack=True) as link:
        link.wait_connected()
        _drain(q, m, lambda ev: isinstance(ev, LinkChanged) and ev.status is LinkStatus.CONNECTED)
        m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
        for _ in range(3):
            shoe.pull()
        _drain(q, m, lambda ev: isinstance(ev, CardRead) and ev.dispense >= 2 and len(m.reads) == 3)
        assert shoe.wait_acked()
        assert not any(a["code"] == "shoe-sequence-reset" for a in m.alerts)
        with shoe._lock:
            shoe.next_seq = 1  # the shoe lost the counter it keeps in non-volatile memory
            shoe.reboot(lose_unacked=True)
        cmds = _drain(q, m, lambda ev: isinstance(ev, LinkChanged) and ev.sequence_reset)
    alerts = [c for c in cmds if isinstance(c, Alert) and c.code == "shoe-sequence-reset"]
    assert len(alerts) == 1 and alerts[0].latched
    assert "went back" in alerts[0].message
    ins = [c for c in cmds if isinstance(c, Instruction)][-1]
    assert ins.signal is Signal.STOP and "shoe-sequence-reset" in ins.text
    assert any(a["code"] == "shoe-sequence-reset" for a in m.public_state()["alerts"])


def test_a_restarted_host_whose_resume_point_the_shoe_never_issued_flags_the_reset(virtual_shoe: Callable[..., VirtualShoe]) -> None:
    q: queue.Queue[Any] = queue.Queue()
    shoe = virtual_shoe(Deck.seeded(4))
    with ShoeLink(shoe.url, q, resume_seq=500) as link:
        link.wait_connected()
        ev = q.get(timeout=5)
        while not isinstance(ev, LinkChanged):
            ev = q.get(timeout=5)
    assert ev.status is LinkStatus.CONNECTED and ev.sequence_reset and "resume ignored" in ev.detail
    m = Dealing(PROFILES)
    codes = [c.code for c in m.handle(ev) if isinstance(c, Alert)]
    assert codes == ["shoe-sequence-reset"]


def test_an_ordinary_connect_and_a_shoe_reboot_raise_no_sequence_alert(virtual_shoe: Callable[..., VirtualShoe]) -> None:
    q: queue.Queue[Any] = queue.Queue()
    m = Dealing(PROFILES)
    shoe = virtual_shoe(Deck.seeded(5))
    with ShoeLink(shoe.url, q, auto_ack=True) as link:
        link.wait_connected()
        shoe.pull()
        _drain(q, m, lambda ev: isinstance(ev, CardRead))
        assert shoe.wait_acked()
        shoe.reboot(lose_unacked=False)  # next_seq kept: a normal power cycle
        _drain(q, m, lambda ev: isinstance(ev, LinkChanged) and "restarted" in ev.detail)
    assert not any(a["code"] == "shoe-sequence-reset" for a in m.alerts)
