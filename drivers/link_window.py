"""The shoe link's sequence window: delivery of the shoe's events once each and in order, the
acks that tell the shoe what is durable, the resend requests for a hole, where a HELLO puts the
sequence (gaps, resets, a resume point), and the cards counted since a HELLO for a restart
(``docs/protocol.md`` sections 4-6 and 12).

:class:`SequenceWindow` is part of :class:`drivers.session.LinkSession`; no I/O. It sends its
ACK frames through the session's :class:`drivers.link_admission.Admission`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from drivers import protocol as p
from drivers.link_admission import Admission
from drivers.link_stats import LinkStats
from drivers.link_timers import ACK_KEEPALIVE, ACK_MIN_GAP, RESEND_HOLDOFF, STALL_S, WANT_WAIT_S
from drivers.port_output import Unwritten
from shoe_ctl.events import SequenceGap, ShoeRestarted

log = logging.getLogger("drivers.session")


@dataclass
class _Span:
    """Cards since a HELLO: that HELLO (its next sequence number, card total, boot count) and the
    CARD events delivered with a sequence number from its ``seq`` on."""

    hello: p.Hello
    cards: int = 0


@dataclass
class _LastAck:
    """The last ACK frame made on this link: what it said (``acked`` -1 before the first) and what
    the port has not taken of it yet (the transport says, :meth:`SequenceWindow.ack_output`)."""

    acked: int = -1
    want: int = 0
    resend: bool = False
    unwritten: Unwritten = Unwritten.NONE


class SequenceWindow:
    """Delivery, acks and resend requests for one shoe, across connections.

    :param events: the session's list of events for the consumer (events are appended).
    :param stats: the link's counters.
    :param sender: seals and queues the ACK frames.
    :param resume_seq: the last sequence durably recorded before a restart (the journal's).
    :param auto_ack: ack every event on delivery.
    :param window: how far (sequence numbers) an event may run ahead and still be held.
    """

    def __init__(self, events: list[Any], stats: LinkStats, sender: Admission, *, resume_seq: int | None,
                 auto_ack: bool, window: int) -> None:
        self._events = events
        self._stats = stats
        self._sender = sender
        self.resume_seq = resume_seq
        self.auto_ack = auto_ack
        self.window = window
        self.expected: int | None = None
        """The next sequence number to deliver (None before the first HELLO)."""
        self.acked = resume_seq or 0
        self.pending: dict[int, p.EventMsg] = {}
        """Events received ahead of :attr:`expected`, by sequence number."""
        self.hole_at: float | None = None
        """When the open hole (``pending`` not empty) was first seen."""
        self.stall_reported = False
        self._last = _LastAck()
        self._last_ack_tx = -math.inf
        self._span: _Span | None = None
        # this connection's: an ACK to send soon, a resend flag for it, the last resend asked
        self._ack_by = math.inf
        """An ACK is due by then at the latest (``ACK_MIN_GAP`` after the last one allowing;
        ``-inf``: as soon as that allows; ``inf``: nothing asks for one)."""
        self._ack_resend = False
        self._resend_want: int | None = None
        self._resend_at = 0.0
        self.names_foreign = False
        """The shoe's HELLO offered ``names-foreign``: every ACK says the host takes FOREIGN
        (flag bit 1; docs/protocol.md section 16)."""

    def connection_made(self) -> None:
        """A new port connection: its ACK and resend state starts afresh."""
        self._ack_by = math.inf
        self._ack_resend = False
        self._resend_want = None
        self._resend_at = 0.0
        self._last.unwritten = Unwritten.NONE
        self._last.resend = False

    # ------------------------------------------------------------------ events in

    def on_event(self, msg: p.EventMsg, now: float) -> None:
        """An event of the shoe, admitted: delivered in order, held when early, dropped when seen."""
        expected = self.expected
        assert expected is not None
        seq = msg.seq
        if seq < expected:
            self._stats.duplicates_dropped += 1
            self._ack_by = -math.inf  # tell the shoe what we have
            return
        if seq > expected:
            if seq - expected > self.window:
                self._stats.out_of_window += 1
            elif seq in self.pending:
                self._stats.duplicates_dropped += 1
            else:
                if not self.pending or self.hole_at is None:
                    self.hole_at, self.stall_reported = now, False  # a hole opens: reported STALL_S on
                self.pending[seq] = msg
            self.request_resend(now)
            return
        self._deliver(msg)
        expected += 1
        pending = self.pending
        hole = bool(pending)
        while expected in pending:
            self._deliver(pending.pop(expected))
            expected += 1
        self.expected = expected
        if pending:
            self.request_resend(now)
        elif hole:
            self._ack_by = -math.inf  # a hole filled: the shoe, resending, hears it soon
        else:
            self._ack_by = min(self._ack_by, now + WANT_WAIT_S)  # said with the consumer's ack, or then

    def _deliver(self, msg: p.EventMsg) -> None:
        span = self._span
        if span is not None and msg.seq >= span.hello.seq and isinstance(msg, p.CardMsg):
            span.cards += 1
        self._events.append(p.to_event(msg))
        self._stats.delivered += 1
        if self.auto_ack:
            self.acked = msg.seq

    def on_hello(self, hello: p.Hello, prev: p.Hello | None) -> tuple[list[str], int | None, bool, bool]:
        """Where ``hello`` (accepted) puts the sequence: ``(notes, gap_from, sequence_reset,
        restarted)`` — the notes for the ``connected`` event, the first event the shoe lost (None:
        none), whether its numbering started over, whether it restarted since ``prev``."""
        notes: list[str] = []
        gap_from: int | None = None
        seq_reset = False
        if self.expected is None:
            resume = self.resume_seq
            if resume is None:
                self.expected = hello.first_seq
            elif resume > hello.seq - 1:
                notes.append(f"resume point {resume} is beyond the shoe's last sequence {hello.seq - 1}:"
                             " another or reset shoe; resume ignored")
                seq_reset = True
                self.expected = hello.first_seq
                self.acked = 0
            else:
                self.expected = resume + 1
                if hello.first_seq > self.expected:
                    gap_from = self.expected
        elif hello.seq < self.expected:
            # its next sequence is below what was already received: the shoe lost its
            # non-volatile counter and reuses old numbers; they are new events, not duplicates
            notes.append(f"shoe's sequence numbers went back (next {hello.seq}, host had received up to "
                         f"{self.expected - 1}): its counter was reset; starting over from {hello.first_seq}, "
                         "events it held may be lost")
            log.warning("shoe %s: sequence went back from %d to %d", hello.serial, self.expected, hello.seq)
            self._stats.gaps += 1
            seq_reset = True
            self.expected = hello.first_seq
            self.acked = 0
            self.pending.clear()
        elif hello.first_seq > self.expected:
            gap_from = self.expected
        same_shoe = prev is not None and prev.serial == hello.serial and prev.boot_id != hello.boot_id
        if same_shoe:
            notes.append(f"shoe restarted (boot {hello.boot_id:08x})")
        if gap_from is not None:
            notes.append(f"events {gap_from}..{hello.first_seq - 1} lost by the shoe")
            self._stats.gaps += 1
            self.expected = hello.first_seq
        for seq in [s for s in self.pending if s < self.expected]:
            del self.pending[seq]
        return notes, gap_from, seq_reset, same_shoe and not seq_reset

    def gap_event(self, gap_from: int, hello: p.Hello) -> None:
        """The events ``gap_from`` .. before ``hello.first_seq`` are lost: a
        :class:`~shoe_ctl.events.SequenceGap`."""
        self._events.append(SequenceGap(gap_from, hello.first_seq))

    def resume_span(self, before: p.Hello) -> None:
        """The shoe as it was before the host started (``before``: its boot, counts unknown):
        the first HELLO's restart is counted from it."""
        if self._span is None:
            self._span = _Span(before)

    def note_span(self, hello: p.Hello, restarted: bool) -> None:
        """A HELLO: when the shoe restarted, post :class:`ShoeRestarted` at once (after the
        connected event and any gap, before every event that follows); the counting of cards
        starts again from this HELLO."""
        span = self._span
        self._span = _Span(hello)
        if not restarted or span is None:
            return
        a = span.hello
        counted = None
        if a.card_total is not None and hello.card_total is not None:
            counted = (hello.card_total - a.card_total) % (p.SEQ_MAX + 1)
        # events made before this HELLO that the shoe still holds and will resend
        in_flight = max(0, hello.seq - max(self.expected or 0, hello.first_seq))
        self._stats.restarts += 1
        self._events.append(ShoeRestarted(hello.serial, a.boot_id, hello.boot_id, a.boot_count, hello.boot_count,
                                          counted, span.cards, "counts-unpowered" in (hello.caps or ()),
                                          in_flight))

    # ------------------------------------------------------------------ acks and resends

    def ack(self, seq: int, now: float, connected: bool) -> None:
        """The consumer's cumulative ack of ``seq`` (an ACK soon when ``connected``).

        :raises ValueError: ``seq`` was never delivered.
        """
        delivered = (self.expected or 1) - 1
        if seq > max(delivered, self.acked):
            raise ValueError(f"cannot ack seq {seq}: only {delivered} delivered")
        if seq > self.acked:
            self.acked = seq
            if connected and self.expected is not None:
                self.ack_soon(now)

    def ack_output(self, unwritten: Unwritten, now: float) -> None:
        """What the port has not taken of the last ACK made, at ``now`` (the transport tells when
        it changes; docs/protocol.md section 7). An ACK that waited for room leaves when the port
        takes it, and the next one goes out :data:`ACK_MIN_GAP` after that, not after it was made;
        while one is partly written no other is made (it could only follow at once)."""
        last = self._last
        if unwritten is Unwritten.NONE and last.unwritten is not Unwritten.NONE:
            self._last_ack_tx = max(self._last_ack_tx, now)
        last.unwritten = unwritten

    def _may_send(self, now: float) -> bool:
        """An ACK may be made at ``now``: :data:`ACK_MIN_GAP` after the last one left, and none is
        partly written."""
        return now >= self._last_ack_tx + ACK_MIN_GAP and self._last.unwritten is not Unwritten.BEGUN

    def request_resend(self, now: float) -> None:
        """Ask the shoe to resend from :attr:`expected`: at once, or in the next ACK."""
        if self.expected == self._resend_want and now < self._resend_at + RESEND_HOLDOFF:
            return
        if not self._may_send(now):
            self._ack_resend = True  # the next ACK asks (20 ms after the last one)
            return
        self.send_ack(now, resend=True)

    def ack_soon(self, now: float, resend: bool = False) -> None:
        """An ACK now, or, within ``ACK_MIN_GAP`` of the last one, in the next one (what
        changes meanwhile goes out together; the resend flag is kept)."""
        if self._may_send(now):
            self.send_ack(now, resend)
        else:
            self._ack_by = -math.inf
            self._ack_resend = self._ack_resend or resend

    def send_ack(self, now: float, resend: bool = False) -> None:
        """An ACK frame now: acked, want, and the resend flag when asked or a hole is open. It
        replaces an ACK still waiting for room (docs/protocol.md section 7), so it also asks what
        that one asked: a resend from the same ``want``, or while a hole is open."""
        expected = self.expected
        if expected is None:
            return
        resend = resend or (self._ack_resend and bool(self.pending))
        last = self._last
        carried = (not resend and last.resend and last.unwritten is Unwritten.WAITING
                   and (expected == self._resend_want or bool(self.pending)))
        self._ack_by = math.inf
        self._ack_resend = False
        if resend or carried:
            self._resend_want = expected
            self._resend_at = now
            if not carried:  # (the one it replaces was counted, and never reaches the shoe)
                self._stats.resends += 1
        acked = min(self.acked, expected - 1)
        sender = self._sender
        sender.send(p.Ack(sender.next_seq(), acked, expected, resend or carried, self.names_foreign))
        self._stats.acks += 1
        last.acked, last.want, last.resend = acked, expected, resend or carried
        self._last_ack_tx = now

    # ------------------------------------------------------------------ timers (drivers.link_timers)

    def ack_due(self) -> float:
        """When an ACK is due: soon after a change the shoe has not been told (:data:`ACK_MIN_GAP`
        after the last ACK); a ``want`` that moved alone waits up to :data:`WANT_WAIT_S` for the
        consumer's ack of those events, to go out in one ACK with it; else a keepalive."""
        last = self._last
        if last.unwritten is Unwritten.BEGUN:
            return math.inf  # none until that one is written (ack_output)
        soon = self._last_ack_tx + ACK_MIN_GAP
        by = self._ack_by
        if self._ack_resend or self.acked > last.acked or (by == math.inf and self.expected != last.want):
            return soon
        if by < math.inf:
            return max(soon, by)
        return self._last_ack_tx + ACK_KEEPALIVE

    def resend_due(self) -> float:
        """While a hole is open: when the resend request may be repeated."""
        if not self.pending or self._last.unwritten is Unwritten.BEGUN:
            return math.inf
        held = self._resend_at + RESEND_HOLDOFF if self.expected == self._resend_want else -math.inf
        return max(held, self._last_ack_tx + ACK_MIN_GAP)

    def stall_due(self) -> float:
        """When an open hole, not yet reported, has stalled the events."""
        if self.pending and self.hole_at is not None and not self.stall_reported:
            return self.hole_at + STALL_S
        return math.inf

    def stalled(self, now: float) -> bool:
        """True when a hole has been open for ``STALL_S`` at ``now`` (a hole filled is forgotten)."""
        if not self.pending:
            self.hole_at, self.stall_reported = None, False
        return self.hole_at is not None and now >= self.hole_at + STALL_S
