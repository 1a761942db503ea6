"""``vshoe://NAME?seed=N&faults=SPEC&serial=S&secret=PATH``: the virtual shoe as a pyserial URL
(docs/service.md). ``secret``: a file holding its pairing secret (64 hex digits, as
``shoe_ctl.service.shoe_secrets`` writes it): the shoe speaks the authenticated version 2 and
keeps a rotated secret in that file; without it the shoe is unpaired until the table pairs it.
``pairing=1``: the shoe is in pairing mode (``shoe-ctl pair`` gives it a secret).

pyserial's ``serial_for_url`` calls :func:`serial_class_for_url`, which starts (once per URL)
a :class:`hil.virtual_shoe.VirtualShoe` on a pty and hands back its pty path to open with the
ordinary ``serial.Serial``; a reconnecting link reopens the same shoe. :func:`device_for_url`
gives the shoe object itself (the simulated dealer pulls its cards); :func:`release` closes it.
"""

from __future__ import annotations

import os
import threading
import urllib.parse
from pathlib import Path
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
    """The shoe's options in ``url``: ``{"seed": int, "faults": str | None, "serial": str | None,
    "secret": str | None}``.

    :raises ValueError: an unknown option or a seed that is not an integer.
    """
    parts = urllib.parse.urlsplit(_key(url))
    opts: dict[str, Any] = {"seed": 0, "faults": None, "serial": None, "secret": None}
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if name == "seed":
            try:
                opts["seed"] = int(value)
            except ValueError:
                raise ValueError(f"{url!r}: seed {value!r} is not an integer") from None
        elif name in ("faults", "serial", "secret"):
            opts[name] = value or None
        elif name == "pairing":
            opts["pairing"] = value not in ("", "0", "false")
        else:
            raise ValueError(f"{url!r}: unknown option {name!r} (known: seed, faults, serial, secret, pairing)")
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
            extra: dict[str, Any] = {"serial": opts["serial"]} if opts["serial"] else {}
            if opts.get("pairing"):
                extra["pairing"] = True
            if opts["secret"]:
                path = Path(opts["secret"])
                try:
                    extra["secret"] = bytes.fromhex(path.read_text(encoding="ascii").strip())
                except (OSError, ValueError) as exc:
                    raise ValueError(f"{url!r}: secret file {path}: {exc}") from None
                extra["on_secret"] = lambda new, path=path: _keep(path, new)
            shoe = VirtualShoe(transport="pty", seed=opts["seed"], faults=opts["faults"], **extra)
            try:
                shoe.start()
            except BaseException:
                shoe.close()
                raise
            _shoes[key] = shoe
        return shoe


def _keep(path: Path, secret: bytes) -> None:
    """Write a rotated secret back to the shoe's file (0600, replaced atomically)."""
    tmp = path.with_name(path.name + ".new")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(secret.hex() + "\n")
    os.replace(tmp, path)


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
