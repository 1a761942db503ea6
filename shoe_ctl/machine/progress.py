"""The progress of one hand as the dealing machine keeps it (:class:`Progress`): one value with
every field a dealer input can change, which the undo point copies whole. The fields and the
undo are described in ``docs/state-machine.md`` (*The hand's progress*).
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, cast

from shoe_ctl.machine.reads import Read
from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.games import Game, first_to_act, first_to_act_third
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.rules.stub import Step, StreetPlan, forecast_short, plan_street

__all__ = ["COPY", "PLACEMENT", "street_pulls", "MAX_INFO_ALERTS", "MAX_LATCHED_ALERTS", "MachineFault", "PlanMismatch", "Progress"]

log = logging.getLogger("shoe_ctl.machine.dealing")


class MachineFault(RuntimeError):
    """An internal error met while handling an event (the machine went to ``attention``)."""


class PlanMismatch(MachineFault):
    """The plan and the machine disagree (a dealer step of the wrong kind)."""

# How the undo point copies a field (each field's metadata "copy"): "value" (immutable, or only
# ever replaced whole), "container" (changed in place: a shallow copy), "deep" (nested and
# changed in place), "hand" (the hand record: Progress.copy_hand).
_VALUE, _CONTAINER, _DEEP, _HAND = ({"copy": k} for k in ("value", "container", "deep", "hand"))

_CARD_STEPS = frozenset({"burn", "deal", "community"})

MAX_INFO_ALERTS = 20
"""At most this many information (not latched) alerts are shown; older ones are dropped."""

MAX_LATCHED_ALERTS = 32
"""At most this many latched entries are kept apart; beyond, a latched alert is merged into the
newest open one of its code (a code never seen yet still gets its own entry: the codes are few),
so a flood of latched alerts keeps the list, and each event's cost, bounded."""

PLACEMENT = "card-placement"
"""The latched alert (a STOP) that asks the dealer to place each card of the street in progress
(docs/irregularities.md, *Placing a street's cards*)."""

_READ_PREFIX = re.compile(r"read \d+: ")


def _words(message: str) -> str:
    """An alert's words without the read they start with (``read 12: ...``)."""
    return _READ_PREFIX.sub("", message, count=1) if message.startswith("read ") else message


