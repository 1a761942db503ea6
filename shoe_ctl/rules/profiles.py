"""Rule profiles: the named switches that select which rule text governs each decision, validated
from an already-parsed TOML table (every key required, unknown keys refused, each error a
:class:`ProfileError` naming the file, the key and the allowed values). Pure. The switches and
the clause each selects: docs/rules.md, *Rule profiles*.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from shoe_ctl.rules.games import TieRule
from shoe_ctl.values import FrozenValue, frozen_value

__all__ = [
    "AbsentRule",
    "ExposedDowncardRule",
    "ExposedSeventhRule",
    "PrematureRule",
    "ProfileError",
    "ProfileErrors",
    "RuleProfile",
    "ShortStubRule",
    "parse_profile",
]


class ProfileError(ValueError):
    """A rule profile (or table configuration) file, key or value that cannot be used.

    The message always has the form ``"<source>: <key>: <problem>; allowed: <values>"``.

    :param source: the file (or other origin) the mapping came from.
    :param key: the offending key (dotted for nested tables), or ``""`` for the whole file.
    :param problem: what is wrong.
    :param allowed: the values (or keys) that would be accepted.
    """

    def __init__(self, source: str, key: str, problem: str, allowed: str) -> None:
        self.source = source
        self.key = key
        self.problem = problem
        self.allowed = allowed
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {problem}; allowed: {allowed}")


class ProfileErrors(ProfileError):
    """Several problems in one file, all reported at once: ``errors`` (each a
    :class:`ProfileError`, in file order); the message is their messages, one per line. The
    ``source``, ``key``, ``problem`` and ``allowed`` of the first are kept.

    :param errors: at least one error.
    """

    def __init__(self, errors: list[ProfileError]) -> None:
        first = errors[0]
        super().__init__(first.source, first.key, first.problem, first.allowed)
        self.errors = list(errors)
        self.args = ("\n".join(str(e) for e in self.errors),)


class ShortStubRule(StrEnum):
    """Which short-stub procedure applies: TDA RP-10-H (7th only) or house 16.18-16.20 (any street)."""

    TDA = "rp-10-h"
    HOUSE = "house-16.18"


class PrematureRule(StrEnum):
    """Prematurely dealt cards: TDA RP-5-D (back into the stub) or house 16.16 (set aside)."""

    TDA = "rp-5-d"
    HOUSE = "house-16.16"


class ExposedDowncardRule(StrEnum):
    """A downcard exposed on the initial deal: TDA RP-10-A or house 16.1 / 16.2."""

    TDA = "rp-10-a"
    HOUSE = "house-16.1"


class ExposedSeventhRule(StrEnum):
    """A 7th-street card dealt face up: TDA RP-10-B or house 16.21-16.24."""

    TDA = "rp-10-b"
    HOUSE = "house-16.22"


class AbsentRule(StrEnum):
    """A player not at the seat: TDA Rule 30 via RP-10-C, or house 16.9-16.11."""

    TDA = "rule-30"
    HOUSE = "house-16.9"


@frozen_value
class RuleProfile(FrozenValue):
    """One rule profile: every switch a rule decision reads.

    :param name: ``"tda"`` or ``"house"``; also shown on the display (``rules``).
    :param tie: how equal best boards are separated (RP-10-D suit, or position).
    :param tournament: tournament play (house 16.1 misdeal, house 16.10 kill of an absent player).
    :param short_stub: the short-stub procedure family (RP-10-H or house 16.18).
    :param skip_burn: house 16.19: skip the burn after a scramble when that gives every remaining
        player a fresh card.
    :param premature: prematurely dealt cards (RP-5-D or house 16.16).
    :param exposed_downcard: downcard exposed on the initial deal (RP-10-A or house 16.1).
    :param exposed_seventh: 7th-street card dealt face up (RP-10-B or house 16.22).
    :param absent_player: player absent from the seat (Rule 30 or house 16.9).
    :param open_pair_bet: an open pair on 4th street allows the larger bet (house 16.8: true;
        RP-10-F: false).
    """

    name: str
    tie: TieRule
    tournament: bool
    short_stub: ShortStubRule
    skip_burn: bool
    premature: PrematureRule
    exposed_downcard: ExposedDowncardRule
    exposed_seventh: ExposedSeventhRule
    absent_player: AbsentRule
    open_pair_bet: bool

    def __init__(self, name: str, tie: TieRule, tournament: bool, short_stub: ShortStubRule,
                 skip_burn: bool, premature: PrematureRule, exposed_downcard: ExposedDowncardRule,
                 exposed_seventh: ExposedSeventhRule, absent_player: AbsentRule,
                 open_pair_bet: bool) -> None:
        put = self._put
        put[0](self, name)
        put[1](self, tie)
        put[2](self, tournament)
        put[3](self, short_stub)
        put[4](self, skip_burn)
        put[5](self, premature)
        put[6](self, exposed_downcard)
        put[7](self, exposed_seventh)
        put[8](self, absent_player)
        put[9](self, open_pair_bet)

    @property
    def house(self) -> bool:
        """True when the house short-stub rules (16.18-16.20) apply."""
        return self.short_stub is ShortStubRule.HOUSE


PROFILE_NAMES = ("tda", "house")

_ENUMS: dict[str, type[StrEnum]] = {
    "tie": TieRule,
    "short_stub": ShortStubRule,
    "premature": PrematureRule,
    "exposed_downcard": ExposedDowncardRule,
    "exposed_seventh": ExposedSeventhRule,
    "absent_player": AbsentRule,
}
_BOOLS = ("tournament", "skip_burn", "open_pair_bet")
_KEYS = ("name", *_ENUMS, *_BOOLS)


def _quote(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def parse_profile(data: Mapping[str, Any], source: str) -> RuleProfile:
    """Validate one profile mapping (as ``tomllib`` returns it) into a :class:`RuleProfile`.

    :param data: the parsed TOML document; every key of :data:`_KEYS` required, no others.
    :param source: the file the mapping came from, named in every error.
    :raises ProfileError: for a missing or unknown key, or a value not among the allowed ones
        (:class:`ProfileErrors` with every one of them when there are several).
    """
    if not isinstance(data, Mapping):
        raise ProfileError(source, "", f"expected a table of keys, got {type(data).__name__}", _quote(list(_KEYS)))
    errors: list[ProfileError] = []
    for key in sorted(k for k in data if k not in _KEYS):
        shown = key if key.isprintable() else repr(key)[1:-1]  # one line per error
        errors.append(ProfileError(source, shown, "unknown key", "keys " + _quote(list(_KEYS))))
    for key in _KEYS:
        if key not in data:
            errors.append(ProfileError(source, key, "missing key", _allowed(key)))
    name = data.get("name")
    if "name" in data and name not in PROFILE_NAMES:
        errors.append(ProfileError(source, "name", f"{name!r} is not a profile name", _quote(PROFILE_NAMES)))
    values: dict[str, Any] = {"name": name}
    for key, enum in _ENUMS.items():
        if key not in data:
            continue
        raw = data[key]
        try:
            values[key] = enum(raw) if isinstance(raw, str) else None
        except ValueError:
            values[key] = None
        if values[key] is None:
            errors.append(ProfileError(source, key, f"{raw!r} is not allowed", _allowed(key)))
    for key in _BOOLS:
        if key not in data:
            continue
        raw = data[key]
        if not isinstance(raw, bool):
            errors.append(ProfileError(source, key, f"{raw!r} is not a boolean", "true, false"))
        values[key] = raw
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ProfileErrors(errors)
    return RuleProfile(**values)


def _allowed(key: str) -> str:
    if key == "name":
        return _quote(PROFILE_NAMES)
    if key in _ENUMS:
        return _quote([str(m.value) for m in _ENUMS[key]])
    return "true, false"
