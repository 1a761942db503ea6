"""The shoe link's status (``connected``, ``degraded``, ``disconnected``) and the refusals it
reports, decided from the line, the sequence window and the silence (``docs/protocol.md``
section 7). :class:`LinkHealth` is part of :class:`drivers.session.LinkSession`; no I/O.
"""

from __future__ import annotations

import math
from typing import Any

from drivers.link_admission import Admission
from drivers.link_line import Line
from drivers.link_stats import LinkStats
from drivers.link_timers import MALFORMED_S, SILENT_HELLO_INTERVAL, SWITCH_GRACE_S
from drivers.link_window import SequenceWindow
from shoe_ctl.events import LinkChanged, LinkStatus, ShoeInfo


def no_secret(key_file: str | None = None) -> str:
    """What a link without a secret says of a shoe that answers only in sealed (version-2) frames
    (a new host, a wiped key file, or a bench's ``[shoe] auth = "off"`` before a paired shoe),
    naming ``key_file`` (where this host keeps that shoe's secret) or, unknown, the default place."""
    where = key_file or "[shoe] secrets/<serial>.key (/var/lib/shoe-ctl/shoes/ by default)"
    return ("the shoe answers sealed frames: it is paired with a secret this host does not have; pair it again "
            f"(docs/install-pi.md, 4b) or restore the key file {where}")


_DEFECT = "the shoe sends frames that pass the CRC but break protocol v1 (a firmware defect, not line noise)"


class LinkHealth:
    """The status last reported and the timers that change it.

    :param name: the port's name, for the texts.
    :param events: the session's list of events (each change is a ``LinkChanged``).
    :param silence_s: seconds without a valid frame before ``degraded``, and without a HELLO
        before a ``disconnected`` event says nobody answers.
    :param key_file: where this host keeps the shoe's secret, named when a paired shoe answers a
        link without one (:func:`no_secret`).
    """

    def __init__(self, name: str, events: list[Any], stats: LinkStats, admission: Admission,
                 window: SequenceWindow, silence_s: float, key_file: str | None = None) -> None:
        self.name = name
        self.key_file = key_file
        self._events = events
        self._stats = stats
        self._admission = admission
        self._window = window
        self.silence_s = silence_s
        self.status: LinkStatus | None = None
        self.line: Line | None = None
        """The open port's line (None before the first)."""
        self.shoe: ShoeInfo | None = None
        """The last shoe accepted, named when the link recovers."""

    def set(self, status: LinkStatus, detail: str, info: ShoeInfo | None = None, force: bool = False,
            sequence_reset: bool = False) -> None:
        """Report ``status`` with ``detail`` when it changed (or ``force``)."""
        if status == self.status and not force:
            return
        self.status = status
        if status == LinkStatus.DEGRADED:
            self._stats.degraded += 1
        self._events.append(LinkChanged(status, detail, info, sequence_reset=sequence_reset,
                                        auth=self._admission.auth))

    def refused(self, code: str, detail: str, info: ShoeInfo | None, in_session: bool) -> None:
        """A refusal reported: a ``LinkChanged`` with ``refused``, the status kept while a HELLO
        of this connection stands (``in_session``), else ``disconnected``."""
        status = self.status if in_session and self.status is not None else LinkStatus.DISCONNECTED
        self.status = status
        self._events.append(LinkChanged(status, detail, info, refused=code, auth=self._admission.auth))

    # ------------------------------------------------------------------ timers (drivers.link_timers)

    def quiet_due(self) -> float:
        """Before a HELLO: when the port has been open ``silence_s`` without one (once)."""
        line = self.line
        return math.inf if line is None or line.quiet_reported else line.opened + self.silence_s

    def quiet_fire(self, now: float) -> None:
        """The port opened but nothing on it answers as a shoe (wrong device, shoe off, wrong baud
        rate): say so once per connection instead of waiting in silence."""
        line = self.line
        assert line is not None
        line.quiet_reported = True
        foreign = self._admission.foreign_sealed
        if foreign and self._admission.secret is None:
            self.set(LinkStatus.DISCONNECTED, f"port {self.name} open but no HELLO from a shoe for "
                     f"{now - line.opened:.1f} s ({foreign} sealed frames unchecked, {self._stats.bad_frames} bad "
                     f"frames so far): {no_secret(self.key_file)}", force=True)
            return
        if foreign:
            self._admission.refuse("auth-failed", f"the shoe on port {self.name} seals its frames with a secret "
                                   "this table does not have (a shoe paired with another table, or a swapped "
                                   f"shoe): {foreign} frames refused")
        self.set(LinkStatus.DISCONNECTED, f"port {self.name} open but no HELLO from a shoe for "
                 f"{now - line.opened:.1f} s ({self._stats.bad_frames} bad frames so far): is the shoe on this "
                 "port, powered, at this baud rate?", force=True)

    def due(self) -> float:
        """In a session: when the status may change: at once for the line quality, at the stall of
        a hole, at the silence (and the HOST_HELLOs that follow it)."""
        line = self.line
        assert line is not None
        status = self.status
        window = self._window
        if line.quality > 0.3 or (window.pending and window.stall_reported):
            if status != LinkStatus.DEGRADED:
                return -math.inf
        elif status == LinkStatus.DEGRADED and line.quality < 0.1:
            return -math.inf
        silent_at = line.last_rx + self.silence_s
        due = self._rechallenge_at(silent_at)
        if status != LinkStatus.DEGRADED and silent_at < due:
            due = silent_at
        stall = window.stall_due()
        return stall if stall < due else due

    def _rechallenge_at(self, silent_at: float) -> float:
        """When a shoe silent since ``silent_at`` is challenged again: a second after the last
        HOST_HELLO; in version 2 never before ``SWITCH_GRACE_S`` after the silence began, since the
        challenge ends the session the shoe holds (docs/protocol.md section 14, "Session switch")."""
        admission = self._admission
        after_hello = admission.hello_at + SILENT_HELLO_INTERVAL
        after_grace = silent_at + SWITCH_GRACE_S if admission.secret is not None else silent_at
        return after_grace if after_grace > after_hello else after_hello  # max() without its call

    def fire(self, now: float) -> None:
        """The status the stall, the silence or the line's quality asks for at ``now``; a silent
        shoe is challenged again every ``SILENT_HELLO_INTERVAL`` (:meth:`_rechallenge_at`)."""
        line = self.line
        assert line is not None
        window = self._window
        silent_at = line.last_rx + self.silence_s
        if window.stalled(now) and now < silent_at:
            assert window.hole_at is not None
            window.stall_reported = True
            why = f"; {_DEFECT}: {line.malformed}" if line.malformed else ""
            self.set(LinkStatus.DEGRADED, f"events stalled: event {window.expected} has not arrived whole for "
                     f"{now - window.hole_at:.1f} s, {len(window.pending)} held behind it{why}")
        elif now >= silent_at:
            if now >= self._rechallenge_at(silent_at):
                self._admission.host_hello_again(now)
            self.set(LinkStatus.DEGRADED, f"no frame from the shoe for {now - line.last_rx:.1f} s")
        elif line.quality > 0.3:
            if line.malformed and now - line.malformed_at < MALFORMED_S:
                self.set(LinkStatus.DEGRADED, f"{_DEFECT}: {line.malformed}")
            else:
                self.set(LinkStatus.DEGRADED, f"noisy line: {line.quality:.0%} of recent frames bad")
        elif self.status == LinkStatus.DEGRADED and line.quality < 0.1:
            self.set(LinkStatus.CONNECTED, "link recovered", self.shoe)
