"""The hole-card embargo filter: a public state with every card that is not public removed, for
every output that leaves the machine (the dealer display, the floor). One module, imported by
both; what it enforces is in docs/display.md, *Hole-card embargo at the display*.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["CARD_TOKEN", "HIDDEN_KEYS", "MUCKED_STATUSES", "REDACTED", "SCALARS", "TOKENS", "Public", "StateFilter",
           "card_strings", "downcards_in", "is_plain", "is_showdown", "public_parts", "public_state", "public_with"]

HIDDEN_KEYS = frozenset({
    "down", "downcards", "down_cards", "hole", "hole_cards", "burns", "burned", "burn_cards",
    "deck", "stub_cards", "new_stub", "set_aside", "muck", "mucked",
})
"""Keys dropped at any depth of a state (a seat's ``down`` survives only at showdown)."""

MUCKED_STATUSES = frozenset({"folded", "killed", "dead"})
"""Seat statuses whose downcards are never shown, not even at showdown."""

CARD_TOKEN = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9TJQKA])[cdhs](?![0-9A-Za-z])")
"""A card as the product writes it (``As``, ``Td``, ``10d``)."""

REDACTED = "??"

def is_showdown(state: Mapping[str, Any]) -> bool:
    """True when ``state`` is at showdown: the machine state name or the street says
    ``showdown``, or ``state["showdown"]`` is true."""
    if state.get("showdown") is True:
        return True
    for name in (state.get("state"), state.get("street")):
        if isinstance(name, str) and "showdown" in name.lower():
            return True
    return False


_HIDDEN_KEY_CACHE: dict[Any, bool] = {}
"""Whether a key is hidden (:data:`HIDDEN_KEYS`, any case), for the keys seen so far (bounded)."""


def _hidden(key: object) -> bool:
    hidden = _HIDDEN_KEY_CACHE.get(key)
    if hidden is None:
        hidden = str(key).lower() in HIDDEN_KEYS
        if len(_HIDDEN_KEY_CACHE) < 1024:
            _HIDDEN_KEY_CACHE[key] = hidden
    return hidden


SCALARS = frozenset({int, bool, float, type(None)})
"""The JSON scalar types: never a card."""

_PLAIN: dict[str, None] = {}
"""Texts seen holding no card token (statuses, street and state names, ...), up to 4,096 of up
to 64 characters: returned as they are without a search."""


class _Keep:
    """The redaction of one state's texts: ``keep(match)`` is the card token when public, else
    ``??``; ``known`` the public texts that are one whole card token (returned as they are)."""

    __slots__ = ("known", "public")

    def __init__(self, public: set[str]) -> None:
        self.public = public
        self.known = TOKENS.intersection(public)

    def __call__(self, match: re.Match[str]) -> str:
        card = match.group(0)
        return card if card in self.public else REDACTED

    def adding(self, cards: Iterable[str]) -> _Keep:
        """This redaction with ``cards`` public too (the same as one read from a state naming them)."""
        added = set(cards) - self.public
        if not added:
            return self
        out = _Keep.__new__(_Keep)
        out.public = self.public | added
        out.known = self.known | TOKENS.intersection(added)
        return out


TOKENS = frozenset(rank + suit for rank in ("10", *"23456789TJQKA") for suit in "cdhs")
"""Every text that is exactly one card token (``CARD_TOKEN.fullmatch``): the 56 spellings."""


def _is_token(text: str) -> bool:
    return text in TOKENS


Public = _Keep
"""The public cards of one state as the filter reads them (:meth:`StateFilter.public_state` keeps
the last one's: :attr:`StateFilter.public`)."""


def is_plain(value: Any) -> bool:
    """True when ``value`` is JSON whose texts name no card: the filter gives it back unchanged
    (less any hidden keys), whichever cards are public."""
    kind = type(value)
    if kind is str:
        return value in _PLAIN or CARD_TOKEN.search(value) is None
    if kind in SCALARS:
        return True
    if kind is dict:
        return all(type(k) is str and is_plain(v) for k, v in value.items())
    if kind is list:
        return all(is_plain(v) for v in value)
    return False


def _filtered(value: Any, keep: _Keep) -> Any:
    """``value`` with every hidden key dropped at any depth (mappings become dicts with ``str``
    keys, tuples lists) and every card token in a string replaced by ``keep(match)``."""
    kind = type(value)
    if kind is str or kind in SCALARS:
        return _leaf(value, kind, keep)
    if kind is dict or (kind is not list and kind is not tuple and isinstance(value, Mapping)):
        return _filtered_mapping(value, keep)
    if kind is list or kind is tuple or isinstance(value, list | tuple):
        return [v if type(v) in SCALARS else _filtered(v, keep) for v in value]
    return _leaf(value, kind, keep)


