"""Reading recorded stud hands in PHH (the Poker Hand History format, a TOML subset):
:func:`read_phh` turns one file into a :class:`RecordedHand`, and any problem is a
:class:`PhhError` naming the file and the place, never another exception. What the reader takes
and refuses: docs/rules.md, "``shoe-ctl analyze``"; the bad files it withstands: docs/security.md."""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from shoe_ctl.phh_toml import TomlError, loads
from shoe_ctl.rules.cards import Card, CardError, parse_cards
from shoe_ctl.rules.games import Game
from shoe_ctl.values import FrozenValue, frozen_value

STREETS = ("3rd", "4th", "5th", "6th", "7th")

TABLE_SEATS = 8
"""The highest table seat the dealing machine deals to (seats 1..8, ``shoe_ctl.machine.dealing``)."""

# Street of a player's n-th card (0-based) and whether it is dealt face up.
CARD_STREET = ("3rd", "3rd", "3rd", "4th", "5th", "6th", "7th")
CARD_UP = (False, False, True, True, True, True, False)

PLAYER_ACTIONS = frozenset({"pb", "cbr", "cc", "f", "sm"})
BETTING_ACTIONS = frozenset({"pb", "cbr", "cc", "f"})
_PLAIN_BETS = frozenset({"pb", "cc", "f"})  # the player actions without an argument
_PREVIOUS_STREET = dict(zip(STREETS[1:], STREETS, strict=False))  # "4th" -> "3rd" .. "7th" -> "6th"
_ORDINAL = ("0th", "1st", "2nd", "3rd", "4th", "5th", "6th", "7th")

_PLAYER_INDEX = {f"p{k + 1}": k for k in range(TABLE_SEATS)}
MAX_AMOUNT_DIGITS = 18
"""The longest ``cbr`` amount read (decimal digits); a longer one is refused as too large."""

_CARDS_CACHE: dict[str, tuple[Card | None, ...]] = {}  # card text -> cards (cards are immutable)
_CARDS_CACHE_SIZE = 4096

MAX_MESSAGE = 300
"""The longest error message (characters); a longer one (a huge value quoted) is cut."""


WHOLE_FILE = "whole file"
"""The place named by an error about the file as a whole (not a regular file, too large, unreadable)."""


class PhhError(ValueError):
    """A PHH file that cannot be read as a stud hand.

    :ivar path: the file.
    :ivar where: ``"line N"``, optionally with the field or action (``"line 7, actions[12]"``);
        ``"top level"`` for TOML with neither ``variant`` nor ``actions``; ``"whole file"`` for a
        file refused unread. Never empty.
    """

    def __init__(self, path: str, where: str, message: str) -> None:
        self.path = path
        self.where = where
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 3] + "..."
        super().__init__(f"{path}: {where}: {message}")


class Action(NamedTuple):
    """One entry of the record's ``actions``, in file order (an immutable value: a named tuple,
    built in C, where a frozen dataclass sets each field through ``object.__setattr__``; a
    record has some forty of them, docs/performance.md, "Replay at 2x", change 24).

    :ivar index: position in the file's ``actions`` list (0-based); the field hides the
        tuple's ``index`` method, which nothing here calls.
    :ivar street: ``"3rd"`` .. ``"7th"``; for a deal line the street it deals, for a player action
        the street being bet.
    :ivar kind: ``"dh"`` (cards to a player), ``"db"`` (community card) or a player action
        ``"pb"``, ``"cbr"``, ``"cc"``, ``"f"``, ``"sm"``.
    :ivar player: 0-based player index (``None`` for ``db``).
    :ivar amount: the street total of ``cbr``, else ``None``.
    :ivar cards: the cards dealt (``dh``, ``db``) or shown (``sm``), ``None`` for ``??``.
    """

    index: int  # type: ignore[assignment]  # the field, not tuple.index (see above)
    street: str
    kind: str
    player: int | None
    amount: int | None = None
    cards: tuple[Card | None, ...] = ()


