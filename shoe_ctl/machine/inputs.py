"""The dealer's inputs to the dealing machine, read off one table derived from the state chart:
for each :class:`~shoe_ctl.events.DealerAction`, the states that accept it (the source states of
the trigger it fires, from :mod:`shoe_ctl.machine.layout`), the handler it runs there, and why
it is refused anywhere else (``input-wrong-time``, nothing changed). The table is printed in
``docs/state-machine.md`` (section *Dealer inputs*).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shoe_ctl.events import Alert, DealerAction, DealerInput
from shoe_ctl.input_spec import stop_refusal
from shoe_ctl.machine import layout
from shoe_ctl.machine.layout import ATTENTION, SHOWDOWN, STREETS
from shoe_ctl.machine.undo import NOT_UNDOABLE, Undo
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import HandState

if TYPE_CHECKING:
    from shoe_ctl.machine.dealing import Dealing

__all__ = ["ROWS", "DealerInputs", "Row"]

A = DealerAction
_ACK_ALERT, _UNDO = A.ACK_ALERT, A.UNDO  # looked up once: every dealer input compares with them


@dataclass(frozen=True, slots=True)
class Row:
    """One dealer input: where it is accepted and what runs there, and why it is refused elsewhere.

    :param accepted: ``(states, handler)`` pairs: the leaf states (``None``: every state; the
        handler's ruling decides) and the handler's name (``"irregular.x"``: a method of
        :class:`~shoe_ctl.machine.irregular.Irregularities`, else of :class:`DealerInputs`).
    :param refused: the reason in the ``input-wrong-time`` alert in any other state.
    :param needs_hand: refused with ``no hand is running`` before any hand was dealt.
    """

    action: DealerAction
    accepted: tuple[tuple[frozenset[str] | None, str], ...]
    refused: str
    needs_hand: bool = True


def _rows() -> dict[DealerAction, Row]:
    src = layout.sources
    betting = src("bettingdone")
    showdown = frozenset({SHOWDOWN})
    later = STREETS[1:]
    dealt_or_bet = frozenset(s for st in later for s in (layout.deal_state(st), layout.betting_state(st)))
    rows = (
        Row(A.NEW_HAND, ((src("newhand"), "new_hand"),), "a hand is running", needs_hand=False),
        Row(A.FOLD, ((betting, "fold"), (showdown, "muck")),
            "a fold is reported during a betting round (or a muck at showdown)"),
        Row(A.SHOW, ((showdown, "show"),), "a hand is shown at showdown, naming the seat"),
        Row(A.ALL_IN, ((betting, "all_in"),), "an all-in is reported during a betting round"),
        Row(A.BETTING_COMPLETE, ((betting, "betting_complete"),), "no betting round is open"),
        Row(A.SCRAMBLE_DONE, ((src("scrambled"), "scrambled"), (src("reshuffled"), "irregular.reshuffle_done")),
            "no scramble was asked for"),
        Row(A.CUT_DONE, ((src("cutdone"), "cut_done"),), "no cut was asked for"),
        Row(A.STUB_RELOADED, ((src("cutdone"), "cut_and_reloaded"), (src("reloaded"), "reloaded")),
            "no reload was asked for"),
        Row(A.HAND_COMPLETE, ((src("handdone"), "hand_complete"),), "the hand is not over"),
        # The irregularities (docs/irregularities.md). Where the state alone does not decide
        # (the street named, a seat's cards), the ruling's handler refuses the same way.
        Row(A.EXPOSED_CARD, ((None, "irregular.exposed"),), ""),
        Row(A.LAST_CARD_EXPOSED, ((None, "irregular.exposed"),), ""),
        Row(A.CARD_OFF_TABLE, ((None, "irregular.exposed"),), ""),
        Row(A.ABSENT_PLAYER, ((src("misdeal") - src("handdone"), "irregular.absent_player"),),
            "an absent player is reported while the hand is dealt or bet"),
        Row(A.PREMATURE_DONE, ((src("reshuffle"), "irregular.premature_done"),),
            "premature cards are reported in a betting round on 3rd to 6th street, after cards were read during it"),
        Row(A.BURN_ERROR, ((dealt_or_bet, "irregular.burn_error"),),
            "a burn error is reported on 4th to 7th street while it is dealt or bet"),
        Row(A.WRONG_BRING_IN, ((frozenset({layout.betting_state("3rd")}), "irregular.wrong_bring_in"),),
            "a wrong bring-in is reported in the 3rd-street betting"),
        Row(A.CARD_COUNT, ((None, "irregular.card_count"),), ""),
        Row(A.MISDEAL, ((None, "irregular.declared_misdeal"),), ""),
        Row(A.STUB_MIXED, ((None, "irregular.stub_mixed"),), ""),
        # A sequence gap (docs/irregularities.md, *Sequence gap*): accepted while one is open.
        Row(A.GAP_CARDS, ((None, "gap_cards"),), "no sequence gap or shoe restart is open"),
    )
    return {r.action: r for r in rows}


ROWS: dict[DealerAction, Row] = _rows()
"""The dealer inputs other than ``ack-alert`` (accepted in every state) and ``undo`` (accepted
while the last input can be undone), by action."""

_REFUSED = ("input-wrong-time", "input-invalid")
SHOE_REFUSED = frozenset(f"shoe-{code}" for code in ("unpaired", "unknown-shoe", "auth-failed", "forged", "replay",
                                                       "port-shared"))
"""The latched alerts of a shoe the link refused (``LinkChanged.refused``): no hand starts under one."""

Handler = Callable[[DealerInput], None]


def _seat_number(value: Any, what: str) -> int:
    """A table seat number from a dealer input: an int 1..8 (not a bool, a float or a text).

    :raises ValueError: naming ``what`` and the value."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 8:
        raise ValueError(f"{what}: {value!r} is not a seat number 1..8")
    return value


def _seat_list(value: Any, what: str) -> list[Any]:
    """A list of seat numbers from a dealer input (a list or tuple, not a text).

    :raises ValueError: naming ``what`` and the value."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{what}: {value!r} is not a list of seat numbers")
    return list(value)


class DealerInputs:
    """The dealer inputs of one :class:`~shoe_ctl.machine.dealing.Dealing`: :meth:`handle` takes
    one :class:`~shoe_ctl.events.DealerInput`, runs the handler :data:`ROWS` names for the
    machine's state, or refuses it, and keeps the undo point (:class:`~shoe_ctl.machine.undo.Undo`)."""

    def __init__(self, machine: Dealing) -> None:
        self.m = machine
        self.undo = Undo(machine)
        self.live = False
        """True once the machine has started (:meth:`Dealing.start`): inputs come from the table
        now, not from a journal's replay, and no hand starts before the shoe has answered."""
        self._table: dict[DealerAction, tuple[dict[str, Handler], Handler | None, Row]] = {}
        for action, row in ROWS.items():
            by_state: dict[str, Handler] = {}
            anywhere: Handler | None = None
            for states, name in row.accepted:
                owner: Any = self
                if name.startswith("irregular."):
                    owner, name = machine.irregular, name.removeprefix("irregular.")
                handler = getattr(owner, name)
                if states is None:
                    anywhere = handler
                else:
                    by_state.update(dict.fromkeys(states, handler))
            self._table[action] = (by_state, anywhere, row)

    def handle(self, ev: DealerInput) -> None:
        """Apply one dealer input (``ack-alert`` in any state; nothing else while stopped on a
        fault), keeping the undo point: the state before an accepted, undoable input."""
        m = self.m
        m._rev += 1  # any dealer input may change the public state
        action = ev.action
        if action is _ACK_ALERT:
            if self.ack(ev):
                self.undo.last = (action, None)
            return
        if m.state == ATTENTION:
            m.wrong_time(ev, "the machine is stopped on a fault; acknowledge the alert first")
            return
        if action is _UNDO:
            self.undo.undo(ev)
            return
        out = m.out
        n = len(out)
        snap = self.undo.snapshot() if action not in NOT_UNDOABLE and m.hand is not None else None
        entry = self._table.get(action)
        if (entry is None or entry[2].needs_hand) and m.hand is None:
            m.wrong_time(ev, "no hand is running")
        elif entry is None:
            m.wrong_time(ev, f"'{action.value}' is not handled here")
        elif (why := stop_refusal(action, ev.args, self.stops())) is not None:
            m.wrong_time(ev, why)
        else:
            handler = entry[0].get(m.state, entry[1])
            if handler is None:
                m.wrong_time(ev, entry[2].refused)
            else:
                handler(ev)
        refused = len(out) > n and any(isinstance(c, Alert) and c.code in _REFUSED for c in out[n:])
        if not refused:
            self.undo.last = (action, snap)

    def stops(self) -> list[str]:
        """The codes of the STOPs open now: every latched alert not yet acknowledged, and
        ``sequence-gap`` while a gap is open (its count closes it, not the acknowledgement)."""
        m = self.m
        codes = [a["code"] for a in m.alerts if a["latched"]]
        if m.gap is not None and m.hand is not None and m.state != layout.IDLE:
            codes.append("sequence-gap")
        return codes

    # ================================================================== the handlers

    def new_hand(self, ev: DealerInput) -> None:
        """``new-hand`` (``seats``, ``button``, ``all_in``, ``game``, ``rules``): a new hand."""
        m = self.m
        args = ev.args
        try:
            seats = [_seat_number(s, "seats") for s in _seat_list(args.get("seats", ()), "seats")]
            if "button" in args:
                button = _seat_number(args["button"], "button")
                seats = sorted(seats, key=lambda s: (s - button - 1) % 8)
            all_in = [_seat_number(s, "all_in") for s in _seat_list(args.get("all_in", ()), "all_in")]
            if not set(all_in) <= set(seats):
                raise ValueError(f"all_in seat(s) {sorted(set(all_in) - set(seats))} not dealt in")
            game = Game(str(args.get("game", m.game.value)))
            rules = str(args.get("rules", m.profile.name))
            profile = m.profiles[rules]
            hand = HandState.new(game, seats)
            override = args.get("override", False)
            if not isinstance(override, bool):
                raise ValueError(f"override: {override!r} is not true or false")
        except (KeyError, ValueError, TypeError) as exc:
            m.alert("input-invalid", f"new hand refused: {exc} (args: seats, game "
                    f"{'|'.join(g.value for g in Game)}, rules {'|'.join(m.profiles)}, override)")
            return
        why = self._shoe_not_ready()
        if why is not None:
            m.wrong_time(ev, f"{why}; a hand starts once the shoe is back")
            return
        stops = list(dict.fromkeys(a["code"] for a in m.alerts if a["latched"]))
        if stops:
            m.alerts = [a for a in m.alerts if not a["latched"]]
            m.idle_strays.clear()
        m.begin_hand(profile, game, hand, all_in)
        if stops:
            m.alert("floor-override", f"hand {m.hand_no} started on the floor's override over the STOP "
                    f"alert(s) {', '.join(stops)}, which are cleared")

    def _shoe_not_ready(self) -> str | None:
        """Why no hand may start on this shoe now (``None``: it may): on a shoe link, the shoe not
        connected, not heard, not yet answered the host's challenge, or refused by the link (an
        open ``shoe-<refusal>`` alert; no floor override passes it)."""
        m = self.m
        if not m.shoe_required:
            return None
        if m.shoe_status == "degraded":
            return "the link to the shoe is degraded (the shoe is not heard)"
        if m.shoe_status == "disconnected":
            return "the shoe is not connected: check the cable"
        if m.shoe_status == "unknown" and self.live:
            return "the shoe has not answered yet (connecting, or being challenged)"
        refused = [a["code"] for a in m.alerts if a["latched"] and a["code"] in SHOE_REFUSED]
        if refused:
            return f"the shoe link refused the shoe ({', '.join(dict.fromkeys(refused))}): pair or replace it"
        return None

    def gap_cards(self, ev: DealerInput) -> None:
        """``gap-cards`` (``cards``, ``burned``): close the open sequence gap
        (:meth:`~shoe_ctl.machine.dealing.Dealing.close_gap`). After a restart of a shoe that
        lost no event but cannot count the cards pulled while it was off (an open
        ``shoe-restarted`` alert, no gap), it records the floor's ruling the same way: the cards
        pulled while the shoe was off went to the screen's next places (or were burned);
        docs/protocol.md section 12."""
        m = self.m
        if m.hand is None or m.state == layout.IDLE:
            m.wrong_time(ev, ROWS[A.GAP_CARDS].refused)
            return
        if m.gap is None:
            if not any(a["code"] == "shoe-restarted" and a["latched"] for a in m.alerts):
                m.wrong_time(ev, ROWS[A.GAP_CARDS].refused)
                return
            m.gap = {"lost": 0, "card_no": m.hand.pulled + 1}  # the count is the dealer's: the shoe has none
        cards, burned = ev.args.get("cards"), ev.args.get("burned", False)
        if isinstance(cards, bool) or not isinstance(cards, int) or not isinstance(burned, bool):
            m.alert("input-invalid", f"'gap-cards' needs cards (an integer) and burned (true or false), "
                    f"not {cards!r}, {burned!r}")
            return
        try:
            m.close_gap(cards, burned=burned)
        except ValueError as exc:
            m.alert("input-invalid", f"'gap-cards' refused: {exc}")

    def fold(self, ev: DealerInput) -> None:
        """``fold`` in a betting round."""
        m = self.m
        hand = m.hand
        assert hand is not None
        self._seat_action(ev, lambda i: hand.fold(i, betting=True))
        if hand.live_count() == 1:
            m.trigger("allfolded")
        else:
            m._forecast_dirty = True

    def muck(self, ev: DealerInput) -> None:
        """``fold`` at showdown: the seat mucks its hand."""
        m = self.m
        hand = m.hand
        assert hand is not None
        self._seat_action(ev, lambda i: hand.fold(i, betting=False))
        if ev.seat is not None and any(s.seat == ev.seat for s in hand.seats):
            m.mucked.add(m.index(ev.seat))
            m.shown.discard(m.index(ev.seat))
        elif hand.live_count() == 1:
            m.trigger("allfolded")
        else:
            m._forecast_dirty = True

    def show(self, ev: DealerInput) -> None:
        """``show`` at showdown: the seat's hand is tabled (its downcards may show)."""
        m = self.m
        hand = m.hand
        assert hand is not None
        if ev.seat is None:
            m.wrong_time(ev, ROWS[A.SHOW].refused)
            return
        try:
            i = m.index(ev.seat)
        except ValueError as exc:
            m.alert("input-invalid", str(exc), seat=ev.seat)
            return
        if not hand.seats[i].in_hand or i in m.mucked:
            m.wrong_time(ev, f"seat {ev.seat} has no hand to show")
            return
        m.shown.add(i)

    def all_in(self, ev: DealerInput) -> None:
        """``all-in`` in a betting round."""
        hand = self.m.hand
        assert hand is not None
        self._seat_action(ev, lambda i: hand.all_in(i, betting=True))

    def betting_complete(self, _ev: DealerInput) -> None:
        """``betting-complete``: the betting round is over."""
        self.m.trigger("bettingdone")

    def scrambled(self, _ev: DealerInput) -> None:
        """``scramble-done`` in ``scramble``: the named cards are a new stub."""
        self.m.step_done("scramble")
        self.m.trigger("scrambled")

    def cut_done(self, ev: DealerInput) -> None:
        """``cut-done`` (or ``stub-reloaded`` in ``cut``): the new stub is cut; the shoe's counter
        restarts."""
        m = self.m
        m.step_done("cut")
        m.ask_counter_reset(wait=False)  # the stub must be loaded first: no race
        m.trigger("cutdone")

    def cut_and_reloaded(self, ev: DealerInput) -> None:
        """``stub-reloaded`` in ``cut``: cut and loaded in one report."""
        self.cut_done(ev)
        self.m.trigger("reloaded")

    def reloaded(self, _ev: DealerInput) -> None:
        """``stub-reloaded`` in ``reload``: the new stub is in the shoe."""
        self.m.trigger("reloaded")

    def hand_complete(self, _ev: DealerInput) -> None:
        """``hand-complete`` at showdown or in a hand won without one."""
        self.m.trigger("handdone")

    def ack(self, ev: DealerInput) -> bool:
        """Acknowledge the alert ``args["id"]`` and/or every alert of ``args["code"]`` (both absent:
        every alert). An id or code that matches no alert is refused with ``input-wrong-time``
        naming it, and changes nothing (False)."""
        m = self.m
        aid = ev.args.get("id")
        code = ev.args.get("code")
        keep = []
        for a in m.alerts:
            if (aid is None and code is None) or a["id"] == aid or (code is not None and a["code"] == code):
                continue
            keep.append(a)
        if len(keep) == len(m.alerts) and (aid is not None or code is not None):
            named = f"{aid!r}{f' ({code})' if code is not None else ''}" if aid is not None else repr(code)
            m.wrong_time(ev, f"no alert {named} to acknowledge")
            return False
        m.alerts = keep
        if m.shoe_fault is not None and not any(a["code"] == f"shoe-{m.shoe_fault}" for a in keep):
            m.shoe_fault = None  # the dealer has dealt with a fault the shoe never cleared
        if m.state == ATTENTION and not any(a["code"] == "machine-fault" for a in m.alerts):
            m.resume()
        return True

    def _seat_action(self, ev: DealerInput, apply: Callable[[int], None]) -> None:
        m = self.m
        if ev.seat is None:
            m.alert("input-invalid", f"'{ev.action.value}' needs a seat")
            return
        try:
            apply(m.index(ev.seat))
        except ValueError as exc:
            m.alert("input-invalid", f"'{ev.action.value}' seat {ev.seat}: {exc}", seat=ev.seat)

