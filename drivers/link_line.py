"""One open port of the shoe link, as the session sees it: the frame decoder, when the last valid
frame came, the line's quality (a decaying share of bad frames), the last frame that broke the
protocol, and the drops counted by cause and by row of the constraint table (``docs/protocol.md``
sections 7 and 11). Part of :class:`drivers.session.LinkSession`; no I/O.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from drivers import protocol as p
from drivers.link_stats import LinkStats

log = logging.getLogger("drivers.session")


@dataclass
class Line:
    """What lives as long as one open port (times in seconds of the session's clock).

    :param opened: when the port opened.
    :param bad_base: the link's bad frames before this port (the decoder counts from 0).
    :param unknown_base: the link's unknown frames before this port.
    """

    opened: float
    bad_base: int
    unknown_base: int
    decoder: p.SealedDecoder = field(default_factory=p.SealedDecoder)
    quiet_reported: bool = False
    last_rx: float = 0.0
    quality: float = 0.0
    malformed: str = ""
    malformed_at: float = 0.0
    malformed_seen: int = 0
    hello_seen: bool = False
    rules_seen: dict[str, int] = field(default_factory=dict)
    drops_seen: int = 0
    """The decoder's dropped frames (bad and unknown) already counted into the link's stats."""

    def __post_init__(self) -> None:
        self.last_rx = self.opened

    def count_drops(self, stats: LinkStats, now: float) -> None:
        """Take the decoder's new drops into ``stats`` (bad frames, unknown types, rows of the
        constraint table) and the line's quality; a frame with a valid CRC that broke the protocol
        is kept as the cause a ``degraded`` status names."""
        dstats = self.decoder.stats
        self.drops_seen = dstats.bad_frames + dstats.unknown
        bad_now = self.bad_base + dstats.bad_frames
        if bad_now != stats.bad_frames:
            hit = 0.95 ** (bad_now - stats.bad_frames)
            self.quality = self.quality * hit + (1 - hit)
            stats.bad_frames = bad_now
        stats.unknown_frames = self.unknown_base + dstats.unknown
        for rule, n in dstats.rules.items():
            seen = self.rules_seen.get(rule, 0)
            if n != seen:
                self.rules_seen[rule] = n
                stats.rejected[rule] = stats.rejected.get(rule, 0) + n - seen
        if dstats.reasons.get("message", 0) != self.malformed_seen:
            self.malformed_seen = dstats.reasons["message"]
            self.malformed = dstats.last_malformed
            self.malformed_at = now

    def reject(self, stats: LinkStats, now: float, rule: str, text: str, name: str) -> None:
        """Drop a frame that breaks row ``rule`` of the constraint table in its context (the
        session's rows): counted as a bad frame, and named as a shoe defect by the ``degraded``
        status."""
        stats.rejected[rule] = stats.rejected.get(rule, 0) + 1
        stats.bad_frames += 1
        self.bad_base += 1
        self.quality = self.quality * 0.95 + 0.05
        self.malformed = f"{text} [{rule}]"
        self.malformed_at = now
        log.warning("shoe %s: %s [%s]", name, text, rule)
