"""The dealer's placement of a street's cards, where the counts alone cannot place them: on 3rd
street (three cards a seat, two faces) and on a street dealt with a community card. A count that
disagrees with the record there stops the dealer (``card-placement``); the dealer says where each
read of the street lies (``place-cards``), the placement is checked against the counts and only
then the street is booked again. docs/irregularities.md, *Placing a street's cards*.

:func:`check_placement` is the consistency check on plain values (no machine); :func:`ask` and
:func:`place_cards` are the machine's side (the display's sheet: :func:`shoe_ctl.machine.views.sheet`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shoe_ctl.events import DealerInput
from shoe_ctl.input_shape import MAX_ITEMS
from shoe_ctl.machine import irregular, layout
from shoe_ctl.machine.layout import BETTING
from shoe_ctl.machine.outcome import Outcome
from shoe_ctl.machine.progress import PLACEMENT as CODE
from shoe_ctl.machine.progress import Progress, street_pulls
from shoe_ctl.machine.reads import Read
from shoe_ctl.rules import irregular as rul
from shoe_ctl.rules.games import bring_in
from shoe_ctl.rules.hand import HandState
from shoe_ctl.values import FrozenValue, frozen_value

__all__ = ["CODE", "MAX_PULLS", "Booking", "PlacementError", "SeatCount", "ask", "card_count",
           "check_placement", "needs_sheet", "parse_place", "place_cards"]


MAX_PULLS = MAX_ITEMS
"""At most this many reads of one street are placed (8 seats, 3 cards each, and what a dealer's
mistakes add, within the longest list an input may carry): a longer list is refused."""

_SEAT = re.compile(r"seat ([1-8]) (up|down)")


class PlacementError(ValueError):
    """A placement the counts or the street's faces contradict; the message says which seat and why."""


@frozen_value
class SeatCount(FrozenValue):
    """One seat as the placement is checked against it.

    :param seat: the table seat number.
    :param before: the cards it held before the street (extra cards included).
    :param booked: the street's reads the record books to it now.
    :param counted: the dealer's count of its cards (``None``: not counted; the record stands).
    :param in_hand: still in the hand (else no count applies: it keeps what is placed on it).
    """

    seat: int
    before: int
    booked: int
    counted: int | None
    in_hand: bool

    def __init__(self, seat: int, before: int, booked: int, counted: int | None, in_hand: bool) -> None:
        put = self._put
        put[0](self, seat)
        put[1](self, before)
        put[2](self, booked)
        put[3](self, counted)
        put[4](self, in_hand)


@frozen_value
class Booking(FrozenValue):
    """Where one read of the street goes: ``kind`` ``"seat"`` (``seat``, ``role`` ``"down"``,
    ``"up"`` or ``"extra"`` with ``face`` as it lies), ``"burn"``, ``"community"`` or ``"out"``."""

    kind: str
    seat: int | None = None
    role: str | None = None
    face: str | None = None

    def __init__(self, kind: str, seat: int | None = None, role: str | None = None,
                 face: str | None = None) -> None:
        put = self._put
        put[0](self, kind)
        put[1](self, seat)
        put[2](self, role)
        put[3](self, face)


def parse_place(text: object) -> tuple[str, int | None, str | None]:
    """One place of a ``place-cards`` input: ``"seat N up"``, ``"seat N down"``, ``"burn"``,
    ``"muck"``, ``"off"`` (off the table) or ``"centre"`` (the community card).

    :returns: ``(kind, seat, face)``, kind ``"seat"``, ``"burn"``, ``"out"`` or ``"community"``.
    :raises PlacementError: for anything else, naming the text.
    """
    if isinstance(text, str):
        m = _SEAT.fullmatch(text)
        if m is not None:
            return "seat", int(m.group(1)), m.group(2)
        if text == "burn":
            return "burn", None, None
        if text in ("muck", "off"):
            return "out", None, None
        if text == "centre":
            return "community", None, None
    shown = repr(text) if len(repr(text)) <= 30 else repr(text)[:27] + "..."
    raise PlacementError(f"{shown} is no place: 'seat N up', 'seat N down', 'burn', 'muck', 'off' or 'centre'")


