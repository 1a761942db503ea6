"""JSON text leaving the process in UTF-8 (the floor's MQTT payloads, the dealer display's events)
when a text in it holds a code point UTF-8 cannot encode: a lone surrogate (``"\\ud800"``), which a
Python text can hold (a path or an argument the system decoded with ``surrogateescape``, a JSON
``\\ud800`` escape read back). Such a code point is written U+FFFD, the replacement character,
nothing else of the text is changed, and one log line a minute per output names what and where.
See docs/floor.md, "Text UTF-8 cannot encode".
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping

__all__ = ["REPLACEMENT", "UNENCODABLE", "Reports", "encode_replacing", "escaped", "unencodable_at"]

UNENCODABLE = re.compile("[\ud800-\udfff]")
"""A code point UTF-8 cannot encode: a surrogate (a pair of them in a Python text is two of them)."""

REPLACEMENT = "\ufffd"
"""What such a code point is written as (U+FFFD REPLACEMENT CHARACTER)."""

REPORT_EVERY_S = 60.0
"""At most one log line per output (a topic, the display's events) this often (seconds)."""


def encode_replacing(text: str) -> tuple[bytes, int]:
    """``text`` in UTF-8 with each code point UTF-8 cannot encode written U+FFFD, and how many were."""
    fixed, count = UNENCODABLE.subn(REPLACEMENT, text)
    return fixed.encode("utf-8"), count


def escaped(text: str) -> str:
    """``text`` as a log line shows it: its unencodable code points escaped (``\\ud800``)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def unencodable_at(value: object, path: str = "") -> str | None:
    """Where the first text UTF-8 cannot encode is in a JSON value (a key or a text value), as a
    path: ``message``, ``hands[0].entries[3].message``, ``seats[2]`` (``""`` for ``value`` itself,
    a key written with its unencodable code points escaped); None when there is none."""
    if isinstance(value, str):
        return path if UNENCODABLE.search(value) else None
    if isinstance(value, Mapping):
        for k, v in value.items():
            key = k if isinstance(k, str) else str(k)
            inner = f"{path}.{escaped(key)}" if path else escaped(key)
            if UNENCODABLE.search(key):
                return inner
            found = unencodable_at(v, inner)
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found = unencodable_at(v, f"{path}[{i}]")
            if found is not None:
                return found
    return None


class Reports:
    """One warning per output (``what``) at most every :data:`REPORT_EVERY_S` seconds; the
    occurrences held back in between are counted in the next line. Keeps at most ``limit``
    outputs (then starts again): its memory does not grow with the text it is shown."""

    def __init__(self, log: logging.Logger, limit: int = 256) -> None:
        self.log = log
        self.limit = limit
        self._last: dict[str, tuple[float, int]] = {}  # what: (when last logged, held back since)

    def __call__(self, what: str, line: str) -> None:
        now = time.monotonic()
        last = self._last.get(what)
        if last is not None and now - last[0] < REPORT_EVERY_S:
            self._last[what] = (last[0], last[1] + 1)
            return
        if last is None and len(self._last) >= self.limit:
            self._last.clear()
        held = last[1] if last is not None else 0
        more = f" ({held} more since the last such line)" if held else ""
        self.log.warning("%s%s", line, more)
        self._last[what] = (now, 0)
