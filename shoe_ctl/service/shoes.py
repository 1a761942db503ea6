"""Shoe backends named by URL: the ``sim`` alias and the URL handlers of the simulation tools.

A shoe is a pyserial URL; ``sim`` (``--shoe sim``, ``[shoe] url = "sim"``) is resolved here, and
only here, to a ``vshoe://`` URL served by :mod:`hil.urlhandler` (docs/service.md).
"""

from __future__ import annotations

import importlib
import itertools
import urllib.parse
from types import ModuleType
from typing import Any

import serial

SIM = "sim"
"""The user-facing alias of the built-in virtual shoe."""

DIRECT = "direct"
"""A shoe without a wire, for the simulation's many tables in one process (``hil/floor_rig.py``):
no link; the simulated dealer's shoe posts each card read to the controller itself."""

URL_HANDLER_PACKAGE = "hil.urlhandler"
"""Listed in ``serial.protocol_handler_packages``: it serves ``vshoe://``."""

_names = itertools.count(1)


def register_url_handlers() -> None:
    """List :data:`URL_HANDLER_PACKAGE` in pyserial's handler packages (idempotent)."""
    if URL_HANDLER_PACKAGE not in serial.protocol_handler_packages:
        serial.protocol_handler_packages.append(URL_HANDLER_PACKAGE)


def resolve(url: str, *, seed: int = 0, faults: str | None = None) -> str:
    """The URL to open for ``url``: ``sim`` becomes a new ``vshoe://`` URL (one virtual shoe per
    call, dealing with ``seed`` and the fault spec ``faults``); any other URL is returned as is."""
    if url != SIM:
        return url
    query = {"seed": str(seed)}
    if faults:
        query["faults"] = faults
    return f"vshoe://sim-{next(_names)}?{urllib.parse.urlencode(query)}"


def is_simulated(url: str) -> bool:
    """True for the alias ``sim`` and for a URL whose handler serves a device of its own (a
    simulated shoe): there is no port to check."""
    return url == SIM or _handler(url) is not None


def _handler(url: str) -> ModuleType | None:
    """The handler module of a simulated shoe's URL (one with ``device_for_url``), else None."""
    if "://" not in url:
        return None
    register_url_handlers()
    scheme = url.lower().split("://", 1)[0]
    for package in serial.protocol_handler_packages:
        try:
            module = importlib.import_module(f"{package}.protocol_{scheme}")
        except ImportError:
            continue
        return module if hasattr(module, "device_for_url") else None
    return None


def device(url: str) -> Any | None:
    """The device object behind a simulated shoe's URL (started on first use; the simulated
    dealer pulls its cards), or None for a real port."""
    handler = _handler(url)
    return None if handler is None else handler.device_for_url(url)


def release(url: str) -> None:
    """Close the device behind a simulated shoe's URL (nothing for a real port)."""
    handler = _handler(url)
    if handler is not None:
        handler.release(url)
