"""``shoe-ctl run``'s status line in the terminal: hand, street, stub / required, shoe health, the
last card read as a place (``seat 3 down``) and the alerts, from the public table state.

:class:`StatusLine` is a controller sink (``run`` adds it to the :class:`shoe_ctl.table.Table`
with ``sinks=``): it reads only :class:`~shoe_ctl.events.DisplayUpdate` states, which never hold a
downcard before showdown, and names a downcard read by its seat alone, so no hole card's identity
is ever printed. On a terminal the line is redrawn in place (the LED lines written through
:attr:`StatusLine.console` scroll above it); otherwise it is one plain line for each new hand or
street, change of the shoe's health, of the number of alerts or of a note (a log is not flooded
with a line per card). The line is written by its own thread (``status-line``): the controller
only queues the state, so a terminal that is paused (or a pipe nobody reads) never holds up the
deal; it draws at most once per 10 ms. Colour only on a terminal and never when ``NO_COLOR`` is set (https://no-color.org). See docs/service.md,
*The terminal*.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from shoe_ctl.events import Command, DisplayUpdate
from shoe_ctl.lifecycle import BatchWorker

__all__ = ["ConsoleStream", "StatusLine", "use_color"]

_CLEAR = "\r\x1b[2K"
_REDRAW = object()  # queued by note(): draw the line again with nothing new in the state


def use_color(stream: object, env: Mapping[str, str] | None = None) -> bool:
    """Colour for ``stream``: a terminal, ``NO_COLOR`` unset or empty, and ``TERM`` not ``dumb``."""
    env = os.environ if env is None else env
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not env.get("NO_COLOR") and env.get("TERM") != "dumb"


def last_read(state: Mapping[str, Any]) -> str | None:
    """The last card read of the hand as a place, from the public state's ``last_read`` (the
    machine's own word for where that read lies now: ``seat 3 down``, ``seat 5 up Qh``, ``seat 2
    extra``, ``community 5d``, ``burn``, ``held aside``, ``set aside``; docs/display.md), or None
    with no hand or no card read yet. A downcard is named by its seat only."""
    place = state.get("last_read")
    return place if isinstance(place, str) and place else None


class ConsoleStream:
    """A stream that writes above the status line: on a terminal each line written clears the
    status line first and redraws it after, so the line stays at the bottom. ``target``: the
    stream written to (default the status line's own, for the console LED sink; ``sys.stderr``
    for messages and log lines). ``isatty`` is the target's."""

    def __init__(self, status: StatusLine, target: TextIO | None = None) -> None:
        self._status = status
        self._target = target

    def write(self, text: str) -> int:
        self._status.write_above(text, self._target)
        return len(text)

    def flush(self) -> None:
        (self._target or self._status.stream).flush()

    def isatty(self) -> bool:
        target = self._target
        if target is None:
            return self._status.tty
        isatty = getattr(target, "isatty", None)
        return bool(isatty and isatty())


