"""The dealer's inputs to the dealing machine, read off one table derived from the state chart:
for each :class:`~shoe_ctl.events.DealerAction`, the states that accept it (the source states of
the trigger it fires, from :mod:`shoe_ctl.machine.layout`), the handler it runs there, and why
it is refused anywhere else (``input-wrong-time``, nothing changed). A handler takes the hand's
progress and an :class:`~shoe_ctl.machine.outcome.Outcome`, in which it says what the machine
then does. The table is printed in ``docs/state-machine.md`` (section *Dealer inputs*).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.input_spec import SPECS, ack_targets, stop_refusal
from shoe_ctl.machine import irregular, irregular_place, layout
from shoe_ctl.machine.layout import ATTENTION, SHOWDOWN, STREETS
from shoe_ctl.machine.link import LinkState
from shoe_ctl.machine.outcome import Outcome
from shoe_ctl.machine.progress import Progress
from shoe_ctl.machine.undo import NOT_UNDOABLE, Point, Undo
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.hand import HandState
from shoe_ctl.values import FrozenValue, frozen_value

__all__ = ["ROWS", "SHOE_REFUSED", "Handler", "Row", "accepting_states", "handle", "stops"]

A = DealerAction
_ACK_ALERT, _UNDO = A.ACK_ALERT, A.UNDO  # looked up once: every dealer input compares with them

Handler = Callable[[Progress, Outcome, DealerInput], None]
"""A dealer input's handler: changes the progress, says in the outcome what follows."""

SHOE_REFUSED = frozenset(f"shoe-{code}" for code in ("unpaired", "unknown-shoe", "auth-failed", "forged", "replay",
                                                       "port-shared"))
"""The latched alerts of a shoe the link refused (``LinkChanged.refused``): no hand starts under one."""


def _seat_number(value: object, what: str) -> int:
    """A table seat number from a dealer input: an int 1..8 (not a bool, a float or a text).

    :raises ValueError: naming ``what`` and the value."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 8:
        raise ValueError(f"{what}: {value!r} is not a seat number 1..8")
    return value


def _seat_list(value: object, what: str) -> list[Any]:
    """A list of seat numbers from a dealer input (a list or tuple, not a text).

    :raises ValueError: naming ``what`` and the value."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{what}: {value!r} is not a list of seat numbers")
    return list(value)


# ================================================================== the handlers