@dataclass(slots=True, eq=False)
class Progress:
    """The hand in progress (or the last one) and what its irregularities left behind.

    ``profile``/``game``: the hand's rules and game; ``hand_no``: the hand's number (1 the first);
    ``hand``: the record (:class:`~shoe_ctl.rules.hand.HandState`, ``None`` before any hand);
    ``street``/``plan``/``step_i``: the street being dealt, its plan and the next step's index;
    ``reads``: every card read of the hand, in order, and ``where`` the first read of each
    identity; ``bring_in_idx``/``first_idx``/``first_by_street``: seat indexes in the hand;
    ``seventh``/``procedures``: the short-stub decisions (``shoe-ctl analyze``'s keys);
    ``forecast``/``forecast_dirty``: the first short street, recomputed when dirty;
    ``mucked``/``shown``: seat indexes at showdown; ``alerts``: the alerts shown until
    acknowledged; ``confirming``: a street with no betting waits for its confirmation.
    The irregularities (docs/irregularities.md): ``premature`` (the street of premature cards
    going back into the stub, RP-5-D), ``betting_strays`` (cards read in the betting round),
    ``absent`` (seat indexes reported absent), ``aside_due``/``aside_left``/``aside_total``
    (house 16.16), ``misdeal`` (the code that ended the hand), ``first_deal_idx`` (the street's
    first card to a player), ``mixed`` (cards declared mixed into the stub, RP-4), ``over`` (a
    seat counted one card over the record); ``idle_strays``: the ids of the alerts for cards
    pulled with no hand running (kept from one hand to the next until acknowledged);
    ``counted``: the dealer's counts of the street in progress that disagreed with the record, by
    seat index (cards held), until the street is booked again from them; ``carried``: cards pulled
    after the hand's last card, before *hand complete* (the next deck's), which the next hand
    counts out of the shoe.
    """

    profile: RuleProfile = field(metadata=_VALUE)
    game: Game = field(metadata=_VALUE)
    hand_no: int = field(default=0, metadata=_VALUE)
    hand: HandState | None = field(default=None, metadata=_HAND)
    street: str | None = field(default=None, metadata=_VALUE)
    plan: StreetPlan | None = field(default=None, metadata=_VALUE)
    step_i: int = field(default=0, metadata=_VALUE)
    reads: list[Read] = field(default_factory=list, metadata=_CONTAINER)
    where: dict[Card, Read] = field(default_factory=dict, metadata=_CONTAINER)
    bring_in_idx: int | None = field(default=None, metadata=_VALUE)
    first_idx: int | None = field(default=None, metadata=_VALUE)
    first_by_street: dict[str, int | None] = field(default_factory=dict, metadata=_CONTAINER)
    seventh: dict[str, Any] | None = field(default=None, metadata=_VALUE)
    procedures: dict[str, str] = field(default_factory=dict, metadata=_CONTAINER)
    forecast_street: str | None = field(default=None, metadata=_VALUE)
    forecast_dirty: bool = field(default=False, metadata=_VALUE)
    mucked: set[int] = field(default_factory=set, metadata=_CONTAINER)
    shown: set[int] = field(default_factory=set, metadata=_CONTAINER)
    alerts: list[dict[str, Any]] = field(default_factory=list, metadata=_CONTAINER)
    confirming: bool = field(default=False, metadata=_VALUE)
    premature: dict[str, Any] | None = field(default=None, metadata=_DEEP)
    betting_strays: list[Read] = field(default_factory=list, metadata=_CONTAINER)
    absent: set[int] = field(default_factory=set, metadata=_CONTAINER)
    aside_due: bool = field(default=False, metadata=_VALUE)
    aside_left: int = field(default=0, metadata=_VALUE)
    aside_total: int = field(default=0, metadata=_VALUE)
    misdeal: str | None = field(default=None, metadata=_VALUE)
    first_deal_idx: int | None = field(default=None, metadata=_VALUE)
    mixed: frozenset[Card] = field(default_factory=frozenset, metadata=_VALUE)
    over: int | None = field(default=None, metadata=_VALUE)
    idle_strays: set[int] = field(default_factory=set, metadata=_CONTAINER)
    counted: dict[int, int] = field(default_factory=dict, metadata=_CONTAINER)
    carried: list[Read] = field(default_factory=list, metadata=_CONTAINER)

    def begin(self, profile: RuleProfile, game: Game, hand: HandState) -> None:
        """A new hand: its rules, game and record; everything else of the last hand forgotten
        but the latched alerts (they stay until acknowledged)."""
        alerts, strays, carried = [a for a in self.alerts if a["latched"]], self.idle_strays, self.carried
        hand_no = self.hand_no + 1
        for name, factory, default in _RESET:
            setattr(self, name, default if factory is None else factory())
        self.profile, self.game, self.hand, self.hand_no, self.alerts = profile, game, hand, hand_no, alerts
        self.idle_strays = strays
        for kept in carried:  # pulled from this hand's deck before it started: held aside, counted
            hand.put_aside(kept.card)
            read = Read(kept.seq, kept.card, "aside", None, None)
            self.reads.append(read)
            if kept.card is not None:
                self.where.setdefault(kept.card, read)

    # ================================================================== the undo point's copy

    def copy(self, hand: HandState | None) -> Progress:
        """A copy for the undo point: every field by its ``copy`` kind (:data:`COPY`), the hand
        record replaced by ``hand`` (a copy made by the caller, see
        :meth:`~shoe_ctl.machine.undo.Undo.take`)."""
        return _copy_progress(self, hand)

    # ================================================================== questions on the value

    def index(self, seat: int) -> int:
        """The index in the hand of table seat ``seat``.

        :raises ValueError: the seat is not dealt in."""
        assert self.hand is not None
        for i, s in enumerate(self.hand.seats):
            if s.seat == seat:
                return i
        raise ValueError(f"seat {seat} is not dealt in")

    def seat_of(self, idx: int | None) -> int | None:
        """The table seat of seat index ``idx`` in the hand (``None`` for ``None`` or no hand)."""
        if idx is None or self.hand is None:
            return None
        return self.hand.seats[idx].seat

    def two_can_act(self) -> bool:
        """Two or more players in the hand can still bet (rules core ``HandState.can_act``);
        otherwise the street has no betting round."""
        assert self.hand is not None
        return sum(self.hand.can_act()) >= 2

    def forecast(self) -> str | None:
        """The first street that will be short if every player now in the hand stays in
        (``forecast_short``), recomputed only when marked dirty (a street's start, a street's deal,
        a fold, a ruling); ``None`` once 7th street is dealt."""
        if self.forecast_dirty and self.hand is not None:
            self.forecast_street = forecast_short(self.profile, self.hand)
            self.forecast_dirty = False
        return self.forecast_street

    def first_unknown(self, betting: bool) -> bool:
        """In a 4th-7th street betting round (``betting``), no first to act could be named
        because a card that decides it is unknown (an unread community card, house 16.20, or
        unread upcards)."""
        return betting and self.first_idx is None and self.hand is not None and self.street not in (None, "3rd")

    def card_step(self) -> Step | None:
        """The plan's current step when it pulls a card (a burn, a deal, the community card)."""
        plan = self.plan
        if plan is None or self.step_i >= len(plan.steps):
            return None
        step = plan.steps[self.step_i]
        return step if step.kind in _CARD_STEPS else None

    # ================================================================== a street's plan and betting

    def plan_street(self) -> tuple[str, str] | None:
        """Plan the street in progress (rules core :func:`~shoe_ctl.rules.stub.plan_street`) from
        its first step; the short-stub alert to raise, ``(clause, message)``, else ``None``."""
        street = self.street
        assert street is not None and self.hand is not None
        plan = self.plan = plan_street(self.profile, self.hand, street)
        self.step_i = 0
        self.counted = {}
        self.first_deal_idx = next((st.seat_index for st in plan.steps if st.kind == "deal"), None)
        procedure = plan.procedure._value_  # the value, without the enum property's call
        self.procedures[street] = procedure
        if street == "7th":
            self.seventh = {"live": plan.live, "stub": plan.stub, "required": plan.required,
                            "procedure": procedure, "clause": plan.clause}
        self.forecast_dirty = True
        if procedure == "normal":
            return None
        n = plan.stub
        return plan.clause, (f"{street} street: short stub ({n} card{'' if n == 1 else 's'}, required "
                             f"{plan.required}): procedure {procedure} ({plan.clause})")

    def replan(self) -> None:
        """Plan what is left of the street in progress after a ruling changed the record."""
        assert self.hand is not None and self.street is not None
        self.plan = plan_street(self.profile, self.hand, self.street)
        self.step_i = 0

    def begin_betting(self) -> None:
        """The street's cards are out and a betting round follows: who brings in / acts first
        (rules core); the forecast looks from the next street on."""
        self.forecast_dirty = True
        self.betting_strays = []
        self.confirming = False
        self.first_to_act()

    def first_to_act(self) -> None:
        """Who brings in / acts first in the betting round of the street in progress (rules core),
        from the cards the record gives the seats."""
        hand, street = self.hand, self.street
        assert hand is not None and street is not None and self.plan is not None
        can = hand.can_act()
        if street == "3rd":
            self.first_idx = first_to_act_third(self.game, hand.upcards("3rd"), can, hand.bring_in_counts())
        else:
            in_hand = [not (s.folded or s.killed or s.dead) for s in hand.seats]  # SeatState.in_hand, written out
            community = hand.community if hand.community_street is not None else None
            # house 16.20: a community card on the board that was not read counts as unknown.
            unknown = hand.community_street is not None and hand.community is None
            if self.plan.first_to_act_rule == "RP-10-H-D":
                # RP-10-H-D: the first who would act on 6th acts first on 7th (7th is dealt
                # down, so the boards showing are those of 6th; no community card counted).
                community = None
                unknown = False
            self.first_idx = first_to_act(self.game, hand.boards(), in_hand, can, self.profile.tie, community,
                                          community_unknown=unknown)
        self.first_by_street[street] = self.first_idx

    def begin_confirm(self) -> None:
        """The street's cards are out and no betting round can follow (fewer than two players can
        act, e.g. all-in): no one acts first; the dealer confirms the street complete
        (``betting-complete``) before the next street's first card. A card read before that is
        held aside and booked to no seat until the dealer says what it was: the next street's
        burn (``premature-done``) or a card too many to a seat (``card-count``)."""
        self.forecast_dirty, self.betting_strays, self.first_idx, self.confirming = True, [], None, True

    def step_done(self, kind: str) -> None:
        """The dealer did the plan's current ``kind`` step (``"scramble"`` or ``"cut"``).

        :raises PlanMismatch: the plan's current step is of another kind."""
        assert self.plan is not None and self.hand is not None
        step = self.plan.steps[self.step_i]
        if step.kind != kind:
            raise PlanMismatch(f"expected a {kind} step, the plan has {step.kind}")
        self.hand.record(step, None)
        if kind == "scramble":
            gathered = {g.removeprefix("burn ") for g in step.gather if g.startswith("burn ")}
            back = [c for c, r in self.where.items()
                    if (r.role == "burn" and r.street in gathered)
                    or (r.role in ("stray", "aside") and "set-aside" in step.gather)]
            for c in back:
                del self.where[c]
            if self.mixed:  # RP-4: cards declared mixed into the stub are in the new one
                self.hand.new_stub = (self.hand.new_stub or frozenset()) | self.mixed
        self.step_i += 1

    def gap_places(self, dealing: bool, limit: int = 8) -> tuple[str, ...]:
        """The places of the next card steps of the street's plan (``"seat 3 down"``,
        ``"burn 4th"``, ``"centre"``), at most ``limit``: where cards pulled during a sequence
        gap lie when the dealer followed the screen. Empty unless ``dealing`` (a street's deal)."""
        plan, hand = self.plan, self.hand
        if plan is None or hand is None or not dealing:
            return ()
        out: list[str] = []
        for step in plan.steps[self.step_i:]:
            if step.kind == "deal" and step.seat_index is not None:
                out.append(f"seat {hand.seats[step.seat_index].seat} {step.face or 'down'}")
            elif step.kind == "burn":
                out.append(f"burn {step.street or self.street}")
            elif step.kind == "community":
                out.append("centre")
            else:
                break  # a scramble or a cut: no card is pulled past it
            if len(out) >= limit:
                break
        return tuple(out)

    def identity_alert(self, read: Read) -> tuple[str, str, int | None] | None:
        """A card already read this hand (``duplicate-card``) or, after a scramble, not among the
        new stub's identities (``card-not-in-stub``): both reads are marked suspect (in
        :attr:`reads`, not on the display); the latched alert to raise, ``(code, message,
        seat)``, else ``None``.

        Hole-card embargo: the alert is public, so it names the earlier read's place only when
        both reads lie face up; otherwise it says only that the card was already read, since
        naming a downcard's or burn's place (or that it was face down) beside a card that lies
        face up, or beside the seat just dealt, would reveal a hidden card. The place goes to a
        DEBUG log line (and the journal holds every read: ``shoe-ctl export``)."""
        card = read.card
        if card is None or self.hand is None:
            return None
        new_stub = self.hand.new_stub
        earlier = self.where.get(card)
        if earlier is None and (new_stub is None or card in new_stub):
            return None
        read.suspect = True
        if earlier is not None:
            earlier.suspect = True
            log.debug("read %d (%s) has the identity of read %d (%s)", read.seq, read.where(), earlier.seq,
                      earlier.where())
        here = "the card just dealt" if read.role in ("down", "up", "community") else "this card"
        if read.role in ("down", "up") and read.seat is not None:
            here += f" to seat {read.seat}"
        match = ""
        if earlier is not None and read.public and earlier.public:
            match = f"; it matches {earlier.public_where()} (read {earlier.seq})"
        if new_stub is not None and card not in new_stub:
            # Not whether it was read before: a card out of the stub that was read already can
            # only be a dealt card, so saying so beside a face-up card would point at a hole card.
            what = f"; it was already read in this hand{match}; both reads are suspect" if match else ""
            return ("card-not-in-stub", f"read {read.seq}: card not in the scrambled stub: {here} is not "
                    f"one of the new stub's cards{what} — stop, call the floor", read.seat)
        return ("duplicate-card", f"read {read.seq}: duplicate card: {here} was already read in this "
                f"hand{match}; both reads are suspect — stop, call the floor", read.seat)

    def show_alert(self, aid: int, code: str, message: str, street: str | None, seat: int | None, latched: bool,
                   moves: tuple[str, ...], *, repeat: bool = False) -> bool:
        """Show an alert until it is acknowledged, as entry ``aid``; True when shown so. A repeat
        of an alert still shown (same code, words, seat, street, latch and moves; with ``repeat``
        the words may differ in the read they name, ``read N: ...``, and the entry takes the newest
        words) is merged into it instead (False): its ``count`` goes up and it keeps its id, so a
        flood keeps one entry. Beyond :data:`MAX_INFO_ALERTS` information alerts the oldest is
        dropped; beyond :data:`MAX_LATCHED_ALERTS` latched entries a latched alert joins the
        newest open one of its code (latched ones stay until acknowledged; the journal keeps every
        one)."""
        words = _words(message) if repeat else message
        latched_n = 0
        into: dict[str, Any] | None = None
        for a in self.alerts:
            if a["latched"]:
                latched_n += 1
                if a["code"] == code:
                    into = a
            if (a["code"] == code and a["seat"] == seat and a["street"] == street and a["latched"] == latched
                    and a["moves"] == list(moves)
                    and (a["message"] == message or (repeat and _words(a["message"]) == words))):
                into = a
                break
        else:
            if not (latched and latched_n >= MAX_LATCHED_ALERTS and into is not None):
                into = None
        if into is not None:
            into["count"] = into.get("count", 1) + 1
            into["message"] = message
            return False
        self.alerts.append({"id": aid, "code": code, "message": message, "street": street,
                            "seat": seat, "latched": latched, "moves": list(moves), "count": 1})
        info = [a for a in self.alerts if not a["latched"]]
        if len(info) > MAX_INFO_ALERTS:
            drop = {id(a) for a in info[:len(info) - MAX_INFO_ALERTS]}
            self.alerts = [a for a in self.alerts if id(a) not in drop]
        return True

    def carry(self, read: Read) -> str:
        """``read`` left the shoe after the hand's last card and before *hand complete*: kept in
        the hand's reads, not counted in its record, and carried to the next hand, which counts it
        out of its deck (docs/irregularities.md, *A card after the hand*). The alert's words."""
        self.reads.append(read)
        self.carried.append(read)
        return (f"read {read.seq}: a card left the shoe after the hand's last card: hold it aside, out of play, "
                "and do not put it back: the next hand counts it out of the shoe")

    def drop_alerts(self, *codes: str, prefix: tuple[str, ...] | str = "") -> None:
        """Take the shown alerts of ``codes`` (those whose words start with ``prefix``) down."""
        self.alerts = [a for a in self.alerts if not (a["code"] in codes and a["message"].startswith(prefix))]

    def open_stops(self) -> list[dict[str, Any]]:
        """The latched (STOP) alerts shown now, oldest first, each ``{"code", "message", "street",
        "seat", "moves"}``: a hand's end keeps them (a misdeal declared under a STOP, which then
        still holds the next hand back)."""
        return [{"code": a["code"], "message": a["message"], "street": a["street"], "seat": a["seat"],
                 "moves": list(a["moves"])} for a in self.alerts if a["latched"]]

    def show_again(self, shown: list[Any], last_id: int, *, latched: bool) -> int:
        """Show alerts of the shape :meth:`open_stops` gives again, ``latched`` or not, as entries
        ``last_id + 1``, ... (an entry not of that shape is skipped, a repeat merged). Returns how
        many ids were used."""
        used = 0
        for s in shown:
            if not (isinstance(s, dict) and isinstance(s.get("code"), str) and isinstance(s.get("message"), str)):
                continue
            street, seat, moves = s.get("street"), s.get("seat"), s.get("moves")
            kept = tuple(m for m in moves if isinstance(m, str)) if isinstance(moves, list) else ()
            if self.show_alert(last_id + used + 1, s["code"], s["message"], street if isinstance(street, str) else None,
                               seat if isinstance(seat, int) and not isinstance(seat, bool) else None, latched, kept):
                used += 1
        return used

    def latched_codes(self) -> list[str]:
        """The codes of the latched (STOP) alerts shown, each once, oldest first."""
        return list(dict.fromkeys(a["code"] for a in self.alerts if a["latched"]))


