"""HIL, through the virtual shoe on a real pty and ``ShoeLink``: every link fault reaches the
dealer at once as a stop with its procedure, nothing read is lost, and the machine's record
equals the cards on the table afterwards (docs/service.md *The signals*, docs/irregularities.md
*Sequence gap*).

The test thread is the dealer: it acts on the instruction stream only (as a person reads the
screen), pulls each card from the virtual shoe and keeps its own picture of the felt.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from drivers.leds import MockLedSink
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.config import ShoeConfig, TableConfig, load_profile
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
from shoe_ctl.input_spec import STOP_REFUSAL
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card
from shoe_ctl.service import shoes
from shoe_ctl.service.notify import Notifier
from shoe_ctl.table import Table

pytestmark = pytest.mark.faults
PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}
SEATS = [1, 2, 3, 4]


class Journal:
    """Keeps every item the controller journals (events before their ack, alerts)."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def append(self, item: Any) -> int:
        self.items.append(item)
        return len(self.items)


class Screen:
    """A sink: what the dealer sees (instructions, alerts), with a wait for the next one."""

    def __init__(self) -> None:
        self.instructions: list[Instruction] = []
        self.alerts: list[Alert] = []
        self._cond = threading.Condition()

    def handle(self, cmd: Any) -> None:
        with self._cond:
            if isinstance(cmd, Instruction):
                self.instructions.append(cmd)
            elif isinstance(cmd, Alert):
                self.alerts.append(cmd)
            else:
                return
            self._cond.notify_all()

    def close(self) -> None:
        pass

    def wait(self, pred: Callable[[Instruction], bool], timeout: float = 15.0) -> Instruction:
        with self._cond:
            ok = self._cond.wait_for(lambda: bool(self.instructions) and pred(self.instructions[-1]), timeout)
            assert ok, f"the screen never showed what was waited for; last: {self.instructions[-1:]}"
            return self.instructions[-1]


class Dealer:
    """The person at the table: pulls the card the screen names, keeps the felt's picture."""

    def __init__(self, table: Table, screen: Screen, device: Any) -> None:
        self.table, self.screen, self.device = table, screen, device
        self.felt: dict[str, list[Card | None]] = defaultdict(list)
        self.pulled = 0

    def post(self, action: DealerAction, seat: int | None = None, **args: Any) -> None:
        self.table.controller.post(DealerInput(action, seat, args))

    def next_card(self, timeout: float = 15.0) -> Instruction:
        return self.wait(lambda i: i.signal in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY)
                         and i.card_no == self.pulled + 1, timeout)

    def wait(self, pred: Callable[[Instruction], bool], timeout: float = 15.0) -> Instruction:
        """Wait for ``pred`` on the screen; a stop for a shoe restart or a dispense jump (the same
        count as the gap's: docs/irregularities.md) is acknowledged on the way, as the dealer does
        once the felt is counted."""
        end = time.monotonic() + timeout
        while True:
            ins = self.screen.wait(lambda i: pred(i) or _restart_stop(i) is not None,
                                   max(0.1, end - time.monotonic()))
            code = _restart_stop(ins)
            if code is None or pred(ins):
                return ins
            self.post(DealerAction.ACK_ALERT, code=code)
            assert self.table.controller.wait_idle(5)

    def pull(self, ins: Instruction) -> Card:
        card = self.device.pull()
        self.pulled += 1
        self.felt[place(ins)].append(card)
        return card

    def deal(self, until: int) -> None:
        while self.pulled < until:
            self.pull(self.next_card())


def place(ins: Instruction) -> str:
    if ins.signal is Signal.DEAL:
        return f"seat {ins.seat} {ins.face}"
    return "burn" if ins.signal is Signal.BURN else "centre"


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[Table, Screen, MockLedSink, Journal]]:
    screen, leds, journal = Screen(), MockLedSink(), Journal()
    machine = Dealing(PROFILES, await_counter_reset=True)
    t = Table.from_config(TableConfig(), profiles=PROFILES, shoe_url=shoes.SIM, seed=3, machine=machine,
                          journal=journal, dealer_io=False, sinks=[leds, screen], wait_connected=10.0)
    with t:
        t.device.reload(Deck.seeded(21).cards())
        yield t, screen, leds, journal


