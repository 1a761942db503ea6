"""TOML for PHH files: the common shape read fast, everything else by ``tomllib``.

A PHH hand record is a flat list of ``key = value`` lines whose values are basic strings, decimal
integers, ``inf`` (an unknown stack, ``phh-std``), booleans and arrays of those, with comments. :func:`loads`
reads text of exactly that shape with a few regular expressions (about a fifth of ``tomllib``'s
time on a real hand) and hands any other text -- tables, escapes, dotted or quoted keys, floats,
nested arrays, a repeated key, a ``\\r``, an error -- to ``tomllib`` itself, so what is accepted or
refused, and the values, are ``tomllib``'s (``tests/records/test_phh_toml.py`` checks that on
generated and mutated files). Errors become :class:`TomlError` with the line. ``tomllib`` is
imported only for text the fast reader hands on; the rule profiles are read the same way.
See ``docs/performance.md`` (the parser) and ``docs/security.md`` (bad files).
"""

from __future__ import annotations

import math
import re
from typing import Any

# TOML's control characters: U+0000-U+001F and U+007F; a tab is allowed in strings and comments.
_CTRL = r"\x00-\x08\x0a-\x1f\x7f"
# Every repeat below is possessive (``*+``): what follows it can never start with what it
# repeats (a string's closing quote, a comment's end of line, an item after blanks, ``]`` after
# the items), so giving characters back could never make a match, and the engine keeps no
# backtracking state for it (Python 3.11's possessive quantifiers; the same texts match).
_STR = rf'"[^"\\{_CTRL}]*+"'
_SCALAR = r"(?:0|[1-9][0-9]{0,17}|inf|true|false)"  # at most 18 digits: the rest goes to tomllib
_COMMENT = rf"#[^{_CTRL}]*+"
# inside an array: blanks, newlines, comments to the line's end; written as a run of blanks then
# (comment, run of blanks) pairs, the same texts as ``(?:[ \t\n]|{_COMMENT}\n)*`` but a run is
# one character-class repeat for the regular-expression engine, not a group per character
_GAP = rf"[ \t\n]*+(?:{_COMMENT}\n[ \t\n]*+)*+"
_ITEM = rf"(?:{_STR}|{_SCALAR})"
_ARRAY = rf"\[{_GAP}(?:{_ITEM}{_GAP},{_GAP})*+(?:{_ITEM}{_GAP})?\]"

_BLANKS = rf"(?:[ \t]*+(?:{_COMMENT})?\n)*+"  # blank and comment lines
_BLANK = re.compile(_BLANKS)
# a statement, with the blank and comment lines before it (one match a statement)
_STATEMENT = re.compile(
    rf"{_BLANKS}[ \t]*([A-Za-z0-9_-]+)[ \t]*=[ \t]*(?:({_STR})|({_SCALAR})|({_ARRAY}))[ \t]*(?:{_COMMENT})?(?:\n|\Z)"
)
_ITEMS = re.compile(rf"({_STR})|({_SCALAR})|{_COMMENT}")

MAX_DEPTH_SHOWN = 64
"""Nesting depth from which a ``RecursionError`` in ``tomllib`` is blamed on a line."""


class TomlError(ValueError):
    """Text that is not TOML (or that ``tomllib`` cannot hold: an integer of more than 4,300
    digits, values nested too deeply).

    :ivar line: 1-based line of the problem.
    :ivar reason: the message without the line.
    """

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


_WORDS: dict[str, bool | float] = {"inf": math.inf, "true": True, "false": False}


def _number(text: str) -> int | float | bool:
    word = _WORDS.get(text)
    return int(text) if word is None else word