def new_hand(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``new-hand`` (``seats``, ``button``, ``all_in``, ``game``, ``rules``, ``override``): a new hand."""
    args = ev.args
    try:
        seats = [_seat_number(s, "seats") for s in _seat_list(args.get("seats", ()), "seats")]
        if "button" in args:
            button = _seat_number(args["button"], "button")
            seats = sorted(seats, key=lambda s: (s - button - 1) % 8)
        all_in = [_seat_number(s, "all_in") for s in _seat_list(args.get("all_in", ()), "all_in")]
        if not set(all_in) <= set(seats):
            raise ValueError(f"all_in seat(s) {sorted(set(all_in) - set(seats))} not dealt in")
        game = Game(str(args.get("game", p.game.value)))
        rules = str(args.get("rules", p.profile.name))
        profile = out.profiles[rules]
        hand = HandState.new(game, seats)
        override = args.get("override", False)
        if not isinstance(override, bool):
            raise ValueError(f"override: {override!r} is not true or false")
    except (KeyError, ValueError, TypeError) as exc:
        out.invalid(f"new hand refused: {exc} (args: seats, game {'|'.join(g.value for g in Game)}, "
                    f"rules {'|'.join(out.profiles)}, override)")
        return
    why = _shoe_not_ready(p, out.link)
    if why is not None:
        out.refuse(ev, f"{why}; a hand starts once the shoe is back")
        return
    stops = p.latched_codes()
    if stops:
        p.alerts = [a for a in p.alerts if not a["latched"]]
        p.idle_strays.clear()
    out.do("begin", profile, game, hand, all_in)
    if stops:
        out.alert("floor-override", f"hand {p.hand_no + 1} started on the floor's override over the STOP "
                  f"alert(s) {', '.join(stops)}, which are cleared")


def _shoe_not_ready(p: Progress, link: LinkState) -> str | None:
    """Why no hand may start on this shoe now (``None``: it may): on a shoe link, the shoe not
    connected, not heard, not yet answered the host's challenge, or refused by the link (an
    open ``shoe-<refusal>`` alert; no floor override passes it)."""
    if not link.required:
        return None
    if link.status == "degraded":
        return "the link to the shoe is degraded (the shoe is not heard)"
    if link.status == "disconnected":
        return "the shoe is not connected: check the cable"
    if link.status == "unknown" and link.live:
        return "the shoe has not answered yet (connecting, or being challenged)"
    refused = [a["code"] for a in p.alerts if a["latched"] and a["code"] in SHOE_REFUSED]
    if refused:
        return f"the shoe link refused the shoe ({', '.join(dict.fromkeys(refused))}): pair or replace it"
    return None


def stops(p: Progress, link: LinkState, state: str) -> list[str]:
    """The codes of the STOPs open now: every latched alert not yet acknowledged, and
    ``sequence-gap`` while a gap is open (its count closes it, not the acknowledgement)."""
    codes = [a["code"] for a in p.alerts if a["latched"]]
    if link.gap is not None and p.hand is not None and state != layout.IDLE:
        codes.append("sequence-gap")
    return codes


def gap_cards(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``gap-cards`` (``cards``, ``burned``): close the open sequence gap: ``cards`` cards left the
    shoe unread; they lie at the next places of the plan (recorded as unknown cards, in order)
    or, with ``burned`` (the floor's decision), they are out of play. After a restart of a shoe
    that lost no event but cannot count the cards pulled while it was off (an open
    ``shoe-restarted`` alert, no gap), it records the floor's ruling the same way
    (docs/protocol.md section 12). Refused (``input-invalid``)
    for ``cards`` below 0, more cards than the screen's next places hold (the floor then declares
    them burned or the hand dead) or than the stub holds."""
    restarted = any(a["code"] == "shoe-restarted" and a["latched"] for a in p.alerts)
    if p.hand is None or out.state == layout.IDLE or (out.link.gap is None and not restarted):
        out.refuse(ev)
        return
    cards, burned = ev.args.get("cards"), ev.args.get("burned", False)
    if isinstance(cards, bool) or not isinstance(cards, int) or not isinstance(burned, bool):
        out.invalid(f"'gap-cards' needs cards (an integer) and burned (true or false), not {cards!r}, {burned!r}")
        return
    dealing = out.state in layout.DEAL
    if cards < 0:
        why = f"cards: {cards} is below 0"
    elif not burned and cards > len(p.gap_places(dealing, limit=cards + 1)) and cards > 0:
        why = (f"{cards} card(s) found, but the screen's next {len(p.gap_places(dealing))} place(s) cannot hold "
               "them: the floor decides (burned, or Misdeal)")
    elif cards > p.hand.stub_count():
        why = f"{cards} card(s) found, but the stub has only {p.hand.stub_count()}"
    else:
        out.do("close-gap", cards, burned)
        return
    out.invalid(f"'gap-cards' refused: {why}")


def _seat_action(p: Progress, out: Outcome, ev: DealerInput, apply: Callable[[int], None]) -> None:
    if ev.seat is None:
        out.invalid(f"'{ev.action.value}' needs a seat")
        return
    try:
        apply(p.index(ev.seat))
    except ValueError as exc:
        out.invalid(f"'{ev.action.value}' seat {ev.seat}: {exc}", ev.seat)


