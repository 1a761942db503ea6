"""The dealing machine seen from outside: the public table state the display shows and the
decisions of a hand in the shape of ``shoe-ctl analyze``.

:class:`Views` reads the machine and never changes it. The public state's schema is in
``docs/display.md``; the hole-card embargo in ``docs/state-machine.md`` (*Hole-card embargo
in alerts*).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shoe_ctl.events import Instruction
from shoe_ctl.machine import layout
from shoe_ctl.machine.layout import IDLE, SHOWDOWN
from shoe_ctl.rules.cards import Card, card_text
from shoe_ctl.rules.games import Game, open_pair
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.irregular import open_pair_fourth
from shoe_ctl.rules.stub import Procedure, required_number

if TYPE_CHECKING:
    from shoe_ctl.machine.dealing import Dealing

__all__ = ["Views"]


class Views:
    """The public views of one :class:`~shoe_ctl.machine.dealing.Dealing`. Keeps each seat's last
    public entry, reused while the seat is unchanged."""

    def __init__(self, machine: Dealing) -> None:
        self.m = machine
        self._seat_cache: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._cache_of: tuple[Any, ...] | None = None  # (hand number, 4th street) of the cached entries

    def public_state(self, ins: Instruction) -> dict[str, Any]:
        """The public table state for instruction ``ins`` (see
        :meth:`~shoe_ctl.machine.dealing.Dealing.public_state`).

        With no hand running (``idle``) the last hand is gone from it: ``hand`` is ``None``,
        ``last_hand`` its number, each seat only its number (the seats it dealt, for the next
        hand's sheet), no street, no community card and a full deck's stub."""
        m = self.m
        hand = m.hand
        seats: list[dict[str, Any]] = []
        stub: dict[str, Any] = {"count": 52, "required": 0, "forecast": None, "drawn": 0}
        community = None
        pair: dict[str, Any] | None = None
        state = m.state
        idle = state == IDLE
        if hand is not None and idle:
            seats = [{"seat": s.seat} for s in hand.seats]
        elif hand is not None:
            show = state == SHOWDOWN
            betting = layout.sub_of(state) == "betting"
            # RP-10-F / house 16.8 (as analyze): no open-pair rule in razz, where a pair is no asset
            fourth = m.street == "4th" and m.game is not Game.RAZZ
            cache = self._seat_cache
            context = (m.hand_no, fourth)  # the same for every seat: entries of another are dropped
            if context != self._cache_of:
                cache.clear()
                self._cache_of = context
            masked = self.masked_upcards(hand)
            absent = m.irregular.absent
            bring_in, first = m.bring_in_idx, m.first_idx if betting else None
            shown_idx = m.shown if show else ()
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
                hit = cache.get(i)
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
                    cache[i] = (key, entry)
                any_pair = any_pair or entry["open_pair"]
                seats.append(entry)
            if any_pair:
                pair = self.open_pair_words(hand, [e["seat"] for e in seats if e["open_pair"]])
            stub = self.stub(hand, live)
            if hand.community_street is not None:
                community = card_text(None if hand.community in masked else hand.community)
        alerts = m.alerts
        return {
            "hand": m.hand_no if hand is not None and not idle else None,
            "last_hand": m.hand_no if hand is not None and idle else None,
            "game": m.game.value,
            "rules": m.profile.name,
            "state": state,
            "street": m.street,
            "seats": seats,
            "community": community,
            "stub": stub,
            "open_pair": pair,
            "instruction": {"signal": ins.signal.value, "text": ins.text, "seat": ins.seat, "face": ins.face},
            "alerts": [dict(a) for a in alerts] if alerts else [],
            "shoe": {"status": m.shoe_status, "detail": m.shoe_detail, "auth": m.shoe_auth},
            "first_to_act_unknown": m.first_unknown(),
        }

    def open_pair_words(self, hand: HandState, seats: list[int]) -> dict[str, Any]:
        """What an open pair on 4th street allows, in the game and profile of the hand (rules
        core :func:`~shoe_ctl.rules.irregular.open_pair_fourth`): ``{"seats": [int], "clause":
        "RP-10-F" | "house-16.8", "big_bet": bool, "text": str}`` (house 16.8: the larger bet
        may be made in stud high only; RP-10-F: bets are not doubled)."""
        ruling = open_pair_fourth(self.m.profile, hand)
        clause = ruling.clauses[0]
        return {"seats": seats, "clause": clause, "big_bet": ruling.big_bet_option,
                "text": f"{ruling.instruction} ({clause.replace('house-', 'house ')})"}

    def stub(self, hand: HandState, live: int | None = None) -> dict[str, Any]:
        """The stub gauge: cards left, the required number and the forecast short street. Once
        the street's short-stub procedure has done what fixes the shortage (its scramble and
        cut, or its community card), ``required`` is the cards the rest of the street takes and
        the forecast is ``None``: what the gauge shows is the situation the procedure made.
        ``live``: the players remaining when the caller has counted them (else counted here)."""
        m = self.m
        plan = m.plan
        required = required_number(hand.live_count() if live is None else live)
        forecast = m.forecast
        if plan is not None and plan.procedure is not Procedure.NORMAL and m.street == plan.street:
            rest = plan.steps[m.step_i:]
            if not any(st.kind in ("scramble", "cut", "community") for st in rest):
                required = sum(1 for st in rest if st.pulls_card)
                forecast = None
        return {"count": hand.stub_count(), "required": required, "forecast": forecast,
                "drawn": hand.dealt_since_load}

    def masked_upcards(self, hand: HandState) -> frozenset[Card]:
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
        where = self.m.where
        return frozenset(c for code in both if (r := where.get(c := down[code])) is not None and r.role == "down")

    def summary(self) -> dict[str, Any]:
        """The decisions of the current (or last) hand (see
        :meth:`~shoe_ctl.machine.dealing.Dealing.summary`)."""
        m = self.m
        hand = m.hand
        players = len(hand.seats) if hand is not None else 0
        bi = None if m.bring_in_idx is None else m.bring_in_idx + 1
        first = {st: (None if v is None else v + 1) for st, v in m.first_by_street.items()}
        community = None
        if hand is not None and hand.community_street is not None:
            community = card_text(hand.community)
        return {"game": m.game.value, "rules": m.profile.name, "players": players, "bring_in": bi,
                "first_to_act": first, "seventh": m.seventh, "community_card": community,
                "procedures": dict(m.procedures)}
