"""The dealer display's address as the command line gives it (``--display HOST:PORT|off``) and its
error, apart from the server (:mod:`shoe_ctl.display.server`) so that reading the option does not
load the web server's library (docs/display.md)."""

from __future__ import annotations


class DisplayError(ValueError):
    """The display cannot start as configured (address, port or token)."""


def parse_display(value: str) -> tuple[str, int] | None:
    """Parse ``--display HOST:PORT`` (``off`` -> None; ``[::1]:8080`` for IPv6).

    :raises DisplayError: for a missing or bad port.
    """
    if value.strip().lower() in ("off", "none", "no", ""):
        return None
    host, sep, port = value.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise DisplayError(f"--display {value!r}: expected HOST:PORT (e.g. 127.0.0.1:8080) or 'off'")
    return host.strip("[]"), int(port)
