"""Fault injection for the virtual shoe: the fault spec (:class:`Faults`) and the line noise.

:class:`Faults` says what goes wrong, by rate or by schedule: on the line (both directions,
applied by :class:`LineNoise` in :mod:`hil.shoe_line`), on the cards and as shoe faults
(applied by :class:`hil.shoe_device.ShoeDevice` at each pull), and to the link (unplug, reboot).
The spec syntax and the table of keys are in ``docs/protocol.md`` section 8.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field, fields

from drivers.exc import FaultSpecError

CARD_ACTIONS = ("unreadable", "double-pull", "duplicate", "foreign")
FAULT_ACTIONS = ("misread", "jam", "cover-open", "reader-error")
LINK_ACTIONS = ("unplug", "reboot", "reboot-keep")
"""``reboot`` loses the unacked buffer; ``reboot-keep`` keeps it (a shoe with keeps-buffer)."""
SCHEDULABLE = CARD_ACTIONS + FAULT_ACTIONS + LINK_ACTIONS


@dataclass
class Faults:
    """What goes wrong, by rate or by schedule.

    Line faults, probabilities per byte, in both directions: ``corrupt`` (the byte is XORed with
    a random nonzero value), ``drop`` (the byte is lost), ``garbage`` (a random byte is inserted
    before it). ``delay``: probability per frame that it waits ``delay_ms`` before it is written.

    Card faults, probabilities per pull: ``unreadable`` (the card leaves unread), ``double_pull``
    (two cards leave together; a DOUBLE_PULL fault and both cards are reported), ``duplicate`` (a
    copy of a card already dealt leaves instead of the next card), ``foreign`` (a card from another
    deck: one not loaded in this stub), and fault reports ``misread``, ``jam``, ``cover_open``,
    ``reader_error`` (reported and cleared at once).

    Link faults: ``unplug_every`` / ``reboot_every`` N pulls (a reboot loses the unacked buffer);
    the shoe is away for ``unplug_ms`` milliseconds.

    ``schedule``: pull number (1-based) -> actions from :data:`SCHEDULABLE`, applied on that pull
    (card actions) or after it (faults, unplug, reboot).
    """

    corrupt: float = 0.0
    drop: float = 0.0
    garbage: float = 0.0
    delay: float = 0.0
    delay_ms: float = 20.0
    unreadable: float = 0.0
    double_pull: float = 0.0
    duplicate: float = 0.0
    foreign: float = 0.0
    misread: float = 0.0
    jam: float = 0.0
    cover_open: float = 0.0
    reader_error: float = 0.0
    unplug_every: int = 0
    reboot_every: int = 0
    unplug_ms: float = 0.0
    schedule: dict[int, list[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str | None) -> Faults:
        """Parse ``key=value,key=value``; keys are the field names with ``-`` for ``_``
        (``unplug-every=1000``), and ``ACTION-at=N:N:N`` schedules an action at pull numbers.
        An empty spec or ``none`` is no faults.

        :raises FaultSpecError: an unknown key, a bad number, a probability outside 0..1.
        """
        faults = cls()
        if not spec or spec.strip().lower() == "none":
            return faults
        names = {f.name: f for f in fields(cls) if f.name != "schedule"}
        for item in spec.split(","):
            item = item.strip()
            if not item:
                continue
            key, sep, value = item.partition("=")
            key = key.strip().lower()
            if not sep:
                raise FaultSpecError(f"fault spec {spec!r}: {item!r} is not key=value")
            if key.endswith("-at"):
                action = key[:-3]
                if action not in SCHEDULABLE:
                    raise FaultSpecError(f"fault spec {spec!r}: unknown action {action!r} "
                                         f"(known: {', '.join(SCHEDULABLE)})")
                for n in value.split(":"):
                    try:
                        at = int(n)
                    except ValueError:
                        raise FaultSpecError(f"fault spec {spec!r}: {key}: {n!r} is not a pull number") from None
                    if at < 1:
                        raise FaultSpecError(f"fault spec {spec!r}: {key}: pull numbers start at 1")
                    faults.schedule.setdefault(at, []).append(action)
                continue
            attr = key.replace("-", "_")
            f = names.get(attr)
            if f is None:
                known = ", ".join(sorted(n.replace("_", "-") for n in names))
                raise FaultSpecError(f"fault spec {spec!r}: unknown key {key!r} (known: {known}, ACTION-at)")
            try:
                number: float = int(value) if f.type in (int, "int") else float(value)
            except ValueError:
                raise FaultSpecError(f"fault spec {spec!r}: {key}={value!r} is not a number") from None
            if number < 0 or (f.type in (float, "float") and not attr.endswith("_ms") and number > 1):
                raise FaultSpecError(f"fault spec {spec!r}: {key}={value} out of range")
            setattr(faults, attr, number)
        return faults

    @property
    def line_noise(self) -> bool:
        """True when any line fault is set."""
        return bool(self.corrupt or self.drop or self.garbage or self.delay)


class LineNoise:
    """Line faults for one direction: corrupt, drop and garbage bytes at the rates of a
    :class:`Faults`, drawn as geometric gaps so that a clean byte costs nothing; ``delay`` per frame.

    :param faults: the rates (``corrupt``, ``drop``, ``garbage`` per byte; ``delay`` per frame).
    :param rng: the random source (seeded by the caller for a repeatable run).
    """

    def __init__(self, faults: Faults, rng: random.Random) -> None:
        self.rng = rng
        self.rates = (faults.corrupt, faults.drop, faults.garbage)
        self.next = [self._gap(r) for r in self.rates]
        self.delay = faults.delay
        self.delay_s = faults.delay_ms / 1000.0
        self.counts = [0, 0, 0]

    def _gap(self, rate: float) -> float:
        if rate <= 0:
            return math.inf
        if rate >= 1:
            return 0
        return int(math.log(1.0 - self.rng.random()) / math.log(1.0 - rate))

    def apply(self, data: bytes) -> bytes:
        """``data`` as it comes out of the line (the same object when no fault hit it);
        :attr:`counts` adds the corrupted, dropped and inserted bytes."""
        n = len(data)
        if min(self.next) >= n:
            self.next = [x - n for x in self.next]
            return data
        hits: list[tuple[int, int]] = []
        for kind in range(3):
            while self.next[kind] < n:
                hits.append((int(self.next[kind]), kind))
                self.next[kind] += 1 + self._gap(self.rates[kind])
            self.next[kind] -= n
        out = bytearray(data)
        for pos, kind in sorted(hits, reverse=True):
            if pos >= len(out):
                continue
            self.counts[kind] += 1
            if kind == 0:
                out[pos] ^= self.rng.randrange(1, 256)
            elif kind == 1:
                del out[pos]
            else:
                out.insert(pos, self.rng.randrange(256))
        return bytes(out)

    def maybe_delay(self) -> None:
        """Sleep ``delay_ms`` with probability ``delay`` (once per frame, before it is written)."""
        if self.delay and self.rng.random() < self.delay:
            time.sleep(self.delay_s)
