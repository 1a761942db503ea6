"""The record of one hand as the rules core sees it: seats, burns, community card, stub.

:class:`HandState` is pure and mutable (no I/O); the state machine owns one per hand and applies
every card that leaves the shoe to the :class:`~shoe_ctl.rules.steps.Step` it filled with
:meth:`HandState.record`. Seats are in *player order* (index 0..n-1 clockwise from the dealer's
left); each keeps its table seat number.

Stub accounting: ``stub_count() = deck_size - pulled + returned``, where ``pulled`` counts every
card that left the shoe (readable or not) and ``returned`` every card put back into the stub (a
scramble gathering burns and set-aside cards, house 16.18; premature cards, RP-5-D).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import field

from shoe_ctl.rules.cards import Card, full_deck
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.steps import Step
from shoe_ctl.values import FACTORY, Value, value

__all__ = ["STREETS", "HandError", "HandState", "KeptSeats", "SeatState", "street_index"]

STREETS: tuple[str, ...] = ("3rd", "4th", "5th", "6th", "7th")
DECK_SIZE = 52
_FULL_DECK = frozenset(full_deck())


class HandError(ValueError):
    """A card or action that the hand record cannot take (wrong seat, wrong step, empty stub)."""


_STREET_INDEX = {street: k for k, street in enumerate(STREETS)}


def street_index(street: str) -> int:
    """0 for ``"3rd"`` .. 4 for ``"7th"``.

    :raises HandError: for any other text.
    """
    k = _STREET_INDEX.get(street) if type(street) is str else None
    if k is not None:
        return k
    try:  # (anything else that equals a street's name)
        return STREETS.index(street)
    except ValueError:
        raise HandError(f"{street!r} is not a street (streets: {', '.join(STREETS)})") from None


@value
class SeatState(Value):
    """One seat of the hand.

    :param seat: the table seat number (1..8).
    :param down: downcards (hole cards) in the order dealt; ``None`` = unreadable.
    :param up: upcards in the order dealt; ``None`` = unreadable.
    :param folded: folded (cards mucked).
    :param all_in: all-in: still in the hand, takes no more betting action.
    :param killed: hand killed (absent player RP-10-C / house 16.9-16.10, or a ruling).
    :param dead: dead hand (house 16.2, 16.25, 16.26).
    :param no_bet: may not bet or raise (house 16.17: a premature final downcard stood).
    :param exposed_hole: a hole card was exposed on the initial deal and stands as the upcard, so
        the 3rd-street upcard is dealt face down (RP-10-A, house 16.1).
    :param next_face: the face of this seat's next 4th-7th street card when a ruling changes it
        (house 16.24: both final cards face up); cleared when that card is recorded.
    :param extra: cards the seat got beyond the deal, by mistake (a second card on a street, as
        the dealer's count showed): they count in the hand (house 16.25: eight or more cards is a
        dead hand) but not as any street's card, so the seat is still dealt its next streets.
    """

    seat: int
    down: list[Card | None] = field(default_factory=list)
    up: list[Card | None] = field(default_factory=list)
    folded: bool = False
    all_in: bool = False
    killed: bool = False
    dead: bool = False
    no_bet: bool = False
    exposed_hole: bool = False
    next_face: str | None = None
    extra: list[Card | None] = field(default_factory=list)

    def __init__(self, seat: int, down: list[Card | None] = FACTORY, up: list[Card | None] = FACTORY,
                 folded: bool = False, all_in: bool = False, killed: bool = False, dead: bool = False,
                 no_bet: bool = False, exposed_hole: bool = False, next_face: str | None = None,
                 extra: list[Card | None] = FACTORY) -> None:
        self.seat = seat
        self.down = list() if down is FACTORY else down
        self.up = list() if up is FACTORY else up
        self.folded = folded
        self.all_in = all_in
        self.killed = killed
        self.dead = dead
        self.no_bet = no_bet
        self.exposed_hole = exposed_hole
        self.next_face = next_face
        self.extra = list() if extra is FACTORY else extra

    def copy(self) -> SeatState:
        """An independent copy (its own card lists; cards are immutable and shared)."""
        new = object.__new__(SeatState)
        d = self.__dict__.copy()
        d["down"] = self.down[:]
        d["up"] = self.up[:]
        d["extra"] = self.extra[:]
        new.__dict__ = d
        return new

    @property
    def in_hand(self) -> bool:
        """Still contesting the pot (not folded, killed or dead); all-in players are in hand."""
        return not (self.folded or self.killed or self.dead)

    @property
    def can_act(self) -> bool:
        """In hand and not all-in: takes betting action."""
        return not (self.folded or self.killed or self.dead or self.all_in)  # in_hand, written out

    @property
    def card_count(self) -> int:
        """Cards held (down + up + any extra card: house 16.25, 16.26 count them all)."""
        return len(self.down) + len(self.up) + len(self.extra)

    @property
    def dealt_count(self) -> int:
        """The street cards held (down + up): what the deal gave the seat, extra cards apart."""
        return len(self.down) + len(self.up)

    @property
    def status(self) -> str:
        """``"live"``, ``"folded"``, ``"all-in"``, ``"killed"`` or ``"dead"`` (display vocabulary)."""
        if self.dead:
            return "dead"
        if self.killed:
            return "killed"
        if self.folded:
            return "folded"
        if self.all_in:
            return "all-in"
        return "live"


class KeptSeats(dict[int, "SeatState"]):
    """What a hand keeps for an undo point that shares it (:meth:`HandState.keep_seats`): each
    seat's copy as it was when the point was taken, by the seat's ``id``, made at its first
    change since; and ``hand``, the whole hand as it was (its seats the point's), copied before
    the first change that does not go through :meth:`HandState.change_seat` (``None`` until
    then: the hand has changed only in its seats)."""

    hand: HandState | None = None  # (a class default: made with no __init__ of its own, a dict's cost)


@value
class HandState(Value):
    """One hand: seats, burns by street, community card, set-aside cards, and the stub.

    :param game: the game dealt.
    :param seats: the seats dealt in, in player order.
    :param burns: every burn by street, in the order taken (``None`` = unreadable); a history,
        never emptied (a scramble gathers from :attr:`burn_pile`).
    :param burn_pile: the burns still on the burn pile as ``(street, card)``; a scramble gathers them.
    :param community: the community card (``None`` also when unreadable; see ``community_street``).
    :param community_street: the street a community card was dealt on, ``None`` if none.
    :param set_aside: cards taken aside under house 16.16 and not yet gathered.
    :param dead_cards: cards out of play for good (an exposed 7th card replaced under RP-10-B, a
        burn that stood under house 16.15); never gathered into a new stub.
    :param new_stub: identities the current stub may hold after the last scramble (``None`` before
        any scramble); a card read later that is not in it is foreign to the stub.
    :param new_stub_unknown: unreadable cards gathered into that stub.
    :param dealt_since_load: cards pulled since the shoe was last (re)loaded.
    :param street: the street of the last card recorded, ``None`` before the first.
    :param pulled: cards that left the shoe this hand.
    :param returned: cards put back into the stub this hand.
    :param deck_size: 52.

    A seat is changed in place only by the methods here (:meth:`change_seat`, and before any
    other change :meth:`keep_all_seats`), so an undo point may share the seats until one changes,
    and the whole hand until a change that is not a seat's (:class:`KeptSeats`).
    """

    game: Game
    seats: list[SeatState]
    burns: dict[str, list[Card | None]] = field(default_factory=dict)
    burn_pile: list[tuple[str, Card | None]] = field(default_factory=list)
    community: Card | None = None
    community_street: str | None = None
    set_aside: list[Card | None] = field(default_factory=list)
    dead_cards: list[Card | None] = field(default_factory=list)
    new_stub: frozenset[Card] | None = None
    new_stub_unknown: int = 0
    dealt_since_load: int = 0
    street: str | None = None
    pulled: int = 0
    returned: int = 0
    deck_size: int = DECK_SIZE
    scrambles: list[str] = field(default_factory=list)
    kept_seats: KeptSeats | None = field(default=None, init=False, repr=False, compare=False)
    """While an undo point shares this hand (:meth:`keep_seats`): what is kept of it as it was
    when the point was taken (:class:`KeptSeats`); ``None`` when no point shares it. Not part of
    the record (not compared, not copied)."""

    def __init__(self, game: Game, seats: list[SeatState], burns: dict[str, list[Card | None]] = FACTORY,
                 burn_pile: list[tuple[str, Card | None]] = FACTORY, community: Card | None = None,
                 community_street: str | None = None, set_aside: list[Card | None] = FACTORY,
                 dead_cards: list[Card | None] = FACTORY, new_stub: frozenset[Card] | None = None,
                 new_stub_unknown: int = 0, dealt_since_load: int = 0, street: str | None = None,
                 pulled: int = 0, returned: int = 0, deck_size: int = DECK_SIZE,
                 scrambles: list[str] = FACTORY) -> None:
        self.game = game
        self.seats = seats
        self.burns = dict() if burns is FACTORY else burns
        self.burn_pile = list() if burn_pile is FACTORY else burn_pile
        self.community = community
        self.community_street = community_street
        self.set_aside = list() if set_aside is FACTORY else set_aside
        self.dead_cards = list() if dead_cards is FACTORY else dead_cards
        self.new_stub = new_stub
        self.new_stub_unknown = new_stub_unknown
        self.dealt_since_load = dealt_since_load
        self.street = street
        self.pulled = pulled
        self.returned = returned
        self.deck_size = deck_size
        self.scrambles = list() if scrambles is FACTORY else scrambles

    # ------------------------------------------------------------------ construction

    @classmethod
    def new(cls, game: Game, seat_numbers: Sequence[int]) -> HandState:
        """A fresh hand with the given table seats dealt in, in player order.

        :raises HandError: for fewer than 2 or more than 8 seats, or a repeated seat number.
        """
        if not 2 <= len(seat_numbers) <= 8:
            raise HandError(f"a stud hand needs 2..8 seats, got {len(seat_numbers)}")
        if len(set(seat_numbers)) != len(seat_numbers):
            raise HandError(f"seat numbers repeat: {list(seat_numbers)}")
        return cls(game=game, seats=[SeatState(seat=s) for s in seat_numbers])

    def copy(self, seats: list[SeatState] | None = None) -> HandState:
        """A deep copy (seats and piles independent of this one; cards are immutable and shared).

        Copies the instance dictionaries directly rather than through ``dataclasses.replace``
        (which re-runs ``__init__`` with every field): the state machine keeps an undo point at
        every dealer input (``docs/performance.md``).

        :param seats: the copy's seats, equal to :attr:`seats` in the same order: copies made
            by the caller, or this hand's own seats while it keeps each before its first change
            (:meth:`keep_seats`, an undo point); ``None``: copied here.
        """
        new = object.__new__(HandState)
        d = self.__dict__.copy()
        d["seats"] = [s.copy() for s in self.seats] if seats is None else seats
        d["burns"] = {k: v[:] for k, v in self.burns.items()}
        d["burn_pile"] = self.burn_pile[:]
        d["set_aside"] = self.set_aside[:]
        d["dead_cards"] = self.dead_cards[:]
        d["scrambles"] = self.scrambles[:]
        d["kept_seats"] = None
        new.__dict__ = d
        return new

    # ------------------------------------------------------------------ seats shared with an undo point

    def keep_seats(self) -> KeptSeats:
        """From now on keep each seat as it is now before its first change (:attr:`kept_seats`,
        a new record, returned): an undo point taken now may share this hand itself."""
        kept = KeptSeats()
        self.kept_seats = kept
        return kept

    def keep_all_seats(self) -> None:
        """Keep every seat not kept yet as it is now, and the whole hand as it was (the first
        time: :attr:`KeptSeats.hand`), and stop keeping: before a change that does not go through
        :meth:`change_seat` (a ruling's effects, or code outside the rules core)."""
        kept = self.kept_seats
        if kept is not None:
            for seat in self.seats:
                if id(seat) not in kept:
                    kept[id(seat)] = seat.copy()
            if kept.hand is None:
                kept.hand = self.copy([kept[id(seat)] for seat in self.seats])
            self.kept_seats = None

    def change_seat(self, i: int) -> SeatState:
        """Player ``i``'s seat, which the caller changes in place next: kept first as it is
        while an undo point shares the seats (:meth:`keep_seats`).

        :raises IndexError: for no player ``i``.
        """
        seat = self.seats[i]
        kept = self.kept_seats
        if kept is not None and id(seat) not in kept:
            kept[id(seat)] = seat.copy()
        return seat

    # ------------------------------------------------------------------ queries

    def in_hand(self) -> list[int]:
        """Player indices still in the hand (not folded, killed or dead), all-in included."""
        return [i for i, s in enumerate(self.seats) if not (s.folded or s.killed or s.dead)]  # SeatState.in_hand

    def can_act(self) -> list[bool]:
        """Per player index: in hand and not all-in."""
        return [not (s.folded or s.killed or s.dead or s.all_in) for s in self.seats]  # SeatState.can_act

    def bring_in_counts(self) -> list[bool]:
        """Per player index: the upcard takes part in the bring-in (``counts`` of
        :func:`~shoe_ctl.rules.games.first_to_act_third`). False for a dead hand (house 16.2:
        both hole cards exposed, ante returned) and a folded one; True for a killed hand (TDA
        Rule 30: an absent player dealt the bring-in card still posts it; house 16.9)."""
        return [not (s.dead or s.folded) for s in self.seats]

    def live_count(self) -> int:
        """Players remaining in the hand (the *players* part of the required number)."""
        return sum(1 for s in self.seats if not (s.folded or s.killed or s.dead))  # SeatState.in_hand

    def stub_count(self) -> int:
        """Cards in the stub (in the shoe) now."""
        return self.deck_size - self.pulled + self.returned

    def burn_cards(self) -> list[Card | None]:
        """Every burn of the hand, in order."""
        return [c for street in STREETS for c in self.burns.get(street, [])]

    def outside_stub(self) -> list[Card | None]:
        """Every card known to be out of the stub now: seats (mucked ones too), burn pile,
        set-aside cards, the community card."""
        out: list[Card | None] = []
        for s in self.seats:
            out.extend(s.down)
            out.extend(s.up)
            out.extend(s.extra)
        out.extend(c for _, c in self.burn_pile)
        out.extend(self.set_aside)
        out.extend(self.dead_cards)
        if self.community_street is not None:
            out.append(self.community)
        return out

    def seen_cards(self) -> list[Card]:
        """Every card read this hand that is out of the stub (known identities only)."""
        return [c for c in self.outside_stub() if c is not None]

    def stub_candidates(self) -> frozenset[Card]:
        """Identities the stub may hold now: the new stub's (or the full deck's) cards minus
        every known card out of the stub. Exact when every card out of the stub was read;
        otherwise larger than the stub by the unreadable cards."""
        base = self.new_stub if self.new_stub is not None else _FULL_DECK
        return base - frozenset(self.seen_cards())

    def upcards(self, street: str | None = None) -> list[Card | None]:
        """Per player index, the last upcard (``street`` ``"3rd"``: the 3rd-street upcard)."""
        k = 0 if street == "3rd" else -1
        return [s.up[k] if s.up else None for s in self.seats]

    def boards(self) -> list[list[Card | None]]:
        """Per player index, the upcards showing."""
        return [list(s.up) for s in self.seats]

    def cards_on_street(self, street: str) -> int:
        """Cards a seat holds when ``street`` is complete (3rd: 3 .. 7th: 7)."""
        return street_index(street) + 3

    def needs_card(self, i: int, street: str) -> bool:
        """True when in-hand player ``i`` has not yet had the card of ``street`` (a community
        card on that street serves every player)."""
        s = self.seats[i]
        community = self.community_street
        if s.folded or s.killed or s.dead or community == street:  # not s.in_hand, written out
            return False
        have = len(s.down) + len(s.up)  # s.dealt_count
        if community is not None and street_index(community) < street_index(street):
            have += 1  # a community card of an earlier street is one of every player's cards
        return have < street_index(street) + 3  # self.cards_on_street(street)

    def owed(self, street: str) -> list[int]:
        """The in-hand players (indices, in order) who have not yet had the card of ``street``:
        :meth:`needs_card` asked of every player in one pass (a street's plan asks it of every
        seat, and a fold in a betting round whether the street is complete).

        :raises HandError: for an unknown street while a player is in the hand.
        """
        players = [i for i, s in enumerate(self.seats) if not (s.folded or s.killed or s.dead)]  # in_hand()
        community = self.community_street
        if not players or community == street:
            return []
        k = street_index(street)
        need = k + 3  # cards_on_street(street)
        if community is not None and street_index(community) < k:
            need -= 1  # a community card of an earlier street is one of every player's cards
        seats = self.seats
        return [i for i in players if len(seats[i].down) + len(seats[i].up) < need]

    def street_complete(self, street: str) -> bool:
        """Every in-hand player holds the cards of ``street`` (or shares its community card)."""
        return not self.owed(street)

    def next_street(self) -> str | None:
        """The first street not yet complete, ``None`` when 7th is complete."""
        for st in STREETS:
            if not self.street_complete(st):
                return st
        return None

    # ------------------------------------------------------------------ changes

    def _pull(self, street: str | None) -> None:
        if self.deck_size - self.pulled + self.returned <= 0:  # stub_count(), written out
            raise HandError("a card was recorded from an empty stub")
        self.pulled += 1
        self.dealt_since_load += 1
        if street is not None:
            self.street = street

    def record(self, step: Step, card: Card | None = None) -> None:
        """Apply one step of a :class:`~shoe_ctl.rules.stub.StreetPlan` to the hand.

        ``burn``, ``deal`` and ``community`` steps take the card pulled (``None`` = unreadable);
        ``scramble`` gathers the named piles into the stub (``card`` ignored) and fixes
        :attr:`new_stub`; ``cut`` changes nothing.

        :raises HandError: for a deal to a player not in the hand, an unknown step kind, or a
            card pulled from an empty stub.
        """
        kind = step.kind
        if kind == "deal":
            i = step.seat_index
            seats = self.seats
            if i is None or not 0 <= i < len(seats):
                raise HandError(f"deal step without a valid player index: {i!r}")
            seat = seats[i]
            if seat.folded or seat.killed or seat.dead:  # not seat.in_hand, written out
                raise HandError(f"player {i} (seat {seat.seat}) is not in the hand")
            if self.kept_seats is not None:
                self.change_seat(i)
            # _pull(step.street), written out: a deal is most of the steps recorded
            if self.deck_size - self.pulled + self.returned <= 0:
                raise HandError("a card was recorded from an empty stub")
            self.pulled += 1
            self.dealt_since_load += 1
            if step.street is not None:
                self.street = step.street
            (seat.up if step.face == "up" else seat.down).append(card)
            seat.next_face = None
        elif kind == "burn":
            self._pull(step.street)
            st = step.street or self.street or "3rd"
            self.burns.setdefault(st, []).append(card)
            self.burn_pile.append((st, card))
        elif kind == "community":
            self._pull(step.street)
            self.community = card
            self.community_street = step.street or self.street
        elif kind == "scramble":
            self.scramble(step.gather, street=step.street)
        elif kind == "cut":
            pass
        else:
            raise HandError(f"unknown step kind {kind!r}")

    def scramble(self, gather: Iterable[str], street: str | None = None) -> None:
        """Gather the named piles into the stub and scramble: ``"stub"`` (already there),
        ``"burn <street>"`` (that street's burns on the burn pile), ``"set-aside"``.

        Fixes :attr:`new_stub` (the identities the new stub may hold), counts its unreadable
        cards in :attr:`new_stub_unknown` and restarts :attr:`dealt_since_load`.

        :raises HandError: for a pile name that is none of these.
        """
        names = list(gather)
        before = self.stub_candidates()
        gathered: list[Card | None] = []
        for name in names:
            if name == "stub":
                continue
            if name == "set-aside":
                gathered.extend(self.set_aside)
                self.set_aside = []
            elif name.startswith("burn "):
                st = name[5:]
                street_index(st)
                gathered.extend(c for s, c in self.burn_pile if s == st)
                self.burn_pile = [(s, c) for s, c in self.burn_pile if s != st]
            else:
                raise HandError(f"cannot gather {name!r} (piles: stub, burn <street>, set-aside)")
        self.returned += len(gathered)
        prior_unknown = self.new_stub_unknown if self.new_stub is not None else 0
        self.new_stub = before | frozenset(c for c in gathered if c is not None)
        self.new_stub_unknown = prior_unknown + sum(1 for c in gathered if c is None)
        self.dealt_since_load = 0
        self.scrambles.append(street or self.street or "")

    def fold(self, i: int, *, betting: bool = False) -> None:
        """Player ``i`` folds (in a betting round when ``betting``), or mucks at the showdown.

        :raises HandError: when ``i`` is not in the hand, or, in a betting round, is all-in (an
            all-in player takes no more action: there is no action to fold).
        """
        s = self._seat_in_hand(i)
        if betting and s.all_in:
            raise HandError(f"seat {s.seat} is all-in: an all-in player has no action to fold "
                            "(a muck is reported at the showdown)")
        s.folded = True

    def all_in(self, i: int, *, betting: bool = False) -> None:
        """Player ``i`` is all-in (stays in the hand, takes no more action); reported in a
        betting round when ``betting``.

        :raises HandError: when ``i`` is not in the hand, or, in a betting round, is all-in
            already (an all-in player takes no more action).
        """
        s = self._seat_in_hand(i)
        if betting and s.all_in:
            raise HandError(f"seat {s.seat} is already all-in")
        s.all_in = True

    def kill(self, i: int) -> None:
        """Player ``i``'s hand is killed (RP-10-C, house 16.9, 16.10).

        :raises HandError: when ``i`` is not in the hand.
        """
        self._seat_in_hand(i).killed = True

    def declare_dead(self, i: int) -> None:
        """Player ``i``'s hand is dead (house 16.2, 16.25, 16.26).

        :raises HandError: when ``i`` is not in the hand.
        """
        self._seat_in_hand(i).dead = True

    def put_aside(self, card: Card | None) -> None:
        """One more card pulled from the stub and taken aside (house 16.16).

        :raises HandError: when the stub is empty.
        """
        self._pull(None)
        self.set_aside.append(card)

    def withdraw_to_aside(self, i: int | None, face: str | None = None, *, burn_street: str | None = None) -> None:
        """Move a card already recorded out of play onto the set-aside pile (house 16.16):
        player ``i``'s last ``face`` card, or (``i`` None) the last burn of ``burn_street``.

        :raises HandError: when there is no such card.
        """
        self.set_aside.append(self._take_back(i, face, burn_street))

    def return_to_stub(self, i: int | None, face: str | None = None, *, burn_street: str | None = None) -> None:
        """Put a card already recorded back into the stub (RP-5-D premature card): player ``i``'s
        last ``face`` card, or (``i`` None) the last burn of ``burn_street``.

        :raises HandError: when there is no such card.
        """
        self._take_back(i, face, burn_street)
        self.returned += 1

    def take_burn(self, street: str) -> Card | None:
        """Take the last burn of ``street`` off the burn pile (and out of ``burns``).

        :returns: the card (``None`` when it was unreadable).
        :raises HandError: when no burn of that street is on the pile.
        """
        for k in range(len(self.burn_pile) - 1, -1, -1):
            if self.burn_pile[k][0] == street:
                card = self.burn_pile.pop(k)[1]
                self.burns[street].pop()
                return card
        raise HandError(f"no burn of {street} on the burn pile")

    def _take_back(self, i: int | None, face: str | None, burn_street: str | None) -> Card | None:
        if i is None:
            if burn_street is None:
                raise HandError("name a player or a burn street")
            return self.take_burn(burn_street)
        seat = self.seats[i]
        pile = seat.up if face == "up" else seat.down
        if not pile:
            raise HandError(f"player {i} has no {face} card to take back")
        self.change_seat(i)
        return pile.pop()

    def _seat_in_hand(self, i: int) -> SeatState:
        if not 0 <= i < len(self.seats):
            raise HandError(f"no player index {i} (0..{len(self.seats) - 1})")
        s = self.seats[i]
        if not s.in_hand:
            raise HandError(f"player {i} (seat {s.seat}) is not in the hand ({s.status})")
        return self.change_seat(i)