_action: Callable[[tuple[int, str, str, int | None, int | None, tuple[Card | None, ...]]], Action] = \
    partial(tuple.__new__, Action)
"""An :class:`Action` of its six values in field order, made by ``tuple.__new__`` in C (the named
tuple's own ``__new__`` is a Python function, called for every action of every record)."""


@frozen_value
class RecordedHand(FrozenValue):
    """One recorded hand, in player order (index 0 = first clockwise from the dealer).

    :ivar cards: per player the cards dealt, in deal order (at most 7): indexes 0-1 downcards,
        2 the door card, 3-5 the 4th-6th street upcards, 6 the 7th-street downcard.
    :ivar community: the community card (``d db``), if any, and ``community_street`` its street.
    :ivar actions: every deal line and player action, in file order.
    :ivar seats: the recorded table seat of each player, in player order, as the file gives them
        (PHH's optional ``seats``, else the user field ``_seats``), or ``None``.
    :ivar source: the user field ``_source`` (``"<site>/<file>#<id>"``), or ``None``.
    :ivar starting_stacks: per player the stack before the ante; ``math.inf`` where the record
        writes ``inf``, an unknown stack (``phh-std``): that player never runs out of chips.
    :ivar stubs: the user field ``_stubs`` (``"<street> <cards>"``, written by ``shoe-ctl
        export``): the cards in the stub as each street started at the table, where that is fewer
        than a normal deal leaves (cards set aside, a second burn); empty when not recorded.
    :ivar killed: the user field ``_killed`` (``"<street> <player>"``, 1-based player, written by
        ``shoe-ctl export``): players ruled out of the hand on that street without acting (an
        absent player killed, a dead hand); they take no part in its first to act.
    """

    path: str
    variant: str
    game: Game
    players: tuple[str, ...]
    antes: tuple[int, ...]
    bring_in: int | None
    small_bet: int | None
    big_bet: int | None
    starting_stacks: tuple[int | float, ...]
    cards: tuple[tuple[Card | None, ...], ...]
    community: Card | None
    community_street: str | None
    actions: tuple[Action, ...]
    seats: tuple[int, ...] | None = None
    source: str | None = None
    stubs: tuple[tuple[str, int], ...] = ()
    killed: tuple[tuple[str, int], ...] = ()

    def __init__(self, path: str, variant: str, game: Game, players: tuple[str, ...],
                 antes: tuple[int, ...], bring_in: int | None, small_bet: int | None, big_bet: int | None,
                 starting_stacks: tuple[int | float, ...], cards: tuple[tuple[Card | None, ...], ...],
                 community: Card | None, community_street: str | None, actions: tuple[Action, ...],
                 seats: tuple[int, ...] | None = None, source: str | None = None,
                 stubs: tuple[tuple[str, int], ...] = (), killed: tuple[tuple[str, int], ...] = ()) -> None:
        put = self._put
        put[0](self, path)
        put[1](self, variant)
        put[2](self, game)
        put[3](self, players)
        put[4](self, antes)
        put[5](self, bring_in)
        put[6](self, small_bet)
        put[7](self, big_bet)
        put[8](self, starting_stacks)
        put[9](self, cards)
        put[10](self, community)
        put[11](self, community_street)
        put[12](self, actions)
        put[13](self, seats)
        put[14](self, source)
        put[15](self, stubs)
        put[16](self, killed)

    @property
    def n(self) -> int:
        """Number of players dealt in."""
        return len(self.players)

    def door_cards(self) -> list[Card | None]:
        """Each player's 3rd-street upcard (``None`` when unknown or not dealt)."""
        return [c[2] if len(c) > 2 else None for c in self.cards]

    def upcards(self, player: int, street: str) -> list[Card | None]:
        """The upcards of ``player`` dealt up to and including ``street``."""
        last = STREETS.index(street)
        return [
            card
            for k, card in enumerate(self.cards[player])
            if CARD_UP[k] and STREETS.index(CARD_STREET[k]) <= last
        ]

    def table_seats(self, highest: int | None = None) -> list[int] | None:
        """The players' table seats numbered from 1, in player order, or ``None`` when the record
        has none (or, with ``highest``, when one is above it: a 9- or 10-seat table's record on
        an 8-seat machine).

        A record that counts seats from 0 (one with a seat 0, or from Merge, whose logs number
        seats 0..n-1) has each seat moved up by one: seat 0 is table seat 1.
        """
        if self.seats is None:
            return None
        zero_based = 0 in self.seats or (self.source or "").startswith("Merge/")
        seats = [s + 1 if zero_based else s for s in self.seats]
        if highest is not None and max(seats) > highest:
            return None
        return seats

    def streets_dealt(self) -> list[str]:
        """The streets on which at least one card was dealt, in order."""
        seen = {a.street for a in self.actions if a.kind in ("dh", "db")}
        return [s for s in STREETS if s in seen]


