"""The shoe link's writes to a device port, which never wait for room: a frame goes out in one
non-blocking ``os.write`` when the port's output buffer takes it; what a full buffer leaves (a shoe
that stopped reading, a stalled adapter) waits here, in order, and the link's reader writes it when
its ``select`` says the port has room. Meanwhile only the newest frame of each type a newer one
supersedes is kept (:data:`LATEST_ONLY`), and at most :data:`MAX_WAITING` frames in all.
docs/protocol.md, section 7.
"""

from __future__ import annotations

import os
from collections import deque
from enum import IntEnum

from drivers import protocol as p
from drivers.link_stats import LinkStats

LATEST_ONLY = frozenset({p.T_HOST_HELLO, p.T_ACK, p.T_LED, p.T_RESET, p.T_PAIR})
"""Frame types of which only the newest waits: a newer one replaces one not yet begun. Each says
all the host wants of its kind (docs/protocol.md, sections 4, 14 and 15): an ACK everything an
older one says; LED the latest pattern and RESET_COUNTER the one reset the host wants, each repeated
until the shoe reports it; HOST_HELLO a fresh challenge, which the shoe answers with a HELLO and a
resend of its unacked events and which ends its session, so a waiting older one only costs a
round trip and a resend; PAIR the secret the host speaks under from then on, which a shoe in
pairing mode must read first, since it takes the first PAIR it reads and no other (the session
makes a new one only once the shoe answered under the last, so one waits at most anyway). Every
type the host sends is among them."""

MAX_WAITING = 16
"""Frames that wait for room at most; past it the oldest one not yet begun and not of
:data:`LATEST_ONLY` is dropped (a frame lost on the line, as the protocol allows). A waiting
frame of :data:`LATEST_ONLY` stays: it is the newest of its type, which a dropped one would leave
the shoe without until the next (an ACK's keepalive is 0.5 s, past the shoe's 0.3 s resend
timeout; a PAIR is not sent again). As every type the host sends is of :data:`LATEST_ONLY`, at
most one frame of each waits (five), below the cap: it bounds a frame of any other type."""


class Unwritten(IntEnum):
    """How much of a frame of one type the port has not taken yet (:meth:`PortOutput.unwritten`)."""

    NONE = 0
    """Every frame of the type handed over is written whole."""
    WAITING = 1
    """One waits whole: a newer one of its type (:data:`LATEST_ONLY`) replaces it."""
    BEGUN = 2
    """One is partly written: its rest goes out before any other frame, and none replaces it."""


def frame_type(frame: bytes) -> int:
    """The message type of a frame as it is sent (``0x00 COBS(body) 0x00``): the body's first byte,
    which is never zero and so is the first byte of COBS's first run; 0 for anything else."""
    return frame[2] if len(frame) > 2 and frame[1] > 1 else 0


def write_some(fd: int, data: bytes) -> int:
    """Bytes of ``data`` the port took now (0: its output buffer is full)."""
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0


class PortOutput:
    """The frames for one device port (its descriptor, non-blocking as pyserial opens it); every
    method runs under the link's lock.

    :param fd: the port's descriptor.
    :param stats: counts each frame written whole (``frames_out``).
    """

    __slots__ = ("fd", "stats", "_waiting", "_rest", "_rest_kind", "dropped")

    def __init__(self, fd: int, stats: LinkStats) -> None:
        self.fd = fd
        self.stats = stats
        self._waiting: deque[tuple[int, bytes]] = deque()  # (type, frame), none of it written yet
        self._rest = b""  # the unwritten end of the frame being written
        self._rest_kind = 0  # that frame's type
        self.dropped = 0
        """Frames dropped while waiting: replaced by a newer one of their type, or past :data:`MAX_WAITING`."""

    @property
    def waiting(self) -> bool:
        """True while bytes wait for room in the port's output buffer."""
        return bool(self._rest or self._waiting)

    def unwritten(self, kind: int) -> Unwritten:
        """How much of the frames of type ``kind`` the port has not taken yet."""
        if self._rest and self._rest_kind == kind:
            return Unwritten.BEGUN
        for other, _frame in self._waiting:
            if other == kind:
                return Unwritten.WAITING
        return Unwritten.NONE

    def send(self, frame: bytes) -> None:
        """Write ``frame`` now as far as the port takes it, without waiting; when bytes already wait
        for room it waits behind them (replacing a waiting frame of its type, :data:`LATEST_ONLY`).

        :raises OSError: the port is lost.
        """
        if self.waiting:
            kind = frame_type(frame)
            if kind in LATEST_ONLY:
                for i, (other, _) in enumerate(self._waiting):
                    if other == kind:
                        del self._waiting[i]
                        self.dropped += 1
                        break
            if len(self._waiting) >= MAX_WAITING:  # the oldest other frame goes, never the newest of a type
                for i, (other, _) in enumerate(self._waiting):
                    if other not in LATEST_ONLY:
                        del self._waiting[i]
                        self.dropped += 1
                        break
            self._waiting.append((kind, frame))
            return
        n = write_some(self.fd, frame)
        if n == len(frame):
            self.stats.frames_out += 1
        elif n:
            self._rest = frame[n:]
            self._rest_kind = frame_type(frame)
        else:
            self._waiting.append((frame_type(frame), frame))

    def drain(self) -> None:
        """Write what waits, in order, as far as the port takes it now (the reader, once its
        ``select`` said the port has room).

        :raises OSError: the port is lost.
        """
        while self._rest or self._waiting:
            data = self._rest or self._waiting[0][1]
            n = write_some(self.fd, data)
            if not n:
                return
            if not self._rest:
                self._rest_kind = self._waiting.popleft()[0]  # begun: no newer frame replaces it now
            self._rest = data[n:]
            if self._rest:
                return
            self.stats.frames_out += 1
