"""The stable, versioned JSON form (format ``1``) of every event and command of
:mod:`shoe_ctl.events`, in which the journal stores them: :func:`dumps` and :func:`loads`, every
problem a :class:`CodecError` naming the type, the field and where. The format's rules:
docs/journal.md, *Records*.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Union

from shoe_ctl import events
from shoe_ctl.rules.cards import Card, CardError
from shoe_ctl.utf8 import unencodable_at

VERSION = 1
"""The codec format version written in every object's ``"v"``."""


class CodecError(ValueError):
    """A record that is not a valid encoded event or command; the message says what and where."""


# Every type that crosses the controller's queue or leaves it. ShoeInfo is also top-level capable
# (it travels inside LinkChanged, but encoding it alone is allowed).
TYPES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        events.ShoeInfo,
        events.CardRead,
        events.ShoeFault,
        events.ForeignCard,
        events.StubDeck,
        events.ShoeButton,
        events.LinkChanged,
        events.SequenceGap,
        events.CounterReset,
        events.ShoeRestarted,
        events.DealerInput,
        events.TimerFired,
        events.Instruction,
        events.Alert,
        events.DisplayUpdate,
        events.ShoeCommand,
    )
}

Encodable = events.Event | events.Command | events.ShoeInfo

_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls, vars(events))
        _HINTS[cls] = hints
    return hints


def _where(where: str) -> str:
    return f" ({where})" if where else ""


# --------------------------------------------------------------------------- encode


_PLAIN_TYPES = frozenset({type(None), bool, int, str, float})
_FIELD_NAMES: dict[type[Any], tuple[tuple[str, ...], tuple[tuple[str, Any], ...]]] = {}


def _field_names(cls: type[Any]) -> tuple[tuple[str, ...], tuple[tuple[str, Any], ...]]:
    """``cls``'s fields always written, and those written only when not their default (field
    metadata ``{"codec": "omit-default"}``: a marker added to the format later, so the records
    without it keep their bytes), each with its default."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        fields = dataclasses.fields(cls)
        names = _FIELD_NAMES[cls] = (
            tuple(f.name for f in fields if f.metadata.get("codec") != "omit-default"),
            tuple((f.name, f.default) for f in fields if f.metadata.get("codec") == "omit-default"),
        )
    return names


def _enc_value(value: object) -> Any:
    if type(value) in _PLAIN_TYPES:
        return value
    if value is None or isinstance(value, bool | int | str | float):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, tuple | list):
        return [_enc_value(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _enc_value(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _enc_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    raise CodecError(f"cannot encode a {type(value).__name__}: {value!r}")


def encode(obj: Encodable) -> dict[str, Any]:
    """The JSON-safe dict of ``obj`` with ``"v"`` and ``"type"``.

    :raises CodecError: for an object of a type this codec does not know, or a field value that is
        not JSON-safe (e.g. a set inside ``DealerInput.args``).
    """
    name = type(obj).__name__
    if TYPES.get(name) is not type(obj):
        raise CodecError(f"cannot encode {name}: not an event or command type of shoe_ctl.events")
    out: dict[str, Any] = {"v": VERSION, "type": name}
    always, optional = _field_names(type(obj))
    for field in always:
        try:
            out[field] = _enc_value(getattr(obj, field))
        except CodecError as exc:
            raise CodecError(f"{name}.{field}: {exc}") from None
    for field, default in optional:
        value = getattr(obj, field)
        if value != default:
            out[field] = _enc_value(value)
    return out


TEXT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""The journal's JSON text: compact, sorted keys, non-ASCII kept. Made once: ``json.dumps`` with
these options builds a new encoder on every call (docs/performance.md, "The loaded full stack:
the journal path's CPU")."""


def dumps(obj: Encodable) -> str:
    """``encode(obj)`` as compact JSON text with sorted keys (equal values, equal text).

    :raises CodecError: as :func:`encode`; and for a text (a key or a value) holding a code point
        UTF-8 cannot encode (a lone surrogate): the journal cannot write it, and the record would
        not read back as the event; the message names the type and the field."""
    value = encode(obj)
    text = TEXT.encode(value)
    if not text.isascii():
        try:
            text.encode("utf-8")  # a sixth of a pattern search's time on a record's text
        except UnicodeEncodeError:
            raise CodecError(f"{type(obj).__name__}.{unencodable_at(value)}: a text with a code point UTF-8 "
                             "cannot encode (a lone surrogate); the journal cannot write it") from None
    return text