def _array(array: str) -> list[Any]:
    """The values of ``array``, text :data:`_STATEMENT` matched as an array. An array of strings
    alone and no comment (a PHH file's ``actions``, ``players``) is split at its quotes (a
    string here holds no quote: no escapes), the text between them only brackets, commas and
    blanks; one of scalars alone and no comment (``antes``, ``starting_stacks``) at its commas
    (the array matched, each piece is one scalar between blanks, the last piece blank after a
    trailing comma); any other goes through :data:`_ITEMS`."""
    if "#" not in array:
        if '"' not in array:  # scalars alone (the antes, the stacks, the seats): between commas
            items = array[1:-1].split(",")
            if not items[-1] or items[-1].isspace():  # after a trailing comma, or in "[]"
                items.pop()
            try:
                return list(map(int, items))  # int() skips the blanks around each number
            except ValueError:  # inf, true or false among them
                return [_number(item.strip(" \t\n")) for item in items]
        parts = array.split('"')
        if not "".join(parts[0::2]).strip("[], \t\n"):
            return parts[1::2]
    return [s[1:-1] if s else _number(n) for s, n in _ITEMS.findall(array) if s or n]


def loads_fast(text: str) -> dict[str, Any] | None:
    """The table of ``text`` when it has the common PHH shape (see the module), else ``None``
    (including for every text ``tomllib`` refuses)."""
    if "\r" in text:
        return None
    data: dict[str, Any] = {}
    pos = 0
    end = len(text)
    blank = _BLANK.match
    statement = _STATEMENT.match
    while True:
        m = statement(text, pos)
        if m is None:
            pos = blank(text, pos).end()  # type: ignore[union-attr]  # matches the empty string
            if pos >= end:
                return data
            # a last line without "\n" that is blank or a comment
            tail = text[pos:]
            if re.fullmatch(rf"[ \t]*(?:{_COMMENT})?", tail):
                return data
            return None
        key, string, number, array = m.groups()
        if key in data:
            return None
        if string is not None:
            data[key] = string[1:-1]
        elif number is not None:
            data[key] = _number(number)
        else:
            data[key] = _array(array)
        pos = m.end()


def loads(text: str) -> dict[str, Any]:
    """The TOML table of ``text``; ``tomllib.loads`` unless :func:`loads_fast` has it.

    :raises TomlError: ``tomllib`` refuses the text, an integer has more digits than Python
        converts (4,300), or values are nested too deeply for ``tomllib``'s recursion.
    """
    fast = loads_fast(text)
    if fast is not None:
        return fast
    import tomllib  # only for text of another shape: a command that meets none does not load it

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlError(*_decode_error(text, str(exc))) from None
    except RecursionError:
        raise TomlError(_deep_line(text), f"values nested too deeply (more than {MAX_DEPTH_SHOWN} levels)") from None
    except ValueError as exc:  # int("9" * 5000): Python's limit on integer digits
        runs = list(re.finditer(r"[0-9_]+", text))
        longest = max(runs, key=lambda m: m.end() - m.start()) if runs else None
        line = text.count("\n", 0, longest.start()) + 1 if longest else 1
        raise TomlError(line, f"an integer too long to read ({exc})") from None


_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$|\s*\(at end of document\)$")


def _decode_error(text: str, message: str) -> tuple[int, str]:
    m = _AT.search(message)
    if m is None:
        return text.count("\n") + 1, message
    reason = message[: m.start()]
    if m.group(1) is None:
        return text.count("\n") + 1, f"{reason} (at the end)"
    line = int(m.group(1))
    text_line = (text.split("\n")[line - 1:line] or [""])[0]
    if re.search(r"=\s*\[?[^#]*\b(null|None|nil)\b", text_line):
        reason += "; TOML has no null: write inf for an unknown stack (phh-std)"
    return line, f"{reason} (column {m.group(2)})"


def _deep_line(text: str) -> int:
    """The line where brackets first reach :data:`MAX_DEPTH_SHOWN` levels (else where they are
    deepest), counting ``[`` and ``{`` and their closers anywhere (strings included)."""
    depth = deepest = 0
    line = at = 1
    for ch in text:
        if ch == "\n":
            line += 1
        elif ch in "[{":
            depth += 1
            if depth >= MAX_DEPTH_SHOWN:
                return line
            if depth > deepest:
                deepest, at = depth, line
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return at
