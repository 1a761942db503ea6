"""Mutations of PHH hand records for the reader's fuzz tests and the mutation campaign
(``scripts/fuzz_phh.py``): each takes a real record and a ``random.Random`` and returns the bytes
of a damaged file, the way bad luck or a hostile writer would (``docs/security.md``).

The kinds: a byte flipped, inserted or deleted; a line dropped, repeated or cut short; an
integer made huge (thousands of digits) or replaced by a non-ASCII digit, ``inf``, ``nan``, a
float, a negative number, a boolean, ``null``; a value nested a thousand arrays deep; an action
swapped, repeated or dropped; a player or card word changed; invalid UTF-8 or a NUL.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

_INT = re.compile(r"(?<![\w.])\d+(?![\w.])")
_VALUE = re.compile(r"(?m)^(\s*[A-Za-z_]+\s*=\s*)(.*)$")
_ACTION = re.compile(r'"[^"\n]*"')

UNICODE_DIGITS = ("\u0663", "\u00b2", "\u2466", "\U0001d7d9", "\uff15", "\u0e52", "\u00bd", "\u2155")
ODD_VALUES = ("inf", "+inf", "-inf", "nan", "null", "None", "true", "1.5", "1e3", "-7", "0x1F",
              "1_000", "007", '"12"', "[]", "{}", "[1, [2]]", '{a = 1}', "1979-05-27", "''", "[inf]",
              "[null]", "[1, inf]", "[-1, 2]")
ODD_WORDS = ("p0", "p9", "p99999999999999999999", "p\u0663", "pX", "d", "dh", "db", "cbr", "sm", "f",
             "cc", "pb", "??", "Xx", "AcAc", "\u0663\u0663", "1" * 5000, "#", "\\", "\\u0000", "\x00")


def _huge_int(rnd: random.Random, text: str) -> str:
    spans = list(_INT.finditer(text))
    if not spans:
        return text
    m = rnd.choice(spans)
    digits = rnd.choice((4301, 5000, 20000, 40))
    return text[: m.start()] + "9" * digits + text[m.end() :]


def _unicode_digit(rnd: random.Random, text: str) -> str:
    spans = [i for i, ch in enumerate(text) if ch.isdigit()]
    if not spans:
        return text
    i = rnd.choice(spans)
    return text[:i] + rnd.choice(UNICODE_DIGITS) + text[i + 1 :]


def _odd_value(rnd: random.Random, text: str) -> str:
    spans = list(_VALUE.finditer(text))
    if not spans:
        return text
    m = rnd.choice(spans)
    value = m.group(2)
    if value.startswith("[") and rnd.random() < 0.5:
        ints = list(_INT.finditer(value))
        if ints:
            k = rnd.choice(ints)
            value = value[: k.start()] + rnd.choice(ODD_VALUES) + value[k.end() :]
            return text[: m.start(2)] + value + text[m.end(2) :]
    return text[: m.start(2)] + rnd.choice(ODD_VALUES) + text[m.end(2) :]


def _deep(rnd: random.Random, text: str) -> str:
    spans = list(_VALUE.finditer(text))
    if not spans:
        return text
    m = rnd.choice(spans)
    depth = rnd.choice((100, 1000, 5000))
    opener, closer = rnd.choice((("[", "]"), ("{a = ", "}")))
    return text[: m.start(2)] + opener * depth + "1" + closer * depth + text[m.end(2) :]


def _action_edit(rnd: random.Random, text: str) -> str:
    spans = list(_ACTION.finditer(text))
    if not spans:
        return text
    m = rnd.choice(spans)
    words = m.group(0)[1:-1].split(" ")
    how = rnd.randrange(5)
    if how == 0:  # a word changed
        words[rnd.randrange(len(words))] = rnd.choice(ODD_WORDS)
    elif how == 1:  # a word dropped or repeated
        k = rnd.randrange(len(words))
        words = words[:k] + words[k + 1 :] if rnd.random() < 0.5 else words[: k + 1] + words[k:]
    elif how == 2:  # the action dropped
        return text[: m.start()] + '""' + text[m.end() :]
    elif how == 3:  # the action repeated
        return text[: m.end()] + ", " + m.group(0) + text[m.end() :]
    else:  # swapped with another action
        o = rnd.choice(spans)
        if o.start() == m.start():
            return text
        a, b = sorted((m, o), key=lambda s: s.start())
        return text[: a.start()] + b.group(0) + text[a.end() : b.start()] + a.group(0) + text[b.end() :]
    return text[: m.start()] + '"' + " ".join(words) + '"' + text[m.end() :]


def _line_edit(rnd: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    k = rnd.randrange(len(lines))
    how = rnd.randrange(3)
    if how == 0:
        del lines[k]
    elif how == 1:
        lines.insert(k, lines[k])
    else:
        lines[k] = lines[k][: rnd.randrange(len(lines[k]) + 1)]
    return "".join(lines)


def _char_edit(rnd: random.Random, text: str) -> str:
    if not text:
        return text
    i = rnd.randrange(len(text))
    alphabet = '[]{}=",.#\\\n\r\t \'0123456789-+_eEinfatrux\x00\x7f\u2028\u0663'
    how = rnd.randrange(3)
    if how == 0:
        return text[:i] + rnd.choice(alphabet) + text[i + 1 :]
    if how == 1:
        return text[:i] + rnd.choice(alphabet) + text[i:]
    return text[:i] + text[i + 1 :]


MUTATORS: tuple[Callable[[random.Random, str], str], ...] = (
    _huge_int, _unicode_digit, _odd_value, _deep, _action_edit, _line_edit, _char_edit,
)


def mutate(text: str, rnd: random.Random, rounds: int | None = None) -> bytes:
    """``text`` with 1-3 mutations (``rounds`` to fix the count), as the bytes of a file; now and
    then bytes that are not UTF-8."""
    for _ in range(rounds if rounds is not None else rnd.randint(1, 3)):
        text = rnd.choice(MUTATORS)(rnd, text)
    data = text.encode("utf-8", "surrogatepass")
    if rnd.random() < 0.03 and data:
        i = rnd.randrange(len(data))
        data = data[:i] + rnd.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00")) + data[i:]
    return data


def real_records(*roots: Path) -> list[Path]:
    """The ``*.phh`` files under each existing root, sorted."""
    out: list[Path] = []
    for root in roots:
        if root.is_dir():
            out.extend(sorted(root.rglob("*.phh")))
    return out
