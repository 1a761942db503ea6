"""The ``[floor]`` table of ``config/table.toml`` (the broker, or two brokers with failover and the
primary host, the room, the credentials, TLS, the outbox, and on the floor server the room map
``[[floor.pits]]``) and the broker credentials file.
Errors are :class:`shoe_ctl.config.ConfigError` naming the file, the key and the allowed values.
The keys and their defaults: docs/floor.md."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from shoe_ctl.config import ConfigError, read_toml
from shoe_ctl.floor.room import Pit, parse_pits
from shoe_ctl.floor.topics import NAME_RE
from shoe_ctl.service.gaming_day import GamingDay, GamingDayError, parse_gaming_day

__all__ = ["Credentials", "FloorConfig", "check_credentials_file", "load_credentials", "load_floor_config",
           "parse_broker", "parse_broker_list", "parse_floor"]

_KEYS = ("enabled", "broker", "brokers", "primary_host", "room", "credentials", "ca_file", "keepalive", "outbox",
         "display", "pits", "tag_retries_per_1000", "tag_retries_min_reads", "gaming_day_start", "time_zone")

MAX_BROKERS = 8
"""The most brokers a ``brokers`` list may name."""


@dataclass(frozen=True, slots=True)
class FloorConfig:
    """``[floor]``: ``enabled``; ``broker`` URL (``mqtt://host:port``, ``mqtts://host:port`` for
    TLS); ``room`` (the first topic level); ``credentials`` (path of the credentials file, or
    ``None`` for a broker without them); ``ca_file`` (TLS: the CA that signed the broker's
    certificate; ``None``: the system's CAs); ``keepalive`` seconds; ``outbox`` (the file keeping
    the publisher's acknowledged journal sequence and session; ``None``: ``<journal>.floor``);
    ``brokers``: two or more broker URLs instead of ``broker`` (the first is :attr:`broker`),
    the table moving to the next when the floor is not online on its own (``primary_host``: the
    floor's host id, read as ``<room>/hosts/<primary_host>``; docs/floor.md "Two brokers");
    ``display``: also publish the whole public state on the retained ``display`` topic (for
    surveillance or a bridge; the broker's ACL must let the table write it: docs/floor.md);
    ``pits`` the room map's pits with each table's place (``shoe-ctl floor`` only;
    :func:`shoe_ctl.floor.room.parse_pits`); ``tag_retries_per_1000`` and
    ``tag_retries_min_reads``: a card is to be replaced once its tag was read at least that many
    times with more retries per 1,000 reads than that (docs/floor.md, "Reader and card health");
    ``gaming_day``: the room's gaming day, from ``gaming_day_start`` (``HH:MM``) and ``time_zone``
    (an IANA name) (:mod:`shoe_ctl.service.gaming_day`)."""

    enabled: bool = False
    broker: str = "mqtt://127.0.0.1:1883"
    room: str = "room-1"
    credentials: str | None = None
    ca_file: str | None = None
    keepalive: int = 15
    outbox: str | None = None
    pits: tuple[Pit, ...] = ()
    brokers: tuple[str, ...] = ()
    primary_host: str = "floor"
    display: bool = False
    tag_retries_per_1000: int = 100
    tag_retries_min_reads: int = 10
    gaming_day: GamingDay = field(default_factory=GamingDay)

    @property
    def broker_urls(self) -> tuple[str, ...]:
        """Every broker, in order of preference: ``brokers``, or ``(broker,)``."""
        return self.brokers or (self.broker,)

    @property
    def host_port_tls(self) -> tuple[str, int, bool]:
        """``(host, port, tls)`` of :attr:`broker` (see :func:`parse_broker`)."""
        return parse_broker(self.broker)


@dataclass(frozen=True, slots=True)
class Credentials:
    """A broker user name and password (read from a credentials file), and the room key: the
    room's secret for the keyed hashes of tags on the floor (``None`` when the file has none)."""

    username: str
    password: str
    room_key: bytes | None = None

    def __repr__(self) -> str:  # never print the password or the key
        return f"Credentials(username={self.username!r}, password=***)"


def parse_broker(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of ``mqtt://host[:1883]`` or ``mqtts://host[:8883]``.

    :raises ValueError: another scheme, no host or a bad port.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
        raise ValueError(f"broker {url!r} is not mqtt://host:port or mqtts://host:port")
    tls = parts.scheme == "mqtts"
    try:
        port = parts.port or (8883 if tls else 1883)
    except ValueError:
        raise ValueError(f"broker {url!r}: bad port") from None
    return parts.hostname, port, tls


def parse_floor(src: str, data: Mapping[str, Any]) -> FloorConfig:
    """The ``[floor]`` table ``data`` (from file ``src``) checked; absent keys take defaults.

    :raises ConfigError: naming ``src``, ``floor.<key>`` and the allowed values.
    """
    for key in data:
        if key not in _KEYS:
            raise ConfigError(src, f"floor.{key}", "unknown key", "keys " + ", ".join(_KEYS))

    def get(key: str, kind: type, default: Any, allowed: str) -> Any:
        if key not in data:
            return default
        value = data[key]
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            raise ConfigError(src, f"floor.{key}", f"{value!r} is not a {kind.__name__}", allowed)
        return value

    urls = parse_broker_list(src, data)
    start = get("gaming_day_start", str, "00:00", "HH:MM, 00:00..23:59")
    try:
        day = parse_gaming_day(start, get("time_zone", str, "UTC", "an IANA time zone name"))
    except GamingDayError as exc:
        key = "gaming_day_start" if str(exc).startswith(repr(start)) else "time_zone"
        raise ConfigError(src, f"floor.{key}", str(exc), "HH:MM" if key == "gaming_day_start"
                          else "an IANA time zone name (Asia/Macau, America/New_York, UTC)") from None
    cfg = FloorConfig(
        gaming_day=day,
        enabled=get("enabled", bool, False, "true, false"),
        broker=urls[0] if urls else get("broker", str, "mqtt://127.0.0.1:1883", "mqtt://host:port or mqtts://host:port"),
        brokers=urls,
        primary_host=get("primary_host", str, "floor", "the floor's broker user: letters, digits, '_', '.', '-'"),
        room=get("room", str, "room-1", "letters, digits, '_', '.', '-'"),
        credentials=get("credentials", str, None, "a file path") or None,
        ca_file=get("ca_file", str, None, "a file path") or None,
        keepalive=get("keepalive", int, 15, "5..300"),
        outbox=get("outbox", str, None, "a file path") or None,
        display=get("display", bool, False, "true, false"),
        tag_retries_per_1000=get("tag_retries_per_1000", int, 100, "1..1000"),
        tag_retries_min_reads=get("tag_retries_min_reads", int, 10, "1..100000"),
        pits=parse_pits(src, data["pits"]) if "pits" in data else (),
    )
    try:
        parse_broker(cfg.broker)
    except ValueError as exc:
        raise ConfigError(src, "floor.broker", str(exc), "mqtt://host:port or mqtts://host:port") from None
    if not NAME_RE.match(cfg.primary_host):
        raise ConfigError(src, "floor.primary_host", f"{cfg.primary_host!r} is not a topic level",
                          "the floor's broker user: letters, digits, '_', '.', '-'")
    if not NAME_RE.match(cfg.room):
        raise ConfigError(src, "floor.room", f"{cfg.room!r} is not a topic level", "letters, digits, '_', '.', '-'")
    if not 5 <= cfg.keepalive <= 300:
        raise ConfigError(src, "floor.keepalive", f"{cfg.keepalive} is out of range", "5..300")
    if not 1 <= cfg.tag_retries_per_1000 <= 1000:
        raise ConfigError(src, "floor.tag_retries_per_1000", f"{cfg.tag_retries_per_1000} is out of range", "1..1000")
    if not 1 <= cfg.tag_retries_min_reads <= 100_000:
        raise ConfigError(src, "floor.tag_retries_min_reads", f"{cfg.tag_retries_min_reads} is out of range",
                          "1..100000")
    return cfg


def parse_broker_list(src: str, data: Mapping[str, Any]) -> tuple[str, ...]:
    """``floor.brokers`` of ``data`` checked: ``()`` when absent, else 2..:data:`MAX_BROKERS`
    distinct URLs of one scheme (all ``mqtt://`` or all ``mqtts://``: the table has one TLS setting).

    :raises ConfigError: naming ``src``, ``floor.brokers`` (and the entry) and what is allowed.
    """
    if "brokers" not in data:
        return ()
    allowed = f"a list of 2..{MAX_BROKERS} mqtt://host:port (or all mqtts://) URLs, each once"
    urls = data["brokers"]
    if "broker" in data:
        raise ConfigError(src, "floor.brokers", "given with floor.broker", "one of broker (one) or brokers (a list)")
    if not isinstance(urls, list) or not 2 <= len(urls) <= MAX_BROKERS:
        raise ConfigError(src, "floor.brokers", f"{str(urls)[:120]} is not a list of 2..{MAX_BROKERS}", allowed)
    seen: dict[tuple[str, int], int] = {}
    schemes = set()
    for i, url in enumerate(urls):
        key = f"floor.brokers[{i}]"
        if not isinstance(url, str):
            raise ConfigError(src, key, f"{url!r} is not a text", allowed)
        try:
            host, port, tls = parse_broker(url)
        except ValueError as exc:
            raise ConfigError(src, key, str(exc), allowed) from None
        if (host, port) in seen:
            raise ConfigError(src, key, f"{url!r} names the same broker as floor.brokers[{seen[host, port]}]",
                              allowed)
        seen[host, port] = i
        schemes.add(tls)
    if len(schemes) > 1:
        raise ConfigError(src, "floor.brokers", "mixes mqtt:// and mqtts://", allowed)
    return tuple(urls)


def load_floor_config(path: str | os.PathLike[str]) -> FloorConfig:
    """``[floor]`` of a table configuration file (defaults when the table is absent).

    :raises ConfigError: as :func:`parse_floor`, an unreadable file, or (the floor on) a ``table``
        name that cannot be a topic level.
    """
    data = read_toml(Path(path))
    section = data.get("floor", {})
    if not isinstance(section, Mapping):
        raise ConfigError(str(path), "floor", f"{section!r} is not a table", "a [floor] table")
    cfg = parse_floor(str(path), section)
    table = data.get("table", "table-1")
    if cfg.enabled and isinstance(table, str) and not NAME_RE.match(table):
        # the table's name is its topic level and its broker user: said here with the file and key
        raise ConfigError(str(path), "table", f"{table[:80]!r} cannot be an MQTT topic level while [floor] is on",
                          "1-64 letters, digits, '_', '.', '-'")
    return cfg


def check_credentials_file(path: str | os.PathLike[str]) -> str | None:
    """What is wrong with a credentials file's permissions, or ``None`` when it is a regular file
    readable by its owner only (mode 0600 or 0400) and owned by the user checking it."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        return f"{p}: cannot read ({exc.strerror or exc})"
    if not stat.S_ISREG(st.st_mode):
        return f"{p}: not a regular file"
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        return f"{p}: mode {mode:04o} lets other users read the broker password; chmod 600 {p}"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{p}: owned by uid {st.st_uid}, not by this user ({os.getuid()})"
    return None


ROOM_KEY_HEX = (32, 128)
"""A room key's length in hex digits (16 to 64 bytes)."""


def load_credentials(path: str | os.PathLike[str]) -> Credentials:
    """Read a credentials file (TOML with ``username`` and ``password``, and optionally
    ``room_key``: 32-128 hex digits, the same at every table of the room), refusing a file that
    others can read (:func:`check_credentials_file`).

    :raises ConfigError: naming the file and what is wrong.
    """
    problem = check_credentials_file(path)
    if problem is not None:
        raise ConfigError(str(path), "", problem, "a file of mode 0600 owned by the service's user")
    data = read_toml(Path(path))
    user, password = data.get("username"), data.get("password")
    if not isinstance(user, str) or not user or not isinstance(password, str) or not password:
        raise ConfigError(str(path), "username/password", "missing or empty", "two non-empty texts")
    key = data.get("room_key")
    if key is None:
        return Credentials(user, password)
    low, high = ROOM_KEY_HEX
    allowed = f"{low}..{high} hex digits (openssl rand -hex 32), the same at every table of the room"
    if not isinstance(key, str) or not low <= len(key) <= high or len(key) % 2:
        raise ConfigError(str(path), "room_key", "not a key of the right length", allowed)
    try:
        return Credentials(user, password, bytes.fromhex(key))
    except ValueError:
        raise ConfigError(str(path), "room_key", "not hex", allowed) from None


def write_credentials(path: str | os.PathLike[str], creds: Credentials) -> Path:
    """Write a credentials file created with mode 0600 (tests, ``hil floor``, provisioning)."""
    p = Path(path)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f'username = "{creds.username}"\npassword = "{creds.password}"\n')
    os.chmod(p, 0o600)
    return p


def doctor_floor(path: str | os.PathLike[str]) -> tuple[str, str, str]:
    """``shoe-ctl doctor``'s ``floor`` check of a table configuration file: ``(status, detail,
    fix)`` with status ``ok``, ``fail`` or ``skip`` (the floor is off). Fails on a bad ``[floor]``,
    an enabled floor without a credentials file, or a credentials file that is missing, unreadable,
    not 0600 or owned by another user."""
    try:
        cfg = load_floor_config(path)
    except ConfigError as exc:
        return "fail", str(exc), f"edit {path}: see docs/floor.md for [floor]"
    if not cfg.enabled:
        return "skip", "the floor is off ([floor] enabled = false)", ""
    if cfg.credentials is None:
        return ("fail", f"[floor] publishes to {cfg.broker} without credentials",
                "give the table its own broker user: [floor] credentials = FILE (docs/floor.md)")
    problem = check_credentials_file(cfg.credentials)
    if problem is not None:
        return "fail", problem, f"chmod 600 {cfg.credentials} and chown it to the service user"
    try:
        creds = load_credentials(cfg.credentials)
    except ConfigError as exc:
        return "fail", str(exc), f"write username and password into {cfg.credentials} (docs/floor.md)"
    return "ok", f"{', '.join(cfg.broker_urls)} room {cfg.room} as {creds.username}; {cfg.credentials} mode 0600", ""