def record_equals_felt(machine: Dealing, felt: dict[str, list[Card | None]], unknown: set[str]) -> None:
    """Every seat's cards in the machine equal the felt's, in order; only at the places in
    ``unknown`` (cards whose read the shoe lost) the machine has an unknown card instead."""
    hand = machine.hand
    assert hand is not None
    for s in hand.seats:
        for face, cards in (("down", s.down), ("up", s.up)):
            where = f"seat {s.seat} {face}"
            physical = felt.get(where, [])
            assert len(cards) == len(physical), where
            for mine, real in zip(cards, physical, strict=True):
                assert mine == real or (mine is None and where in unknown), (where, mine, real)


def reads_kept(journal: Journal, device: Any) -> None:
    """Nothing read is lost: every card read the link delivered is journaled once, and the shoe
    holds nothing unacked."""
    seqs = [ev.seq for ev in journal.items if isinstance(ev, CardRead)]
    assert len(seqs) == len(set(seqs))
    assert device.wait_acked(5)


def _restart_stop(ins: Instruction) -> str | None:
    """The alert code of a stop for a shoe restart (``shoe-restarted``, docs/protocol.md section
    12) or a dispense jump (``dispense-gap``) on the screen, else None."""
    if ins.signal is not Signal.STOP:
        return None
    return next((c for c in ("shoe-restarted", "dispense-gap") if c in ins.text), None)


def _gap_stop(dealer: Any, screen: Any) -> Any:
    """The sequence gap's stop after a shoe restart lost reads; the restart's own stop is
    acknowledged on the way (:meth:`Dealer.wait`); the gap's stays until the cards are reported."""
    return dealer.wait(lambda i: i.signal is Signal.STOP and i.text.startswith("Sequence gap"))


def test_sequence_gap_stops_the_dealer_until_the_count_and_the_hand_goes_on(table: Any) -> None:
    t, screen, leds, journal = table
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    dealer = Dealer(t, screen, t.device)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS)
    dealer.deal(5)
    # card 6: pulled while the cable is out, then the shoe restarts and loses its unsent read
    ins = dealer.next_card()
    t.device.unplug()
    dealer.pull(ins)
    t.device.reboot(lose_unacked=True, away_s=0.2)
    stop = _gap_stop(dealer, screen)
    assert stop.card_no == 6 and stop.cards[0] == place(ins)
    assert any(a.code == "sequence-gap" and a.latched for a in screen.alerts)
    # acknowledging alone never asks for the same card again
    dealer.post(DealerAction.ACK_ALERT, code="sequence-gap")
    time.sleep(0.3)
    assert t.controller.wait_idle(5)
    assert screen.instructions[-1].signal is Signal.STOP
    # the dealer counts: 6 cards on the felt, the screen had card #6 next -> one card found
    found = dealer.pulled - (stop.card_no - 1)
    assert found == 1
    dealer.post(DealerAction.GAP_CARDS, cards=found)
    dealer.deal(12)  # the rest of 3rd street
    dealer.wait(lambda i: i.signal is Signal.BETTING)
    assert t.controller.wait_idle(5)
    record_equals_felt(t.machine, dealer.felt, {place(ins)})
    assert t.machine.hand is not None and t.machine.hand.stub_count() == 52 - 12 == t.device.remaining()
    reads_kept(journal, t.device)
    # no "deal" between the gap and the count
    i = screen.instructions.index(stop)
    later = screen.instructions[i:]
    first_deal = next(k for k, x in enumerate(later) if x.signal is Signal.DEAL)
    assert all(x.signal is not Signal.DEAL for x in later[:first_deal]) and later[first_deal].card_no == 7
    assert "green" not in {led for _t, p in leds.history[-len(later):][:first_deal] for led in p.leds}


