"""The session's ACKs while the port holds one back (docs/protocol.md section 7): the transport
tells the session what the port has not taken of its last ACK (``LinkSession.ack_output``). An
ACK that waited for room paces the next from when it left, so two ACKs never leave within
``ACK_MIN_GAP`` when a full port drains; while one is partly written none is made; and a newer
ACK, which replaces a waiting one, still asks for the resend that one asked for. A virtual clock."""

from __future__ import annotations

import pytest
from wire import frame

from drivers import protocol as p
from drivers.port_output import Unwritten
from drivers.session import LinkSession
from shoe_ctl.rules.cards import Card

GAP = LinkSession.ACK_MIN_GAP


def _connected() -> LinkSession:
    """A session that took the ``hello`` vector at 0.01 (its ACK, want 40, left then)."""
    s = LinkSession(name="test-port")
    s.connection_made(0.0)
    s.receive_data(frame("hello"), 0.01)
    s.frames_to_send()
    s.events()
    return s


def _card(s: LinkSession, seq: int, now: float) -> None:
    s.receive_data(p.encode(p.CardMsg(seq, Card(seq % 52), "rfid", seq, 3)), now)
    s.events()


def _acks(s: LinkSession) -> list[p.Ack]:
    return [m for m in p.FrameDecoder().feed(b"".join(s.frames_to_send())) if isinstance(m, p.Ack)]


def test_an_ack_that_waited_for_room_paces_the_next_from_when_it_left() -> None:
    s = _connected()
    _card(s, 40, 0.10)
    s.ack(40, 0.10)
    assert [(a.acked, a.want) for a in _acks(s)] == [(40, 41)]
    s.ack_output(Unwritten.WAITING, 0.10)  # the port is full: it waits
    _card(s, 41, 0.20)
    s.ack(41, 0.20)  # a newer ACK, which replaces the waiting one
    assert [(a.acked, a.want) for a in _acks(s)] == [(41, 42)]
    s.ack_output(Unwritten.NONE, 0.50)  # the shoe reads again: it left at 0.5
    _card(s, 42, 0.50)
    s.ack(42, 0.505)
    assert _acks(s) == []  # 5 ms after the one that left: said in the next ACK
    assert s.next_deadline() == pytest.approx(0.50 + GAP)
    s.tick(0.50 + GAP - 0.001)
    assert _acks(s) == []
    s.tick(0.50 + GAP)
    assert [(a.acked, a.want) for a in _acks(s)] == [(42, 43)]


def test_no_ack_is_made_while_one_is_partly_written() -> None:
    """The rest of a begun ACK goes out before any other frame: a newer one made meanwhile could
    only follow it at once. What changes waits in the session and goes out ACK_MIN_GAP after
    the begun one has left."""
    s = _connected()
    _card(s, 40, 0.10)
    s.ack(40, 0.10)
    assert len(_acks(s)) == 1
    s.ack_output(Unwritten.BEGUN, 0.10)
    _card(s, 41, 0.20)
    s.ack(41, 0.20)
    _card(s, 43, 0.25)  # a hole: its resend request waits too
    for now in (0.3, 0.7, 1.2):  # past the keepalive
        if now >= s.next_deadline():
            s.tick(now)
        assert _acks(s) == []
    s.ack_output(Unwritten.NONE, 1.3)
    assert s.next_deadline() == pytest.approx(1.3 + GAP)
    s.tick(1.3 + GAP)
    acks = _acks(s)
    assert [(a.acked, a.want, a.resend) for a in acks] == [(41, 42, True)]


def test_a_newer_ack_asks_for_the_resend_the_waiting_one_asked_for() -> None:
    s = _connected()
    _card(s, 40, 0.03)
    _card(s, 42, 0.05)  # 41 missing: a resend request at once
    assert [(a.want, a.resend) for a in _acks(s)] == [(41, True)]
    assert s.stats.resends == 1
    s.ack_output(Unwritten.WAITING, 0.05)  # it waits for room
    s.ack(40, 0.075)  # the consumer's ack, 25 ms on: a newer ACK, which replaces the waiting one
    assert [(a.acked, a.want, a.resend) for a in _acks(s)] == [(40, 41, True)]
    assert s.stats.resends == 1  # the same request: the shoe reads it once


def test_an_ack_after_one_that_left_asks_for_a_resend_only_when_one_is_due() -> None:
    """The same steps with the port taking every ACK: the consumer's ack does not repeat the
    resend request 25 ms after it (the resend timer repeats it, RESEND_HOLDOFF after the last)."""
    s = _connected()
    _card(s, 40, 0.03)
    _card(s, 42, 0.05)
    assert [(a.want, a.resend) for a in _acks(s)] == [(41, True)]
    s.ack(40, 0.075)
    assert [(a.acked, a.want, a.resend) for a in _acks(s)] == [(40, 41, False)]