_RESET: tuple[tuple[str, Callable[[], Any] | None, Any], ...] = tuple(
    (f.name, None if f.default_factory is MISSING else f.default_factory, f.default)
    for f in fields(Progress) if f.default_factory is not MISSING or f.default is not MISSING)
"""Each field a new hand sets back (:meth:`Progress.begin`): its name and its default factory,
else its default (the fields without either, the rules and the game, are given)."""

COPY: dict[str, str] = {f.name: f.metadata["copy"] for f in fields(Progress)}
"""How the undo point copies each field of :class:`Progress` ("value", "container", "deep",
"hand"): every field has its kind, so a field added without one fails at import."""



def _copier() -> Callable[[Progress, HandState | None], Progress]:
    """:meth:`Progress.copy` as straight-line code, one statement per field written out from
    :data:`COPY` and compiled once here: a ``value`` field shared, a ``container`` copied
    shallowly (``.copy()``), a ``deep`` one by ``copy.deepcopy`` (unless ``None``), the ``hand`` field the copy the
    caller made. The undo point copies the progress at every fold, all-in, betting round
    complete and show; a loop over the fields setting each with ``object.__setattr__`` took
    about a tenth of a direct replay (docs/performance.md, "The replay a user runs")."""
    body = ["def copy(self, hand):", "    new = _new(Progress)"]
    for name, kind in COPY.items():  # (a dataclass field's name is an identifier)
        value = {"value": f"self.{name}", "container": f"self.{name}.copy()",
                 "deep": f"None if self.{name} is None else _deepcopy(self.{name})", "hand": "hand"}[kind]
        body.append(f"    new.{name} = {value}")
    body.append("    return new")
    space: dict[str, Any] = {"_new": object.__new__, "Progress": Progress, "_deepcopy": copy.deepcopy}
    exec(compile("\n".join(body), f"<{__name__}.Progress.copy>", "exec"), space)
    return cast(Callable[[Progress, HandState | None], Progress], space["copy"])


_copy_progress = _copier()


def street_pulls(p: Progress, street: str) -> list[Read]:
    """The reads of ``street`` the dealer places, in the order of the pulls: those booked to a
    seat (a card too many included), its burns, its community card and the cards held aside since
    its deal (read while none was expected)."""
    strays = {id(r) for r in p.betting_strays}
    return [r for r in p.reads if r.street == street
            and ((r.seat is not None and r.role in ("up", "down", "extra")) or r.role in ("burn", "community")
                 or (r.role == "stray" and id(r) in strays))]