@pytest.mark.parametrize("fault", ["silent", "garbled"])
def test_a_shoe_not_heard_stops_the_dealer_and_its_reads_arrive_after(table: Any, fault: str) -> None:
    """The shoe stays plugged in but is silent 5 s (or every frame it sends is garbled, so every
    event stalls): the signal is ``degraded`` (never deal) until the link recovers; the card the
    dealer had already pulled arrives then and the hand goes on."""
    t, screen, leds, journal = table
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    dealer = Dealer(t, screen, t.device)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS)
    dealer.deal(3)
    noise = t.device.line.noise_out
    normal = noise.apply
    noise.apply = (lambda data: b"") if fault == "silent" else (lambda data: bytes(b ^ 0x5A for b in data))
    try:
        dealer.pull(dealer.next_card())  # card 4 had left the shoe as the line went
        start = time.monotonic()
        degraded = screen.wait(lambda i: i.signal is Signal.DEGRADED, 10)
        assert degraded.text.startswith("Shoe not heard")
        assert leds.signals()[-1] is Signal.DEGRADED
        time.sleep(max(0.0, 5.0 - (time.monotonic() - start)))
        assert screen.instructions[-1].signal is Signal.DEGRADED  # still not dealing
        assert t.machine.hand is not None and t.machine.hand.pulled == 3  # card 4 not heard yet
    finally:
        noise.apply = normal
    ins = dealer.next_card(20)
    assert ins.card_no == 5
    dealer.deal(12)
    dealer.wait(lambda i: i.signal is Signal.BETTING)
    assert t.controller.wait_idle(5)
    record_equals_felt(t.machine, dealer.felt, set())
    reads_kept(journal, t.device)
    k = next(k for k, x in enumerate(screen.instructions) if x.signal is Signal.DEGRADED)
    nxt = next(x for x in screen.instructions[k:] if x.signal is not Signal.DEGRADED)
    # no deal while the shoe was not heard; then the same card number as before (its read on its
    # way: the dealer, who pulled it, waits) or the next one
    assert nxt.signal is Signal.DEAL and nxt.card_no in (4, 5)
    assert any(a.code == "shoe-link-degraded" for a in screen.alerts)


def test_no_shoe_at_start_waits_for_it_ready_with_status_and_no_new_hand(tmp_path: Path) -> None:
    """No shoe on the port at start-up: READY=1 at once with a STATUS saying it waits, the
    screen and the LEDs say "shoe not connected", a new hand is refused; the shoe plugged in
    later is found without a restart and the hand is dealt."""
    notify_path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify_path))
    sock.settimeout(0.1)
    got: list[str] = []

    def read() -> None:
        while True:
            try:
                got.append(sock.recv(4096).decode())
            except TimeoutError:
                continue
            except OSError:
                return

    threading.Thread(target=read, daemon=True).start()
    port = tmp_path / "shoe"
    screen, leds, journal = Screen(), MockLedSink(), Journal()
    machine = Dealing(PROFILES, await_counter_reset=True)
    notifier = Notifier({"NOTIFY_SOCKET": str(notify_path)})
    cfg = TableConfig(shoe=ShoeConfig(auth="off"))  # a bench shoe, unauthenticated (docs/security.md)
    t = Table.from_config(cfg, profiles=PROFILES, shoe_url=str(port), machine=machine, journal=journal,
                          dealer_io=False, sinks=[leds, screen], notifier=notifier)
    shoe = None
    try:
        with t:
            ins = screen.wait(lambda i: i.signal is Signal.SHOE_FAULT and i.text.startswith("Shoe not connected"))
            assert leds.signals()[-1] is Signal.SHOE_FAULT
            deadline = time.monotonic() + 5
            while not any("STATUS=shoe not connected" in g for g in got) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert got[0].split("\n")[0] == "READY=1" and f"STATUS=waiting for the shoe at {port}" in got[0]
            assert any("STATUS=shoe not connected — check the cable" in g for g in got)
            t.controller.post(DealerInput(DealerAction.NEW_HAND, None, {"seats": SEATS}))
            assert t.controller.wait_idle(5)
            refused = [a for a in screen.alerts if a.code == "input-wrong-time"]
            assert refused and "check the cable" in refused[-1].message and t.machine.hand is None
            assert ins is screen.instructions[-1] or screen.instructions[-1].signal is Signal.SHOE_FAULT
            shoe = VirtualShoe(Deck.seeded(5), link_path=port).start()
            screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"), 15)
            deadline = time.monotonic() + 5  # the status hook runs right after the machine's update
            while not any("STATUS=shoe VS-0001 connected" in g for g in got) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert any("STATUS=shoe VS-0001 connected" in g for g in got)
            dealer = Dealer(t, screen, shoe)
            dealer.post(DealerAction.NEW_HAND, seats=SEATS)
            dealer.deal(12)
            dealer.wait(lambda i: i.signal is Signal.BETTING)
            assert t.controller.wait_idle(5)
            record_equals_felt(t.machine, dealer.felt, set())
            reads_kept(journal, shoe)
            assert not any(isinstance(x, LinkChanged) and x.status is LinkStatus.DEGRADED for x in journal.items)
    finally:
        if shoe is not None:
            shoe.close()
        sock.close()