class StatusLine:
    """The status line sink.

    :param stream: where to write (default stdout).
    :param tty: redraw in place (default: ``stream`` is a terminal).
    :param color: colour (default :func:`use_color`).
    :param width: the line's maximum width on a terminal (default: the terminal's columns), so
        it never wraps (a wrapped line cannot be redrawn in place).
    """

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None, color: bool | None = None,
                 width: int | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty()) if tty is None else tty
        self.color = use_color(self.stream) if color is None else color
        self._width = width
        self._lock = threading.Lock()  # the state below
        self._out = threading.Lock()  # writing to the terminal (the line, and lines above it)
        self._state: Mapping[str, Any] | None = None
        self._last: str | None = None
        self._notes: dict[str, str] = {}
        self._sources: dict[str, Callable[[], str | None]] = {}
        self._shown = ""
        self._plain_last: tuple[Any, ...] | None = None
        self.console = ConsoleStream(self)
        """The console LED sink's stream (``Table(led_stream=...)``)."""
        self.errors = ConsoleStream(self, sys.stderr)
        """Log lines and messages on stderr, written above the status line."""
        self._worker = BatchWorker("status-line", self._draw, gap_s=self.GAP_S, max_waiting=self.MAX_WAITING)

    MAX_WAITING = 1000
    """States queued for the drawing thread at most (a stalled terminal: the oldest go)."""
    GAP_S = 0.01
    """Seconds between two draws at least: the states of a burst are taken together."""

    # ------------------------------------------------------------------ the sink

    def handle(self, command: Command) -> None:
        """Queue a ``DisplayUpdate``'s state for the drawing thread (other commands are ignored);
        returns at once."""
        if isinstance(command, DisplayUpdate):
            self._worker.put(command.state)

    def note(self, key: str, text: str | None) -> None:
        """Keep ``text`` on the line until it is replaced or cleared with None (e.g. a display that
        is not served: it stays in sight instead of scrolling away)."""
        with self._lock:
            if text is None:
                self._notes.pop(key, None)
            else:
                self._notes[key] = text
        self._worker.put(_REDRAW)

    def note_from(self, key: str, source: Callable[[], str | None]) -> None:
        """Show ``source()`` as the note ``key`` on every line while it is not None (read each time
        the line is drawn; e.g. why the display is not served, known once the table started)."""
        with self._lock:
            self._sources[key] = source

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until every state and note given so far is drawn; False on timeout."""
        return self._worker.flush(timeout)

    def close(self) -> None:
        """Draw what waits (for at most 2 s), stop the drawing thread and end the line on a
        terminal (the shell prompt starts on a fresh line)."""
        self._worker.close()
        with self._out:
            if self.tty and self._shown:
                self.stream.write("\n")
                self.stream.flush()
            self._shown = ""

    def _draw(self, items: list[Any], _dropped: int) -> None:
        """The worker's turn: every state in order (the last read is a difference of two states),
        then the newest line on a terminal, or a plain line for each change worth one."""
        with self._lock:
            lines: list[str] = []
            for state in items:
                if state is _REDRAW:
                    continue
                self._last = last_read(state)
                self._state = state
                if not self.tty:
                    lines.extend(self._plain_line())
            if self.tty:
                lines = [self._tty_line()]
            elif not lines and _REDRAW in items:
                lines = self._plain_line()
        self._write(lines)

    def _plain_line(self) -> list[str]:
        """The plain line for the state now, when it differs in what a plain line is written for
        (:meth:`_plain_key`); under the state lock."""
        if self._state is None and not self._notes:
            return []
        key = self._plain_key()
        if key == self._plain_last:
            return []
        self._plain_last = key
        return [self.text()]

    def _tty_line(self) -> str:
        if self._state is None and not self._notes:
            return ""
        return self._fit(self.text())

    def _write(self, lines: list[str]) -> None:
        try:
            with self._out:
                if self.tty:
                    line = lines[-1] if lines else ""
                    if line and line != self._shown:
                        self.stream.write(_CLEAR + line)
                        self.stream.flush()
                        self._shown = line
                elif lines:
                    self.stream.write("\n".join(lines) + "\n")
                    self.stream.flush()
                    self._shown = lines[-1]
        except (OSError, ValueError):  # a closed or broken terminal: the service goes on
            pass

    # ------------------------------------------------------------------ text

    def fields(self) -> list[tuple[str, str, str]]:
        """``(name, value, colour)`` of each part of the line (colour: an SGR code or ``""``)."""
        s = self._state or {}
        hand = s.get("hand")
        stub = s.get("stub") or {}
        count, required = stub.get("count"), stub.get("required")
        shoe = (s.get("shoe") or {}).get("status") or "unknown"
        alerts = s.get("alerts") or []
        short = isinstance(count, int) and isinstance(required, int) and hand is not None and count < required
        out = [
            ("hand", "none" if hand is None else str(hand), ""),
            ("street", str(s.get("street") or "-"), ""),
            ("stub", f"{count if count is not None else '-'} / {required if required is not None else '-'}",
             "31" if short else ""),
            ("shoe", str(shoe), "32" if shoe == "connected" else "31"),
            ("last", self._last or "-", ""),
        ]
        if alerts:
            out.append(("alerts", str(len(alerts)), "33"))
        notes = dict(self._notes)
        for key, source in self._sources.items():
            text = source()
            if text is not None:
                notes[key] = text
        for key, text in notes.items():
            out.append((key, text, "1;31"))
        return out

    def text(self) -> str:
        """The line as it is written (without the redraw codes)."""
        fields = self.fields()
        if not self.tty:
            return "status " + " ".join(f'{k}="{v}"' if " " in v else f"{k}={v}" for k, v, _ in fields)
        parts = []
        for k, v, sgr in fields:
            if self.color and sgr:
                parts.append(f"{k} \x1b[{sgr}m{v}\x1b[0m")
            else:
                parts.append(f"{k} {v}")
        return " │ ".join(parts) if self.color else " | ".join(parts)

    def _fit(self, text: str) -> str:
        width = self._width or shutil.get_terminal_size((100, 24)).columns
        if _visible_len(text) < width:
            return text
        return _cut(text, max(width - 2, 10)) + ("\x1b[0m" if self.color else "")

    def _plain_key(self) -> tuple[Any, ...]:
        """What a plain line is written for: a new hand or street, the shoe's health, the number of
        alerts or a note changing (not every card: a log keeps one line per street)."""
        s = self._state or {}
        notes = tuple((k, v) for k, v, sgr in self.fields() if k not in ("hand", "street", "stub", "shoe", "last",
                                                                           "alerts"))
        return (s.get("hand"), s.get("street"), (s.get("shoe") or {}).get("status"), len(s.get("alerts") or []),
                notes)

    def write_above(self, text: str, target: TextIO | None = None) -> None:
        """Write ``text`` (whole lines) above the status line to ``target`` (default the status
        line's stream; :class:`ConsoleStream`)."""
        with self._out:
            out = target or self.stream
            if self.tty and self._shown:
                self.stream.write(_CLEAR)
                self.stream.flush()
                out.write(text)
                if text.endswith("\n"):
                    out.flush()
                    self.stream.write(self._shown)
                    self.stream.flush()
            else:
                out.write(text)

    def say(self, line: str) -> None:
        """Print ``line`` on stderr above the status line (the table's messages)."""
        self.write_above(line + "\n", sys.stderr)
        sys.stderr.flush()


def _visible_len(text: str) -> int:
    n, i = 0, 0
    while i < len(text):
        if text[i] == "\x1b":
            end = text.find("m", i)
            i = len(text) if end < 0 else end + 1
            continue
        n += 1
        i += 1
    return n


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` visible characters (escape codes kept whole)."""
    out, n, i = [], 0, 0
    while i < len(text) and n < width:
        if text[i] == "\x1b":
            end = text.find("m", i)
            end = len(text) if end < 0 else end + 1
            out.append(text[i:end])
            i = end
            continue
        out.append(text[i])
        n += 1
        i += 1
    return "".join(out) + "…"
