"""What a table puts on the floor's MQTT broker: topic names and payloads, under the embargo.

Every payload is built here, from two sources only: a journal record (:func:`event_payload`) and
the machine's public state (:func:`floor_state`). Both are whitelists: a record kind or a key
not listed below is published without its body, and no card identity leaves the table except the
upcards and the community card of the public state (never a downcard, not even one tabled at
showdown). Topics and payloads are described in ``docs/floor.md``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any

try:  # a dependency; an environment made before it was one writes with the standard library
    import orjson
except ImportError:  # pragma: no cover - the environments the project makes have it
    orjson = None  # type: ignore[assignment]

from shoe_ctl.embargo import CARD_TOKEN, REDACTED, public_state
from shoe_ctl.floor.card_health import record_body
from shoe_ctl.floor.severity import SEVERITIES, classify
from shoe_ctl.recall import HIDDEN_ROLES, public
from shoe_ctl.service.journal.records import Record
from shoe_ctl.utf8 import Reports, encode_replacing, escaped, unencodable_at

__all__ = [
    "NAME_RE", "SEVERITIES", "Topics", "bare_payload", "check_name", "dumps", "event_payload", "floor_state", "floor_tile",
    "recall_hand", "redact", "severity",
]

log = logging.getLogger(__name__)

PAYLOAD_VERSION = 1

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A room or table name usable as one MQTT topic level and a broker user name."""



def check_name(what: str, name: str) -> str:
    """``name`` when it is a valid room/table name (``NAME_RE``).

    :raises ValueError: naming ``what`` and the allowed form.
    """
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ValueError(f"{what} {name!r} cannot be an MQTT topic level: use 1-64 letters, digits, '_', '.', '-'")
    return name


class Topics:
    """The topics of one table in one room (``<room>/tables/<table>/<leaf>``):

    - ``state`` (retained): what the floor's tile of the table shows (:func:`floor_tile`), sent
      when it changes;
    - ``display`` (retained): the whole public state, seats and upcards (:func:`floor_state`),
      sent less often;
    - ``events``: every journal record, in journal order (QoS 1);
    - ``alerts``: the alert records again, for subscribers that want only those;
    - ``status`` (retained): online with the session, or the Last Will's offline;
    - ``replay``: the floor's requests to publish again from a journal sequence (the table reads);
    - ``verify``: the floor's seeded verification requests (the table reads), ``verified``: the
      table's answers (docs/compliance.md, "Verification on demand");
    - ``recall`` (retained): the last hands, downcards hidden (docs/compliance.md, "Recall");
    - ``clock``: the floor's time (the table compares its own: docs/compliance.md, "The host's life").
    """

    LEAVES = ("state", "display", "events", "alerts", "status")

    def __init__(self, room: str, table: str) -> None:
        self.room = check_name("room", room)
        self.table = check_name("table", table)
        base = f"{room}/tables/{table}"
        self.state = f"{base}/state"
        self.display = f"{base}/display"
        self.events = f"{base}/events"
        self.alerts = f"{base}/alerts"
        self.status = f"{base}/status"
        self.replay = f"{base}/replay"
        self.verify = f"{base}/verify"
        self.verified = f"{base}/verified"
        self.recall = f"{base}/recall"
        self.clock = f"{base}/clock"

    @staticmethod
    def parse(topic: str) -> tuple[str, str, str] | None:
        """``(room, table, leaf)`` of a table topic, else ``None``."""
        parts = topic.split("/")
        if len(parts) != 4 or parts[1] != "tables":
            return None
        return parts[0], parts[2], parts[3]


TAG_TOKEN = re.compile(r"\btag [0-9a-fA-F]{8,20}\b")
"""A card's tag UID in a text (``tag 04a1b2c3``): a tag names a card to whoever holds the deck map."""


_PLAIN = (int, float, bool, type(None))
"""The JSON leaves that hold no text: returned as they are, without the checks below."""


