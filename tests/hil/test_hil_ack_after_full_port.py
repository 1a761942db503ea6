"""A shoe that stops reading, then reads again (the real pty, its output held full with
``tcflow(TCOOFF)``): the ACK that waited goes out when the port takes it, and the next ACK,
asked for by the consumer's ack right then, waits ``ACK_MIN_GAP`` after it, by the link's own
clock, instead of following at once (docs/protocol.md sections 1 and 7); the shoe still gets
every card acked. And a newer ACK that replaces a waiting one that asks for a resend asks for
it too."""

from __future__ import annotations

import os
import queue
import time
from typing import Any

import pytest
from full_port import held_full
from waiting import card_reads, wait_for

from drivers import protocol as p
from drivers.link_timers import ACK_MIN_GAP
from drivers.link_window import SequenceWindow
from drivers.port_output import Unwritten
from drivers.shoe import IdleWait, ShoeLink
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.rules.cards import Card

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a pty: POSIX only")


def test_the_ack_after_a_drained_one_keeps_the_ack_spacing(monkeypatch: pytest.MonkeyPatch) -> None:
    shoe = VirtualShoe(Deck.seeded(7), heartbeat_s=0.5).start()
    events: queue.Queue[Any] = queue.Queue()
    made: list[tuple[float, int]] = []  # (the link's clock, acked) of every ACK the session makes
    send_ack = SequenceWindow.send_ack

    def record(window: SequenceWindow, now: float, resend: bool = False) -> None:
        send_ack(window, now, resend)
        made.append((now, window.acked))

    # on the class, before the link is made: its timer table holds the bound method
    monkeypatch.setattr(SequenceWindow, "send_ack", record)
    try:
        with ShoeLink(shoe.url, events) as link:
            link.wait_connected(5.0)
            for _ in range(3):
                shoe.pull()
            cards = card_reads(events, 3)
            assert len(cards) == 3
            ser = link._ser
            assert ser is not None
            port_fd = ser.fd
            written: list[float] = []  # when each write to the port returned
            real_write = os.write

            def write(fd: int, data: bytes) -> int:
                n = real_write(fd, data)
                if fd == port_fd:
                    written.append(time.monotonic())
                return n

            monkeypatch.setattr(os, "write", write)
            drained: list[float] = []
            real_read = IdleWait.read

            def read(idle: IdleWait, *args: Any) -> bytes:
                """The reader's turn; right after the turn that wrote what waited, the consumer
                acks the third card (its commit came then)."""
                data = real_read(idle, *args)
                if armed and not drained and idle.out is not None and not idle.out.waiting:
                    drained.append(time.monotonic())
                    link.ack(cards[2].seq)
                return data

            armed = False
            monkeypatch.setattr(IdleWait, "read", read)
            with shoe.line.lock, held_full(port_fd):  # the shoe's thread stops at its next turn
                link.ack(cards[0].seq)
                out = link._idle.out
                assert out is not None
                assert wait_for(lambda: out.unwritten(p.T_ACK) is not Unwritten.NONE, 10.0)
                link.ack(cards[1].seq)  # a newer ACK, made 20 ms on at the latest: it replaces the waiting one
                assert wait_for(lambda: made[-1][1] == cards[1].seq, 10.0)
                time.sleep(2 * ACK_MIN_GAP)  # (the next ack is not within the spacing of the one made)
                armed = True
            assert wait_for(lambda: drained, 10.0), "the port never took what waited"
            assert shoe.wait_acked(10.0), "the third card's ACK did not reach the shoe"
            assert shoe.unacked_count() == 0
            left = max(t for t in written if t <= drained[0])  # the drained ACK's last bytes went out
            after = [now for now, acked in made if now >= left]
            assert after, "no ACK after the drained one"
            assert after[0] - left >= ACK_MIN_GAP  # not at once: the spacing counts from when it left
    finally:
        shoe.close()


def _waiting_acks(link: ShoeLink) -> list[p.Ack]:
    """The ACK frames waiting for room in the link's output (the link's lock held)."""
    out = link._idle.out
    assert out is not None
    return [m for kind, frame in out._waiting if kind == p.T_ACK
            for m in p.FrameDecoder().feed(frame) if isinstance(m, p.Ack)]


def test_a_newer_ack_replacing_a_waiting_resend_request_still_asks_for_the_resend() -> None:
    """A hole opens while the shoe does not read: the ACK asking for a resend waits; the
    consumer's ack, 20 ms on, makes a newer ACK that replaces it, and that one asks for the resend
    too (before, it did not, and the shoe heard of the hole only from the resend timer's next ACK)."""
    shoe = VirtualShoe(Deck.seeded(8), heartbeat_s=0.5).start()
    events: queue.Queue[Any] = queue.Queue()
    try:
        with ShoeLink(shoe.url, events) as link:
            link.wait_connected(5.0)
            shoe.pull()
            cards = card_reads(events, 1)
            assert len(cards) == 1
            ser = link._ser
            master = shoe.line._master
            assert ser is not None and master is not None
            with shoe.line.lock, held_full(ser.fd):  # the shoe's thread stops at its next turn
                want = link._session._window.expected
                assert want is not None
                # the event after the next one comes first: a hole at `want`
                os.write(master, p.encode(p.CardMsg(want + 1, Card(5), "rfid", 9, 3)))
                assert wait_for(lambda: any(a.resend and a.want == want for a in _waiting_acks(link)), 10.0)
                with link._lock:  # the reader's timers wait: the consumer's ack comes first
                    time.sleep(2 * ACK_MIN_GAP)  # (past the ACK spacing: the ack makes an ACK at once)
                    link.ack(cards[0].seq)
                    acks = _waiting_acks(link)
                assert [(a.acked, a.want, a.resend) for a in acks] == [(cards[0].seq, want, True)]
    finally:
        shoe.close()
