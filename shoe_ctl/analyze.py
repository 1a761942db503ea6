"""The rules core applied to recorded hands (``shoe-ctl analyze``).

For each PHH file: who holds the bring-in card, who must act first on every street reached with
two or more players able to act, what the profile prescribes for 7th street from the deal up to
the end of 6th (assuming live dealing: no burn before 3rd, one burn on each later street), the
community card, and alerts where the record departs from the profile. A file that cannot be read
gives that hand an ``error``; the rest of the batch goes on.

Player numbers in a report are 1-based, in the file's ``players`` order (clockwise from the
dealer's left); the rules core works with 0-based indexes. Where the record gives table seats
(``seats`` / ``_seats``) the report lists them too (``seats``, counted from 1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import field
from pathlib import Path
from typing import Any

from shoe_ctl.phh import STREETS, PhhError, RecordedHand, read_phh
from shoe_ctl.rules.cards import Card, card_text
from shoe_ctl.rules.games import Game, board_key, bring_in, first_to_act, first_to_act_third, open_pair
from shoe_ctl.rules.hand import HandError, HandState
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.rules.stub import PROCEDURE_CLAUSE, plan_street, seventh_check
from shoe_ctl.values import FACTORY, Value, value

BETTING = frozenset({"pb", "cbr", "cc", "f"})


CLAUSES = {str(k): v for k, v in PROCEDURE_CLAUSE.items()}
"""The clause of each 7th-street procedure by its text (``"C"`` -> ``"RP-10-H-C"``)."""


@value
class StreetView(Value):
    """One street of a recorded hand as the rules core sees it at the street's start.

    :ivar in_hand: per player, not folded.
    :ivar can_act: per player, in the hand with chips behind.
    :ivar first: the player (0-based) the rules say acts first, ``None`` when unknown cards decide.
    :ivar recorded: the player whose betting action came first in the record, if any.
    :ivar why: a short text for the table, e.g. ``"2c"`` or ``"K K 7"``.
    """

    street: str
    in_hand: list[bool]
    can_act: list[bool]
    first: int | None = None
    recorded: int | None = None
    why: str = ""
    betting: bool = False

    def __init__(self, street: str, in_hand: list[bool], can_act: list[bool], first: int | None = None,
                 recorded: int | None = None, why: str = "", betting: bool = False) -> None:
        self.street = street
        self.in_hand = in_hand
        self.can_act = can_act
        self.first = first
        self.recorded = recorded
        self.why = why
        self.betting = betting


@value
class HandReport(Value):
    """What ``analyze`` says about one file; :meth:`as_json` gives the documented JSON object."""

    file: str
    rules: str
    game: str | None = None
    players: int | None = None
    bring_in: int | None = None
    first_to_act: dict[str, int | None] = field(default_factory=dict)
    seventh: dict[str, Any] | None = None
    community_card: str | None = None
    alerts: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    streets: list[StreetView] = field(default_factory=list)
    bring_in_card: str | None = None
    names: tuple[str, ...] = ()
    seats: list[int] | None = None

    def __init__(self, file: str, rules: str, game: str | None = None, players: int | None = None,
                 bring_in: int | None = None, first_to_act: dict[str, int | None] = FACTORY,
                 seventh: dict[str, Any] | None = None, community_card: str | None = None,
                 alerts: list[dict[str, Any]] = FACTORY, error: str | None = None,
                 streets: list[StreetView] = FACTORY, bring_in_card: str | None = None,
                 names: tuple[str, ...] = (), seats: list[int] | None = None) -> None:
        self.file = file
        self.rules = rules
        self.game = game
        self.players = players
        self.bring_in = bring_in
        self.first_to_act = dict() if first_to_act is FACTORY else first_to_act
        self.seventh = seventh
        self.community_card = community_card
        self.alerts = list() if alerts is FACTORY else alerts
        self.error = error
        self.streets = list() if streets is FACTORY else streets
        self.bring_in_card = bring_in_card
        self.names = names
        self.seats = seats

    def as_json(self) -> dict[str, Any]:
        """The JSON object of one hand (keys ``file``, ``game``, ``rules``, ``players``,
        ``bring_in``, ``first_to_act``, ``seventh``, ``community_card``, ``alerts``, ``error``;
        players 1-based; and ``seats``: each player's table seat in player order where the record
        gives them, counted from 1 (:meth:`RecordedHand.table_seats`), else ``null``)."""
        return {
            "file": self.file,
            "game": self.game,
            "rules": self.rules,
            "players": self.players,
            "bring_in": self.bring_in,
            "first_to_act": dict(self.first_to_act),
            "seventh": self.seventh,
            "community_card": self.community_card,
            "alerts": list(self.alerts),
            "error": self.error,
            "seats": None if self.seats is None else list(self.seats),
        }


    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> HandReport:
        """A report from its JSON object (:meth:`as_json`'s keys; ``replay`` builds these), for
        the readable table; ``bring_in_card`` when the object carries it."""
        return cls(
            file=str(obj.get("file", "")), rules=str(obj.get("rules", "")), game=obj.get("game"),
            players=obj.get("players"), bring_in=obj.get("bring_in"),
            first_to_act=dict(obj.get("first_to_act") or {}), seventh=obj.get("seventh"),
            community_card=obj.get("community_card"), alerts=list(obj.get("alerts") or []),
            error=obj.get("error"), bring_in_card=obj.get("bring_in_card"), seats=obj.get("seats"),
        )


def iter_phh_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Each path as given if it is a file; a folder's ``*.phh`` files, recursively, sorted.

    A path that does not exist is yielded as is, so that reading it reports the error.
    """
    for p in paths:
        path = Path(p)
        if path.is_dir():
            yield from sorted(path.rglob("*.phh"))
        else:
            yield path


def analyze_file(path: str | Path, profile: RuleProfile) -> HandReport:
    """Analyse one PHH file; never raises for a bad file (the report's ``error`` says why)."""
    try:
        hand = read_phh(path)
    except PhhError as exc:
        return HandReport(file=str(path), rules=profile.name, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - read_phh raises only PhhError; a batch never stops
        return HandReport(file=str(path), rules=profile.name,
                          error=f"{path}: cannot read ({type(exc).__name__}: {str(exc)[:200]})")
    try:
        return analyze_hand(hand, profile)
    except (HandError, ValueError) as exc:
        return HandReport(file=str(path), rules=profile.name, error=f"{path}: {exc}")
    except Exception as exc:  # noqa: BLE001 - one odd record must not stop the batch
        return HandReport(
            file=str(path), rules=profile.name, error=f"{path}: cannot analyse ({type(exc).__name__}: {exc})"
        )


def _one(i: int | None) -> int | None:
    return None if i is None else i + 1


def _board_text(cards: Iterable[Card | None]) -> str:
    return " ".join(card_text(c) for c in cards)


def analyze_hand(hand: RecordedHand, profile: RuleProfile, *, firsts_only: bool = False) -> HandReport:
    """Apply the rules core to one recorded hand under ``profile``.

    :param firsts_only: decide the bring-in and who acts first on each street (``streets``:
        ``first``, ``recorded``; ``first_to_act`` and its alerts) and nothing else: no live deal (no
        7th-street stub check, ``seventh`` stays ``None``) and no ``why`` texts. What ``shoe-ctl
        replay`` needs beside the decisions the state machine made itself.
    :raises HandError: when the record cannot be dealt live (more cards than a 52-card deck).
    """
    n = hand.n
    game = hand.game
    report = HandReport(file=hand.path, rules=profile.name, game=str(game), players=n, names=hand.players,
                        seats=hand.table_seats())
    doors = hand.door_cards()
    counts = _bring_in_counts(hand, doors)
    b = bring_in(game, doors, counts)
    report.bring_in = _one(b)
    report.bring_in_card = card_text(doors[b]) if b is not None else None
    if hand.community_street is not None:
        report.community_card = card_text(hand.community)

    live = None if firsts_only else _LiveDeal(hand, profile)
    on_street = None if live is None else (lambda st, ih, ca: live.street_start(st, ih, ca, report))
    views, in_hand_at_end = street_views(hand, on_street)
    if live is not None:
        live.finish(in_hand_at_end, report)

    for st in STREETS:
        if st not in views:
            continue
        view = views[st]
        report.streets.append(view)
        if not view.betting:
            continue
        view.first, boards, community, rule = _decide_first(hand, profile, view, doors, counts)
        if firsts_only:
            pass
        elif st == "3rd":
            if b is None:
                view.why = "the bring-in card is not known"
            else:
                view.why = f"P{b + 1} {card_text(doors[b])} brings in"
                if view.first is not None and view.first != b:
                    view.why += f", all-in for the ante: P{view.first + 1} next to the left (RP-10-E, house 16.4)"
        else:
            if rule == "RP-10-H-D":
                view.why = _why(hand, boards, view, None, "", profile)
                view.why += f"; community card {card_text(community)}: the 6th-street order stands (RP-10-H-D)"
            else:
                view.why = _why(hand, boards, view, community, rule, profile)
            if st == "4th" and game is not Game.RAZZ:
                pairs = [f"P{i + 1}" for i in range(n) if view.in_hand[i] and open_pair(boards[i])]
                if pairs:
                    if not profile.open_pair_bet:
                        how = "bets not doubled (RP-10-F)"
                    elif game is Game.STUD:
                        how = "small or big bet (house 16.8)"
                    else:
                        how = "bets stay small (house 16.8 is for stud high)"
                    view.why += f"; open pair {', '.join(pairs)}: {how}"
        report.first_to_act[st] = _one(view.first)
        if view.first is not None and view.recorded is not None and view.first != view.recorded:
            report.alerts.append(
                {
                    "code": "first-to-act",
                    "street": st,
                    "player": view.recorded + 1,
                    "expected": view.first + 1,
                    "message": f"P{view.recorded + 1} acted first; the {profile.name} rules give P{view.first + 1}",
                }
            )
    return report


def street_views(hand: RecordedHand, on_street: Callable[[str, list[bool], list[bool]], None] | None = None,
                 ) -> tuple[dict[str, StreetView], list[bool]]:
    """The record's streets as the rules core sees them at each street's start, by street (every
    street with a deal line or a betting action; ``first`` and ``why`` not decided yet, see
    :func:`street_first`), and per player whether still in the hand at the end of the record.

    Walks the actions once: the chips each player has behind (the antes, the bring-in and the
    street's bets and calls taken from the starting stacks), the folds, the players ruled out on
    a street (``_killed``), and the first betting action of each street (``recorded``).

    :param on_street: called at each street's first deal line with the street and the players
        in the hand and able to act then (the lists the view holds).
    """
    n = hand.n
    stacks = [max(s - a, 0) for s, a in zip(hand.starting_stacks, hand.antes, strict=True)]
    folded = [False] * n
    committed: list[int | float] = [0] * n  # starting stacks may be inf (unknown)
    views: dict[str, StreetView] = {}
    street = ""
    for action in hand.actions:
        if action.street != street and action.kind in ("dh", "db"):
            street = action.street
            committed = [0] * n
            in_hand = [not f for f in folded]
            can_act = [ih and s > 0 for ih, s in zip(in_hand, stacks, strict=True)]
            for st, p in hand.killed:  # ``_killed``: ruled out of the hand on this street, never acted
                if st == street and 1 <= p <= n:
                    in_hand[p - 1] = can_act[p - 1] = False
            view = StreetView(street, in_hand, can_act, betting=sum(can_act) >= 2)
            views[street] = view
            if on_street is not None:
                on_street(street, in_hand, can_act)
        if action.kind not in BETTING or action.player is None:
            continue
        i = action.player
        view = views.get(action.street) or views.setdefault(
            action.street, StreetView(action.street, [not f for f in folded], [s > 0 for s in stacks])
        )
        if view.recorded is None:
            view.recorded = i
        if action.kind == "f":
            folded[i] = True
        elif action.kind == "pb":
            pay = min(hand.bring_in or 0, stacks[i])
            committed[i] += pay
            stacks[i] -= pay
        elif action.kind == "cbr":
            pay = min(max((action.amount or 0) - committed[i], 0), stacks[i])
            committed[i] += pay
            stacks[i] -= pay
        elif action.kind == "cc":
            pay = min(max(max(committed) - committed[i], 0), stacks[i])
            committed[i] += pay
            stacks[i] -= pay
    return views, [not f for f in folded]


def street_first(hand: RecordedHand, profile: RuleProfile, view: StreetView) -> int | None:
    """The player (0-based) ``profile`` names to act first on ``view``'s street of ``hand`` (a
    view of :func:`street_views`), ``None`` when unknown cards decide or fewer than two players
    can act: the bring-in on 3rd street (RP-10-E, house 16.4), the best board on later streets
    (RP-10-D, the community card counted from its street under house 16.20, the 6th-street order
    kept on 7th under RP-10-H-D).

    :raises ValueError: the view's lists do not match the hand's players.
    """
    doors = hand.door_cards()
    return _decide_first(hand, profile, view, doors, _bring_in_counts(hand, doors))[0]


def _bring_in_counts(hand: RecordedHand, doors: list[Card | None]) -> list[bool]:
    """Per player, whether the hand takes part in the bring-in: a hand ruled out on 3rd street
    with no door card (house 16.2, a dead hand) does not; a killed hand with its door card still
    does (Rule 30, house 16.9)."""
    return [doors[p] is not None or ("3rd", p + 1) not in hand.killed for p in range(hand.n)]


def _decide_first(hand: RecordedHand, profile: RuleProfile, view: StreetView, doors: list[Card | None],
                  counts: list[bool]) -> tuple[int | None, list[list[Card | None]], Card | None, str]:
    """:func:`street_first` and what the decision read: the boards (``[]`` on 3rd street), the
    community card counted, and the rule that placed it (``"house-16.20"``, ``"RP-10-H-D"``, "")."""
    game = hand.game
    st = view.street
    if st == "3rd":
        return first_to_act_third(game, doors, view.can_act, counts), [], None, ""
    boards = [hand.upcards(i, st) for i in range(hand.n)]
    # A community card counts in every board from the street it is dealt on (house 16.20);
    # ``??`` in the record is a community card whose identity is unknown.
    on_board = hand.community_street is not None and STREETS.index(hand.community_street) <= STREETS.index(st)
    community = hand.community if on_board else None
    if st == "7th" and hand.community_street == "7th" and not profile.house:
        # RP-10-H-D: with a community card, the first to act on 6th acts first on 7th.
        return first_to_act(game, boards, view.in_hand, view.can_act, profile.tie), boards, community, "RP-10-H-D"
    first = first_to_act(game, boards, view.in_hand, view.can_act, profile.tie, community,
                         community_unknown=on_board and community is None)
    return first, boards, community, "house-16.20" if on_board else ""


def _why(
    hand: RecordedHand,
    boards: list[list[Card | None]],
    view: StreetView,
    community: Card | None,
    rule: str,
    profile: RuleProfile,
) -> str:
    """Why ``view.first`` acts first: the best board, ties, an all-in best hand passing on."""
    if view.first is None:
        return "unknown cards (upcards or the community card) decide"

    def shown(j: int) -> str:
        return f"P{j + 1} {_board_text(boards[j])}"

    keys: list[tuple[tuple[int, ...], int]] = []
    for j in range(hand.n):
        if view.in_hand[j] and None not in boards[j]:
            vis = [c for c in boards[j] if c is not None] + ([community] if community is not None else [])
            keys.append((board_key(hand.game, vis), j))
    if not keys:
        return shown(view.first)
    top = max(k for k, _ in keys)
    holders = [j for k, j in keys if k == top]
    best = holders[0]
    if len(holders) > 1:
        flags = [j in holders for j in range(hand.n)]
        pick = first_to_act(hand.game, boards, flags, flags, profile.tie, community)
        best = holders[0] if pick is None else pick
    text = "best " + ("low" if hand.game is Game.RAZZ else "high") + " board " + shown(best)
    if community is not None:
        text += f" + {community}"
    if rule:
        text += f" ({rule})"
    if len(holders) > 1:
        others = ", ".join(shown(j) for j in holders if j != best)
        how = "high card by suit (RP-10-D)" if str(profile.tie) == "suit" else "first from the dealer (position)"
        text += f"; ties {others}: {how}"
    if view.first != best:
        text += f"; all-in: P{view.first + 1} next to the left"
    return text


class _LiveDeal:
    """Replays the deal street by street into a :class:`HandState` (live dealing: no burn before
    3rd, one burn on each later street) and checks 7th street against the profile."""

    def __init__(self, hand: RecordedHand, profile: RuleProfile) -> None:
        self.hand = hand
        self.profile = profile
        self.state = HandState.new(hand.game, list(range(1, hand.n + 1)))
        self.dealt: list[str] = []

    def _sync(self, in_hand: list[bool], can_act: list[bool] | None) -> None:
        for i, seat in enumerate(self.state.seats):
            if not in_hand[i] and seat.in_hand:
                self.state.fold(i)
            elif can_act is not None and in_hand[i] and not can_act[i] and not seat.all_in:
                self.state.all_in(i)

    def street_start(self, street: str, in_hand: list[bool], can_act: list[bool], report: HandReport) -> None:
        if street in self.dealt:
            return
        self._sync(in_hand, can_act)
        want = dict(self.hand.stubs).get(street)
        if want is not None:
            # ``_stubs``: cards left the stub at the table beyond a normal deal (set aside, a second
            # burn): taken aside here too, so the street is planned on the same stub.
            for _ in range(max(self.state.stub_count() - want, 0)):
                self.state.put_aside(None)
        if street == "7th":
            self._check_seventh(report)
        else:
            self._deal(street)
        self.dealt.append(street)

    def _deal(self, street: str) -> None:
        plan = plan_street(self.profile, self.state, street)
        for step in plan.steps:
            card: Card | None = None
            if step.kind == "deal" and step.seat_index is not None:
                seat = self.state.seats[step.seat_index]
                k = len(seat.down) + len(seat.up)
                held = self.hand.cards[step.seat_index]
                card = held[k] if k < len(held) else None
            elif step.kind == "community":
                card = self.hand.community
            self.state.record(step, card)

    def _check_seventh(self, report: HandReport) -> None:
        if "6th" not in self.dealt:
            return
        live, stub, required, procedure = seventh_check(self.profile, self.state)
        report.seventh = {
            "live": live,
            "stub": stub,
            "required": required,
            "procedure": str(procedure),
            "clause": PROCEDURE_CLAUSE[procedure],
        }
        recorded_community = self.hand.community_street == "7th"
        if procedure.community != recorded_community:
            clause = PROCEDURE_CLAUSE[procedure]
            if clause == "normal" or not procedure.community:
                clause = "house-16.20" if self.profile.house else "RP-10-H"
            report.alerts.append(
                {
                    "code": clause,
                    "street": "7th",
                    "procedure": str(procedure),
                    "message": (
                        f"the record deals a community card on 7th; the {self.profile.name} rules give "
                        f"every player a card (procedure {procedure})"
                        if recorded_community
                        else f"the record deals every player a 7th card; the {self.profile.name} rules "
                        f"prescribe a community card (procedure {procedure})"
                    ),
                }
            )

    def finish(self, in_hand: list[bool], report: HandReport) -> None:
        """After the record: a hand that ended after 6th's betting with 2+ players still gets the
        7th-street check (the street the profile would have dealt next)."""
        if "6th" in self.dealt and "7th" not in self.dealt and sum(in_hand) >= 2:
            self._sync(in_hand, None)
            self._check_seventh(report)