# --------------------------------------------------------------------------- decode


def _dec_value(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            raise CodecError(f"{path}: null is not allowed")
        others = [a for a in args if a is not type(None)]
        if len(others) == 1:
            return _dec_value(others[0], value, path)
        raise CodecError(f"{path}: unsupported union {tp!r}")  # pragma: no cover - none in events
    if tp is Any:
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise CodecError(f"{path}: expected an array, got {json.dumps(value)[:40]}")
        (item_tp, *_rest) = typing.get_args(tp)
        return tuple(_dec_value(item_tp, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise CodecError(f"{path}: expected an object, got {json.dumps(value)[:40]}")
        return dict(value)
    if tp is Card:
        if not isinstance(value, str):
            raise CodecError(f"{path}: expected a card text like 'As', got {value!r}")
        try:
            return Card.parse(value)
        except CardError as exc:
            raise CodecError(f"{path}: {exc}") from None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in tp)
            raise CodecError(f"{path}: {value!r} is not a {tp.__name__} (allowed: {allowed})") from None
    if tp is bool:
        if not isinstance(value, bool):
            raise CodecError(f"{path}: expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise CodecError(f"{path}: expected an integer, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise CodecError(f"{path}: expected a string, got {value!r}")
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise CodecError(f"{path}: expected an object, got {value!r}")
        return _dec_fields(tp, value, path)
    raise CodecError(f"{path}: unsupported field type {tp!r}")  # pragma: no cover


def _dec_fields(cls: type[Any], data: Mapping[str, Any], path: str) -> Any:
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields) - {"v", "type"})
    if unknown:
        raise CodecError(f"{path}: unknown field(s) {', '.join(unknown)}")
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise CodecError(f"{path}: missing field {name!r}")
            continue
        kwargs[name] = _dec_value(hints[name], data[name], f"{path}.{name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:  # pragma: no cover - field checks above catch these
        raise CodecError(f"{path}: {exc}") from None


def decode(data: object, where: str = "") -> Encodable:
    """The event or command that :func:`encode` turned into ``data``.

    :param data: the decoded JSON object.
    :param where: where the data came from, for error messages (e.g. ``"journal record 812"``).
    :raises CodecError: for a non-object, a missing/unknown ``"type"``, a ``"v"`` that is missing
        or newer than :data:`VERSION`, an unknown or missing field, or a field of the wrong type
        (the message names the type and field, e.g. ``CardRead.card``).
    """
    if not isinstance(data, dict):
        raise CodecError(f"expected a JSON object, got {type(data).__name__}{_where(where)}")
    v = data.get("v")
    if isinstance(v, bool) or not isinstance(v, int):
        raise CodecError(f"missing or invalid format version \"v\": {v!r}{_where(where)}")
    if v > VERSION:
        raise CodecError(f"format version {v} is newer than this program reads ({VERSION}){_where(where)}")
    name = data.get("type")
    cls = TYPES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise CodecError(f"unknown type {name!r}{_where(where)}")
    try:
        return typing.cast(Encodable, _dec_fields(cls, data, cls.__name__))
    except CodecError as exc:
        raise CodecError(f"{exc}{_where(where)}") from None


def loads(text: str | bytes, where: str = "") -> Encodable:
    """Parse JSON text and :func:`decode` it.

    :raises CodecError: for text that is not JSON (with line and column), JSON Python cannot read
        (values nested too deeply, an integer of thousands of digits) or any :func:`decode` error.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CodecError(f"not JSON: {exc}{_where(where)}") from None
    except RecursionError:
        raise CodecError(f"not JSON that can be read: values nested too deeply{_where(where)}") from None
    except ValueError:  # int("9" * 5000): Python's limit on integer digits
        raise CodecError(f"not JSON that can be read: an integer too long{_where(where)}") from None
    try:
        return decode(data, where)
    except RecursionError:
        raise CodecError(f"values nested too deeply{_where(where)}") from None
