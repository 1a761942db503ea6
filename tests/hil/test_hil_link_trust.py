"""The link's trust rules at a session switch, through the real pty and the whole table: a shoe
the host cannot hear shows no *deal* on its own LEDs nor anywhere else, on an unauthenticated and
a paired link (docs/protocol.md section 14, "Session switch"); a HOST_HELLO recorded off the line
and written to the shoe again mid-hand stalls the link and accuses nobody (docs/security.md,
"The shoe link")."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hil_dealer_stops import PROFILES, SEATS, Dealer, Journal, Screen
from waiting import wait_for

from drivers import protocol as p
from drivers.leds import MockLedSink
from hil.deck import Deck
from hil.virtual_shoe import NO_HOST_LED
from shoe_ctl.config import LedConfig, ShoeConfig, TableConfig
from shoe_ctl.events import DealerAction, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.service import shoes
from shoe_ctl.table import Table

pytestmark = pytest.mark.faults


@pytest.fixture(params=["off", "hmac"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Table, Screen, MockLedSink]]:
    screen, leds = Screen(), MockLedSink()
    machine = Dealing(PROFILES, await_counter_reset=True)
    cfg = TableConfig(shoe=ShoeConfig(auth=request.param), leds=LedConfig(backend="mock"))
    # the dealer's side without a display: the mock LEDs and the shoe's own, as a table has them
    t = Table.from_config(cfg, profiles=PROFILES, shoe_url=shoes.SIM, seed=3, machine=machine,
                          journal=Journal(), display=None, sinks=[leds, screen], wait_connected=10.0)
    with t:
        assert t.link is not None and t.link.auth == request.param
        t.device.reload(Deck.seeded(21).cards())
        yield t, screen, leds


def spent_host_hello(t: Table) -> bytes:
    """A HOST_HELLO frame as the table's host sends it, with a challenge it does not hold."""
    secret = t.device.device.secret
    if secret is None:
        return p.encode(p.HostHello(9, 1, 1))
    return p.seal(p.HostHello(9, 2, 2), p.hello_key(secret), 0, challenge=bytes(range(1, 9)))


def shown(device: Any) -> str:
    led = device.led
    return "no-host" if led is NO_HOST_LED else (led.signal if led is not None else "")


def test_a_shoe_the_host_cannot_hear_shows_no_deal_anywhere(table: Any) -> None:
    """Mid-deal the shoe's transmitter dies while it still hears the host. Once the host knows
    (the silence limit), the screen, the table's LEDs and the shoe's own LEDs say degraded, and
    nothing says deal for the 4 s the host keeps challenging a shoe it cannot hear; when the shoe
    is heard again the deal goes on."""
    t, screen, leds = table
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    dealer = Dealer(t, screen, t.device)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS)
    dealer.deal(3)
    dealer.next_card()
    assert wait_for(lambda: shown(t.device) == "deal")
    noise = t.device.line.noise_out
    normal = noise.apply
    noise.apply = lambda data: b""
    try:
        screen.wait(lambda i: i.signal is Signal.DEGRADED, 10)
        assert wait_for(lambda: shown(t.device) == "degraded", 2.0), "the shoe never showed degraded"
        end = time.monotonic() + 4.0
        while time.monotonic() < end:
            assert shown(t.device) != "deal"
            assert screen.instructions[-1].signal is Signal.DEGRADED
            assert leds.signals()[-1] is Signal.DEGRADED
            time.sleep(0.01)
    finally:
        noise.apply = normal
    ins = dealer.next_card(20)
    assert ins.card_no == 4 and wait_for(lambda: shown(t.device) == "deal", 5.0)
    dealer.deal(12)
    dealer.wait(lambda i: i.signal is Signal.BETTING)


def test_a_replayed_host_hello_mid_hand_stalls_and_accuses_nobody(table: Any) -> None:
    """A HOST_HELLO the host does not stand behind any more (what a recording of an earlier one
    is: sealed under the table's hello key, with a challenge the host no longer holds) reaches the
    shoe through the pty after the fourth card: on a paired link the shoe opens a session the host
    did not ask for; the host challenges again, the hand goes on with every card, and no alert
    names the shoe."""
    t, screen, leds = table
    line_in = t.device.line.noise_in
    normal = line_in.apply
    screen.wait(lambda i: i.signal is Signal.IDLE and i.text.startswith("Waiting"))
    dealer = Dealer(t, screen, t.device)
    dealer.post(DealerAction.NEW_HAND, seats=SEATS)
    dealer.deal(4)
    replay = spent_host_hello(t)
    sent = []

    def with_replay(data: bytes) -> bytes:
        if not sent:
            sent.append(replay)
            return normal(data) + replay
        return normal(data)

    line_in.apply = with_replay
    try:
        assert wait_for(lambda: bool(sent), 3.0)  # rides on the host's next frame (an ACK within 0.5 s)
        if t.link.auth == "hmac":
            assert wait_for(lambda: t.link.stats.stale_hellos >= 1, 3.0)
        dealer.deal(12)
        dealer.wait(lambda i: i.signal is Signal.BETTING)
    finally:
        line_in.apply = normal
    assert not [a for a in screen.alerts if a.code.startswith("shoe-")]
    assert t.machine.hand is not None and t.machine.hand.pulled == 12
