"""``vshoe://NAME?seed=N&faults=SPEC``: the virtual shoe as a pyserial URL (docs/service.md).

pyserial's ``serial_for_url`` calls :func:`serial_class_for_url`, which starts (once per URL)
a :class:`hil.virtual_shoe.VirtualShoe` on a pty and hands back its pty path to open with the
ordinary ``serial.Serial``; a reconnecting link reopens the same shoe. :func:`device_for_url`
gives the shoe object itself (the simulated dealer pulls its cards); :func:`release` closes it.
"""

from __future__ import annotations

import threading
import urllib.parse
from typing import Any

import serial

from hil.virtual_shoe import VirtualShoe

SCHEME = "vshoe"

_shoes: dict[str, VirtualShoe] = {}
_lock = threading.Lock()


def _key(url: str) -> str:
    """The URL as the registry knows it (the scheme in lower case, the rest as given)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() != SCHEME:
        raise ValueError(f"not a {SCHEME}:// URL: {url!r}")
    return f"{SCHEME}://{rest}"


def parse(url: str) -> dict[str, Any]:
    """The shoe's options in ``url``: ``{"seed": int, "faults": str | None}``.

    :raises ValueError: an unknown option or a seed that is not an integer.
    """
    parts = urllib.parse.urlsplit(_key(url))
    opts: dict[str, Any] = {"seed": 0, "faults": None}
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if name == "seed":
            try:
                opts["seed"] = int(value)
            except ValueError:
                raise ValueError(f"{url!r}: seed {value!r} is not an integer") from None
        elif name == "faults":
            opts["faults"] = value or None
        else:
            raise ValueError(f"{url!r}: unknown option {name!r} (known: seed, faults)")
    return opts


def device_for_url(url: str) -> VirtualShoe:
    """The started virtual shoe of ``url`` (started on first use; the same one after).

    :raises ValueError: a bad URL or fault spec.
    :raises OSError: the pty cannot be had.
    """
    key = _key(url)
    with _lock:
        shoe = _shoes.get(key)
        if shoe is None:
            opts = parse(key)
            shoe = VirtualShoe(transport="pty", seed=opts["seed"], faults=opts["faults"])
            try:
                shoe.start()
            except BaseException:
                shoe.close()
                raise
            _shoes[key] = shoe
        return shoe


def release(url: str) -> None:
    """Close the virtual shoe of ``url``, if one was started (idempotent)."""
    with _lock:
        shoe = _shoes.pop(_key(url), None)
    if shoe is not None:
        shoe.close()


def serial_class_for_url(url: str) -> tuple[str, type[serial.Serial]]:
    """pyserial's hook: the pty path of the shoe of ``url`` and the class that opens it."""
    try:
        return device_for_url(url).url, serial.Serial
    except ValueError as exc:
        raise serial.SerialException(str(exc)) from exc
