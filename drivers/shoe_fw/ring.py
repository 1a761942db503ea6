"""The shoe's unacked events and their delivery (docs/protocol.md section 5).

:class:`EventRing` holds ``(seq, type, payload)`` entries oldest first, in ``capacity`` slots
allocated once (a board's memory is bounded; the link core decides what happens when it is
full), with the delivery state of section 5: the host's ``want``, the resend timer and the last
resend request acted on.
"""

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    Entry = tuple[int, int, bytes]
    """An event held: (seq, type, payload)."""


class EventRing:
    """``capacity`` slots of held events, oldest first, and their delivery state."""

    def __init__(self, capacity: int, now: float = 0.0) -> None:
        self.capacity = capacity
        self._slots = [None] * capacity  # type: list[Entry | None]
        self._head = 0
        self._count = 0
        self.want = 1
        """The host's ``want``: it has received every event below it."""
        self.progress_at = now
        """The resend timer: when ``want`` last moved up, or the last resend."""
        self._request = (0, 0.0)

    def oldest(self, default: int) -> int:
        """The oldest held event's number, or ``default`` (``next_seq``) when none is held."""
        return self.entry(0)[0] if self._count else default

    def hold(self, entry: "Entry", now: float) -> None:
        """Hold a new event (the resend timer starts when it enters an empty buffer)."""
        if not self._count:
            self.progress_at = now
        self.push(entry)

    def acked(self, acked: int, want: int, now: float) -> None:
        """An ACK: forget every event up to ``acked``; ``want`` only moves up (and restarts
        the resend timer when it does)."""
        self.free_through(acked)
        if want > self.want:
            self.want = want
            self.progress_at = now

    def resend_asked(self, want: int, now: float, holdoff: float) -> bool:
        """True when a resend request for ``want`` is to be acted on (not the same ``want``
        within ``holdoff`` seconds of the last one acted on)."""
        last_want, last_at = self._request
        if want != last_want or now - last_at >= holdoff:
            self._request = (want, now)
            return True
        return False

    def resend_due(self, next_seq: int, resend_s: float) -> "float | None":
        """When the resend on timeout is due: events held that the host has not received."""
        if self._count and next_seq > self.want:
            return self.progress_at + resend_s
        return None

    def from_want(self, want: int, limit: int, now: float) -> "list[Entry]":
        """Up to ``limit`` held events from ``want`` on, to resend (the resend timer restarts)."""
        out = []  # type: list[Entry]
        for i in range(self._count):
            entry = self.entry(i)
            if entry[0] >= want and len(out) < limit:
                out.append(entry)
        self.progress_at = now
        return out

    def __len__(self) -> int:
        return self._count

    def full(self) -> bool:
        """True when every slot holds an event."""
        return self._count >= self.capacity

    def entry(self, i: int) -> "Entry":
        """The ``i``-th held event, oldest first (0 <= i < len)."""
        entry = self._slots[(self._head + i) % self.capacity]
        assert entry is not None
        return entry

    def push(self, entry: "Entry") -> None:
        """Hold a new event (the caller checks :meth:`full` first)."""
        self._slots[(self._head + self._count) % self.capacity] = entry
        self._count += 1

    def free_through(self, acked: int) -> None:
        """Forget every held event numbered ``acked`` or below."""
        while self._count and self.entry(0)[0] <= acked:
            self._slots[self._head] = None
            self._head = (self._head + 1) % self.capacity
            self._count -= 1

    def clear(self) -> None:
        """Forget every held event."""
        for i in range(self.capacity):
            self._slots[i] = None
        self._head = 0
        self._count = 0

    def held(self) -> "list[Entry]":
        """The held events, oldest first (a new list)."""
        out = []  # type: list[Entry]
        for i in range(self._count):
            out.append(self.entry(i))
        return out
