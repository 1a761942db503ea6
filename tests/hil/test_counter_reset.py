"""The dispense counter is exact from a hand's first card: the machine instructs the first deal
only once the shoe confirmed the counter reset (``CounterReset``), and a read made before the
reset (its CARD carries the old epoch) continues the old count. Through the virtual shoe, the pty
and ``ShoeLink``: a card that leaves unreported right after a new hand is a gap of exactly one."""

from __future__ import annotations

import queue
import time
from typing import Any

from rule_profiles import PROFILES

from drivers.shoe import ShoeLink
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.events import (
    Alert,
    CardRead,
    CounterReset,
    DealerAction,
    DealerInput,
    Instruction,
    LinkChanged,
    ShoeCommand,
    Signal,
)
from shoe_ctl.machine import Dealing


class Table:
    """The service's loop in the test's thread: link events into the machine, its shoe commands
    to the link (as ``ShoeCommandSink`` does), everything it says kept."""

    def __init__(self, shoe: VirtualShoe, link: ShoeLink, q: queue.Queue[Any]) -> None:
        self.shoe, self.link, self.q = shoe, link, q
        self.m = Dealing(PROFILES, await_counter_reset=True)
        self.out: list[Any] = []
        self.events: list[Any] = []

    def feed(self, ev: Any) -> list[Any]:
        cmds = self.m.handle(ev)
        for c in cmds:
            if isinstance(c, ShoeCommand) and c.name == "reset-counter":
                self.link.reset_counter()
        self.out += cmds
        return cmds

    def until(self, cond: Any, timeout: float = 5.0) -> Any:
        end = time.monotonic() + timeout
        while True:
            ev = self.q.get(timeout=max(0.01, end - time.monotonic()))
            self.events.append(ev)
            self.feed(ev)
            if cond(ev):
                return ev

    def instruction(self) -> Instruction:
        return [c for c in self.out if isinstance(c, Instruction)][-1]

    def gaps(self) -> list[Alert]:
        return [c for c in self.out if isinstance(c, Alert) and c.code == "dispense-gap"]

    def silent_card(self) -> None:
        """A card leaves the shoe past its sensor without any CARD event (what the dispense
        counter is there to catch)."""
        with self.shoe._lock:
            self.shoe._take()
            self.shoe.dispense += 1


def _connect(shoe: VirtualShoe) -> tuple[Table, ShoeLink]:
    q: queue.Queue[Any] = queue.Queue()
    link = ShoeLink(shoe.url, q, auto_ack=True).start()
    link.wait_connected()
    t = Table(shoe, link, q)
    t.until(lambda ev: isinstance(ev, LinkChanged))
    return t, link


def test_first_deal_waits_for_the_confirmed_reset_and_a_missing_first_card_is_a_gap() -> None:
    with VirtualShoe(Deck.seeded(11)) as shoe:
        t, link = _connect(shoe)
        try:
            for _ in range(5):  # the shoe's counter is not at 0 when the hand starts
                shoe.pull()
            t.until(lambda ev: isinstance(ev, CardRead) and ev.dispense == 5)
            t.feed(DealerInput(DealerAction.ACK_ALERT))
            t.feed(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
            wait = t.instruction()
            assert wait.signal is Signal.IDLE and wait.card_no == 1 and "counter" in wait.text
            t.until(lambda ev: isinstance(ev, CounterReset))
            deal = t.instruction()
            assert deal.signal is Signal.DEAL and deal.seat == 1 and deal.card_no == 1
            t.silent_card()  # the hand's first card passes unread, no CARD at all
            second = shoe.pull()
            read = t.until(lambda ev: isinstance(ev, CardRead))
            assert read.dispense == 2 and read.epoch == t.m.link.epoch
        finally:
            link.close()
    gaps = t.gaps()
    assert len(gaps) == 1 and gaps[0].message.startswith("1 card(s)")
    hand = t.m.hand
    assert hand is not None
    assert hand.seats[0].down == [None]  # the missing card is counted where it went
    assert hand.seats[1].down == [second]
    assert t.instruction().signal is Signal.STOP  # the gap is latched: the dealer checks


def test_cards_pulled_before_the_reset_arrives_continue_the_old_count() -> None:
    """The dealer pulls before the shoe has the reset (the wait ignored, or the reset still on the
    wire): those reads carry the old epoch and are checked against the old count, exactly."""
    with VirtualShoe(Deck.seeded(12)) as shoe:
        t, link = _connect(shoe)
        try:
            for _ in range(3):
                shoe.pull()
            t.until(lambda ev: isinstance(ev, CardRead) and ev.dispense == 3)
            t.feed(DealerInput(DealerAction.ACK_ALERT))
            with shoe._lock:  # the shoe does not act on the reset frame until the pulls are done
                t.feed(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
                t.silent_card()
                early = shoe.pull()
            t.until(lambda ev: isinstance(ev, CardRead))
            if not any(isinstance(e, CounterReset) for e in t.events):
                t.until(lambda ev: isinstance(ev, CounterReset))
            later = shoe.pull()
            last = t.until(lambda ev: isinstance(ev, CardRead))
        finally:
            link.close()
    reads = [e for e in t.events if isinstance(e, CardRead)]
    assert [r.dispense for r in reads[-2:]] == [5, 1] and reads[-2].epoch != last.epoch
    gaps = t.gaps()
    assert len(gaps) == 1 and gaps[0].message.startswith("1 card(s)")
    hand = t.m.hand
    assert hand is not None
    assert hand.seats[0].down == [None] and hand.seats[1].down == [early] and hand.seats[2].down == [later]


def test_a_recovered_machine_still_waiting_asks_for_the_reset_again() -> None:
    m = Dealing(PROFILES, await_counter_reset=True)
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    again = Dealing(PROFILES, await_counter_reset=True)  # replayed from the journal after a stop
    again.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    cmds = again.start()
    assert ShoeCommand("reset-counter") in cmds
    ins = [c for c in cmds if isinstance(c, Instruction)][-1]
    assert ins.signal is Signal.IDLE and ins.card_no == 1
    cmds = again.handle(CounterReset(7))
    assert [c for c in cmds if isinstance(c, Instruction)][-1].signal is Signal.DEAL


def test_without_a_shoe_link_a_new_hand_deals_at_once() -> None:
    m = Dealing(PROFILES)
    cmds = m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    assert ShoeCommand("reset-counter") in cmds
    assert [c for c in cmds if isinstance(c, Instruction)][-1].signal is Signal.DEAL
    m.handle(CardRead(1, None, "none", 2))  # counted from 0 at the new hand, as before
    assert [a["code"] for a in m.alerts].count("dispense-gap") == 1