def check_placement(street: str, community: bool, seats: Sequence[SeatCount], places: Sequence[object],
                    pulls: int) -> list[Booking]:
    """Check the dealer's placement of a street's ``pulls`` reads (``places``, one per read in the
    order of the pulls) against the seats and the dealer's counts, and say where each read goes.

    The rules (docs/irregularities.md, *Placing a street's cards*): every read is placed once on a
    seat dealt in or off every seat; every seat in the hand ends with the cards the dealer counted
    (a seat not counted, with the reads the record gives it), while a seat out of the hand (folded,
    killed, dead) keeps what is placed on it, face as placed, and gets no more; on a street with a community card
    exactly one read lies in the centre and no seat gets a card of its own (a card placed on a seat
    is a card too many there), on another street none lies in the centre; on 3rd street a seat's
    street cards are two downcards and one upcard, in any order, and a card beyond them is a card
    too many, while a seat short of its three cards holds no card too many (its door card dealt
    face down, or two upcards: the floor decides, not the placement).

    :param street: ``"3rd"`` .. ``"7th"``.
    :param community: the street is dealt with a community card (RP-10-H, house 16.20).
    :param seats: the seats of the hand, in any order.
    :param places: one place per read (:func:`parse_place`).
    :param pulls: the number of the street's reads.
    :returns: one :class:`Booking` per read, in the order of the pulls.
    :raises PlacementError: naming the first rule the placement breaks.
    """
    if len(places) != pulls:
        raise PlacementError(f"{len(places)} place(s) for the street's {pulls} read(s): place every read once")
    by_seat = {s.seat: s for s in seats}
    parsed = [parse_place(t) for t in places]
    centre = sum(1 for kind, _s, _f in parsed if kind == "community")
    if community and centre != 1:
        raise PlacementError(f"{centre} read(s) placed in the centre: {street} street's community card is one card "
                             "(with none in the centre the floor decides)")
    if not community and centre:
        raise PlacementError(f"{street} street has no community card: no read lies in the centre")
    placed: dict[int, list[str]] = {}
    for kind, seat, face in parsed:
        if kind != "seat":
            continue
        assert seat is not None and face is not None
        s = by_seat.get(seat)
        if s is None:
            raise PlacementError(f"seat {seat} is not dealt in this hand")
        placed.setdefault(seat, []).append(face)
    for s in seats:
        if not s.in_hand:
            continue  # folded, killed or dead: its cards stay as placed, it gets no more
        n = len(placed.get(s.seat, ()))
        if s.counted is not None and s.before + n != s.counted:
            raise PlacementError(f"seat {s.seat}: the placement gives it {s.before + n} card(s), the dealer "
                                 f"counted {s.counted}")
        if s.counted is None and n != s.booked:
            raise PlacementError(f"seat {s.seat}: the placement gives it {s.before + n} card(s), the record "
                                 f"{s.before + s.booked}: count the seat (card-count) if it holds them")
    roles: dict[int, list[str]] = {}
    for seat, faces in placed.items():
        if not by_seat[seat].in_hand:
            roles[seat] = list(faces)
            continue
        held = {"down": 0, "up": 0}
        out: list[str] = []
        for face in faces:
            room = 0 if community else 2 if face == "down" else 1
            if street == "3rd" and held[face] < room:
                held[face] += 1
                out.append(face)
            else:
                out.append("extra")
        regular = held["down"] + held["up"]
        if street == "3rd" and "extra" in out and regular < 3:
            too = "downcards" if held["down"] == 2 else "upcards"
            raise PlacementError(f"seat {seat}: {len(faces)} card(s) on 3rd street, too many {too} for its two hole "
                                 "cards and one door card: the floor decides (Misdeal…)")
        roles[seat] = out
    bookings: list[Booking] = []
    taken = {seat: 0 for seat in roles}
    for kind, seat, face in parsed:
        if kind != "seat":
            bookings.append(Booking(kind))
            continue
        assert seat is not None
        role = roles[seat][taken[seat]]
        taken[seat] += 1
        bookings.append(Booking("seat", seat, role, face))
    return bookings


# ================================================================== the machine's side

def needs_sheet(p: Progress) -> bool:
    """The street in progress is one whose cards the counts cannot place: 3rd street, or a street
    dealt with a community card."""
    hand, street = p.hand, p.street
    return hand is not None and street is not None and (street == "3rd" or hand.community_street == street)


def ask(p: Progress, out: Outcome, i: int, n: int) -> None:
    """``card-count`` of ``n`` cards for seat index ``i`` on a street whose cards the counts cannot
    place (:func:`needs_sheet`), differing from the record: the count is kept and the dealer is
    stopped until the street's cards are placed (``card-placement``, latched)."""
    hand, street = p.hand, p.street
    assert hand is not None and street is not None
    p.counted[i] = n
    p.drop_alerts(CODE)
    counts = ", ".join(f"{c} card(s) at seat {hand.seats[k].seat}" for k, c in sorted(p.counted.items()))
    why = ("three cards a seat, two faces" if street == "3rd"
           else "a seat counted over holds a card dealt instead of the community card")
    out.alert("card-placement", f"{street} street: the dealer counts {counts}, the record disagrees, and counts alone "
              f"cannot place the street's cards ({why}): count every seat that looks wrong (card-count), then "
              "place each card of the street (Place cards…); the floor confirms", seat=hand.seats[i].seat,
              latched=True, street=street)