def test_events_stalled_behind_a_malformed_one_stop_the_dealer_until_the_shoe_restarts(table: Any) -> None:
    """A firmware defect: an event that breaks v1 (a CARD with dispense counter 0) is dropped every
    time it comes, so every event after it stalls. The signal is ``degraded`` (no deal) while it
    lasts; the floor power-cycles the shoe, which loses the stuck events: a sequence gap, the
    dealer's count, and the hand goes on with the record equal to the felt."""
    from cobs import cobs

    from drivers import protocol as p

    t, screen, leds, journal = table
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    dealer = Dealer(t, screen, t.device)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS)
    dealer.deal(4)
    shoe = t.device
    with shoe._lock:
        seq = shoe.device.next_seq
        data = bytes([p.T_CARD]) + seq.to_bytes(4, "big") + bytes([5, 1, 0, 0, 0, 0])
        frame = b"\x00" + cobs.encode(data + p.crc32(data).to_bytes(4, "big")) + b"\x00"
        shoe.device.raw_event(frame, time.monotonic())  # held and sent under the next number
        shoe.line.flush()
    ins = dealer.next_card()
    dealer.pull(ins)  # card 5: its read waits behind the broken event
    degraded = screen.wait(lambda i: i.signal is Signal.DEGRADED, 20)
    assert "green" not in leds.history[-1][1].leds
    assert t.machine.hand is not None and t.machine.hand.pulled == 4
    shoe.reboot(lose_unacked=True, away_s=0.2)  # the floor power-cycles the shoe
    stop = _gap_stop(dealer, screen)
    assert stop.card_no == 5 and stop.cards[0] == place(ins)
    dealer.post(DealerAction.GAP_CARDS, cards=dealer.pulled - (stop.card_no - 1))
    dealer.deal(12)
    dealer.wait(lambda i: i.signal is Signal.BETTING)
    assert t.controller.wait_idle(5)
    record_equals_felt(t.machine, dealer.felt, {place(ins)})
    reads_kept(journal, shoe)
    k = screen.instructions.index(degraded)
    assert all(x.signal is not Signal.DEAL for x in screen.instructions[k:screen.instructions.index(stop)])


def test_the_shoes_leds_leave_deal_when_the_controller_hangs_and_when_the_service_stops() -> None:
    """Through the pty: the shoe's own LEDs show the dealer's signal; a controller thread that
    hangs turns them to ``stop`` within the watchdog's limit (the link's thread carries it), they
    come back when it runs again, and a stopped service sends ``stop`` last, then the shoe's own
    no-host pattern follows (docs/service.md, *When the service stops or hangs*)."""
    from dataclasses import replace

    from hil.shoe_device import NO_HOST_LED

    cfg = TableConfig()
    cfg = replace(cfg, leds=replace(cfg.leds, backend="mock"))
    screen = Screen()
    machine = Dealing(PROFILES, await_counter_reset=True)
    shoe = VirtualShoe(Deck.seeded(8)).start()  # the test's own shoe: it runs on after the service stops
    t = Table.from_config(cfg, profiles=PROFILES, shoe_url=shoe.url, machine=machine, display=None,
                          sinks=[screen], wait_connected=10.0, device=shoe)
    with t:

        def shoe_shows(name: str, timeout: float = 5.0) -> bool:
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                led = shoe.device.led
                if led is not None and led.signal == name:
                    return True
                time.sleep(0.02)
            return False

        screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
        dealer = Dealer(t, screen, shoe)
        dealer.post(DealerAction.NEW_HAND, seats=SEATS)
        dealer.next_card()
        assert shoe_shows("deal")
        release = threading.Event()
        hung = time.monotonic()
        t.controller.call_soon(lambda: release.wait(10))  # the controller thread hangs
        assert shoe_shows("stop", 5)
        took = time.monotonic() - hung
        assert took <= t.watchdog.stuck_after + 1.0, took
        assert "green" not in shoe.device.led.leds
        release.set()
        assert shoe_shows("deal", 5)  # it runs again: the machine's signal
        link = t.link
    try:
        assert not link.connected
        # the stop pattern went out last; the shoe, hearing no host, then shows its no-host pattern
        assert shoe_shows("stop", 1)
        end = time.monotonic() + 6
        while shoe.device.led is not NO_HOST_LED and time.monotonic() < end:
            time.sleep(0.05)
        assert shoe.device.led is NO_HOST_LED
    finally:
        shoe.close()


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_a_stop_on_seventh_street_holds_betting_complete_until_acknowledged(table: Any, rules: str) -> None:
    """A card pulled during the 7th-street betting stops the dealer (``card-not-expected``);
    *betting complete* is refused while that STOP is up, the hand stays in the betting and the
    held card goes to no seat; after the acknowledgement it is taken and the showdown comes."""
    t, screen, _leds, _journal = table
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    dealer = Dealer(t, screen, t.device)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS, rules=rules)
    bet: set[str | None] = set()
    while True:
        ins = dealer.wait(lambda i: (i.signal is Signal.BETTING and i.street not in bet) or (
            i.signal in (Signal.DEAL, Signal.BURN, Signal.COMMUNITY) and i.card_no == dealer.pulled + 1))
        if ins.signal is Signal.BETTING and ins.street == "7th":
            break
        if ins.signal is Signal.BETTING:
            bet.add(ins.street)
            dealer.post(DealerAction.BETTING_COMPLETE)
        else:
            dealer.pull(ins)
    t.device.pull()  # a card too many, in the betting
    screen.wait(lambda i: i.signal is Signal.STOP)
    dealer.post(DealerAction.BETTING_COMPLETE)
    assert t.controller.wait_idle(5)
    refused = [a for a in screen.alerts if a.code == "input-wrong-time"]
    assert refused and STOP_REFUSAL in refused[-1].message and "card-not-expected" in refused[-1].message
    assert t.machine.state == "hand_seventh_betting" and screen.instructions[-1].signal is Signal.STOP
    dealer.post(DealerAction.ACK_ALERT, code="card-not-expected")
    dealer.post(DealerAction.BETTING_COMPLETE)
    dealer.wait(lambda i: i.signal is Signal.SHOWDOWN)
    assert t.machine.state == "hand_showdown"