def redact(value: object, public: frozenset[str] = frozenset()) -> Any:
    """``value`` with every card written in a string that is not in ``public``, and every tag
    UID, replaced by ``??``, in a mapping's keys as in its values; a mapping becomes a ``dict``
    with ``str`` keys (two keys written the same once redacted are told apart by
    :func:`_distinct`: no value is lost), a list or tuple a ``list``. The floor's payloads are
    walked here at every card: the exact JSON types are looked at first (one ``type`` test each,
    not an abstract class's check), a text without ``tag `` skips the tag's pattern, with no
    public card every card token is replaced by the same text, and a key known to name no card
    and no tag (:data:`_PLAIN_KEYS`) is kept as it is."""
    kind = type(value)
    if kind is str:
        text: str = value  # type: ignore[assignment]
        if "tag " in text:
            text = TAG_TOKEN.sub("tag " + REDACTED, text)
        if not public:
            return CARD_TOKEN.sub(REDACTED, text)
        return CARD_TOKEN.sub(lambda m: m.group(0) if m.group(0) in public else REDACTED, text)
    if kind is dict:
        return _mapping(value, public)  # type: ignore[arg-type]
    if kind is list or kind is tuple:
        return [redact(v, public) for v in value]  # type: ignore[attr-defined]
    if kind in _PLAIN:
        return value
    if isinstance(value, str):  # a str subclass
        return redact(str(value), public)
    if isinstance(value, Mapping):
        return _mapping(value, public)
    if isinstance(value, list | tuple):
        return [redact(v, public) for v in value]
    return value


_PLAIN_KEYS: set[str] = set()
"""Keys seen that name no card and no tag UID (redacted, each is itself whatever is public): the
payloads' own keys, kept as they are without the patterns; at most :data:`PLAIN_KEYS_MAX` of up to
64 characters."""

PLAIN_KEYS_MAX = 4096


def _mapping(items: Mapping[Any, Any], public: frozenset[str]) -> dict[str, Any]:
    """A mapping redacted, its keys as its values (:func:`redact`)."""
    out = {k if type(k) is str and k in _PLAIN_KEYS else _key(k, public): redact(v, public)
           for k, v in items.items()}
    return out if len(out) == len(items) else _distinct(items, public)


def _key(key: object, public: frozenset[str]) -> str:
    """A mapping's key as the payload writes it: ``str(key)`` redacted as a text value is."""
    text = key if type(key) is str else str(key)
    out: str = redact(text, public)
    if (out == text and len(text) <= 64 and len(_PLAIN_KEYS) < PLAIN_KEYS_MAX
            and (not public or CARD_TOKEN.search(text) is None)):
        _PLAIN_KEYS.add(text)  # names nothing: the same with any public cards
    return out


def _distinct(items: Mapping[Any, Any], public: frozenset[str]) -> dict[str, Any]:
    """A mapping whose keys, written and redacted (:func:`_key`), coincide (``{"As": 1, "Kd": 2}``,
    ``{1: .., "1": ..}``): each key after the first of its text gets `` (2)``, `` (3)``, ... (the
    first number free), in the mapping's order, so every value reaches the payload and no key
    tells the card it was."""
    out: dict[str, Any] = {}
    for k, v in items.items():
        key = _key(k, public)
        if key in out:
            n = 2
            while f"{key} ({n})" in out:
                n += 1
            key = f"{key} ({n})"
        out[key] = redact(v, public)
    return out


def severity(code: str, latched: bool) -> str:
    """An alert's severity on the floor (:func:`shoe_ctl.floor.severity.classify`: the one table
    of alert code to severity; ``critical`` when latched)."""
    return classify(code, latched)


def _pick(body: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: redact(body[k]) for k in keys if k in body}


