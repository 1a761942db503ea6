"""Configuration files: rule profiles and table/hardware settings (TOML, read with ``tomllib``).

- :func:`load_profile` reads ``config/tda.toml`` or ``config/house.toml`` (by name) or any profile
  file (by path) and validates it with :func:`shoe_ctl.rules.profiles.parse_profile`.
- :func:`load_table_config` reads the table and hardware settings (``config/table.toml``).

Every problem is a :class:`~shoe_ctl.rules.profiles.ProfileError` (a ``ValueError``) whose message
names the file, the key and the allowed values; a missing or unreadable file names the file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoe_ctl.rules.profiles import PROFILE_NAMES, ProfileError, RuleProfile, parse_profile

__all__ = [
    "CONFIG_DIR",
    "ConfigError",
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


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML file.

    :raises ProfileError: naming the file when it is missing, unreadable or not valid TOML.
    """
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ProfileError(str(path), "", "file not found", "an existing TOML file") from None
    except OSError as exc:
        raise ProfileError(str(path), "", f"cannot read: {exc.strerror or exc}", "a readable TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(str(path), "", f"not valid TOML ({exc})", "TOML syntax") from None
    except UnicodeDecodeError as exc:
        raise ProfileError(str(path), "", f"not UTF-8 text (byte {exc.start})", "a UTF-8 TOML file") from None


def load_profile(name_or_path: str | os.PathLike[str], config_dir: Path | None = None) -> RuleProfile:
    """Load a rule profile by name (``"tda"``, ``"house"``: ``<config_dir>/<name>.toml``) or path.

    :raises ProfileError: naming the file, the key and the allowed values.
    """
    text = os.fspath(name_or_path)
    if text in PROFILE_NAMES:
        path = (config_dir or CONFIG_DIR) / f"{text}.toml"
    else:
        path = Path(text)
        if path.suffix != ".toml" and not path.exists():
            raise ProfileError(text, "", "neither a profile name nor a file", ", ".join(PROFILE_NAMES) + " or a .toml path")
    return parse_profile(read_toml(path), str(path))


# --------------------------------------------------------------------------- table settings


@dataclass(frozen=True, slots=True)
class ShoeConfig:
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


@dataclass(frozen=True, slots=True)
class LedConfig:
    """``[leds]``: ``backend`` (``console``, ``gpio``, ``shoe`` or ``mock``) and, for ``gpio``, ``pins``: a
    table of LED name (``green``, ``amber``, ``blue``, ``white``, ``red``; see ``drivers.leds``) to
    BCM pin number; ``pwm`` (PWM LEDs: the betting signal fades) and ``active_high`` (false for
    LEDs wired to sink current)."""

    backend: str = "console"
    pins: Mapping[str, int] = field(default_factory=dict)
    pwm: bool = False
    active_high: bool = True


@dataclass(frozen=True, slots=True)
class ButtonConfig:
    """``[buttons]``: optional physical dealer buttons. ``pins``: a table of dealer input
    (``betting-complete``, ``ack-alert``, ``undo``, ``stub-reloaded``, ``cut-done``,
    ``hand-complete``, ``new-hand``) to BCM pin number; ``bounce_ms`` debounce time; ``pull_up`` (true: the
    button connects the pin to ground)."""

    pins: Mapping[str, int] = field(default_factory=dict)
    bounce_ms: int = 50
    pull_up: bool = True


@dataclass(frozen=True, slots=True)
class DisplayConfig:
    """``[display]``: ``host`` and ``port`` the dealer display is served on; ``enabled``;
    ``token``: the shared secret a touch screen must send with every input (required when
    ``host`` is not loopback; the environment variable ``SHOE_CTL_DISPLAY_TOKEN`` overrides it)."""

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 8080
    token: str | None = None


@dataclass(frozen=True, slots=True)
class JournalConfig:
    """``[journal]``: ``path`` of the SQLite journal (``None``: no journal unless ``shoe-ctl run
    --journal PATH`` names one) and ``retention_days`` of finished hands."""

    path: str | None = None
    retention_days: int = 30


@dataclass(frozen=True, slots=True)
class TableConfig:
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


_GAMES = ("stud", "stud8", "razz")
_LED_BACKENDS = ("console", "gpio", "shoe", "mock")  # shoe_ctl.dealer_io.LED_BACKENDS (a test checks)
_LED_NAMES = ("green", "amber", "blue", "white", "red")
_BUTTON_INPUTS = ("betting-complete", "ack-alert", "undo", "stub-reloaded", "cut-done", "hand-complete",
                  "new-hand")


def _check_keys(src: str, prefix: str, data: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in data:
        if key not in allowed:
            raise ProfileError(src, prefix + key, "unknown key", "keys " + ", ".join(allowed))


def _get(src: str, key: str, data: Mapping[str, Any], kind: type, default: Any, allowed: str) -> Any:
    name = key.rsplit(".", 1)[-1]
    if name not in data:
        return default
    value = data[name]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ProfileError(src, key, f"{value!r} is not an integer", allowed)
    if not isinstance(value, kind):
        raise ProfileError(src, key, f"{value!r} is not a {kind.__name__}", allowed)
    return value


def _table(src: str, key: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The sub-table ``key`` (dotted for a nested one, e.g. ``leds.pins``) of ``data``."""
    value = data.get(key.rsplit(".", 1)[-1], {})
    if not isinstance(value, Mapping):
        raise ProfileError(src, key, f"{value!r} is not a table", f"a [{key}] table")
    return value


def _check_pins(src: str, section: str, pins: Mapping[str, Any], names: Sequence[str], unknown: str,
                used: dict[int, str]) -> None:
    """Each ``name = pin`` of ``section``: a known name on a BCM pin 0..27 that no other LED or
    button already uses (``used`` maps pins to the key holding them, and is filled in).

    :raises ProfileError: naming the key, the problem and the allowed values.
    """
    for name, pin in pins.items():
        key = f"{section}.{name}"
        if isinstance(pin, bool) or not isinstance(pin, int) or not 0 <= pin <= 27:
            raise ProfileError(src, key, f"{pin!r} is not a BCM pin", "0..27")
        if name not in names:
            raise ProfileError(src, key, unknown, ", ".join(names))
        if pin in used:
            raise ProfileError(src, key, f"pin {pin} is already {used[pin]}", "a free BCM pin")
        used[pin] = key


def load_table_config(path: str | os.PathLike[str]) -> TableConfig:
    """Read a table configuration file (see ``config/table.toml``); absent keys take defaults.

    :raises ProfileError: naming the file, the key and the allowed values.
    """
    p = Path(path)
    src = str(p)
    data = read_toml(p)
    _check_keys(src, "", data, ("table", "seats", "rules", "game", "shoe", "leds", "display", "journal", "buttons",
                                "floor"))  # [floor]: shoe_ctl.floor.config
    table = _get(src, "table", data, str, "table-1", "a non-empty text")
    if not table.strip():
        raise ProfileError(src, "table", "is empty", "a non-empty text")
    seats = _get(src, "seats", data, int, 8, "2..8")
    if not 2 <= seats <= 8:
        raise ProfileError(src, "seats", f"{seats} is out of range", "2..8")
    rules = _get(src, "rules", data, str, "tda", "tda, house or a .toml path")
    game = _get(src, "game", data, str, "stud", ", ".join(_GAMES))
    if game not in _GAMES:
        raise ProfileError(src, "game", f"{game!r} is not a game", ", ".join(_GAMES))

    s = _table(src, "shoe", data)
    _check_keys(src, "shoe.", s, ("url", "baudrate", "serial", "auth", "secrets"))
    shoe = ShoeConfig(
        url=_get(src, "shoe.url", s, str, "sim", "a pyserial URL or sim"),
        baudrate=_get(src, "shoe.baudrate", s, int, 115200, "a positive integer"),
        serial=_get(src, "shoe.serial", s, str, None, "the shoe's serial number, 1..32 bytes") or None,
        auth=_get(src, "shoe.auth", s, str, "hmac", "hmac, off"),
        secrets=_get(src, "shoe.secrets", s, str, "/var/lib/shoe-ctl/shoes", "a folder path"),
    )
    if shoe.auth not in ("hmac", "off"):
        raise ProfileError(src, "shoe.auth", f"{shoe.auth!r} is not a mode", "hmac, off")
    if shoe.serial is not None and len(shoe.serial.encode("utf-8")) > 32:
        raise ProfileError(src, "shoe.serial", "is over 32 bytes", "the shoe's serial number, 1..32 bytes")
    if shoe.baudrate <= 0:
        raise ProfileError(src, "shoe.baudrate", f"{shoe.baudrate} is not positive", "a positive integer")

    led = _table(src, "leds", data)
    _check_keys(src, "leds.", led, ("backend", "pins", "pwm", "active_high"))
    backend = _get(src, "leds.backend", led, str, "console", ", ".join(_LED_BACKENDS))
    if backend not in _LED_BACKENDS:
        raise ProfileError(src, "leds.backend", f"{backend!r} is not a backend", ", ".join(_LED_BACKENDS))
    pins = _table(src, "leds.pins", led)
    used: dict[int, str] = {}
    _check_pins(src, "leds.pins", pins, _LED_NAMES, "unknown LED", used)
    leds = LedConfig(backend=backend, pins=dict(pins),
                     pwm=_get(src, "leds.pwm", led, bool, False, "true, false"),
                     active_high=_get(src, "leds.active_high", led, bool, True, "true, false"))

    b = _table(src, "buttons", data)
    _check_keys(src, "buttons.", b, ("pins", "bounce_ms", "pull_up"))
    bpins = _table(src, "buttons.pins", b)
    _check_pins(src, "buttons.pins", bpins, _BUTTON_INPUTS, "unknown dealer input", used)
    buttons = ButtonConfig(pins=dict(bpins),
                           bounce_ms=_get(src, "buttons.bounce_ms", b, int, 50, "0..1000"),
                           pull_up=_get(src, "buttons.pull_up", b, bool, True, "true, false"))
    if not 0 <= buttons.bounce_ms <= 1000:
        raise ProfileError(src, "buttons.bounce_ms", f"{buttons.bounce_ms} is out of range", "0..1000")

    d = _table(src, "display", data)
    _check_keys(src, "display.", d, ("enabled", "host", "port", "token"))
    display = DisplayConfig(
        enabled=_get(src, "display.enabled", d, bool, True, "true, false"),
        host=_get(src, "display.host", d, str, "127.0.0.1", "a host name or address"),
        port=_get(src, "display.port", d, int, 8080, "0..65535"),
        token=_get(src, "display.token", d, str, None, "a text") or None,
    )
    if not 0 <= display.port <= 65535:
        raise ProfileError(src, "display.port", f"{display.port} is out of range", "0..65535")

    j = _table(src, "journal", data)
    _check_keys(src, "journal.", j, ("path", "retention_days"))
    journal = JournalConfig(
        path=_get(src, "journal.path", j, str, None, "a file path"),
        retention_days=_get(src, "journal.retention_days", j, int, 30, "1 or more"),
    )
    if journal.path is not None and not journal.path.strip():
        raise ProfileError(src, "journal.path", "is empty", "a file path (leave the key out for no journal)")
    if journal.retention_days < 1:
        raise ProfileError(src, "journal.retention_days", f"{journal.retention_days} is below 1", "1 or more")
    return TableConfig(table, seats, rules, game, shoe, leds, display, journal, buttons)
