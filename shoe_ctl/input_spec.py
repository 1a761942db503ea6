"""One specification per dealer input: its seat rule, its arguments and their checks, whether it
can be undone, whether it moves the hand on (and so waits while a STOP is up), and who may give
it. The display, the dealer port, the page's sheets (``GET /inputs``) and the machine all read
:data:`SPECS`; the machine's states and handlers for each input are in
:mod:`shoe_ctl.machine.inputs`. See docs/state-machine.md, *Dealer inputs*.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeGuard

from shoe_ctl.input_shape import MAX_ITEMS, MAX_SEAT, check_input_shape
from shoe_ctl.values import FrozenValue, frozen_value

__all__ = ["REFUSED_CODES", "ack_pinned", "ack_targets", "SPECS", "STOP_REFUSAL", "STREET_NAMES", "Arg", "DealerAction", "InputSpec", "SeatRule", "check_input", "stop_refusal"]


class DealerAction(StrEnum):
    """What a dealer can report (each one's checks are its :data:`SPECS` row). The state machine rejects an action at the wrong time with an
    alert and changes nothing.

    Every input may carry ``args["ref"]`` (an int of the sender's choosing): the machine then
    answers with the instruction in force after the input, carrying the same ``ref``
    (:attr:`Instruction.ref`), so a dealer knows which instruction follows its report.
    The irregularity inputs and their ``args`` (see ``docs/irregularities.md``):

    - ``exposed-card`` (seat): a card dealt to the seat was exposed. ``street`` (default the
      street in progress); on 3rd street ``which`` (0 or 1: the first or second hole card; default
      the last dealt) and ``both`` (bool: both hole cards exposed) — RP-10-A, house 16.1, 16.2;
      on 7th street the seat's 7th card — RP-10-B, house 16.21-16.24.
    - ``last-card-exposed`` (seat): the same as ``exposed-card`` on 7th street.
    - ``card-off-table`` (seat): a card dealt to the seat went off the table (house 16.13);
      ``face`` on 3rd street: ``"up"`` (the door card) or ``"down"`` (a hole card).
    - ``absent-player`` (seat): the player is not at the seat; ``action_reached`` (bool, default
      True during a betting round, False while dealing) — RP-10-C / Rule 30, house 16.9-16.11.
    - ``premature-done``: the dealer has stopped dealing premature cards; ``merged``: seats whose
      premature final downcard merged with the hole cards (house 16.17) — RP-5-D, house 16.16.
    - ``burn-error``: ``burns`` 0 or 2 burns taken on the street in progress; ``stands`` (bool,
      7th only: the final downcard merged or was seen) — house 16.15.
    - ``wrong-bring-in`` (seat: the player who was wrongly named and bet): ``next_acted`` (bool)
      — house 16.6.
    - ``card-count`` (seat): the dealer counted ``cards`` (int) in the seat's hand — house 16.25,
      16.26.
    - ``misdeal``: the dealer declares a misdeal; the hand ends, every card goes back.
    - ``stub-mixed``: the stub became disordered, mixed with other cards (TDA RP-4): ``piles``
      (``"muck"``: the folded, killed and dead hands' cards and the cards out of play; ``"burns"``;
      ``"set-aside"``; default muck and burns), ``cards`` (int, optional: how many cards went into
      the stub; default every card of the piles named). The cards of those piles may come out of
      the stub from then on.
    - ``gap-cards``: closes an open sequence gap: ``cards`` (int) cards left the shoe unread and
      lie at the next places the screen names; ``burned`` (bool, the floor's decision): they are
      out of play instead (docs/irregularities.md, *Sequence gap*). Also after a shoe restart
      (``shoe-restarted``) with no gap: the cards pulled while the shoe was off, by the floor's
      count (docs/protocol.md section 12).
    - ``place-cards``: where each read of the street in progress lies, ``places`` (a list, one per
      read in the order of the pulls: ``"seat N up"``, ``"seat N down"``, ``"burn"``, ``"muck"``,
      ``"off"`` or ``"centre"``), asked for by a ``card-placement`` STOP on 3rd street or a street
      with a community card (docs/irregularities.md, *Placing a street's cards*).
    - ``new-hand`` ``override`` (bool): the floor starts a hand over a latched STOP alert (the
      alerts are cleared, a ``floor-override`` alert is journaled).
    - ``undo``: take back the dealer's last input, while no card has left the shoe since it.
    """

    NEW_HAND = "new-hand"          # seats: the seats dealt in; args: game, rules
    FOLD = "fold"                  # seat
    ALL_IN = "all-in"              # seat
    BETTING_COMPLETE = "betting-complete"
    HAND_COMPLETE = "hand-complete"
    LAST_CARD_EXPOSED = "last-card-exposed"  # seat: whose 7th-street card was dealt face up
    STUB_RELOADED = "stub-reloaded"  # the scrambled stub is back in the shoe
    CUT_DONE = "cut-done"
    SCRAMBLE_DONE = "scramble-done"  # the named cards are gathered and scrambled into a new stub
    SHOW = "show"                  # seat: the hand is tabled at showdown (its downcards may show)
    ACK_ALERT = "ack-alert"        # args: code
    UNDO = "undo"
    EXPOSED_CARD = "exposed-card"  # seat: a card dealt to that seat was exposed; args: street, which, both
    ABSENT_PLAYER = "absent-player"  # seat: the player is away from the table; args: action_reached
    CARD_OFF_TABLE = "card-off-table"  # seat: a card dealt to that seat went off the table; args: face
    PREMATURE_DONE = "premature-done"  # the premature cards are all out; args: merged (seats)
    BURN_ERROR = "burn-error"      # args: burns (0 or 2), stands (bool, 7th street)
    WRONG_BRING_IN = "wrong-bring-in"  # seat: wrongly named low card who bet; args: next_acted
    CARD_COUNT = "card-count"      # seat: the dealer counted args["cards"] cards in the hand
    MISDEAL = "misdeal"            # the dealer declares a misdeal
    STUB_MIXED = "stub-mixed"      # the stub was mixed with the muck or the burns; args: piles, cards
    GAP_CARDS = "gap-cards"        # args: cards (found on the felt after a sequence gap), burned
    PLACE_CARDS = "place-cards"    # args: places (one per read of the street, in the order of the pulls)


STREET_NAMES = ("3rd", "4th", "5th", "6th", "7th")
GAMES = ("stud", "stud8", "razz")


class SeatRule(StrEnum):
    """Whether an input names a seat."""

    REQUIRED = "required"
    """The input is about one seat (``seat`` 1..:data:`~shoe_ctl.input_shape.MAX_SEAT`)."""
    OPTIONAL = "optional"
    """A seat may be named (an acknowledged alert's seat) but the input is not about one."""


def _int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _seat(value: object) -> bool:
    return _int(value) and 1 <= value <= MAX_SEAT


@frozen_value
class Arg(FrozenValue):
    """One argument of a dealer input.

    :param name: its key in ``args``.
    :param what: what it must be, in the dealer's words (``true or false``): the refusal says
        ``args.NAME: expected WHAT, got VALUE``.
    :param test: True for a value it may have.
    :param required: the input is refused without it.
    :param choices: the values a sheet offers, where they are few (JSON-safe), else ``()``.
    """

    name: str
    what: str
    test: Callable[[Any], bool]
    required: bool = False
    choices: tuple[Any, ...] = ()

    def __init__(self, name: str, what: str, test: Callable[[Any], bool], required: bool = False,
                 choices: tuple[Any, ...] = ()) -> None:
        put = self._put
        put[0](self, name)
        put[1](self, what)
        put[2](self, test)
        put[3](self, required)
        put[4](self, choices)


def _flag(name: str, what: str = "true or false", *, required: bool = False) -> Arg:
    return Arg(name, what, lambda v: isinstance(v, bool), required, (True, False))


def _one_of(name: str, values: tuple[Any, ...], what: str, *, required: bool = False) -> Arg:
    def test(v: object) -> bool:
        return not isinstance(v, bool) and v in values
    return Arg(name, what, test, required, values)


def _count(name: str, what: str, *, required: bool = False) -> Arg:
    return Arg(name, what, lambda v: _int(v) and 0 <= v <= 52, required)


def _seats(name: str, what: str) -> Arg:
    return Arg(name, what, lambda v: isinstance(v, list) and all(_seat(s) for s in v))


def _places(v: object) -> bool:
    return isinstance(v, list) and 0 < len(v) <= MAX_ITEMS and all(isinstance(p, str) and len(p) <= 12 for p in v)


def _piles(v: object) -> bool:
    return isinstance(v, list) and bool(v) and all(p in ("muck", "burns", "set-aside") for p in v)


COMMON = (Arg("ref", "an integer", _int),
          _one_of("street", STREET_NAMES, "one of " + ", ".join(STREET_NAMES)))
"""Arguments any input may carry: ``ref`` (the machine answers with the instruction in force
after the input, carrying the same ``ref``) and ``street`` (the street the report is about)."""


@frozen_value
class InputSpec(FrozenValue):
    """What one dealer input is, wherever it comes from.

    :param action: the input.
    :param seat: its :class:`SeatRule`.
    :param args: its arguments besides :data:`COMMON` (others are kept, unchecked).
    :param undo: why ``undo`` refuses to take it back; ``None``: it can be undone.
    :param progress: it moves the hand on (a street or a hand over, the next stub, a new hand):
        refused while a STOP is up, unless the STOP asks for it (:func:`stop_refusal`).
    :param asked_by: the latched alert codes whose STOP asks for this input.
    :param stop_override: the flag argument with which the floor gives it over a STOP.
    :param role: the role a person must hold to give it (``None``: whoever may give dealer
        inputs at this table).
    :param rules: the rule texts it reports under (``house 16.15``), for the documentation.
    :param needs_hand: it is about the hand running: while none runs (the table idle, before the
        first hand or between hands) the machine refuses it (``input-wrong-time``, ``no hand is
        running``; ``undo``: ``undo-refused``, since nothing of a finished hand is undone) and the
        page offers it disabled. False for the inputs given between hands.
    """

    action: DealerAction
    seat: SeatRule = SeatRule.OPTIONAL
    args: tuple[Arg, ...] = ()
    undo: str | None = None
    progress: bool = False
    asked_by: frozenset[str] = frozenset()
    stop_override: str | None = None
    role: str | None = None
    rules: str = ""
    needs_hand: bool = True

    def __init__(self, action: DealerAction, seat: SeatRule = SeatRule.OPTIONAL, args: tuple[Arg, ...] = (),
                 undo: str | None = None, progress: bool = False, asked_by: frozenset[str] = frozenset(),
                 stop_override: str | None = None, role: str | None = None, rules: str = "",
                 needs_hand: bool = True) -> None:
        put = self._put
        put[0](self, action)
        put[1](self, seat)
        put[2](self, args)
        put[3](self, undo)
        put[4](self, progress)
        put[5](self, asked_by)
        put[6](self, stop_override)
        put[7](self, role)
        put[8](self, rules)
        put[9](self, needs_hand)

    def check(self, seat: object, args: dict[str, Any]) -> None:
        """Check ``seat`` and ``args`` against this input's rules (after
        :func:`~shoe_ctl.input_shape.check_input_shape`).

        :raises ValueError: naming the field (``seat``, ``args.NAME``) and what it should be.
        """
        if self.seat is SeatRule.REQUIRED and seat is None:
            raise ValueError(f"seat: {self.action.value} needs a seat")
        for arg in (*COMMON, *self.args):
            if arg.name in args:
                value = args[arg.name]
                if not arg.test(value):
                    raise ValueError(f"args.{arg.name}: expected {arg.what}, got {_shown(value)}")
            elif arg.required:
                raise ValueError(f"args.{arg.name}: expected {arg.what}, got nothing")

    def public(self) -> dict[str, Any]:
        """The row as JSON for the page (``GET /inputs``)."""
        return {"seat": self.seat.value, "undoable": self.undo is None, "progress": self.progress,
                "asked_by": sorted(self.asked_by), "stop_override": self.stop_override, "role": self.role,
                "needs_hand": self.needs_hand,
                "args": {a.name: {"what": a.what, "required": a.required, "choices": list(a.choices)}
                         for a in (*COMMON, *self.args)}}


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


A = DealerAction
_NEW_HAND = "a new hand is not undone (declare a misdeal instead)"
_OVER = "the hand is over"
_STUB = "the stub was rebuilt and the shoe's counter reset"


def _specs() -> dict[DealerAction, InputSpec]:
    seat = SeatRule.REQUIRED
    rows = (
        InputSpec(A.NEW_HAND, args=(
            _seats("seats", f"a list of seat numbers 1..{MAX_SEAT}"), Arg("button", "a seat number", _seat),
            _seats("all_in", f"a list of seat numbers 1..{MAX_SEAT}"),
            _one_of("game", GAMES, "one of " + ", ".join(GAMES)),
            Arg("rules", "a rule profile's name", lambda v: isinstance(v, str) and bool(v)),
            _flag("override", "true or false (the floor starts the hand over a STOP)")),
            undo=_NEW_HAND, progress=True, stop_override="override", needs_hand=False),
        InputSpec(A.FOLD, seat),
        InputSpec(A.ALL_IN, seat),
        InputSpec(A.BETTING_COMPLETE, progress=True),
        InputSpec(A.HAND_COMPLETE, undo=_OVER, progress=True),
        InputSpec(A.LAST_CARD_EXPOSED, seat, rules="RP-10-B, house 16.21-16.24"),
        InputSpec(A.STUB_RELOADED, undo="the stub was reloaded", progress=True),
        InputSpec(A.CUT_DONE, undo="the stub was reloaded and the shoe's counter reset", progress=True),
        InputSpec(A.SCRAMBLE_DONE, undo=_STUB, progress=True),
        InputSpec(A.SHOW, seat),
        InputSpec(A.ACK_ALERT, args=(Arg("id", "an alert's integer id", _int),
                                     Arg("code", "an alert code", lambda v: isinstance(v, str)),
                                     Arg("of", "the place among the open alerts of that code (0: the oldest)",
                                         lambda v: _int(v) and v >= 0)),
                  undo="an acknowledged alert stays acknowledged", needs_hand=False),
        InputSpec(A.UNDO),
        InputSpec(A.EXPOSED_CARD, seat, (
            _one_of("which", (0, 1), "0 (first hole card) or 1 (second)"), _flag("both")),
            rules="RP-10-A, house 16.1, 16.2; RP-10-B, house 16.21-16.24"),
        InputSpec(A.ABSENT_PLAYER, seat, (_flag("action_reached"),), rules="RP-10-C, house 16.9-16.11"),
        InputSpec(A.CARD_OFF_TABLE, seat, (_one_of("face", ("up", "down"), "'up' or 'down'"),),
                  rules="house 16.13"),
        InputSpec(A.PREMATURE_DONE, args=(_seats("merged", f"a list of seat numbers 1..{MAX_SEAT}"),),
                  progress=True, asked_by=frozenset({"card-not-expected"}), rules="RP-5-D, house 16.16, 16.17"),
        InputSpec(A.BURN_ERROR, args=(
            _one_of("burns", (0, 2), "0 (no burn) or 2 (two burns)", required=True), _flag("stands")),
            rules="house 16.15"),
        InputSpec(A.WRONG_BRING_IN, seat, (_flag("next_acted"),), rules="house 16.6"),
        InputSpec(A.CARD_COUNT, seat, (_count("cards", "the number of cards counted (0..52)", required=True),),
                  rules="house 16.25, 16.26"),
        InputSpec(A.MISDEAL, args=(Arg("confirm", "true (a misdeal must be confirmed)", lambda v: v is True,
                                       required=True, choices=(True,)),), undo=_OVER,
                  role="floor-supervisor"),  # the floor rules a misdeal (docs/compliance.md)
        InputSpec(A.STUB_MIXED, args=(
            Arg("piles", "a non-empty list of muck, burns, set-aside", _piles),
            _count("cards", "the number of cards mixed in (0..52)")), rules="RP-4"),
        InputSpec(A.GAP_CARDS, args=(_count("cards", "the number of cards found (0..52)", required=True),
                                     _flag("burned", "true or false (the floor: out of play)")),
                  undo="the floor's count closed the sequence gap", progress=True,
                  asked_by=frozenset({"sequence-gap", "shoe-restarted"})),
        # neither rule text says who places a street's cards: the placement lifts a latched STOP,
        # which only the floor may clear (docs/compliance.md), so the floor confirms it
        InputSpec(A.PLACE_CARDS, args=(Arg("places", "a list of places, one per read of the street", _places,
                                           required=True),),
                  asked_by=frozenset({"card-placement"}), role="floor-supervisor"),
    )
    return {r.action: r for r in rows}


SPECS: dict[DealerAction, InputSpec] = _specs()
"""Every dealer input's specification, by action (one row each)."""


def check_input(action: DealerAction, seat: object, args: object) -> None:
    """Check a dealer input from outside the process (display, dealer port) before it is posted:
    its shape (:func:`~shoe_ctl.input_shape.check_input_shape`), then its :data:`SPECS` row.

    :raises ValueError: naming the field and what it should be.
    """
    SPECS[action].check(seat, check_input_shape(seat, args))


def ack_targets(alerts: Iterable[Mapping[str, Any]], args: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The alerts of ``alerts`` (oldest first, each with ``id`` and ``code``) that an ``ack-alert``
    with ``args`` acknowledges (docs/irregularities.md, *Acknowledging an alert*): with ``of`` = N,
    the (N+1)-th oldest alert of ``code`` (how the journal names it: :func:`ack_pinned`); else
    with ``id``, exactly that alert (none if ``code`` is given and is not its code); else with
    ``code``, the oldest latched alert (a STOP) of that code, or with none latched the oldest of
    that code (an acknowledgement by code is asked for a STOP: it does not go to a notice of the
    same code raised before it); with neither, every alert. Another alert of the same code stays
    up: a second STOP of one code is not acknowledged with the first."""
    aid, code, nth = args.get("id"), args.get("code"), args.get("of")
    if nth is not None:
        if not isinstance(nth, int) or isinstance(nth, bool) or nth < 0:
            return []
        return [a for a in alerts if a.get("code") == code][nth:nth + 1]
    if aid is None and code is None:
        return list(alerts)
    if aid is not None:
        return [a for a in alerts if a.get("id") == aid and (code is None or a.get("code") == code)]
    same = [a for a in alerts if a.get("code") == code]
    return [a for a in same if a.get("latched")][:1] or same[:1]


def ack_pinned(alerts: Sequence[Mapping[str, Any]], args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` of an ``ack-alert`` naming an alert by ``id``, with the words that name the same
    alert whatever the numbering (a replay of the journal numbers the alerts anew), as the journal
    records it: its ``code`` and ``of``, its place among the open alerts of that code (0: the
    oldest). An ``id`` that names no alert (or one of another ``code``) gets an ``of`` past the
    last alert of ``code``: refused live and in the replay alike."""
    out = {k: v for k, v in args.items() if k != "of"}
    hit = ack_targets(alerts, out)
    same = [a.get("id") for a in alerts if a.get("code") == (hit[0].get("code") if hit else out.get("code"))]
    if hit:
        out["code"] = hit[0].get("code")
    out["of"] = same.index(out["id"]) if hit else len(same)
    return out


REFUSED_CODES = frozenset({"input-wrong-time", "input-invalid", "undo-refused"})
"""Alert codes with which the machine refuses a dealer input (nothing changed)."""

STOP_REFUSAL = "a STOP alert is up"
"""The words that begin the reason of every input refused under a STOP (:func:`stop_refusal`)."""


def stop_refusal(action: DealerAction, args: dict[str, Any], stops: Iterable[str]) -> str | None:
    """The STOP rule, for every input: while the latched alerts ``stops`` (their codes) are open,
    an input that moves the hand on is refused, unless one of them asks for it or the floor
    overrides (the row's ``stop_override`` flag set). Returns the reason, or ``None`` when the
    input may go on (docs/state-machine.md, *Dealer inputs*)."""
    spec = SPECS[action]
    codes = list(dict.fromkeys(stops))
    if not spec.progress or not codes or spec.asked_by.intersection(codes):
        return None
    if spec.stop_override is not None and args.get(spec.stop_override) is True:
        return None
    how = (", or the floor overrides (New hand… > Floor override)" if spec.stop_override is not None else "")
    return f"{STOP_REFUSAL} ({', '.join(codes)}): acknowledge it first{how}"