def event_payload(record: Record, *, table: str, session: int, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The published form of one journal record (``shoe_ctl.service.journal.Record``); ``body``:
    its :func:`~shoe_ctl.floor.card_health.record_body` when the caller has parsed it already.

    Always: ``v``, ``table``, ``session`` (the publisher's connection number, see
    ``docs/floor.md``), ``seq`` (the journal sequence: the floor's order and dedup key),
    ``time_us`` (the append time at the table, µs since the epoch, UTC), ``hand`` and ``kind``.
    Then, by kind, a whitelist of the body (every card written in a text becomes ``??``):

    - ``CardRead``: ``dispense``, ``epoch``, ``reader``, ``readable`` (never the card);
    - ``ShoeFault``: ``fault``, ``cleared``; ``ShoeButton``: ``button``;
    - ``ForeignCard``: ``what``, ``deck``, ``stub`` (deck ids; never its tag or card);
    - ``StubDeck``: ``epoch``, ``deck``;
    - ``LinkChanged``: ``status``, ``detail``, ``sequence_reset``;
    - ``DealerInput``: ``action``, ``seat``, ``gate`` (when the controller's gate took it); ``TimerFired``: ``name``;
    - ``Alert``: ``code``, ``message``, ``street``, ``seat``, ``latched``, ``moves``, ``severity``;
    - ``hand-start``: ``game``, ``rules``, ``seats``; ``hand-end``: ``abandoned`` (the publisher
      adds the reader and card health: ``shoe_ctl.floor.card_health``);
    - ``host``: ``event`` (power-on, start, clean-stop), ``clock_synced``, ``unclean_before``;
    - anything else: no body.
    """
    if body is None:
        body = record_body(record)
    out = bare_payload(record, table=table, session=session)
    kind = record.kind
    if kind == "CardRead":
        out.update(_pick(body, ("dispense", "epoch", "reader")))
        out["readable"] = body.get("card") is not None
    elif kind == "ShoeFault":
        out["fault"] = redact(body.get("kind"))
        out["cleared"] = bool(body.get("cleared", False))
    elif kind == "ForeignCard":
        out.update(_pick(body, ("what", "deck", "stub")))  # deck ids are public; never the tag or the card
    elif kind == "StubDeck":
        out.update(_pick(body, ("epoch", "deck")))
    elif kind == "ShoeButton":
        out.update(_pick(body, ("button",)))
    elif kind == "LinkChanged":
        out.update(_pick(body, ("status", "detail", "sequence_reset")))
    elif kind == "DealerInput":
        out.update(_pick(body, ("action", "seat", "gate")))
    elif kind == "TimerFired":
        out.update(_pick(body, ("name",)))
    elif kind == "Alert":
        out.update(_pick(body, ("code", "message", "street", "seat", "latched", "moves")))
        out["severity"] = severity(str(body.get("code", "")), bool(body.get("latched", False)))
    elif kind == "hand-start":
        out.update(_pick(body, ("game", "rules", "seats")))
    elif kind == "hand-end":
        out["abandoned"] = bool(body.get("abandoned", False))
    elif kind == "host":
        out.update(_pick(body, ("event", "clock_synced", "unclean_before")))
    return out


def bare_payload(record: Record, *, table: str, session: int) -> dict[str, Any]:
    """The keys every published record has (:func:`event_payload`), without its body."""
    return {"v": PAYLOAD_VERSION, "table": table, "session": session, "seq": int(record.seq),
            "time_us": int(record.time_us), "hand": record.hand, "kind": record.kind}


_SEAT_KEYS = ("seat", "status", "up", "down_count", "bring_in", "first_to_act", "absent")
_TOP_KEYS = ("hand", "game", "rules", "state", "street", "community", "stub", "shoe", "instruction")


def floor_state(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The floor's view of a ``DisplayUpdate.state``: the display's public state
    (:func:`shoe_ctl.embargo.public_state`) with every seat's ``down`` removed even at
    showdown, only the keys in ``_TOP_KEYS``/``_SEAT_KEYS`` kept, the machine's alert list
    reduced to codes, and every card in a text that is not an upcard or the community card
    written ``??``."""
    seats_in = raw.get("seats")
    cleaned = dict(raw)
    if isinstance(seats_in, list):
        cleaned["seats"] = [{k: v for k, v in s.items() if k != "down"} if isinstance(s, Mapping) else s
                            for s in seats_in]
    pub = public_state(cleaned)
    out: dict[str, Any] = {k: pub.get(k) for k in _TOP_KEYS}
    seats = []
    upcards: set[str] = set()
    for s in pub.get("seats") or []:
        if isinstance(s, Mapping):
            seat = {k: s[k] for k in _SEAT_KEYS if k in s}
            seats.append(seat)
            upcards.update(c for c in seat.get("up") or [] if isinstance(c, str))
    out["seats"] = seats
    if isinstance(out.get("community"), str):
        upcards.add(out["community"])
    out["alerts"] = [{"code": a.get("code"), "seat": a.get("seat"), "latched": bool(a.get("latched"))}
                     for a in pub.get("alerts") or [] if isinstance(a, Mapping)]
    return dict(redact(out, frozenset(upcards)))


_TILE_KEYS = ("hand", "game", "state", "street")
_TILE_PARTS = (("stub", ("count", "required", "forecast")), ("shoe", ("status", "detail")))

_TILE_TEXTS: dict[str, str] = {}
"""A tile's texts as the tile writes them (every card and tag UID ``??``), for the texts seen so
far: up to 1,024 of up to 200 characters (the state and street names, the stub's forecast, the
shoe's status; a fault's detail may be new every time)."""


def _tile_text(text: str) -> str:
    """``text`` as :func:`floor_tile` writes it: the embargo filter's text with no public card,
    then redacted (remembered, :data:`_TILE_TEXTS`)."""
    out = _TILE_TEXTS.get(text)
    if out is None:
        out = redact(public_state({"text": text})["text"])
        if len(text) <= 200 and len(_TILE_TEXTS) < 1024:
            _TILE_TEXTS[text] = out
    return out


def _tile_fields(source: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any] | None:
    """``source``'s ``keys`` (those present) with each text as the tile writes it, when every one
    is a ``str`` or a JSON scalar; None for any other value (the whole filter's path)."""
    out: dict[str, Any] = {}
    for k in keys:
        if k in source:
            v = source[k]
            kind = type(v)
            if kind is str:
                v = _tile_text(v)
            elif kind not in _PLAIN:
                return None
            out[k] = v
    return out


def floor_tile(raw: Mapping[str, Any]) -> dict[str, Any]:
    """What the floor's tile of a table shows, from a ``DisplayUpdate.state``: ``hand``, ``game``,
    ``state``, ``street``, the stub's ``count``, ``required`` and ``forecast`` and the shoe's
    ``status`` and ``detail`` (the keys present), every card written in a text ``??`` (no card is
    public here: the tile names none) and every tag UID redacted. A few small fields: built and
    compared per update at a fraction of :func:`floor_state`'s cost: with texts and numbers only
    (the machine's updates), each text is filtered and redacted once and remembered; anything
    else goes through the whole filter and the redaction."""
    tile = _tile_fields(raw, _TILE_KEYS)
    for key, keys in _TILE_PARTS:
        if tile is None:
            break
        sub = raw.get(key)
        if type(sub) is dict:
            fields = _tile_fields(sub, keys)
            if fields is None:
                tile = None
            else:
                tile[key] = fields
        elif isinstance(sub, Mapping):
            tile = None
    if tile is not None:
        return tile
    part: dict[str, Any] = {k: raw[k] for k in _TILE_KEYS if k in raw}
    stub, shoe = raw.get("stub"), raw.get("shoe")
    if isinstance(stub, Mapping):
        part["stub"] = {k: stub[k] for k in ("count", "required", "forecast") if k in stub}
    if isinstance(shoe, Mapping):
        part["shoe"] = {k: shoe[k] for k in ("status", "detail") if k in shoe}
    return dict(redact(public_state(part)))


def recall_hand(hand: Mapping[str, Any]) -> dict[str, Any]:
    """One hand of the recall as the floor gets it (the ``recall`` topic; a hand of
    :func:`shoe_ctl.recall.recall_hands`): every card not face up written ``??``
    (:func:`shoe_ctl.recall.public`), then, in every text, each card that is not one of this
    hand's face-up cards (upcards, the community card) and every tag UID redacted. The hand alone
    decides: a card face up in another hand does not make it public in this one, so a hand that
    no longer changes is redacted once (the publisher keeps it)."""
    [shown_hand] = public([hand])
    shown = frozenset(e["card"] for e in shown_hand["entries"]
                      if e.get("kind") == "card" and e.get("role") not in HIDDEN_ROLES)
    return dict(redact(shown_hand, shown))


_ORJSON_STRICT = (orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
                  | orjson.OPT_PASSTHROUGH_SUBCLASS) if orjson is not None else 0
"""orjson refuses what the standard library's encoder would not write the same way (a dataclass, a
date, a subclass of str, int, dict or list: an enum's value), besides a key that is not a string
and an integer beyond 64 bits; those payloads are written by the standard library."""


def dumps(payload: Mapping[str, Any], topic: str = "the floor") -> bytes:
    """A payload as compact UTF-8 JSON: orjson's (a fraction of the standard library's time on the
    floor's payloads), or the standard library's for a payload orjson refuses
    (:data:`_ORJSON_STRICT`). The same bytes either way but for how a float is spelt (``1.5e-7``
    for ``1.5e-07``, ``0.00001`` for ``1e-05``: the same value), and a NaN, which no payload holds
    and JSON has not, written ``null``. A code point UTF-8 cannot encode (a lone surrogate) in a
    key or a text is written U+FFFD and the rest as it is, with a warning naming ``topic`` (the
    payload's table, sequence, kind or hand where it has them) and the place in the payload, at
    most one a minute per topic (:mod:`shoe_ctl.utf8`).

    :raises TypeError: a value JSON cannot hold (a dataclass, a set)."""
    if orjson is not None:
        try:
            return orjson.dumps(payload, option=_ORJSON_STRICT)
        except TypeError:  # orjson.JSONEncodeError
            pass
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        data, count = encode_replacing(text)
        named = ", ".join(f"{k} {payload[k]}" for k in ("table", "seq", "kind", "hand")
                          if type(payload.get(k)) in (int, str))
        _REPORTS(topic, f"floor: the payload on {topic} ({escaped(named) or 'no table named'}) held {count} "
                        f"code point(s) UTF-8 cannot encode (a lone surrogate), first at "
                        f"{unencodable_at(payload) or 'its top'}: published with each written U+FFFD")
        return data


_REPORTS = Reports(log)
"""The warnings of :func:`dumps` (one a minute per topic)."""
