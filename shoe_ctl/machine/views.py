"""The dealing machine seen from outside: the public table state the display shows and the
decisions of a hand in the shape of ``shoe-ctl analyze``.

Functions of the hand's progress, the shoe's state and the machine state; they change nothing. The public state's schema is in
``docs/display.md``; the hole-card embargo in ``docs/state-machine.md`` (*Hole-card embargo
in alerts*).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shoe_ctl.events import Instruction
from shoe_ctl.machine.layout import BETTING, IDLE, IN_HAND, SHOWDOWN
from shoe_ctl.machine.progress import PLACEMENT, street_pulls
from shoe_ctl.machine.reads import Read
from shoe_ctl.rules.cards import Card, card_text
from shoe_ctl.rules.games import Game, open_pair
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.irregular import open_pair_fourth
from shoe_ctl.rules.stub import Procedure, required_number

if TYPE_CHECKING:
    from shoe_ctl.machine.link import LinkState
    from shoe_ctl.machine.progress import Progress

__all__ = ["SeatCache", "last_read_place", "masked_upcards", "open_pair_words", "public_state", "summary", "sheet"]


class SeatCache:
    """Each seat's last public entry, reused while the seat is unchanged (``entries``), and the
    hand and street they were made for (``of``: hand number, 4th street)."""

    __slots__ = ("entries", "of")

    def __init__(self) -> None:
        self.entries: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self.of: tuple[Any, ...] | None = None


def public_state(p: Progress, link: LinkState, state: str, ins: Instruction, cache: SeatCache) -> dict[str, Any]:
    """The public table state for instruction ``ins`` (see
    :meth:`~shoe_ctl.machine.dealing.Dealing.public_state`).

    With no hand running (``idle``) the last hand is gone from it: ``hand`` is ``None``,
    ``last_hand`` its number, each seat only its number (the seats it dealt, for the next
    hand's sheet), no street, no community card and a full deck's stub."""
    hand = p.hand
    seats: list[dict[str, Any]] = []
    stub: dict[str, Any] = {"count": 52, "required": 0, "forecast": None, "drawn": 0}
    community = None
    pair: dict[str, Any] | None = None
    masked: frozenset[Card] = frozenset()
    idle = state == IDLE
    if hand is not None and idle:
        seats = [{"seat": s.seat} for s in hand.seats]
    elif hand is not None:
        show = state == SHOWDOWN
        betting = state in BETTING
        # RP-10-F / house 16.8 (as analyze): no open-pair rule in razz, where a pair is no asset
        fourth = p.street == "4th" and p.game is not Game.RAZZ
        seat_cache = cache.entries
        context = (p.hand_no, fourth)  # the same for every seat: entries of another are dropped
        if context != cache.of:
            seat_cache.clear()
            cache.of = context
        masked = masked_upcards(hand, p.where)
        absent = p.absent
        bring_in, first = p.bring_in_idx, p.first_idx if betting else None
        shown_idx = p.shown if show else ()
        live = 0
        any_pair = False
        for i, s in enumerate(hand.seats):
            up = s.up
            folded, killed, dead = s.folded, s.killed, s.dead
            in_hand = not (folded or killed or dead)  # SeatState.in_hand, written out
            live += in_hand
            # everything the seat's entry is made of (SeatState.status from its four flags)
            key = (len(up), len(s.down), folded, killed, dead, s.all_in, i == bring_in,
                   i == first, in_hand and i in shown_idx, up[-1] if up else None,
                   i in absent, s.no_bet, tuple(c for c in up if c in masked) if masked else (),
                   len(s.extra))
            hit = seat_cache.get(i)
            if hit is not None and hit[0] == key:
                entry = hit[1]
            else:
                entry = {
                    "seat": s.seat, "status": s.status,
                    "up": [card_text(None if c in masked else c) for c in up],
                    "down_count": key[1], "bring_in": key[6], "first_to_act": key[7],
                    # RP-10-F / house 16.8 speak of 4th street only: the first two upcards
                    "open_pair": fourth and in_hand and open_pair([None if c in masked else c
                                                                   for c in up[:2]]),
                    "absent": key[10], "no_bet": s.no_bet,
                    "extra": key[13],  # cards too many, found by the dealer's count (house 16.25)
                }
                if key[8]:
                    entry["down"] = [card_text(c) for c in s.down]
                seat_cache[i] = (key, entry)
            any_pair = any_pair or entry["open_pair"]
            seats.append(entry)
        if any_pair:
            pair = open_pair_words(p, hand, [e["seat"] for e in seats if e["open_pair"]])
        stub = _stub(p, hand, live)
        if hand.community_street is not None:
            community = card_text(None if hand.community in masked else hand.community)
    alerts = p.alerts
    last = last_read_place(p.reads[-1], masked) if hand is not None and not idle and p.reads else None
    out: dict[str, Any] = {
        "hand": p.hand_no if hand is not None and not idle else None,
        "last_hand": p.hand_no if hand is not None and idle else None,
        "game": p.game.value,
        "rules": p.profile.name,
        "state": state,
        "street": p.street,
        "seats": seats,
        "community": community,
        "stub": stub,
        "open_pair": pair,
        "instruction": {"signal": ins.signal.value, "text": ins.text, "seat": ins.seat, "face": ins.face},
        "alerts": [dict(a) for a in alerts] if alerts else [],
        "shoe": {"status": link.status, "detail": link.detail, "auth": link.auth},
        "first_to_act_unknown": p.first_unknown(state in BETTING),
        "last_read": last,
    }
    if p.alerts and hand is not None:
        placing = sheet(p, state, masked)
        if placing is not None:  # only while the dealer is asked to place a street's cards
            out["placement"] = placing
    return out


_PLACES = {"burn": "burn", "stray": "held aside", "aside": "set aside", "out": "out of play"}


def last_read_place(read: Read, masked: frozenset[Card]) -> str:
    """Where the hand's last card read lies now, as the status line names it (docs/display.md):
    ``seat 3 down`` (a downcard by its seat only), ``seat 5 up Qh``, ``seat 2 extra`` (a card too
    many: house 16.25), ``community 5d``, ``burn``, ``held aside`` (a card not expected),
    ``set aside`` (house 16.16), ``out of play`` (placed in the muck or off the table by the dealer).
    A correction that books the read again (a count, an undo)
    moves its place with it. An upcard showing a hole card's identity is ``??`` as on the
    display (:func:`masked_upcards`)."""
    role = read.role
    if role == "down" or role == "extra":
        return f"seat {read.seat} {role}"
    if role == "up":
        return f"seat {read.seat} up {card_text(None if read.card in masked else read.card)}"
    if role == "community":
        return f"community {card_text(None if read.card in masked else read.card)}"
    return _PLACES.get(role, role)


def open_pair_words(p: Progress, hand: HandState, seats: list[int]) -> dict[str, Any]:
    """What an open pair on 4th street allows, in the game and profile of the hand (rules
    core :func:`~shoe_ctl.rules.irregular.open_pair_fourth`): ``{"seats": [int], "clause":
    "RP-10-F" | "house-16.8", "big_bet": bool, "text": str}`` (house 16.8: the larger bet
    may be made in stud high only; RP-10-F: bets are not doubled)."""
    ruling = open_pair_fourth(p.profile, hand)
    clause = ruling.clauses[0]
    return {"seats": seats, "clause": clause, "big_bet": ruling.big_bet_option,
            "text": f"{ruling.instruction} ({clause.replace('house-', 'house ')})"}


def _stub(p: Progress, hand: HandState, live: int | None = None) -> dict[str, Any]:
    """The stub gauge: cards left, the required number and the forecast short street. Once
    the street's short-stub procedure has done what fixes the shortage (its scramble and
    cut, or its community card), ``required`` is the cards the rest of the street takes and
    the forecast is ``None``: what the gauge shows is the situation the procedure made.
    ``live``: the players remaining when the caller has counted them (else counted here)."""
    plan = p.plan
    required = required_number(hand.live_count() if live is None else live)
    forecast = p.forecast()
    if plan is not None and plan.procedure is not Procedure.NORMAL and p.street == plan.street:
        rest = plan.steps[p.step_i:]
        if not any(st.kind in ("scramble", "cut", "community") for st in rest):
            required = sum(1 for st in rest if st.pulls_card)
            forecast = None
    return {"count": hand.stub_count(), "required": required, "forecast": forecast,
            "drawn": hand.dealt_since_load}


def masked_upcards(hand: HandState, where: dict[Card, Read]) -> frozenset[Card]:
    """Hole-card embargo: the upcards (and community card) read with the identity of a hole
    card read earlier this hand — a misread, or a second deck's card, alerted as
    ``duplicate-card`` — which the display shows as ``??`` (at showdown too: the hole card
    may be mucked), so it never names a hole card. A card read face up first keeps showing."""
    # by card code (an int): a card's own hash is a Python call, and this runs on every event
    down = {c.code: c for s in hand.seats for c in s.down if c is not None}
    if not down:
        return frozenset()
    up = {c.code for s in hand.seats for c in s.up if c is not None}
    if hand.community is not None:
        up.add(hand.community.code)
    both = down.keys() & up
    if not both:
        return frozenset()
    return frozenset(c for code in both if (r := where.get(c := down[code])) is not None and r.role == "down")


def summary(p: Progress) -> dict[str, Any]:
    """The decisions of the current (or last) hand (see
    :meth:`~shoe_ctl.machine.dealing.Dealing.summary`)."""
    hand = p.hand
    players = len(hand.seats) if hand is not None else 0
    bi = None if p.bring_in_idx is None else p.bring_in_idx + 1
    first = {st: (None if v is None else v + 1) for st, v in p.first_by_street.items()}
    community = None
    if hand is not None and hand.community_street is not None:
        community = card_text(hand.community)
    return {"game": p.game.value, "rules": p.profile.name, "players": players, "bring_in": bi,
            "first_to_act": first, "seventh": p.seventh, "community_card": community,
            "procedures": dict(p.procedures)}


def sheet(p: Progress, state: str, masked: frozenset[Card]) -> dict[str, Any] | None:
    """The placement sheet for the display while ``card-placement`` is open, else ``None``:
    ``street``, ``community`` (bool), ``reads`` (one per read in the order of the pulls: ``seq``,
    ``n`` its number on the street from 1, ``face`` ``"up"`` for a card seen face up, else
    ``"down"``, ``card`` the card's text for a card seen face up only — never a downcard's, a
    burn's or a card held aside unseen: the hole-card embargo), ``seats`` (the seats in the hand),
    ``counted`` (seat number: cards, the dealer's counts so far)."""
    hand, street = p.hand, p.street
    if hand is None or street is None or state not in IN_HAND or not any(
            a["code"] == PLACEMENT for a in p.alerts):
        return None
    reads = []
    for k, r in enumerate(street_pulls(p, street), 1):
        up = r.public
        reads.append({"seq": r.seq, "n": k, "face": "up" if up else "down",
                      "card": card_text(None if r.card in masked else r.card) if up else None,
                      "was": r.role if r.role in ("burn", "community", "stray") else "seat"})
    return {"street": street, "community": hand.community_street == street, "reads": reads,
            "seats": [s.seat for s in hand.seats if s.in_hand],
            "counted": {str(hand.seats[k].seat): c for k, c in sorted(p.counted.items())}}