MAX_PHH_BYTES = 1 << 20
"""The largest hand record read (bytes); a real one is a few kilobytes."""


def read_phh(path: str | Path) -> RecordedHand:
    """Read one PHH file.

    :raises PhhError: the file cannot be read or decoded, is not TOML, lacks a field or has one of
        the wrong type, is not a stud game, has player lists of different lengths, or an action
        that is not understood (unknown player, card text, verb, an eighth card, a card dealt
        twice, a card or an action for a player who has folded). The message names the file, the line and the field or ``actions[i]``.
    """
    name = str(path)
    try:
        # O_NONBLOCK: opening a named pipe must not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise PhhError(name, WHOLE_FILE, f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # a path with a NUL character
        raise PhhError(name, WHOLE_FILE, f"cannot read: {exc}") from None
    try:  # on the descriptor itself: a file object and its buffer cost more than the read
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a pipe or a device would block or never end
            raise PhhError(name, WHOLE_FILE, "not a regular file")
        if st.st_size > MAX_PHH_BYTES:
            raise PhhError(name, WHOLE_FILE, f"{st.st_size} bytes: too large for one hand record "
                           f"(at most {MAX_PHH_BYTES})")
        # at most MAX_PHH_BYTES + 1 bytes, as one read of that size would give, but asking for
        # the size found first: a read of n bytes allocates n up front (1 MiB per file)
        want = st.st_size + 1
        raw = _read_upto(fd, want, st.st_size)
        if len(raw) == want and want <= MAX_PHH_BYTES:  # it grew since: read on to the limit
            raw += _read_upto(fd, MAX_PHH_BYTES + 1 - want)
    except OSError as exc:
        raise PhhError(name, WHOLE_FILE, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise PhhError(name, f"line {line}", "not UTF-8 text") from None
    return parse_phh(text, name)


def _read_upto(fd: int, size: int, known: int = -1) -> bytes:
    """Up to ``size`` bytes of the open file ``fd``, fewer only at its end (a read that returns
    less is followed by another, unless it returned ``known`` bytes: the size the file was found
    to have, read whole, with no second read to see its end)."""
    raw = os.read(fd, size)
    while raw and len(raw) < size and len(raw) != known:
        more = os.read(fd, size - len(raw))
        if not more:
            break
        raw += more
    return raw


def parse_phh(text: str, source: str = "<text>") -> RecordedHand:
    """Parse PHH text; ``source`` names it in errors. See :func:`read_phh`.

    The TOML is read by :func:`shoe_ctl.phh_toml.loads` (``tomllib``'s rules, the common shape
    read faster). Text TOML refuses, an integer too long to convert (over 4,300 digits) or values
    nested too deeply are a :class:`PhhError` with the line.
    """
    try:
        data = loads(text)
    except TomlError as exc:
        col = re.search(r"\s*\(column (\d+)\)$", exc.reason)
        where = f"line {exc.line}, column {col.group(1)}" if col else f"line {exc.line}"
        what = exc.reason[: col.start()] if col else exc.reason
        raise PhhError(source, where, f"not a PHH hand record (not TOML: {what})") from None
    return _Parser(data, text, source).hand()


def _shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (a bad value may be huge or deeply nested)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int too long to print, a list nested too deep
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_INT_ONLY = frozenset({int})
_STR_ONLY = frozenset({str})


def _all_whole(values: list[Any]) -> bool:
    """Every one of ``values`` a whole number >= 0 (:func:`_whole`), tested in C for a list of
    plain ints (a TOML list of numbers), one by one for any other."""
    if {*map(type, values)} <= _INT_ONLY:
        return not values or min(values) >= 0
    return all(_whole(v) for v in values)


class _Parser:
    def __init__(self, data: Mapping[str, Any], text: str, source: str) -> None:
        self.data = data
        self.text = text
        self.source = source

    # -- errors with a line ---------------------------------------------------------------------

    def _field_line(self, field: str) -> int | None:
        m = re.search(rf"^\s*{re.escape(field)}\s*=", self.text, re.MULTILINE)
        return None if m is None else self.text.count("\n", 0, m.start()) + 1

    def field_error(self, field: str, message: str) -> PhhError:
        line = self._field_line(field)
        where = f"line {line}, {field}" if line else field
        return PhhError(self.source, where, message)

    def action_error(self, index: int, entry: object, message: str) -> PhhError:
        start = self.text.find("actions")
        line = self._field_line("actions") or 0
        if start >= 0:
            # Find the index-th action's own quoted text, walking the entries in order.
            pos = start
            actions = self.data.get("actions", [])
            for k in range(index + 1):
                item = actions[k] if isinstance(actions[k], str) else ""
                found = self.text.find(f'"{item}"', pos)
                if found < 0:
                    break
                pos = found + len(item) + 2
                if k == index:
                    line = self.text.count("\n", 0, found) + 1
        where = f"line {line}, actions[{index}]" if line else f"actions[{index}]"
        return PhhError(self.source, where, f"{_shown(entry, 80)}: {message}")

    # -- fields ---------------------------------------------------------------------------------

    def _int(self, field: str, required: bool) -> int | None:
        value = self.data.get(field)
        if value is None:
            if required:
                raise self.field_error(field, "missing")
            return None
        if not _whole(value):
            raise self.field_error(field, f"{_shown(value)} is not a whole number >= 0")
        return value  # type: ignore[no-any-return]

    def _ints(self, field: str, n: int | None) -> tuple[int, ...]:
        value = self.data.get(field)
        if value is None:
            raise self.field_error(field, "missing")
        if isinstance(value, int) and not isinstance(value, bool) and n is not None:
            value = [value] * n
        if not isinstance(value, list) or not _all_whole(value):
            raise self.field_error(field, f"{_shown(value)} is not a list of whole numbers >= 0")
        if n is not None and len(value) != n:
            raise self.field_error(field, f"has {len(value)} entries for {n} players")
        return tuple(value)

    def _stacks(self) -> tuple[int | float, ...]:
        """``starting_stacks``: whole numbers >= 0, or ``inf`` for an unknown stack (phh-std)."""
        field = "starting_stacks"
        value = self.data.get(field)
        if value is None:
            raise self.field_error(field, "missing")
        if not isinstance(value, list) or not (_all_whole(value) or all(_whole(v) or v == math.inf for v in value)):
            raise self.field_error(field, f"{_shown(value)} is not a list of whole numbers >= 0 "
                                   "(or inf for an unknown stack)")
        return tuple(value)

    def hand(self) -> RecordedHand:
        variant = self.data.get("variant")
        if "variant" not in self.data and "actions" not in self.data:
            raise PhhError(self.source, "top level", "not a PHH hand record (TOML, but no variant or actions key)")
        if not isinstance(variant, str):
            raise self.field_error("variant", "missing or not a string")
        try:
            game = Game.from_phh(variant)
        except ValueError as exc:
            raise self.field_error("variant", str(exc)) from None
        stacks = self._stacks()
        n = len(stacks)
        if n < 2:
            raise self.field_error("starting_stacks", f"{n} players; a hand needs 2 or more")
        if n > 8:
            raise self.field_error("starting_stacks", f"{n} players; a stud table deals to 8 at most")
        players_value = self.data.get("players")
        if players_value is None:
            players = tuple(f"P{i + 1}" for i in range(n))
        elif isinstance(players_value, list) and ({*map(type, players_value)} <= _STR_ONLY
                                                  or all(isinstance(p, str) for p in players_value)):
            players = tuple(players_value)
            if len(players) != n:
                raise self.field_error("players", f"has {len(players)} names for {n} starting stacks")
        else:
            raise self.field_error("players", "is not a list of names")
        antes = self._ints("antes", n)
        bring_in = self._int("bring_in", False)
        small_bet = self._int("small_bet", False)
        big_bet = self._int("big_bet", False)
        actions_value = self.data.get("actions")
        if not isinstance(actions_value, list):
            raise self.field_error("actions", "missing or not a list")
        cards: list[list[Card | None]] = [[] for _ in range(n)]
        seen: dict[int, int] = {}  # card code -> the action that dealt it (an int hashes faster than a Card)
        community: Card | None = None
        community_street: str | None = None
        street = "3rd"
        folded: dict[int, int] = {}
        # Streets every player still in has been found to hold (cards and folds only grow, so
        # that stays true): the deal-order and betting checks are not repeated for them.
        complete: set[str] = set()
        killed = self._pairs("_killed")
        out: list[Action] = []

        def out_of_hand(st: str) -> dict[int, int]:
            """The players folded, or ruled out of the hand (``_killed``) on ``st`` or before."""
            if not killed:
                return folded
            ruled = {p - 1: -1 for k, p in killed if STREETS.index(k) <= STREETS.index(st)}
            return {**ruled, **folded}

        # One pass over the actions. A deal to a player (``d dh pN <cards>``, with its errors),
        # a bet without an amount and a ``cbr`` with one are read here, the tables bound to
        # locals; a community card, a show and any other line go through the methods below
        # (docs/performance.md, "The replay's parse and harness").
        cache = _CARDS_CACHE
        player_of = _PLAYER_INDEX
        previous_street = _PREVIOUS_STREET
        for index, entry in enumerate(actions_value):
            if not isinstance(entry, str):
                raise self.action_error(index, entry, "is not a string")
            words = (entry.split("#", 1)[0] if "#" in entry else entry).split()
            if not words:
                raise self.action_error(index, entry, "empty action")
            first = words[0]
            if first == "d":
                if len(words) == 4 and words[1] == "dh":
                    player = player_of.get(words[2], n)  # _player's look-up, called for its error only
                    if player >= n:
                        player = self._player(index, entry, words[2], n)
                    dealt = cache.get(words[3])  # _cards' table, called on a miss
                    if dealt is None:
                        dealt = self._cards(index, entry, words[3])
                    held = cards[player]
                    have = len(held)
                    if not dealt:
                        raise self.action_error(index, entry, "no cards dealt")
                    if have + len(dealt) > 7:
                        raise self.action_error(index, entry, f"gives {words[2]} an {have + len(dealt)}th card")
                    dealt_street = CARD_STREET[have]
                    if CARD_STREET[have + len(dealt) - 1] != dealt_street:
                        raise self.action_error(index, entry, "deals cards of two streets in one line")
                    held.extend(dealt)
                    action = _action((index, dealt_street, "dh", player, None, dealt))
                    prev = previous_street.get(dealt_street)
                    if prev is not None and prev not in complete:
                        self._check_deal_order(index, entry, action, cards, out_of_hand(dealt_street),
                                               community_street, complete)
                    street = dealt_street
                else:  # a community card, or a line the method refuses
                    dealt = self._community(index, entry, words)
                    if community is not None:
                        raise self.action_error(index, entry, "a second community card")
                    street = STREETS[min(STREETS.index(street) + 1, len(STREETS) - 1)]
                    action = _action((index, street, "db", None, None, dealt))
                    community, community_street = dealt[0], street
                    player = None
                if player is not None and player in folded:
                    raise self.action_error(index, entry, f"p{player + 1} folded at actions[{folded[player]}]")
                for card in dealt:
                    if card is None:
                        continue
                    code = card.code
                    if code in seen:
                        raise self.action_error(index, entry, f"{card} was already dealt (actions[{seen[code]}])")
                    seen[code] = index
                out.append(action)
                continue
            player = player_of.get(first, n)  # _player's look-up, called for its error only
            if player >= n:
                player = self._player(index, entry, first, n)
            verb = words[1] if len(words) > 1 else ""
            if len(words) == 2 and verb in _PLAIN_BETS:
                action = _action((index, street, verb, player, None, ()))
            elif verb == "cbr" and len(words) == 3 and words[2].isascii() and words[2].isdigit() \
                    and len(words[2]) <= MAX_AMOUNT_DIGITS:
                action = _action((index, street, verb, player, int(words[2]), ()))
            else:  # a show, or a line the method refuses
                action = self._player_action(index, entry, words, n, street)
                verb = action.kind
            if verb != "sm":
                if street not in complete:
                    short = _short_player(street, cards, out_of_hand(street), community_street)
                    if short is None:
                        complete.add(street)
                    else:
                        q, k, need = short
                        raise self.action_error(index, entry, f"p{q + 1}, still in, has no card of {street} street "
                                                f"when {street} street betting starts (holds {k} of {need}): "
                                                "malformed deal")
                if player in folded:
                    raise self.action_error(index, entry, f"p{player + 1} folded at actions[{folded[player]}]")
                if verb == "f":
                    folded[player] = index
            out.append(action)
        short = _short_player(street, cards, out_of_hand(street), community_street)
        if short is not None:
            q, k, need = short
            raise self.field_error("actions", f"p{q + 1}, still in, has no card of {street} street at the end of "
                                   f"the record (holds {k} of {need}): malformed deal")
        return RecordedHand(
            path=self.source,
            variant=variant,
            game=game,
            players=players,
            antes=antes,
            bring_in=bring_in,
            small_bet=small_bet,
            big_bet=big_bet,
            starting_stacks=stacks,
            cards=tuple(map(tuple, cards)),
            community=community,
            community_street=community_street,
            actions=tuple(out),
            seats=self._seats(n),
            source=self.data.get("_source") if isinstance(self.data.get("_source"), str) else None,
            stubs=self._pairs("_stubs"),
            killed=killed,
        )

    def _pairs(self, field: str) -> tuple[tuple[str, int], ...]:
        """A user field of ``"<street> <number>"`` entries (``_stubs``, ``_killed``)."""
        value = self.data.get(field)
        if value is None:
            return ()
        out = []
        for entry in value if isinstance(value, list) else [value]:
            words = entry.split() if isinstance(entry, str) else []
            if len(words) != 2 or words[0] not in STREETS or not words[1].isdigit():
                raise self.field_error(field, f"{entry!r} is not '<street> <number>'")
            out.append((words[0], int(words[1])))
        return tuple(out)

    def _seats(self, n: int) -> tuple[int, ...] | None:
        """``seats`` (PHH optional field) or ``_seats`` (user field): n distinct whole numbers."""
        field = "seats" if "seats" in self.data else "_seats"
        value = self.data.get(field)
        if value is None:
            return None
        if not isinstance(value, list) or not _all_whole(value):
            raise self.field_error(field, f"{_shown(value)} is not a list of seat numbers >= 0")
        if len(value) != n:
            raise self.field_error(field, f"has {len(value)} seats for {n} players")
        if len(set(value)) != n:
            raise self.field_error(field, f"{_shown(value)} names a seat twice")
        return tuple(value)

    def _check_deal_order(self, index: int, entry: str, action: Action, cards: list[list[Card | None]],
                          folded: Mapping[int, int], community_street: str | None, complete: set[str]) -> None:
        """A deal line giving a card of a street before the previous street is dealt to every
        player still in (for instance a 4th card while 3rd street is being dealt) raises.
        ``complete``: the streets already found dealt to every player still in (added to)."""
        s = STREETS.index(action.street)
        if s == 0 or action.player is None:
            return
        prev = STREETS[s - 1]
        if prev in complete:
            return
        if _short_player(prev, cards, folded, community_street) is None:
            complete.add(prev)
            return
        full: list[Card | None] = [None] * 7  # the player dealt to is not the one waited for
        others = [c if q != action.player else full for q, c in enumerate(cards)]
        short = _short_player(prev, others, folded, community_street)
        if short is not None:
            q, k, need = short
            p = action.player
            raise self.action_error(index, entry, f"p{p + 1} gets a {_ORDINAL[len(cards[p])]} card on {prev} street "
                                    f"before p{q + 1}, still in, holds its {need} (it holds {k}): malformed deal")

    def _player(self, index: int, entry: str, word: str, n: int) -> int:
        k = _PLAYER_INDEX.get(word)
        if k is None or k >= n:
            raise self.action_error(index, entry, f"{_shown(word)} is not a player p1..p{n}")
        return k

    def _cards(self, index: int, entry: str, text: str) -> tuple[Card | None, ...]:
        cards = _CARDS_CACHE.get(text)
        if cards is None:
            try:
                cards = tuple(parse_cards(text))
            except CardError as exc:
                raise self.action_error(index, entry, str(exc)) from None
            if len(_CARDS_CACHE) < _CARDS_CACHE_SIZE:
                _CARDS_CACHE[text] = cards
        return cards

    def _community(self, index: int, entry: str, words: list[str]) -> tuple[Card | None, ...]:
        """The card of a community-card line (``d db <card>``). Any other deal line than that and
        ``d dh pN <cards>`` (read in :meth:`hand`) raises."""
        if len(words) >= 3 and words[1] == "db":
            dealt = self._cards(index, entry, "".join(words[2:]))
            if len(dealt) != 1:
                raise self.action_error(index, entry, "a community card deal gives exactly one card")
            return dealt
        raise self.action_error(index, entry, "expected 'd dh pN <cards>' or 'd db <card>'")

    def _player_action(self, index: int, entry: str, words: list[str], n: int, street: str) -> Action:
        player = _PLAYER_INDEX.get(words[0], n)  # _player's look-up, called for its error only
        if player >= n:
            player = self._player(index, entry, words[0], n)
        if len(words) < 2 or words[1] not in PLAYER_ACTIONS:
            raise self.action_error(index, entry, "expected pN pb|cbr X|cc|f|sm [cards]")
        verb = words[1]
        if verb == "cbr":
            if len(words) != 3 or not (words[2].isascii() and words[2].isdigit()):
                raise self.action_error(index, entry, "cbr needs one whole-number amount (digits 0-9)")
            if len(words[2]) > MAX_AMOUNT_DIGITS:
                raise self.action_error(index, entry, f"amount of {len(words[2])} digits: too large "
                                        f"(at most {MAX_AMOUNT_DIGITS})")
            return _action((index, street, verb, player, int(words[2]), ()))
        if verb == "sm":
            shown = self._cards(index, entry, "".join(words[2:])) if len(words) > 2 else ()
            return _action((index, street, verb, player, None, shown))
        if len(words) != 2:
            raise self.action_error(index, entry, f"{verb} takes no argument")
        return _action((index, street, verb, player, None, ()))


def _short_player(street: str, cards: list[list[Card | None]], folded: Mapping[int, int],
                  community_street: str | None) -> tuple[int, int, int] | None:
    """The first player still in (not folded) without every card of ``street``, as (player index,
    cards held, cards needed), else ``None``. A community card dealt on ``street`` or earlier is
    one of every player's cards (RP-10-H-C, house 16.20)."""
    need = STREETS.index(street) + 3
    if community_street is not None and STREETS.index(community_street) <= STREETS.index(street):
        need -= 1
    for q, held in enumerate(cards):
        if q not in folded and len(held) < need:
            return q, len(held), need
    return None
