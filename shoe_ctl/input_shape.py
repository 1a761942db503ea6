"""The shape every dealer input from outside the process must have before it is posted.

A dealer input reaches the controller from the display (``POST /input``) and from the dealer port
(one JSON line on the Unix socket); the controller journals it before the machine sees it. What
the machine then refuses (a seat not dealt in, a card count that does not fit the hand) is its
business; what the journal cannot write, or what is no input any page or program sends (values
nested hundreds deep, an integer of a hundred digits, a text of megabytes), is refused here, at
the door, with the field named. See docs/display.md, *HTTP API*, and docs/recovery.md (the dealer
port).
"""

from __future__ import annotations

import math
from typing import Any

from shoe_ctl.utf8 import UNENCODABLE, escaped

__all__ = ["MAX_ARGS", "MAX_INT", "MAX_ITEMS", "MAX_SEAT", "MAX_TEXT", "check_input_shape"]

MAX_SEAT = 10
"""The highest seat number an input may name (a ten-seat table; the machine refuses seats not dealt in)."""
MAX_ARGS = 16
"""At most this many arguments (the widest input, ``new-hand``, has six)."""
MAX_TEXT = 256
"""The longest text of an argument's name or value (a game, a rule profile, an alert code)."""
MAX_ITEMS = 32
"""The longest list argument (seats, piles, ids)."""
MAX_INT = 2**53
"""Integers are within +-2**53: what the page's JavaScript can hold exactly and SQLite can store."""


def check_input_shape(seat: object, args: object) -> dict[str, Any]:
    """Check a dealer input's ``seat`` and ``args`` are of the shape inputs have.

    ``seat``: ``None`` or an integer 1..:data:`MAX_SEAT`. ``args``: an object of at most
    :data:`MAX_ARGS` arguments whose names are texts and whose values are ``null``, a boolean, an
    integer within +-:data:`MAX_INT`, a finite number, a text of at most :data:`MAX_TEXT`
    characters, or a list of at most :data:`MAX_ITEMS` of those (no list in a list, no object);
    no name or text holds a code point UTF-8 cannot encode (a lone surrogate: the journal cannot
    write it).

    :returns: ``args``, checked.
    :raises ValueError: naming the field (``seat``, ``args``, ``args.NAME``, ``args.NAME[i]``) and
        what it should be.
    """
    if seat is not None and (not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= MAX_SEAT):
        raise ValueError(f"seat: {_shown(seat)} is not a seat number 1..{MAX_SEAT}")
    if not isinstance(args, dict):
        raise ValueError("args: expected a JSON object")
    if len(args) > MAX_ARGS:
        raise ValueError(f"args: {len(args)} arguments; at most {MAX_ARGS}")
    for name, value in args.items():
        if not isinstance(name, str) or not name or len(name) > MAX_TEXT:
            raise ValueError(f"args: {_shown(name)} is not an argument name")
        _encodable(f"args.{escaped(name)}", name, "its name")
        if isinstance(value, list):
            if len(value) > MAX_ITEMS:
                raise ValueError(f"args.{name}: a list of {len(value)} items; at most {MAX_ITEMS}")
            for i, item in enumerate(value):
                _scalar(f"args.{name}[{i}]", item)
        else:
            _scalar(f"args.{name}", value)
    return args


def _scalar(where: str, value: object) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not -MAX_INT <= value <= MAX_INT:
            raise ValueError(f"{where}: {_shown(value)} is out of range; allowed: -2**53..2**53")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} is not a finite number")
        return
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise ValueError(f"{where}: a text of {len(value)} characters; at most {MAX_TEXT}")
        _encodable(where, value, "a text")
        return
    kind = "a list in a list" if isinstance(value, list) else "an object" if isinstance(value, dict) \
        else type(value).__name__
    raise ValueError(f"{where}: {kind} is not an argument value; allowed: a number, a text, true/false, "
                     f"null or a list of those")


def _encodable(where: str, text: str, what: str) -> None:
    """Refuse a text holding a code point UTF-8 cannot encode (a lone surrogate, ``"\\ud800"`` in
    the JSON sent): the journal, which keeps the input before the machine sees it, cannot write it."""
    found = None if text.isascii() else UNENCODABLE.search(text)
    if found is not None:
        raise ValueError(f"{where}: {what} with a code point UTF-8 cannot encode (a lone surrogate, "
                         f"{escaped(found.group())} at character {found.start()}): it cannot be recorded")


def _shown(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters (a hostile value may be huge)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value) if not isinstance(value, (list, dict)) else type(value).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