@pytest.mark.parametrize("counts_unpowered", [True, False], ids=["counts-unpowered", "no-counts"])
def test_a_card_pulled_while_the_shoe_was_off_is_placed_by_the_documented_procedure(
        table: Any, counts_unpowered: bool) -> None:
    """The shoe loses power inside a hand and the dealer pulls the next card while it is off;
    with counts-unpowered the shoe counted it (and says so), without it nothing recorded it. The
    dealer follows the procedure (docs/protocol.md section 12): count the felt against the
    screen's card count, the floor's ruling entered as *Cards found…*, acknowledge. The screen
    then asks for the next place, never again for the card pulled while off, and the hand ends
    with the record equal to the felt."""
    t, screen, leds, journal = table
    t.device.device.counts_unpowered = counts_unpowered
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    dealer = Dealer(t, screen, t.device)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS)
    dealer.deal(5)
    assert t.device.wait_acked(5)
    ins = dealer.next_card()  # card 6's place
    (off,) = t.device.reboot(lose_unacked=True, away_s=0.3, pulls_while_off=1)
    dealer.felt[place(ins)].append(off)  # the dealer, not told yet, put it where the screen said
    dealer.pulled += 1
    stop = screen.wait(lambda i: _restart_stop(i) == "shoe-restarted")
    alert = next(a for a in screen.alerts if a.code == "shoe-restarted")
    assert alert.latched
    assert ("1 card(s) left the shoe" in alert.message) if counts_unpowered else ("cannot" in alert.message)
    found = dealer.pulled - (stop.card_no - 1)  # the felt's count against the screen's
    assert found == 1
    dealer.post(DealerAction.GAP_CARDS, cards=found)
    dealer.post(DealerAction.ACK_ALERT, code="shoe-restarted")
    nxt = dealer.next_card()
    assert nxt.card_no == 7 and place(nxt) != place(ins)
    dealer.deal(12)  # the rest of 3rd street
    dealer.wait(lambda i: i.signal is Signal.BETTING)
    assert t.controller.wait_idle(5)
    record_equals_felt(t.machine, dealer.felt, {place(ins)})
    assert t.machine.hand is not None and t.machine.hand.stub_count() == 52 - 12 == t.device.remaining()
    codes = [a.code for a in screen.alerts]
    assert codes.count("shoe-restarted") == 1
    assert not {"dispense-gap", "card-not-expected", "duplicate-card", "sequence-gap"} & set(codes), codes
    reads_kept(journal, t.device)
