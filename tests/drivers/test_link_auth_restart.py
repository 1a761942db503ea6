"""Shoe restarts, kept counters and ACK pacing on an authenticated (version-2) link.

The HELLO records (caps, counters; docs/protocol.md section 12) are part of the HELLO payload in
both versions (section 13, "Versioning"): a paired shoe that restarts must raise the same
``ShoeRestarted`` as an unpaired one, with its counters read from the sealed HELLO, and the host
paces its sealed ACKs as it does plain ones. Host session and shoe device joined in memory
(``tests/support/wire.Pump``).
"""

from __future__ import annotations

from typing import Any

from wire import Pump

from drivers import protocol as p
from drivers.session import LinkSession
from hil.deck import Deck
from hil.shoe_device import ShoeDevice
from shoe_ctl.events import CardRead, LinkChanged, ShoeRestarted

SECRET = bytes(range(32))


def paired(**kw: Any) -> Pump:
    device = ShoeDevice(Deck.seeded(3), serial="SH-7", secret=SECRET, **kw)
    pump = Pump(LinkSession(auto_ack=True, secret=SECRET, serial="SH-7"), device)
    pump.run(0.1)
    assert pump.session.connected and pump.session.version == p.AUTH_VERSION
    return pump


def test_a_paired_shoe_that_restarts_reports_it_with_its_counters() -> None:
    pump = paired(counts_unpowered=True)
    for _ in range(4):
        pump.device.pull(pump.now)
    pump.run(0.2)
    assert len([e for e in pump.events if isinstance(e, CardRead)]) == 4
    pump.device.pull_unpowered()  # while off: counted on the backup supply, never reported by a CARD
    pump.device.reboot()
    pump.device.say_hello()
    pump.run(0.5)
    (restart,) = [e for e in pump.events if isinstance(e, ShoeRestarted)]
    assert (restart.serial, restart.boot_count_before, restart.boot_count_after) == ("SH-7", 1, 2)
    assert (restart.cards_counted, restart.cards_reported, restart.unreported) == (5, 4, 1) and restart.certain
    assert pump.session.info is not None and pump.session.stats.restarts == 1
    assert not [e for e in pump.events if isinstance(e, LinkChanged) and e.refused]
    # the session after the restart is a new authenticated one: cards still arrive
    pump.device.pull(pump.now)
    pump.run(0.2)
    assert len([e for e in pump.events if isinstance(e, CardRead)]) == 5


def test_the_sealed_hello_carries_the_records_the_host_reads() -> None:
    pump = paired()
    pump.device.say_hello()  # unasked: sealed under the hello key with a zero challenge
    (frame,) = [f for f in pump.device.frames_to_send() if p.SealedDecoder().feed(f)]
    sealed = p.SealedDecoder().feed(frame)[0]
    assert isinstance(sealed, p.Sealed) and sealed.verify(p.hello_key(SECRET))
    hello = sealed.msg
    assert isinstance(hello, p.Hello) and hello.caps == ("persistent-counters",)
    assert hello.has_counters and hello.boot_count == 1


def test_sealed_acks_are_paced_to_one_per_20_ms() -> None:
    pump = paired()
    before = pump.session.stats.acks
    start = pump.now
    for _ in range(30):  # a burst: a card every 2 ms
        pump.device.pull(pump.now)
        pump.run(0.002)
    pump.run(0.05)
    elapsed = pump.now - start
    sent = pump.session.stats.acks - before
    assert len([e for e in pump.events if isinstance(e, CardRead)]) == 30
    assert 1 <= sent <= int(elapsed / LinkSession.ACK_MIN_GAP) + 1
