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
from shoe_ctl.machine.layout import SHOWDOWN
from shoe_ctl.rules.cards import Card, card_text
from shoe_ctl.rules.games import open_pair
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.stub import required_number

if TYPE_CHECKING:
    from shoe_ctl.machine.dealing import Dealing

__all__ = ["Views"]


class Views:
    """The public views of one :class:`~shoe_ctl.machine.dealing.Dealing`. Keeps each seat's last
    public entry, reused while the seat is unchanged."""

    def __init__(self, machine: Dealing) -> None:
        self.m = machine
        self._seat_cache: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    def public_state(self, ins: Instruction) -> dict[str, Any]:
        """The public table state for instruction ``ins`` (see
        :meth:`~shoe_ctl.machine.dealing.Dealing.public_state`)."""
        m = self.m
        hand = m.hand
        seats: list[dict[str, Any]] = []
        stub: dict[str, Any] = {"count": 52, "required": 0, "forecast": None, "drawn": 0}
        community = None
        if hand is not None:
            show = m.state == SHOWDOWN
            betting = layout.sub_of(m.state) == "betting"
            cache = self._seat_cache
            masked = self.masked_upcards(hand)
            absent = m.irregular.absent
            for i, s in enumerate(hand.seats):
                shown = show and s.in_hand and i in m.shown
                key = (m.hand_no, len(s.up), len(s.down), s.status, i == m.bring_in_idx,
                       betting and i == m.first_idx, shown, s.up[-1] if s.up else None,
                       i in absent, s.no_bet, tuple(c for c in s.up if c in masked) if masked else ())
                hit = cache.get(i)
                if hit is not None and hit[0] == key:
                    seats.append(hit[1])
                    continue
                entry: dict[str, Any] = {
                    "seat": s.seat, "status": s.status,
                    "up": [card_text(None if c in masked else c) for c in s.up],
                    "down_count": len(s.down), "bring_in": key[4], "first_to_act": key[5],
                    "open_pair": open_pair([None if c in masked else c for c in s.up]), "absent": key[8],
                    "no_bet": s.no_bet,
                }
                if shown:
                    entry["down"] = [card_text(c) for c in s.down]
                cache[i] = (key, entry)
                seats.append(entry)
            stub = {"count": hand.stub_count(), "required": required_number(hand.live_count()),
                    "forecast": m.forecast, "drawn": hand.dealt_since_load}
            if hand.community_street is not None:
                community = card_text(None if hand.community in masked else hand.community)
        return {
            "hand": m.hand_no if hand is not None else None,
            "game": m.game.value,
            "rules": m.profile.name,
            "state": m.state,
            "street": m.street,
            "seats": seats,
            "community": community,
            "stub": stub,
            "instruction": {"signal": ins.signal.value, "text": ins.text, "seat": ins.seat, "face": ins.face},
            "alerts": [dict(a) for a in m.alerts],
            "shoe": {"status": m.shoe_status, "detail": m.shoe_detail, "auth": m.shoe_auth},
            "first_to_act_unknown": m.first_unknown(),
        }

    def masked_upcards(self, hand: HandState) -> frozenset[Card]:
        """Hole-card embargo: the upcards (and community card) read with the identity of a hole
        card read earlier this hand — a misread, or a second deck's card, alerted as
        ``duplicate-card`` — which the display shows as ``??`` (at showdown too: the hole card
        may be mucked), so it never names a hole card. A card read face up first keeps showing."""
        down = {c for s in hand.seats for c in s.down if c is not None}
        if not down:
            return frozenset()
        where = self.m.where
        up = {c for s in hand.seats for c in s.up if c is not None}
        if hand.community is not None:
            up.add(hand.community)
        return frozenset(c for c in down & up if (r := where.get(c)) is not None and r.role == "down")

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
