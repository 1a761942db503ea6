"""Which version a link reads a frame as first (docs/protocol.md sections 7 and 14): an
authenticated link reads every frame as version 2 first, and refuses a plain one; a version-1 link
(a bench) reads a frame as version 1 first, so a valid plain frame is decoded once, and still
ignores a paired shoe's sealed frames without counting them as bad; a version-1 link that pairs
reads as version 2 from then on, and refuses a downgraded frame as any authenticated link does."""

from __future__ import annotations

import os
from typing import Any

import pytest
from wire import Pump

from drivers import protocol as p
from drivers.protocol import authentication
from drivers.session import LinkSession
from hil.deck import Deck
from hil.shoe_device import ShoeDevice
from shoe_ctl.events import CardRead, LinkChanged

SECRET = bytes(range(32))


def _readings(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Every call from now on of the link decoder's ``name`` (``unseal_body``: a frame read as
    version 2; ``decode_body``: as version 1), the length of the body it read."""
    calls: list[int] = []
    real = getattr(authentication, name)

    def reading(body: bytes) -> Any:
        calls.append(len(body))
        return real(body)

    monkeypatch.setattr(authentication, name, reading)
    return calls


def _cards(pump: Pump) -> list[CardRead]:
    return [e for e in pump.events if isinstance(e, CardRead)]


def _refused(pump: Pump) -> list[str | None]:
    return [e.refused for e in pump.events if isinstance(e, LinkChanged) and e.refused]


@pytest.mark.parametrize("secret", [None, SECRET])
def test_a_link_reads_each_frame_as_its_own_version_first(secret: bytes | None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    unseals = _readings(monkeypatch, "unseal_body")
    pump = Pump(LinkSession(auto_ack=True, secret=secret, serial="SH-1"),
                ShoeDevice(Deck.seeded(1), serial="SH-1", secret=secret))
    pump.run(0.1)
    for _ in range(5):
        pump.device.pull(pump.now)
    pump.run(0.2)
    assert len(_cards(pump)) == 5 and pump.session.stats.bad_frames == 0 and not _refused(pump)
    frames_in = pump.session.stats.frames_in
    if secret is None:
        assert unseals == []  # every plain frame decoded once, as version 1
    else:
        assert len(unseals) >= frames_in  # every frame read as version 2 first


def test_a_version_1_link_ignores_a_paired_shoe_without_calling_its_frames_bad() -> None:
    pump = Pump(LinkSession(auto_ack=True, serial="SH-1"), ShoeDevice(Deck.seeded(1), serial="SH-1", secret=SECRET))
    pump.device.say_hello()  # sealed, unasked: the host acts on none of it
    pump.run(0.6)
    assert not pump.session.connected and pump.session.stats.bad_frames == 0
    assert pump.session.stats.frames_in == 0 and not _refused(pump)


def test_a_link_paired_from_version_1_refuses_a_downgraded_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    pump = Pump(LinkSession(auto_ack=True, serial="SH-1"),
                ShoeDevice(Deck.seeded(1), serial="SH-1", secret=None, pairing=True))
    pump.run(0.1)
    assert pump.session.connected and pump.session.auth == "off"
    new = os.urandom(32)
    pump.session.pair(new)
    pump.run(0.3)
    assert pump.session.connected and pump.session.auth == "hmac" and pump.device.secret == new
    plain_reads = _readings(monkeypatch, "decode_body")
    pump.device.pull(pump.now)
    pump.run(0.1)
    assert [c.seq for c in _cards(pump)] == [1]
    assert plain_reads == []  # every frame now read as version 2 first, as on a link made with a secret
    forged = p.CardMsg(2, None, "none", 2)
    pump.to_host += p.encode(forged)  # a plain frame, as the link spoke before it paired
    pump.run(0.05)
    assert [c.seq for c in _cards(pump)] == [1] and _refused(pump) == ["forged"]
    assert len(plain_reads) == 1
    real = pump.device.pull(pump.now)
    pump.run(0.2)
    assert [c.seq for c in _cards(pump)] == [1, 2] and _cards(pump)[1].card == real.card
