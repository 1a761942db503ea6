"""The addresses a tablet can open the dealer display at, and a bind failure in plain words.

A display bound to a wildcard address (``0.0.0.0``, ``::``) is reachable at each of the host's
interface addresses, not at the wildcard: :func:`display_urls` lists them (``ip -j addr`` from
iproute2, else the kernel's ``SIOCGIFADDR`` for each interface, stdlib only). See
docs/service.md, *The dealer display's address*.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import socket
import struct
import subprocess
from collections.abc import Callable

__all__ = ["bind_problem", "display_urls", "interface_addresses"]

WILDCARDS = ("0.0.0.0", "::", "")

AddressSource = Callable[[], list[str]]


def _from_ip_command() -> list[str]:
    """Every address of every interface that is up, from ``ip -j addr`` ([] when it fails)."""
    try:
        out = subprocess.run(["ip", "-j", "addr"], capture_output=True, text=True, timeout=3, check=True).stdout
        links = json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    found = []
    for link in links if isinstance(links, list) else []:
        if not isinstance(link, dict) or "UP" not in (link.get("flags") or []):
            continue
        for info in link.get("addr_info") or []:
            if isinstance(info, dict) and isinstance(info.get("local"), str):
                found.append(info["local"])
    return found


def _from_ioctl() -> list[str]:
    """The IPv4 address of each interface (``SIOCGIFADDR``), for hosts without iproute2."""
    import fcntl

    siocgifaddr = 0x8915
    found = []
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for name in names:
            try:
                req = struct.pack("256s", name.encode()[:15])
                found.append(socket.inet_ntoa(fcntl.ioctl(s.fileno(), siocgifaddr, req)[20:24]))
            except OSError:
                continue  # no IPv4 address on this interface
    return found


def interface_addresses(source: AddressSource | None = None) -> list[str]:
    """The host's interface addresses, loopback last, without link-local IPv6 ones (they need an
    interface name in the URL); each once, in the order found.

    :param source: where the addresses come from (tests); default ``ip -j addr``, else the ioctl.
    """
    raw = source() if source is not None else (_from_ip_command() or _from_ioctl())
    seen: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for text in raw:
        try:
            addr = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            continue
        if addr.is_link_local and addr.version == 6 or addr in seen:
            continue
        seen.append(addr)
    seen.sort(key=lambda a: a.is_loopback)  # stable: the order found, loopback last
    return [str(a) for a in seen]


def display_urls(host: str, port: int, source: AddressSource | None = None) -> list[str]:
    """``http://ADDRESS:PORT/`` for each address the display answers on: ``host`` itself, or for a
    wildcard each interface address (IPv4 only for ``0.0.0.0``; both families for ``::``).

    :param source: as for :func:`interface_addresses`.
    """
    def url(addr: str) -> str:
        return f"http://[{addr}]:{port}/" if ":" in addr else f"http://{addr}:{port}/"

    if host not in WILDCARDS:
        return [url(host)]
    addrs = interface_addresses(source)
    if host == "0.0.0.0":
        addrs = [a for a in addrs if ":" not in a]
    return [url(a) for a in addrs] or [url("127.0.0.1" if host == "0.0.0.0" else "::1")]


def bind_problem(exc: OSError) -> str:
    """A failed bind in plain words: ``"port in use by another program"`` for ``EADDRINUSE``,
    ``"address not on this host"`` for ``EADDRNOTAVAIL``, ``"permission denied"`` (a port below
    1024), else the error's own text."""
    code = exc.errno
    if code == errno.EADDRINUSE:
        return "port in use by another program (another shoe-ctl run?)"
    if code == errno.EADDRNOTAVAIL:
        return "address not on this host"
    if code in (errno.EACCES, errno.EPERM):
        return "permission denied (ports below 1024 need privileges)"
    return exc.strerror or str(exc)
