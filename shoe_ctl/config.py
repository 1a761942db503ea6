"""Configuration files: rule profiles and table/hardware settings (TOML, read with ``tomllib``;
a flat file such as a rule profile by :func:`shoe_ctl.phh_toml.loads_fast`, tomllib's values).

- :func:`load_profile` reads ``config/tda.toml`` or ``config/house.toml`` (by name) or any profile
  file (by path) and validates it with :func:`shoe_ctl.rules.profiles.parse_profile`.
- :func:`load_table_config` reads the table and hardware settings (``config/table.toml``).

Every problem is a :class:`~shoe_ctl.rules.profiles.ProfileError` (a ``ValueError``) whose message
names the file, the key and the allowed values; a missing or unreadable file names the file.
All the problems of one file are reported at once (:data:`ConfigErrors`, one line each); whatever
the file holds, the loaders raise nothing else (tests/cli/test_config_fuzz.py). See
docs/service.md, *Configuration errors*.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from shoe_ctl.phh_toml import loads_fast
from shoe_ctl.rules.profiles import PROFILE_NAMES, ProfileError, ProfileErrors, RuleProfile, parse_profile
from shoe_ctl.values import FACTORY, FrozenValue, frozen_value

__all__ = [
    "CONFIG_DIR",
    "ConfigError",
    "ConfigErrors",
    "DisplayConfig",
    "JournalConfig",
    "ButtonConfig",
    "LedConfig",
    "ShoeConfig",
    "TableConfig",
    "load_profile",
    "load_table_config",
    "read_toml",
]

#: The project's config/ folder (override with the environment variable SHOE_CTL_CONFIG).
CONFIG_DIR = Path(os.environ.get("SHOE_CTL_CONFIG", Path(__file__).resolve().parents[1] / "config"))

#: Errors in table configuration files use the same form as profile errors.
ConfigError = ProfileError
#: Several problems in one file, reported together (``errors``; one message line each).
ConfigErrors = ProfileErrors


MAX_FILE_BYTES = 1 << 20
"""A configuration or profile file is at most 1 MiB (they are a few hundred bytes)."""


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML file (a regular file of at most :data:`MAX_FILE_BYTES`).

    :raises ProfileError: naming the file when it is missing, unreadable, not a regular file (a
        folder, a named pipe, a device), too large, not UTF-8, not valid TOML, or holds what
        ``tomllib`` cannot convert (an integer of more than 4,300 digits, values nested too deeply);
        the last two name the line.
    """
    text = _read_text(path)
    flat = loads_fast(text)  # the common flat shape (a rule profile): tomllib's values, read faster
    if flat is not None:
        return flat
    import tomllib  # the rest: only then loaded

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(str(path), "", f"not valid TOML ({exc})", "TOML syntax") from None
    except RecursionError:
        lines = text.split("\n")  # blamed: the line opening the most arrays and inline tables
        line = 1 + max(range(len(lines)), key=lambda i: lines[i].count("[") + lines[i].count("{"))
        raise ProfileError(str(path), "", f"line {line}: values nested too deeply", "a configuration file") from None
    except ValueError:  # int("9" * 5000): Python's limit on integer digits
        run = re.search(r"[0-9_]{1000,}", text)
        line = _line_of(text, run.start()) if run else 1
        raise ProfileError(str(path), "", f"line {line}: an integer too long to read",
                           "a number in the range the key allows") from None


