"""The link's trust rules at a session switch, on the wire in memory (``tests/support/wire.Pump``):
a shoe the host cannot hear shows no *deal* (docs/protocol.md section 14, "Session switch"), and a
replayed HOST_HELLO stalls the link without accusing the genuine shoe (docs/security.md, "The shoe
link")."""

from __future__ import annotations

from typing import Any

import pytest
from wire import Pump

from drivers import protocol as p
from drivers.session import LinkSession
from hil.deck import Deck
from hil.shoe_device import NO_HOST_LED, ShoeDevice
from shoe_ctl.events import CardRead, LinkChanged, LinkStatus

SECRET = bytes(range(32))
DEAL = LinkSession.led_spec({"name": "deal", "leds": ["green"], "mode": "steady"})
DEGRADED = LinkSession.led_spec({"name": "degraded", "leds": ["amber"], "mode": "blink", "on_ms": 800,
                                 "off_ms": 800})


class _Line:
    """One direction of the line: passes bytes, or (``mute``) drops them all."""

    def __init__(self) -> None:
        self.mute = False
        self.seen = b""

    def apply(self, data: bytes) -> bytes:
        self.seen += data
        return b"" if self.mute else data


def pump_for(version: int) -> tuple[Pump, _Line, _Line]:
    secret = SECRET if version == p.AUTH_VERSION else None
    device = ShoeDevice(Deck.seeded(3), serial="SH-7", secret=secret)
    to_host, to_shoe = _Line(), _Line()
    pump = Pump(LinkSession(auto_ack=True, secret=secret, serial="SH-7"), device,
                noise=(to_host, to_shoe))  # type: ignore[arg-type]
    pump.run(0.1)
    assert pump.session.connected and pump.session.version == version
    return pump, to_host, to_shoe


def signal(device: ShoeDevice) -> str:
    led = device.led
    return "no-host" if led is NO_HOST_LED else (led.signal if led is not None else "")


@pytest.mark.parametrize("version", [p.PROTOCOL_VERSION, p.AUTH_VERSION])
def test_a_shoe_the_host_cannot_hear_never_shows_deal(version: int) -> None:
    """The shoe's transmitter dies, its receiver works. The host goes ``degraded`` and shows the
    degraded pattern, as the machine does; the shoe shows it within a few milliseconds, and
    nothing it shows says deal for the whole outage, while the host challenges it again every
    second. When the shoe is heard again the host's pattern comes back."""
    pump, to_host, _ = pump_for(version)
    pump.session.show_leds(DEAL, pump.now)
    pump.run(0.05)
    assert signal(pump.device) == "deal"
    to_host.mute = True
    degraded_at = None
    shown: list[tuple[float, str]] = []
    while pump.now < 12.0:
        pump.step()
        if degraded_at is None and pump.session.status is LinkStatus.DEGRADED:
            degraded_at = pump.now
            pump.session.show_leds(DEGRADED, pump.now)  # the machine's answer to the degraded event
        if degraded_at is not None:
            shown.append((pump.now - degraded_at, signal(pump.device)))
    assert degraded_at is not None
    late = {s for dt, s in shown if dt >= 0.05}
    assert "deal" not in late, f"the shoe showed {sorted(late)} while the host could not hear it"
    assert late <= {"degraded", "no-host"}
    to_host.mute = False
    pump.run(3.0)
    assert pump.session.status is LinkStatus.CONNECTED
    pump.session.show_leds(DEAL, pump.now)
    pump.run(0.1)
    assert signal(pump.device) == "deal"


def _host_hellos(data: bytes) -> list[bytes]:
    """The whole HOST_HELLO frames in ``data`` (host -> shoe bytes), as sent."""
    out = []
    for part in data.split(p.DELIMITER):
        if not part:
            continue
        items = p.SealedDecoder().feed(p.DELIMITER + part + p.DELIMITER)
        if items and isinstance(getattr(items[0], "msg", None), p.HostHello):
            out.append(p.DELIMITER + part + p.DELIMITER)
    return out


def test_a_replayed_host_hello_stalls_the_link_and_accuses_nobody() -> None:
    """Someone records the host's HOST_HELLO and writes it to the shoe again mid-hand: the shoe
    answers it with a fresh session the host did not ask for. The host refuses that session
    (its challenge is spent) but names no refusal: the HELLO verifies under the table's secret,
    so it is the table's own shoe; it challenges again, and every card arrives once, in order."""
    pump, _, to_shoe = pump_for(p.AUTH_VERSION)
    recorded = _host_hellos(to_shoe.seen)
    assert recorded
    for _ in range(3):
        pump.device.pull(pump.now)
    pump.run(0.2)
    pump.device.receive_data(recorded[0], pump.now)  # the replay reaches the shoe
    for _ in range(3):
        pump.device.pull(pump.now)
        pump.run(0.05)
    pump.run(2.0)
    refused = [e.refused for e in pump.events if isinstance(e, LinkChanged) and e.refused]
    assert refused == []
    cards = [e.seq for e in pump.events if isinstance(e, CardRead)]
    assert cards == list(range(1, 7))
    assert pump.session.stats.stale_hellos >= 1
    assert pump.session.status is LinkStatus.CONNECTED


def test_a_hello_that_fails_its_mac_is_still_refused() -> None:
    """The stall is only for a HELLO the table's secret made: one sealed under another secret
    answering a spent challenge is ``auth-failed`` as before."""
    pump, _, to_shoe = pump_for(p.AUTH_VERSION)
    recorded = _host_hellos(to_shoe.seen)
    forged_hh: Any = p.SealedDecoder().feed(recorded[0])[0]
    nonce = b"\x05" * p.NONCE_SIZE
    keys = p.session_keys(bytes(32), forged_hh.challenge, nonce)
    hello = p.Hello(1, 2, 2, 2, 7, 1, 0, 0, ("rfid",), "x", "SH-7")
    pump.session.receive_data(p.seal(hello, keys.shoe_mac, 1, challenge=forged_hh.challenge, nonce=nonce), pump.now)
    pump.run(0.05)
    refused = [e.refused for e in pump.events if isinstance(e, LinkChanged) and e.refused]
    assert refused == ["auth-failed"]
