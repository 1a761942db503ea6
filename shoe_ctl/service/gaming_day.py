"""The card room's gaming day: it starts at a configured local time in the room's time zone
(``[floor] gaming_day_start`` and ``time_zone``), not at midnight UTC. Used by ``shoe-ctl report
decks --day`` and by the floor's tags-at-two-tables check; described in docs/floor.md,
"The gaming day".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["GamingDay", "GamingDayError", "parse_gaming_day"]


class GamingDayError(ValueError):
    """A start time that is not ``HH:MM``, or a time zone the system does not know."""


@dataclass(frozen=True)
class GamingDay:
    """A gaming day beginning each day at ``start`` (local time) in ``zone``; the default is
    midnight UTC.

    A start that a clock change skips (02:30 on the night clocks go forward) is taken with the
    offset before the change; one that happens twice (clocks go back) is its first time. A day
    is then 23 or 25 hours long.
    """

    start: time = time(0, 0)
    zone: tzinfo = field(default=UTC)

    def _at(self, day: date) -> datetime:
        return datetime.combine(day, self.start, tzinfo=self.zone).astimezone(UTC)

    def window(self, day: date) -> tuple[datetime, datetime]:
        """``(begin, end)`` in UTC of gaming day ``day`` (named by the date it begins on): the
        instants ``begin <= t < end`` are of that day."""
        return self._at(day), self._at(day + timedelta(days=1))

    def day_of(self, when: float | datetime) -> date:
        """The gaming day an instant (seconds since the epoch, or an aware datetime) falls in."""
        at = when if isinstance(when, datetime) else datetime.fromtimestamp(when, UTC)
        local = at.astimezone(self.zone).date()
        for day in (local, local - timedelta(days=1), local + timedelta(days=1)):
            begin, end = self.window(day)
            if begin <= at < end:
                return day
        return local  # not reached: the three windows around a local date cover it

    def describe(self) -> str:
        """``06:00 Asia/Macau`` (the start and the zone's name)."""
        return f"{self.start.strftime('%H:%M')} {getattr(self.zone, 'key', None) or self.zone.tzname(None)}"


def parse_gaming_day(start: str = "00:00", zone: str = "UTC") -> GamingDay:
    """A :class:`GamingDay` from a start ``HH:MM`` (00:00..23:59) and an IANA zone name.

    :raises GamingDayError: naming the value and what is allowed.
    """
    try:
        hour, minute = (int(part) for part in start.split(":"))
        if len(start) != 5:
            raise ValueError(start)
        at = time(hour, minute)
    except ValueError:
        raise GamingDayError(f"{start!r} is not a time of day HH:MM (00:00..23:59)") from None
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise GamingDayError(f"{zone!r} is not a time zone this system knows (an IANA name: Asia/Macau, "
                             "America/New_York, UTC)") from None
    return GamingDay(at, tz)