def _read_text(path: Path) -> str:
    try:
        # O_NONBLOCK: opening a named pipe must not wait for a writer
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
            kind = _file_kind(os.fstat(fh.fileno()).st_mode)
            if kind:
                raise ProfileError(str(path), "", f"not a regular file ({kind})", "a TOML file")
            data = fh.read(MAX_FILE_BYTES + 1)  # a bounded read: a file still growing ends here
    except FileNotFoundError:
        raise ProfileError(str(path), "", "file not found", "an existing TOML file") from None
    except OSError as exc:
        raise ProfileError(str(path), "", f"cannot read: {exc.strerror or exc}", "a readable TOML file") from None
    if len(data) > MAX_FILE_BYTES:
        raise ProfileError(str(path), "", f"larger than {MAX_FILE_BYTES} bytes", "a configuration file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(str(path), "", f"not UTF-8 text (byte {exc.start})", "a UTF-8 TOML file") from None


def _file_kind(mode: int) -> str:
    """``""`` for a regular file, else what it is (``"a folder"``, ``"a named pipe"``, ...)."""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def load_profile(name_or_path: str | os.PathLike[str], config_dir: Path | None = None) -> RuleProfile:
    """Load a rule profile by name (``"tda"``, ``"house"``: ``<config_dir>/<name>.toml``) or path.

    :raises ProfileError: naming the file, the key and the allowed values.
    """
    text = os.fspath(name_or_path)
    if text in PROFILE_NAMES:
        path = (config_dir or CONFIG_DIR) / f"{text}.toml"
    else:
        path = Path(text)
        if not text.strip() or (path.suffix != ".toml" and not path.exists()):  # "" is no path (not ".")
            raise ProfileError(text if text.strip() else repr(text), "", "neither a profile name nor a file", ", ".join(PROFILE_NAMES) + " or a .toml path")
    return parse_profile(read_toml(path), str(path))


# --------------------------------------------------------------------------- table settings


@frozen_value
class ShoeConfig(FrozenValue):
    """``[shoe]``: ``url`` (pyserial URL such as ``/dev/serial/by-id/...``, ``socket://host:port``,
    or ``sim`` for the built-in virtual shoe) and ``baudrate`` (bits per second); ``serial``: the
    table's shoe (its serial number; any other is refused); ``auth``: ``"hmac"`` (protocol
    version 2, every frame authenticated with the secret ``shoe-ctl pair`` keeps in the folder
    ``secrets``) or ``"off"`` (version 1, unauthenticated: a bench; the display says so).
    docs/security.md, "The shoe link"."""

    url: str = "sim"
    baudrate: int = 115200
    serial: str | None = None
    auth: str = "hmac"
    secrets: str = "/var/lib/shoe-ctl/shoes"

    def __init__(self, url: str = "sim", baudrate: int = 115200, serial: str | None = None,
                 auth: str = "hmac", secrets: str = "/var/lib/shoe-ctl/shoes") -> None:
        put = self._put
        put[0](self, url)
        put[1](self, baudrate)
        put[2](self, serial)
        put[3](self, auth)
        put[4](self, secrets)


@frozen_value
class LedConfig(FrozenValue):
    """``[leds]``: ``backend`` (``console``, ``gpio``, ``shoe`` or ``mock``) and, for ``gpio``, ``pins``: a
    table of LED name (``green``, ``amber``, ``blue``, ``white``, ``red``; see ``drivers.leds``) to
    BCM pin number; ``pwm`` (PWM LEDs: the betting signal fades) and ``active_high`` (false for
    LEDs wired to sink current)."""

    backend: str = "console"
    pins: Mapping[str, int] = field(default_factory=dict)
    pwm: bool = False
    active_high: bool = True

    def __init__(self, backend: str = "console", pins: Mapping[str, int] = FACTORY, pwm: bool = False,
                 active_high: bool = True) -> None:
        put = self._put
        put[0](self, backend)
        put[1](self, dict() if pins is FACTORY else pins)
        put[2](self, pwm)
        put[3](self, active_high)


@frozen_value
class ButtonConfig(FrozenValue):
    """``[buttons]``: optional physical dealer buttons. ``pins``: a table of dealer input
    (``betting-complete``, ``ack-alert``, ``undo``, ``stub-reloaded``, ``cut-done``,
    ``hand-complete``, ``new-hand``) to BCM pin number; ``bounce_ms`` debounce time; ``pull_up`` (true: the
    button connects the pin to ground)."""

    pins: Mapping[str, int] = field(default_factory=dict)
    bounce_ms: int = 50
    pull_up: bool = True

    def __init__(self, pins: Mapping[str, int] = FACTORY, bounce_ms: int = 50,
                 pull_up: bool = True) -> None:
        put = self._put
        put[0](self, dict() if pins is FACTORY else pins)
        put[1](self, bounce_ms)
        put[2](self, pull_up)


@frozen_value
class DisplayConfig(FrozenValue):
    """``[display]``: ``host`` and ``port`` the dealer display is served on; ``enabled``;
    ``token``: the shared secret a touch screen must send with every input (required when
    ``host`` is not loopback; the environment variable ``SHOE_CTL_DISPLAY_TOKEN`` overrides it)."""

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 8080
    token: str | None = None

    def __init__(self, enabled: bool = True, host: str = "127.0.0.1", port: int = 8080,
                 token: str | None = None) -> None:
        put = self._put
        put[0](self, enabled)
        put[1](self, host)
        put[2](self, port)
        put[3](self, token)


@frozen_value
class JournalConfig(FrozenValue):
    """``[journal]``: ``path`` of the SQLite journal (``None``: no journal unless ``shoe-ctl run
    --journal PATH`` names one) and ``retention_days`` of finished hands."""

    path: str | None = None
    retention_days: int = 30

    def __init__(self, path: str | None = None, retention_days: int = 30) -> None:
        put = self._put
        put[0](self, path)
        put[1](self, retention_days)


@frozen_value
class TableConfig(FrozenValue):
    """A table's settings: ``table`` (name), ``seats`` (2..8), ``rules`` (profile name or path),
    ``game`` and the ``[shoe]``, ``[leds]``, ``[display]``, ``[journal]`` tables."""

    table: str = "table-1"
    seats: int = 8
    rules: str = "tda"
    game: str = "stud"
    shoe: ShoeConfig = field(default_factory=ShoeConfig)
    leds: LedConfig = field(default_factory=LedConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    journal: JournalConfig = field(default_factory=JournalConfig)
    buttons: ButtonConfig = field(default_factory=ButtonConfig)

    def __init__(self, table: str = "table-1", seats: int = 8, rules: str = "tda", game: str = "stud",
                 shoe: ShoeConfig = FACTORY, leds: LedConfig = FACTORY, display: DisplayConfig = FACTORY,
                 journal: JournalConfig = FACTORY, buttons: ButtonConfig = FACTORY) -> None:
        put = self._put
        put[0](self, table)
        put[1](self, seats)
        put[2](self, rules)
        put[3](self, game)
        put[4](self, ShoeConfig() if shoe is FACTORY else shoe)
        put[5](self, LedConfig() if leds is FACTORY else leds)
        put[6](self, DisplayConfig() if display is FACTORY else display)
        put[7](self, JournalConfig() if journal is FACTORY else journal)
        put[8](self, ButtonConfig() if buttons is FACTORY else buttons)


CONFIG_SCHEMA = 1
"""The version of the table configuration's schema (the keys and values read here); a release
manifest names the one its code reads (shoe_ctl.release)."""
_GAMES = ("stud", "stud8", "razz")
_LED_BACKENDS = ("console", "gpio", "shoe", "mock")  # shoe_ctl.dealer_io.LED_BACKENDS (a test checks)
_LED_NAMES = ("green", "amber", "blue", "white", "red")
_BUTTON_INPUTS = ("betting-complete", "ack-alert", "undo", "stub-reloaded", "cut-done", "hand-complete",
                  "new-hand")
#: ``[shoe] baudrate`` bounds (bits per second): pyserial's lowest standard rate to the highest a
#: USB serial adapter offers; a larger number overflows the serial driver.
BAUDRATE_MIN, BAUDRATE_MAX = 50, 4_000_000
_MAX_TEXT = 4096  # a path, URL, host or token longer than this is a mistake


class _Problems:
    """The problems found in one file, in file order; :meth:`raise_all` raises them together."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.errors: list[ProfileError] = []

    def add(self, key: str, problem: str, allowed: str) -> None:
        shown = key if key.isprintable() else repr(key)[1:-1]  # a key from the file: one line per error
        self.errors.append(ProfileError(self.src, shown, problem, allowed))

    def raise_all(self) -> None:
        """:raises ProfileError: the one problem; :class:`ConfigErrors`: several."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise ConfigErrors(self.errors)

    def keys(self, prefix: str, data: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                shown = key if key.isprintable() else repr(key)[1:-1]  # one line per error
                self.add(prefix + shown, "unknown key", "keys " + ", ".join(allowed))

    def get(self, key: str, data: Mapping[str, Any], kind: type, default: Any, allowed: str) -> Any:
        """``data``'s value for the last part of ``key``, checked to be a ``kind``; ``default``
        when absent or wrong (the problem recorded). Text must be printable: no NUL or other
        control character, at most :data:`_MAX_TEXT` characters."""
        name = key.rsplit(".", 1)[-1]
        if name not in data:
            return default
        value = data[name]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            self.add(key, f"{_show(value)} is not an integer", allowed)
            return default
        if not isinstance(value, kind):
            self.add(key, f"{_show(value)} is not a {kind.__name__}", allowed)
            return default
        if isinstance(value, str):
            bad = next((c for c in value if not c.isprintable()), None)
            if bad is not None:
                self.add(key, f"contains the control character U+{ord(bad):04X}", allowed)
                return default
            if len(value) > _MAX_TEXT:
                self.add(key, f"is {len(value)} characters long", f"{allowed}, at most {_MAX_TEXT} characters")
                return default
        return value

    def table(self, key: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """The sub-table ``key`` (dotted for a nested one, e.g. ``leds.pins``) of ``data``; empty
        when it is not a table (the problem recorded)."""
        value = data.get(key.rsplit(".", 1)[-1], {})
        if not isinstance(value, Mapping):
            self.add(key, f"{_show(value)} is not a table", f"a [{key}] table")
            return {}
        return value

    def pins(self, section: str, pins: Mapping[str, Any], names: Sequence[str], unknown: str,
             used: dict[int, str]) -> dict[str, int]:
        """Each ``name = pin`` of ``section``: a known name on a BCM pin 0..27 that no other LED or
        button already uses (``used`` maps pins to the key holding them, and is filled in). Returns
        the good ones."""
        good: dict[str, int] = {}
        for name, pin in pins.items():
            key = f"{section}.{name}"
            if isinstance(pin, bool) or not isinstance(pin, int) or not 0 <= pin <= 27:
                self.add(key, f"{_show(pin)} is not a BCM pin", "0..27")
            elif name not in names:
                self.add(key, unknown, ", ".join(names))
            elif pin in used:
                self.add(key, f"pin {pin} is already {used[pin]}", "a free BCM pin")
            else:
                used[pin] = key
                good[name] = pin
        return good

    def in_range(self, key: str, value: int, lo: int, hi: int | None, allowed: str) -> bool:
        if value < lo or (hi is not None and value > hi):
            shown = value if abs(value) < 10**12 else f"{str(value)[:6]}... ({len(str(abs(value)))} digits)"
            self.add(key, f"{shown} is out of range", allowed)
            return False
        return True


def _show(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a huge number or text stays readable)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**12:
        return f"{str(value)[:6]}... ({len(str(abs(value)))} digits)"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_table_config(path: str | os.PathLike[str]) -> TableConfig:
    """Read a table configuration file (see ``config/table.toml``); absent keys take defaults.

    Every problem in the file is reported at once: one :class:`ProfileError`, or a
    :class:`ConfigErrors` holding each of them (``errors``), every one naming the file, the key
    and the allowed values. Text values may hold no control character (a NUL in a path);
    ``[shoe] baudrate`` is :data:`BAUDRATE_MIN`..:data:`BAUDRATE_MAX`.

    :raises ProfileError: naming the file, the key and the allowed values.
    """
    p = Path(path)
    src = str(p)
    data = read_toml(p)
    c = _Problems(src)
    c.keys("", data, ("table", "seats", "rules", "game", "shoe", "leds", "display", "journal", "buttons",
                      "floor", "release", "users"))  # [floor]: shoe_ctl.floor.config; [release]: shoe_ctl.release;
    # [users]: shoe_ctl.users
    table = c.get("table", data, str, "table-1", "a non-empty text")
    if not table.strip():
        c.add("table", "is empty", "a non-empty text")
    seats = c.get("seats", data, int, 8, "2..8")
    if not c.in_range("seats", seats, 2, 8, "2..8"):
        seats = 8
    rules = c.get("rules", data, str, "tda", "tda, house or a .toml path")
    if not rules.strip():
        c.add("rules", "is empty", "tda, house or a .toml path")
    game = c.get("game", data, str, "stud", ", ".join(_GAMES))
    if game not in _GAMES:
        c.add("game", f"{_show(game)} is not a game", ", ".join(_GAMES))

    s = c.table("shoe", data)
    c.keys("shoe.", s, ("url", "baudrate", "serial", "auth", "secrets"))
    url = c.get("shoe.url", s, str, "sim", "a pyserial URL or sim")
    if not url.strip():
        c.add("shoe.url", "is empty", "a pyserial URL or sim")
    rates = f"{BAUDRATE_MIN}..{BAUDRATE_MAX} (e.g. 115200)"
    baudrate = c.get("shoe.baudrate", s, int, 115200, rates)
    c.in_range("shoe.baudrate", baudrate, BAUDRATE_MIN, BAUDRATE_MAX, rates)
    serial = c.get("shoe.serial", s, str, None, "the shoe's serial number, 1..32 bytes") or None
    if serial is not None and len(serial.encode("utf-8")) > 32:
        c.add("shoe.serial", "is over 32 bytes", "the shoe's serial number, 1..32 bytes")
    auth = c.get("shoe.auth", s, str, "hmac", "hmac, off")
    if auth not in ("hmac", "off"):
        c.add("shoe.auth", f"{_show(auth)} is not a mode", "hmac, off")
    secrets = c.get("shoe.secrets", s, str, "/var/lib/shoe-ctl/shoes", "a folder path")
    shoe = ShoeConfig(url=url, baudrate=baudrate, serial=serial, auth=auth, secrets=secrets)

    led = c.table("leds", data)
    c.keys("leds.", led, ("backend", "pins", "pwm", "active_high"))
    backend = c.get("leds.backend", led, str, "console", ", ".join(_LED_BACKENDS))
    if backend not in _LED_BACKENDS:
        c.add("leds.backend", f"{_show(backend)} is not a backend", ", ".join(_LED_BACKENDS))
    used: dict[int, str] = {}
    pins = c.pins("leds.pins", c.table("leds.pins", led), _LED_NAMES, "unknown LED", used)
    leds = LedConfig(backend=backend, pins=pins,
                     pwm=c.get("leds.pwm", led, bool, False, "true, false"),
                     active_high=c.get("leds.active_high", led, bool, True, "true, false"))

    b = c.table("buttons", data)
    c.keys("buttons.", b, ("pins", "bounce_ms", "pull_up"))
    bpins = c.pins("buttons.pins", c.table("buttons.pins", b), _BUTTON_INPUTS, "unknown dealer input", used)
    buttons = ButtonConfig(pins=bpins,
                           bounce_ms=c.get("buttons.bounce_ms", b, int, 50, "0..1000"),
                           pull_up=c.get("buttons.pull_up", b, bool, True, "true, false"))
    c.in_range("buttons.bounce_ms", buttons.bounce_ms, 0, 1000, "0..1000")

    d = c.table("display", data)
    c.keys("display.", d, ("enabled", "host", "port", "token"))
    display = DisplayConfig(
        enabled=c.get("display.enabled", d, bool, True, "true, false"),
        host=c.get("display.host", d, str, "127.0.0.1", "a host name or address"),
        port=c.get("display.port", d, int, 8080, "0..65535"),
        token=c.get("display.token", d, str, None, "a text") or None,
    )
    if not display.host.strip():
        c.add("display.host", "is empty", "a host name or address")
    c.in_range("display.port", display.port, 0, 65535, "0..65535")

    j = c.table("journal", data)
    c.keys("journal.", j, ("path", "retention_days"))
    journal = JournalConfig(
        path=c.get("journal.path", j, str, None, "a file path"),
        retention_days=c.get("journal.retention_days", j, int, 30, "1..36500"),
    )
    if journal.path is not None and not journal.path.strip():
        c.add("journal.path", "is empty", "a file path (leave the key out for no journal)")
    c.in_range("journal.retention_days", journal.retention_days, 1, 36500, "1..36500")
    c.raise_all()
    return TableConfig(table, seats, rules, game, shoe, leds, display, journal, buttons)