def fold(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``fold`` in a betting round."""
    hand = p.hand
    assert hand is not None
    _seat_action(p, out, ev, lambda i: hand.fold(i, betting=True))
    if hand.live_count() == 1:
        out.trigger("all_folded")
    else:
        p.forecast_dirty = True


def muck(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``fold`` at showdown: the seat mucks its hand."""
    hand = p.hand
    assert hand is not None
    _seat_action(p, out, ev, lambda i: hand.fold(i, betting=False))
    if ev.seat is not None and any(s.seat == ev.seat for s in hand.seats):
        p.mucked.add(p.index(ev.seat))
        p.shown.discard(p.index(ev.seat))
    elif hand.live_count() == 1:
        out.trigger("all_folded")
    else:
        p.forecast_dirty = True


def show(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``show`` at showdown: the seat's hand is tabled (its downcards may show)."""
    hand = p.hand
    assert hand is not None
    if ev.seat is None:
        out.refuse(ev)
        return
    try:
        i = p.index(ev.seat)
    except ValueError as exc:
        out.invalid(str(exc), ev.seat)
        return
    if not hand.seats[i].in_hand or i in p.mucked:
        out.refuse(ev, f"seat {ev.seat} has no hand to show")
        return
    p.shown.add(i)


def all_in(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``all-in`` in a betting round."""
    hand = p.hand
    assert hand is not None
    _seat_action(p, out, ev, lambda i: hand.all_in(i, betting=True))


def betting_complete(_p: Progress, out: Outcome, _ev: DealerInput) -> None:
    """``betting-complete``: the betting round is over."""
    out.trigger("betting_complete")


def scramble_done(p: Progress, out: Outcome, _ev: DealerInput) -> None:
    """``scramble-done`` in ``scramble``: the named cards are a new stub."""
    p.step_done("scramble")
    out.trigger("scramble_done")


def cut_done(p: Progress, out: Outcome, _ev: DealerInput) -> None:
    """``cut-done`` (or ``stub-reloaded`` in ``cut``): the new stub is cut; the shoe's counter
    restarts (the stub is loaded first: no race)."""
    p.step_done("cut")
    out.do("counter", False)
    out.trigger("cut_done")


def cut_and_reloaded(p: Progress, out: Outcome, ev: DealerInput) -> None:
    """``stub-reloaded`` in ``cut``: cut and loaded in one report."""
    cut_done(p, out, ev)
    out.trigger("stub_reloaded")


def stub_reloaded(_p: Progress, out: Outcome, _ev: DealerInput) -> None:
    """``stub-reloaded`` in ``reload``: the new stub is in the shoe."""
    out.trigger("stub_reloaded")


def hand_complete(_p: Progress, out: Outcome, _ev: DealerInput) -> None:
    """``hand-complete`` at showdown or in a hand won without one."""
    out.trigger("hand_complete")


def ack(p: Progress, out: Outcome, ev: DealerInput) -> bool:
    """Acknowledge the alerts :func:`~shoe_ctl.input_spec.ack_targets` names: ``args["id"]``
    alone, else the oldest alert of ``args["code"]`` (``of``: a later one), else every alert. An
    id or code that matches no alert is refused with ``input-wrong-time`` naming it, and changes
    nothing (False). The machine fault acknowledged, the machine resumes."""
    aid = ev.args.get("id")
    code = ev.args.get("code")
    hit = {id(a) for a in ack_targets(p.alerts, ev.args)}
    keep = [a for a in p.alerts if id(a) not in hit]
    if not hit and (aid is not None or code is not None):
        named = f"{aid!r}{f' ({code})' if code is not None else ''}" if aid is not None else repr(code)
        out.refuse(ev, f"no alert {named} to acknowledge")
        return False
    p.alerts = keep
    link = out.link
    fault = link.fault_code()
    if fault is not None and not any(a["code"] == fault for a in keep):
        link.fault = None  # the dealer has dealt with a fault the shoe never cleared
    if out.state == ATTENTION and not any(a["code"] == "machine-fault" for a in keep):
        out.do("resume")
    return True


# ================================================================== the table


@frozen_value
class Row(FrozenValue):
    """One dealer input: where it is accepted and what runs there, and why it is refused elsewhere.

    :param accepted: ``(states, handler)`` pairs: the leaf states (``None``: every state; the
        handler's ruling decides) and the handler (:data:`Handler`).
    :param refused: the reason in the ``input-wrong-time`` alert in any other state.

    While no hand is running (before the first hand and between hands), an input whose
    specification says so (:attr:`~shoe_ctl.input_spec.InputSpec.needs_hand`) is refused with
    ``no hand is running`` before its row is read.
    """

    action: DealerAction
    accepted: tuple[tuple[frozenset[str] | None, Handler], ...]
    refused: str

    def __init__(self, action: DealerAction, accepted: tuple[tuple[frozenset[str] | None, Handler], ...],
                 refused: str) -> None:
        put = self._put
        put[0](self, action)
        put[1](self, accepted)
        put[2](self, refused)

    def handler(self, state: str) -> Handler | None:
        """The handler that runs in ``state``, else ``None`` (refused)."""
        for states, fn in self.accepted:
            if states is None or state in states:
                return fn
        return None


def _rows() -> dict[DealerAction, Row]:
    src = layout.sources
    betting = src("betting_complete")
    showdown = frozenset({SHOWDOWN})
    later = STREETS[1:]
    dealt_or_bet = frozenset(s for st in later for s in (layout.deal_state(st), layout.betting_state(st)))
    irr = irregular
    rows = (
        Row(A.NEW_HAND, ((src("new_hand"), new_hand),), "a hand is running"),
        Row(A.FOLD, ((betting, fold), (showdown, muck)),
            "a fold is reported during a betting round (or a muck at showdown)"),
        Row(A.SHOW, ((showdown, show),), "a hand is shown at showdown, naming the seat"),
        Row(A.ALL_IN, ((betting, all_in),), "an all-in is reported during a betting round"),
        Row(A.BETTING_COMPLETE, ((betting, betting_complete),), "no betting round is open"),
        Row(A.SCRAMBLE_DONE, ((src("scramble_done"), scramble_done), (src("reshuffle_done"), irr.reshuffle_done)),
            "no scramble was asked for"),
        Row(A.CUT_DONE, ((src("cut_done"), cut_done),), "no cut was asked for"),
        Row(A.STUB_RELOADED, ((src("cut_done"), cut_and_reloaded), (src("stub_reloaded"), stub_reloaded)),
            "no reload was asked for"),
        Row(A.HAND_COMPLETE, ((src("hand_complete"), hand_complete),), "the hand is not over"),
        # The irregularities (docs/irregularities.md). Where the state alone does not decide
        # (the street named, a seat's cards), the ruling's handler refuses the same way.
        Row(A.EXPOSED_CARD, ((None, irr.exposed),), ""),
        Row(A.LAST_CARD_EXPOSED, ((None, irr.exposed),), ""),
        Row(A.CARD_OFF_TABLE, ((None, irr.exposed),), ""),
        Row(A.ABSENT_PLAYER, ((src("misdeal") - src("hand_complete"), irr.absent_player),),
            "an absent player is reported while the hand is dealt or bet"),
        Row(A.PREMATURE_DONE, ((src("premature_done"), irr.premature_done),),
            "premature cards are reported in a betting round on 3rd to 6th street, after cards were read during it"),
        Row(A.BURN_ERROR, ((dealt_or_bet, irr.burn_error),),
            "a burn error is reported on 4th to 7th street while it is dealt or bet"),
        Row(A.WRONG_BRING_IN, ((frozenset({layout.betting_state("3rd")}), irr.wrong_bring_in),),
            "a wrong bring-in is reported in the 3rd-street betting"),
        Row(A.CARD_COUNT, ((None, irregular_place.card_count),), ""),
        Row(A.MISDEAL, ((None, irr.declared_misdeal),), ""),
        Row(A.STUB_MIXED, ((None, irr.stub_mixed),), ""),
        # A sequence gap (docs/irregularities.md, *Sequence gap*): accepted while one is open.
        Row(A.GAP_CARDS, ((None, gap_cards),), "no sequence gap or shoe restart is open"),
        # A street's cards placed by the dealer (docs/irregularities.md, *Placing a street's cards*).
        Row(A.PLACE_CARDS, ((None, irregular_place.place_cards),),
            "no card-placement STOP is open: the street's cards are placed when the counts cannot place them"),
    )
    return {r.action: r for r in rows}


ROWS: dict[DealerAction, Row] = _rows()
"""The dealer inputs other than ``ack-alert`` (accepted in every state) and ``undo`` (accepted
while the last input can be undone), by action."""


def accepting_states(action: DealerAction) -> frozenset[str]:
    """The leaf states (:func:`~shoe_ctl.machine.layout.leaves`) in which the machine takes
    ``action`` by this table, as :func:`handle` reads it: every state for ``ack-alert``; for any
    other input none stopped on a fault (``attention``), none with no hand running when its
    specification ``needs_hand``, then for ``undo`` every other state, else its row's states (a
    row whose ruling decides: every state). Outside them the input is refused as wrong at that
    moment (``input-wrong-time``); inside them a ruling or the STOP rule may still refuse it. The
    dealer display disables a button outside them (``GET /inputs``, docs/display.md)."""
    return _ACCEPTING[action]


def _accepting(action: DealerAction) -> frozenset[str]:
    every = layout.leaves()
    if action is _ACK_ALERT:
        return frozenset(every)
    row = ROWS.get(action)
    return frozenset(s for s in every if s != ATTENTION and not (SPECS[action].needs_hand and s == layout.IDLE)
                     and (action is _UNDO or (row is not None and row.handler(s) is not None)))


_ACCEPTING = {action: _accepting(action) for action in DealerAction}


def handle(p: Progress, undo: Undo, ev: DealerInput, out: Outcome) -> Outcome:
    """Apply one dealer input (``ack-alert`` in any state; nothing else while stopped on a
    fault) to the progress ``p``; returns ``out`` with what the machine then does. Keeps the undo
    point: the progress before an accepted, undoable input. An input the controller's gate took
    (``ev.gate``, read back from the journal) changes nothing: the machine never saw it."""
    if ev.gate:
        return out
    action = ev.action
    if action is _ACK_ALERT:
        if ack(p, out, ev):
            undo.last = (action, None)
        return out
    if out.state == ATTENTION:
        out.refuse(ev, "the machine is stopped on a fault; acknowledge the alert first")
        return out
    if action is _UNDO:
        back = undo.restore()
        if isinstance(back, str):
            out.alert("undo-refused", back)
        else:
            restored, name = back
            out.do("undo", restored.progress, restored.state, name)
        return out
    point: Point | None = undo.take(p, out.state, action) if action not in NOT_UNDOABLE and p.hand is not None else None
    row = ROWS.get(action)
    if (row is None or SPECS[action].needs_hand) and (p.hand is None or out.state == layout.IDLE):
        out.refuse(ev, "no hand is running")
    elif row is None:
        out.refuse(ev, f"'{action.value}' is not handled here")
    elif ((open_stops := stops(p, out.link, out.state))  # (none open: the STOP rule refuses nothing)
          and (why := stop_refusal(action, ev.args, open_stops)) is not None):
        out.refuse(ev, why)
    else:
        out.refusal = row.refused
        handler = row.handler(out.state)
        if handler is None:
            out.refuse(ev)
        else:
            handler(p, out, ev)
    if not out.refused:
        undo.last = (action, point)
    elif point is not None:
        undo.refused(point)
    return out