def _filtered_mapping(value: Mapping[Any, Any], keep: _Keep,
                      seats: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """:func:`_filtered` of a mapping; ``seats``, when given, filters the value of its ``"seats"``
    key instead (:class:`StateFilter`'s memo of unchanged seats)."""
    out: dict[str, Any] = {}
    hidden_of = _HIDDEN_KEY_CACHE.get
    for k, v in value.items():
        hidden = hidden_of(k)
        if hidden is None:
            hidden = _hidden(k)
        if hidden:
            continue
        vkind = type(v)
        out[k if type(k) is str else str(k)] = (
            v if vkind in SCALARS else _leaf(v, vkind, keep) if vkind is str
            else seats(v) if seats is not None and k == "seats" else _filtered(v, keep))
    return out


def _leaf(value: Any, kind: type, keep: _Keep) -> Any:
    if kind is str:
        if value in keep.known or value in _PLAIN:
            return value  # a public card, or a text with no card in it
        if CARD_TOKEN.search(value) is None:
            if len(value) <= 64 and len(_PLAIN) < 4096:
                _PLAIN[value] = None
            return value
        return CARD_TOKEN.sub(keep, value)
    if isinstance(value, str):
        return CARD_TOKEN.sub(keep, value)
    return value


def _mucked(status: object) -> bool:
    """True for a mucked hand's status (:data:`MUCKED_STATUSES`) and for any status that is not
    text: such a seat's downcards are never shown."""
    return not isinstance(status, str) or status in MUCKED_STATUSES


def card_strings(values: object) -> list[str]:
    """The texts in ``values`` when it is a list or tuple (a seat's ``up`` or ``down``), else ``[]``."""
    if isinstance(values, list | tuple):
        return [v for v in values if type(v) is str or isinstance(v, str)]
    return []


def _keeper(state: Mapping[str, Any],
            known: list[list[str] | None] | None = None) -> tuple[_Keep, dict[int, list[str]]]:
    """The redaction of ``state``'s texts (a card token stays when public: an upcard, the
    community card, a downcard shown at showdown; else ``??``) and the downcards shown, by seat
    index (:func:`public_state`). ``known[i]``, when given and not None: the upcards of seat ``i``,
    read from it before (a seat with no ``down`` key)."""
    showdown = is_showdown(state)
    shown_down: dict[int, list[str]] = {}
    public: set[str] = set()
    seats = state.get("seats")
    if type(seats) is list or isinstance(seats, list | tuple):
        for i, seat in enumerate(seats):
            if known is not None:
                up = known[i]
                if up is not None:
                    public.update(up)
                    continue
            if type(seat) is not dict and not isinstance(seat, Mapping):
                continue
            public.update(card_strings(seat.get("up")))
            if (showdown and isinstance(seats, list) and not _mucked(seat.get("status"))
                    and isinstance(seat.get("down"), list | tuple)):
                shown_down[i] = card_strings(seat["down"])
                public.update(shown_down[i])
    community = state.get("community")
    if isinstance(community, str):
        public.add(community)
    return _Keep(public), shown_down


def public_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """The embargo filter: ``state`` with every hidden card removed.

    - every key in :data:`HIDDEN_KEYS` is dropped at any depth, except a seat's ``"down"`` list
      at showdown (:func:`is_showdown`) for a seat whose status is a text other than folded,
      killed or dead (a mucked hand's downcards never show);
    - every card written in any other string (instruction text, alert messages, unknown keys)
      that is not public (an upcard, the community card, a shown downcard) becomes ``??``.

    One pass over ``state`` (the public cards are read from its seats first).

    :param state: a ``DisplayUpdate.state`` (JSON-safe; see the public state schema).
    :returns: a new JSON-safe dict; ``state`` is not changed.
    """
    keep, shown_down = _keeper(state)
    out: dict[str, Any] = dict(_filtered(state, keep))
    for i, down in shown_down.items():
        out["seats"][i]["down"] = _filtered(down, keep)
    return out


def public_with(state: Mapping[str, Any], fresh: Iterable[str], public: Public | None = None) -> dict[str, Any]:
    """:func:`public_state` of ``state`` when every value but those under the keys ``fresh`` is
    the filter's output already, under public cards that ``state``'s own seats and community card
    still name (the dealer display's shown state, filtered as each update was folded in; its
    kept upcards only add public cards): only the values under ``fresh`` go through the filter,
    with the public cards of ``state``; the others are returned as they are (shared, not copied).
    The filter is idempotent, so on such a state the result equals :func:`public_state`'s.

    :param state: a public state whose values outside ``fresh`` came out of :func:`public_state`.
    :param fresh: the keys whose values have not been filtered (e.g. an instruction, alerts).
    :param public: ``state``'s public cards when the caller has them already (as
        :class:`StateFilter` read them from the state ``state`` was filtered from, plus the cards
        added to it since: :meth:`Public.adding`); read from ``state`` when None.
    :returns: a new dict; ``state`` is not changed.
    """
    keep = _keeper(state)[0] if public is None else public
    out = dict(state)
    for k in fresh:
        if k in out:
            v = out[k]
            out[k] = v if type(v) in SCALARS else _filtered(v, keep)
    return out


class StateFilter:
    """:func:`public_state` for one source of successive states, such as the machine's updates to
    the dealer display, where most seats are unchanged from one state to the next.

    :meth:`public_state` gives exactly what :func:`public_state` gives. A seat that is the very
    object of the last state's seat at its place (the machine reuses an unchanged seat's entry),
    still equal to what the filter made of it then, is not filtered again when that filtering
    changed nothing and could not have changed anything under other public cards: the seat has
    no hidden key and its only texts naming a card are its own upcards, each one card token
    (public in every state that holds the seat). Any other seat goes through the filter.
    :attr:`public` keeps the public cards of the last state filtered, so that the snapshot built
    on it need not read them again (:func:`public_with`)."""

    __slots__ = ("_seats", "public")

    def __init__(self) -> None:
        self._seats: dict[int, tuple[object, dict[str, Any], list[str]]] = {}
        """By seat index: the seat last filtered there, what the filter made of it, its upcards."""
        self.public: Public | None = None
        """The public cards of the last state given to :meth:`public_state`."""

    def public_state(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """:func:`public_state` of ``state``."""
        seats = state.get("seats")
        if type(state) is not dict or type(seats) is not list:
            keep, shown_down = _keeper(state)
            out: dict[str, Any] = dict(_filtered(state, keep))
        else:
            memo = self._seats
            hits: list[tuple[object, dict[str, Any], list[str]] | None] = []
            for i, seat in enumerate(seats):
                hit = memo.get(i)
                hits.append(hit if hit is not None and hit[0] is seat and seat == hit[1] else None)
            keep, shown_down = _keeper(state, [h[2] if h is not None else None for h in hits])
            out = _filtered_mapping(state, keep, lambda v: self._filter_seats(v, hits, keep))
            for i in [i for i in memo if i >= len(seats)]:
                del memo[i]
        self.public = keep
        for i, down in shown_down.items():
            out["seats"][i]["down"] = _filtered(down, keep)
        return out

    def _filter_seats(self, seats: list[Any], hits: list[tuple[object, dict[str, Any], list[str]] | None],
                      keep: _Keep) -> list[Any]:
        memo = self._seats
        out: list[Any] = []
        for i, seat in enumerate(seats):
            hit = hits[i]
            if hit is not None:
                out.append(dict(hit[1]))  # a copy: the caller may set its keys (a shown downcard, kept upcards)
                continue
            done = seat if type(seat) in SCALARS else _filtered(seat, keep)
            if type(seat) is dict and done == seat and _self_contained(seat):
                memo[i] = (seat, done, card_strings(seat.get("up")))
                done = dict(done)
            else:
                memo.pop(i, None)
            out.append(done)
        return out


def _self_contained(seat: dict[Any, Any]) -> bool:
    """True when the filter's output of ``seat`` is the same whatever the other public cards: no
    key is hidden, every key is a ``str``, and every text naming a card is one of the seat's own
    upcards written as one card token (public in any state that holds the seat)."""
    for k, v in seat.items():
        if type(k) is not str or _hidden(k):
            return False
        kind = type(v)
        if kind in SCALARS:
            continue
        if k == "up" and kind is list:
            if not all(type(c) in SCALARS or (type(c) is str and _is_token(c)) or is_plain(c) for c in v):
                return False
        elif not is_plain(v):
            return False
    return True


_SEAT_PARTS = ("seat", "up", "status")
_STATE_PARTS = ("state", "hand", "instruction", "stub", "alerts")


def public_parts(state: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of :func:`public_state`'s result that :meth:`DisplayModel.apply` reads from an
    update a later one in the same batch replaces: ``state``, ``hand``, ``instruction``, ``stub``,
    ``alerts`` and each seat's ``seat``, ``up`` and ``status``, each exactly as
    :func:`public_state` gives it (the same public cards; a key absent stays absent)."""
    keep, _ = _keeper(state)
    seats = state.get("seats")
    out: dict[str, Any] = {k: _filtered(state[k], keep) for k in _STATE_PARTS if k in state}
    if "seats" in state:
        if isinstance(seats, list | tuple):
            out["seats"] = [{k: _filtered(s[k], keep) for k in _SEAT_PARTS if k in s} if isinstance(s, Mapping)
                            else _filtered(s, keep) for s in seats]
        else:
            out["seats"] = _filtered(seats, keep)
    return out


def downcards_in(snapshot: object) -> Iterable[str]:
    """Every card string found under a ``down``-like key anywhere in ``snapshot`` (tests, checks)."""
    if isinstance(snapshot, Mapping):
        for k, v in snapshot.items():
            if str(k).lower() in HIDDEN_KEYS and isinstance(v, list | tuple):
                yield from (c for c in v if isinstance(c, str))
            else:
                yield from downcards_in(v)
    elif isinstance(snapshot, list | tuple):
        for v in snapshot:
            yield from downcards_in(v)
