"""A shoe that stops reading fills the host's output buffer (the real pty). The journal's writer
commits each card and writes its ACK from its own thread; the ACK never waits for room, so the
commits behind it go on (docs/protocol.md, section 7; docs/journal.md, *The writer*). While the
port stays full only the newest ACK waits; once the shoe reads again it goes out and acks every
card. The link's write timeout is taken away: a write that waited for room would wait for good."""

from __future__ import annotations

import logging
import os
import queue
from pathlib import Path
from typing import Any

import pytest
from full_port import held_full
from waiting import card_reads, wait_for

from drivers import protocol as p
from drivers.shoe import ShoeLink
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.events import CardRead
from shoe_ctl.service.journal import Journal

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a pty: POSIX only")


def test_commits_and_their_acks_go_on_while_the_shoe_does_not_read(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="drivers.shoe")
    shoe = VirtualShoe(Deck.seeded(5), heartbeat_s=0.5).start()
    events: queue.Queue[Any] = queue.Queue()
    journal = Journal(tmp_path / "deaf.journal", table="t", profile="tda")
    try:
        with ShoeLink(shoe.url, events) as link:
            link.wait_connected(5.0)
            for _ in range(6):
                shoe.pull()
            cards = card_reads(events, 6)
            assert len(cards) == 6
            ser = link._ser
            assert ser is not None
            ser.write_timeout = None
            counts = link._session.stats  # read without the link's lock, which a waiting write would hold

            def journal_card(ev: CardRead) -> Any:  # as the controller does: the ack follows the commit
                return journal.submit([ev], on_durable=lambda _seqs: link.ack(ev.seq), linger=True)

            with shoe.line.lock, held_full(ser.fd):  # the shoe's thread stops at its next turn: it reads nothing
                acks = counts.acks
                for ev in cards[:4]:
                    journal_card(ev)
                assert journal.flush(timeout=30.0)
                # an ACK of them made, at once or by the reader's timer (the ACK spacing), and written
                # to the full port (a write that waits for room would hold the link from here on)
                assert wait_for(lambda: counts.acks > acks, 10.0)
                for ev in cards[4:]:  # commits after that ACK, each acked in its turn
                    entry = journal_card(ev)
                    assert journal.wait_written(entry, 30.0), "a commit waited behind an ACK on the full port"
                assert link.acked == cards[-1].seq
                out = link._idle.out
                assert out is not None
                # the newest ACK waits (made at once, or by the reader's timer within the ACK spacing)
                assert wait_for(lambda: p.T_ACK in [kind for kind, _frame in out._waiting], 10.0)
                with link._lock:
                    kinds = [kind for kind, _frame in out._waiting]
                assert kinds.count(p.T_ACK) == 1  # only the newest ACK waits
            assert shoe.wait_acked(10.0), "the newest ACK did not reach the shoe once it read again"
            assert shoe.unacked_count() == 0
            assert "output buffer is full" in caplog.text  # said once, when frames began to wait
            assert caplog.text.count("output buffer is full") == 1
            assert wait_for(lambda: "takes frames again" in caplog.text, 10.0)
    finally:
        journal.close()
        shoe.close()