def card_count(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``card-count`` (``cards``): on 3rd street or a street with a community card, while it is
    dealt or bet, a count that differs from the record asks for the street's cards to be placed
    (:func:`ask`); anywhere else, and a count that agrees, as
    :func:`shoe_ctl.machine.irregular.card_count`."""
    hand = p.hand
    n = ev.args.get("cards")
    if (hand is not None and needs_sheet(p) and (out.state in BETTING or out.state in layout.DEAL)
            and ev.seat is not None and isinstance(n, int) and not isinstance(n, bool) and n >= 0):
        try:
            i = p.index(ev.seat)
        except ValueError:
            i = None
        if i is not None and n != hand.seats[i].card_count:
            ask(p, out, i, n)
            return
    irregular.card_count(p, out, ev)


def _seat_counts(p: Progress, hand: HandState, pulls: list[Read]) -> list[SeatCount]:
    out = []
    for k, s in enumerate(hand.seats):
        booked = sum(1 for r in pulls if r.seat == s.seat and r.role in ("up", "down", "extra"))
        out.append(SeatCount(s.seat, s.card_count - booked, booked, p.counted.get(k), s.in_hand))
    return out


def _unbook(hand: HandState, read: Read, street: str) -> None:
    """Take ``read``'s card off the place the record gives it (the last copy there)."""
    if read.role == "burn":
        pile = hand.burns.get(street, [])
        for k in range(len(pile) - 1, -1, -1):
            if pile[k] == read.card:
                del pile[k]
                break
        for k in range(len(hand.burn_pile) - 1, -1, -1):
            if hand.burn_pile[k] == (street, read.card):
                del hand.burn_pile[k]
                break
    elif read.role == "community":
        hand.community = None
    else:
        irregular.unbook(hand, read)


def _book(hand: HandState, read: Read, b: Booking, street: str) -> None:
    if b.kind == "seat":
        seat = next(s for s in hand.seats if s.seat == b.seat)
        getattr(seat, b.role or "extra").append(read.card)
        read.role, read.seat = b.role or "extra", b.seat
        return
    read.seat = None
    if b.kind == "burn":
        hand.burns.setdefault(street, []).append(read.card)
        hand.burn_pile.append((street, read.card))
        read.role = "burn"
    elif b.kind == "community":
        hand.community = read.card
        read.role = "community"
    else:
        hand.dead_cards.append(read.card)
        read.role = "out"


def place_cards(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``place-cards`` (``places``: one per read of the street in the order of the pulls) while a
    ``card-placement`` STOP is open: checked (:func:`check_placement`); refused (``input-invalid``,
    nothing changed, the STOP stands) when the counts or the faces contradict it; else the street
    is booked as placed, the STOP lifted, a seat owed a card dealt again (the street re-planned),
    house 16.25 ruled on a seat with a card too many, and ``street-placed`` names each read now
    booked elsewhere (read numbers and seats only)."""
    hand, street = p.hand, p.street
    if hand is None or street is None or not any(a["code"] == CODE for a in p.alerts):
        out.refuse(ev)
        return
    pulls = street_pulls(p, street)
    places = ev.args.get("places")
    try:
        if not isinstance(places, list) or len(places) > MAX_PULLS:
            raise PlacementError(f"places: a list of at most {MAX_PULLS} places, one per read of the street")
        bookings = check_placement(street, hand.community_street == street, _seat_counts(p, hand, pulls),
                                   places, len(pulls))
    except PlacementError as exc:
        out.invalid(f"'place-cards' refused: {exc}; nothing changed, the STOP stands")
        return
    before = [(r.role, r.seat) for r in pulls]
    for read in pulls:
        _unbook(hand, read, street)
        if read in p.betting_strays:
            p.betting_strays.remove(read)
    for read, b in zip(pulls, bookings, strict=True):
        _book(hand, read, b, street)
    seqs = tuple(f"read {r.seq}:" for r in pulls)
    p.alerts = [a for a in p.alerts if not ((a["code"] == "card-not-expected" and a["message"].startswith(seqs))
                                            or a["code"] in (CODE, "card-count-over", "card-in-doubt",
                                                             "card-count-street"))]
    p.counted, p.over = {}, None
    moved = [f"read {r.seq} to {f'seat {r.seat}' if r.seat is not None else r.role}"
             for r, was in zip(pulls, before, strict=True) if (r.role, r.seat) != was]
    owed = [s.seat for k, s in enumerate(hand.seats) if hand.needs_card(k, street)] if out.state in BETTING else []
    more = f"; seat {', '.join(map(str, owed))} owed a {street}-street card" if owed else ""
    out.alert("street-placed", f"{street} street booked as the dealer placed it: "
              f"{', '.join(moved) or 'every read where the record had it'}{more}; the cards stay where they are",
              street=street)
    for k, s in enumerate(hand.seats):
        if any(r.seat == s.seat and r.role == "extra" for r in pulls):
            ruling = rul.card_count(p.profile, hand, k, showdown=False)
            if ruling.action is not rul.Action.CONTINUE or ruling.floor:
                irregular.rule(p, out, ruling, seat=s.seat, street=street)
    if out.state in BETTING and not owed and not p.confirming:
        p.first_to_act()
        if street == "3rd":
            p.bring_in_idx = bring_in(p.game, hand.upcards("3rd"), hand.bring_in_counts())
    p.forecast_dirty = True
    out.replan()
