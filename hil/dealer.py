"""The simulated dealer: follows the controller's command stream the way a person at the table
would, and nothing else (it imports nothing of the state machine), keeping its own physical
picture of the table for tests to compare with the machine's. What it does for each instruction,
its scripts (:class:`HandScript`, :func:`random_hands`) and its irregularities: docs/service.md,
"The simulated dealer"."""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import field
from typing import Any, Protocol

from shoe_ctl.events import (
    Alert,
    CardRead,
    DealerAction,
    DealerInput,
    DisplayUpdate,
    Instruction,
    Signal,
)
from shoe_ctl.input_spec import STOP_REFUSAL
from shoe_ctl.lifecycle import Closeable, join_thread
from shoe_ctl.rules.cards import Card, full_deck
from shoe_ctl.values import FACTORY, Value, value

log = logging.getLogger(__name__)

# The signals the dealer's hot path compares with, looked up once (a member looked up on its enum
# class costs a descriptor call each time).
_IDLE, _DEAL, _BURN, _COMMUNITY, _SCRAMBLE, _CUT, _BETTING, _SHOWDOWN, _STOP = (
    Signal.IDLE, Signal.DEAL, Signal.BURN, Signal.COMMUNITY, Signal.SCRAMBLE, Signal.CUT, Signal.BETTING,
    Signal.SHOWDOWN, Signal.STOP)
# the dealer actions of every recorded hand, the same way
_FOLD, _ALL_IN, _SHOW, _BETTING_COMPLETE, _HAND_COMPLETE = (
    DealerAction.FOLD, DealerAction.ALL_IN, DealerAction.SHOW, DealerAction.BETTING_COMPLETE,
    DealerAction.HAND_COMPLETE)

AUTO_ACK_AGAIN_S = 0.25
"""With ``auto_ack``, the wait before acknowledging again a stop that came back at once (its
cause still there, e.g. a journal that cannot be written: the controller raises it again)."""

_PLACES: dict[tuple[str | None, int | None, str], tuple[str | None, str]] = {}
_PLACES_MAX = 1024
"""The :attr:`TablePicture.log` entries already made, by (street, seat, what: ``up``, ``down``,
``burn``, ``centre``): the same immutable entry appended again (a table has a few dozen), so a
card pulled makes no new entry and words none: the hand's log holds no new object that the
cycle collector would look through while the hand is kept (docs/performance.md)."""


def _placed(street: str | None, seat: int | None, what: str) -> tuple[str | None, str]:
    """The log entry ``(street, place)`` of a card put at ``seat`` (``seat N up``/``down``) or,
    with no seat, at ``what`` (``burn``, ``centre``), made once (:data:`_PLACES`)."""
    entry = _PLACES.get((street, seat, what))
    if entry is None:
        entry = (street, what if seat is None else f"seat {seat} {what}")
        if len(_PLACES) < _PLACES_MAX:
            _PLACES[(street, seat, what)] = entry
    return entry

__all__ = ["DealerStats", "HandScript", "Irregularity", "ShoeLike", "SimulatedDealer", "TablePicture",
           "random_hands"]


class ShoeLike(Protocol):
    """What the dealer needs of a shoe (``hil.virtual_shoe.VirtualShoe`` or a direct one). A shoe
    may also have ``last_dispensed`` (the cards its last pull dispensed: two for a double pull),
    read after every pull unless it has ``single_pulls`` true."""

    def pull(self) -> Card | None: ...

    def reload(self, cards: Sequence[Card]) -> None: ...


@value
class Irregularity(Value):
    """One irregularity the simulated dealer commits or reports in a hand.

    :param kind: what happens, at the first instruction that matches ``street`` (and ``seat``,
        ``round``):

        - ``"expose"``: the DEAL of the seat's card number ``round`` on ``street`` (3rd: 0 and 1
          are the hole cards; 7th: its 7th card) is dealt face up, then reported
          (``exposed-card``); ``"expose-both"``: both hole cards dealt face up, reported once;
          ``"off-table"``: the card goes off the table (reported ``card-off-table``, it lies face up).
        - ``"premature"``: at the BETTING of ``street``, ``count`` cards of the next street are
          dealt before the betting (its burn, then one per player in order), then
          ``premature-done`` (``args``: ``merged``).
        - ``"burn-two"``: at the BURN of ``street`` two cards are burned; ``"no-burn"``: no burn,
          ``count`` cards dealt to the players in order; both reported as ``burn-error``
          (``args``: ``stands``; ``after`` = ``"street"``: after two burns the dealer deals every
          player in order, ignoring the display, and reports once the street is out).
        - ``"absent"``: ``absent-player`` for ``seat`` at the first DEAL of ``street``
          (``args``: ``at`` = ``"betting"`` to report at its betting round; ``action_reached``).
        - ``"flash"``: at the BETTING of ``street`` the dealer reports a hole card of ``seat`` seen
          (``exposed-card``; ``args`` ``off``: ``card-off-table``); the card stays where it is.
        - ``"wrong-bring-in"``: at the 3rd-street BETTING, ``seat`` was wrongly named and bet
          (``args``: ``next_acted``).
        - ``"next-deck"``: at the showdown (or a hand won without one), before *hand complete*,
          the dealer loads the next hand's deck and pulls its first card, held aside; the next
          hand is dealt from that deck.
        - ``"card-count"``: at the showdown the dealer counts ``args["cards"]`` in ``seat``'s hand.
        - ``"misdeal"``: at the DEAL of the seat's card ``round`` on ``street`` the dealer declares a misdeal.
        - ``"extra-card"``: at the DEAL of ``seat``'s card on ``street`` the dealer gives the seat
          two cards, then, stopped by the display, counts the seat's cards (``card-count``); with
          ``args`` ``report`` = ``"check"`` the dealer goes on dealing as the display says and
          counts every seat that looks wrong when the street's betting (or confirmation) comes;
          ``"round"``: the same, but after the second card the dealer goes on round the table,
          one card to each later seat, the display not looked at (the last is a card too many);
          ``"round-early"``: as ``"round"``, but the dealer counts the seat before pulling the
          last seat's card (the count reaches the machine before that card's read, as when the
          read is still on the wire).
        - ``"skip-seat"``: at the DEAL of ``seat``'s card the dealer gives it to the
          next seat and goes on round the table, one card a seat; when the display asks for the
          last seat's card, the dealer counts the last seat and the seat skipped (``card-count``).
        - ``"community-to-seat"``: at the COMMUNITY card of ``street`` the dealer deals it face
          down to ``seat``, puts the next card in the centre and counts the seat (``card-count``);
          asked to place the street's cards, the dealer places each where it lies.
        - ``"stub-mixed"``: at the SCRAMBLE of ``street`` the dealer gathers the muck (every card
          of the folded hands) into the new stub too, then reports ``stub-mixed`` (TDA RP-4);
          ``args`` ``reports``: how many times it reports it (default once).
        - ``"undo"``: at the BETTING of ``street``, a fold of ``seat`` reported by mistake and
          undone; with ``args`` ``at`` = ``"deal"``: an undo asked at the first DEAL of ``street``
          after a card has left the shoe (refused).
    :param street: ``"3rd"`` .. ``"7th"``.
    :param seat: the table seat concerned.
    :param round: 3rd street: the seat's card 0, 1 (hole cards) or 2 (the door card).
    :param count: cards dealt (``premature``, ``no-burn``).
    :param args: extra arguments of the report.
    """

    kind: str
    street: str = "3rd"
    seat: int | None = None
    round: int = 0
    count: int = 0
    args: dict[str, Any] = field(default_factory=dict)

    def __init__(self, kind: str, street: str = "3rd", seat: int | None = None, round: int = 0,
                 count: int = 0, args: dict[str, Any] = FACTORY) -> None:
        self.kind = kind
        self.street = street
        self.seat = seat
        self.round = round
        self.count = count
        self.args = dict() if args is FACTORY else args


@value
class HandScript(Value):
    """One hand for the simulated dealer.

    :param seats: table seat numbers dealt in, in player order (clockwise from the dealer's left).
    :param game: ``"stud"``, ``"stud8"`` or ``"razz"``.
    :param rules: profile name for the new hand, ``None`` for the service's default.
    :param deck: the order the shoe is loaded in (52 cards); ``None``: shuffled with the dealer's
        seeded random generator.
    :param actions: per street, the betting round's reports in order: ``("fold", seat)`` or
        ``("all-in", seat)``.
    :param ante_all_in: seats all-in for the ante (reported with the new hand).
    :param muck: seats that muck at showdown (reported as folds at showdown).
    :param name: a label (the PHH file, the scenario).
    :param irregular: the irregularities of the hand (:class:`Irregularity`), in any order.
    :param acks: alert codes the dealer acknowledges when stopped (the floor's decision).
    """

    seats: list[int]
    game: str = "stud"
    rules: str | None = None
    deck: list[Card] | None = None
    actions: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    ante_all_in: list[int] = field(default_factory=list)
    muck: list[int] = field(default_factory=list)
    name: str = ""
    irregular: list[Irregularity] = field(default_factory=list)
    acks: list[str] = field(default_factory=list)

    def __init__(self, seats: list[int], game: str = "stud", rules: str | None = None,
                 deck: list[Card] | None = None, actions: dict[str, list[tuple[str, int]]] = FACTORY,
                 ante_all_in: list[int] = FACTORY, muck: list[int] = FACTORY, name: str = "",
                 irregular: list[Irregularity] = FACTORY, acks: list[str] = FACTORY) -> None:
        self.seats = seats
        self.game = game
        self.rules = rules
        self.deck = deck
        self.actions = dict() if actions is FACTORY else actions
        self.ante_all_in = list() if ante_all_in is FACTORY else ante_all_in
        self.muck = list() if muck is FACTORY else muck
        self.name = name
        self.irregular = list() if irregular is FACTORY else irregular
        self.acks = list() if acks is FACTORY else acks


@value
class TablePicture(Value):
    """What the dealer physically did in the current hand (cards by identity as pulled);
    ``pulled`` counts the cards taken from the stub now in the shoe, ``total`` over the hand
    (cards out of the shoe). ``aside``: the set-aside pile (house 16.16); ``out``: cards out of
    play (RP-10-B); ``muck``: cards mucked by a ruling; ``misdeal``: the hand ended in a misdeal;
    ``log``: each card pulled as ``(street, place)``, in the order of the pulls, where the dealer
    put it (``seat N up``, ``burn``, ``centre``, ``muck``): what the dealer remembers when asked to
    place a street's cards."""

    seats: dict[int, list[tuple[str, Card | None]]] = field(default_factory=dict)
    burns: dict[str, list[Card | None]] = field(default_factory=dict)
    community: list[Card | None] = field(default_factory=list)
    aside: list[Card | None] = field(default_factory=list)
    out: list[Card | None] = field(default_factory=list)
    muck: list[Card | None] = field(default_factory=list)
    misdeal: bool = False
    log: list[tuple[str | None, str]] = field(default_factory=list)
    loaded: list[Card] = field(default_factory=list)
    pulled: int = 0
    scrambles: int = 0
    total: int = 0

    def __init__(self, seats: dict[int, list[tuple[str, Card | None]]] = FACTORY,
                 burns: dict[str, list[Card | None]] = FACTORY, community: list[Card | None] = FACTORY,
                 aside: list[Card | None] = FACTORY, out: list[Card | None] = FACTORY,
                 muck: list[Card | None] = FACTORY, misdeal: bool = False,
                 log: list[tuple[str | None, str]] = FACTORY, loaded: list[Card] = FACTORY,
                 pulled: int = 0, scrambles: int = 0, total: int = 0) -> None:
        self.seats = dict() if seats is FACTORY else seats
        self.burns = dict() if burns is FACTORY else burns
        self.community = list() if community is FACTORY else community
        self.aside = list() if aside is FACTORY else aside
        self.out = list() if out is FACTORY else out
        self.muck = list() if muck is FACTORY else muck
        self.misdeal = misdeal
        self.log = list() if log is FACTORY else log
        self.loaded = list() if loaded is FACTORY else loaded
        self.pulled = pulled
        self.scrambles = scrambles
        self.total = total

    def stub(self) -> list[Card]:
        """The cards still in the shoe, in order."""
        return self.loaded[self.pulled:]

    def take(self, place: str) -> Card | None:
        """Take the top card of a place (``seat N up``, ``burn 4th``, ``set-aside`` ...).

        :raises ValueError: for an unknown or empty place.
        """
        words = place.split()
        if words[0] == "seat":
            pile = self.seats[int(words[1])]
            for k in range(len(pile) - 1, -1, -1):
                if pile[k][0] == words[2]:
                    return pile.pop(k)[1]
            raise ValueError(f"no {words[2]} card at {place}")
        if words[0] == "burn":
            return self.burns[words[1]].pop()
        return self._pile(place).pop()

    def put(self, place: str, card: Card | None) -> None:
        """Put a card on a place (see :meth:`take`)."""
        words = place.split()
        if words[0] == "seat":
            self.seats.setdefault(int(words[1]), []).append((words[2], card))
        elif words[0] == "burn":
            self.burns.setdefault(words[1], []).append(card)
        else:
            self._pile(place).append(card)

    def _pile(self, place: str) -> list[Card | None]:
        piles = {"set-aside": self.aside, "out": self.out, "muck": self.muck}
        if place not in piles:
            raise ValueError(f"unknown place {place!r}")
        return piles[place]

    def move(self, move: str) -> None:
        """Carry out one ``"<from> -> <to>"`` move."""
        src, dst = (part.strip() for part in move.split("->"))
        self.put(dst, self.take(src))


@value
class DealerStats(Value):
    """Counters and the signal log of a run."""

    signals: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    hands_started: int = 0
    hands_done: int = 0
    pulls: int = 0

    def __init__(self, signals: list[str] = FACTORY, alerts: list[str] = FACTORY, hands_started: int = 0,
                 hands_done: int = 0, pulls: int = 0) -> None:
        self.signals = list() if signals is FACTORY else signals
        self.alerts = list() if alerts is FACTORY else alerts
        self.hands_started = hands_started
        self.hands_done = hands_done
        self.pulls = pulls


def random_hands(seed: int, *, seats: Sequence[int] = (1, 2, 3, 4, 5, 6, 7, 8), game: str = "stud",
                 rules: str | None = None, fold_rate: float = 0.12, all_in_rate: float = 0.01,
                 count: int | None = None) -> Iterator[HandScript]:
    """Seeded random hands: every street each player still in folds with ``fold_rate`` or goes
    all-in with ``all_in_rate`` (an all-in player takes no more action); at showdown about a
    third of the losers muck. ``count`` hands,
    or without end."""
    rng = random.Random(seed)
    k = 0
    while count is None or k < count:
        k += 1
        live = list(seats)
        all_in: set[int] = set()
        actions: dict[str, list[tuple[str, int]]] = {}
        for street in ("3rd", "4th", "5th", "6th", "7th"):
            acts: list[tuple[str, int]] = []
            for s in list(live):
                if len(live) <= 1:
                    break
                r = rng.random()
                if s in all_in:
                    continue  # an all-in player takes no more action: no fold, no second all-in
                if r < fold_rate:
                    live.remove(s)
                    acts.append(("fold", s))
                elif r < fold_rate + all_in_rate:
                    all_in.add(s)
                    acts.append(("all-in", s))
            actions[street] = acts
        muck = [s for s in live[1:] if rng.random() < 0.33]
        deck = full_deck()
        rng.shuffle(deck)
        yield HandScript(list(seats), game, rules, deck, actions, [], muck, name=f"random {seed}/{k}")


class SimulatedDealer(Closeable):
    """A dealer driven by the command stream.

    :param shoe: the shoe to pull from and reload.
    :param post: where dealer inputs go (``Controller.post``).
    :param hands: the hands to deal, in order.
    :param pace: seconds to pause before each action (0 = none).
    :param seed: seeds scrambles, cuts and decks the scripts leave open.
    :param auto_ack: acknowledge alerts on ``stop`` (a demo keeps going); otherwise wait.
    :param threaded: act in the dealer's own thread (:meth:`start`); ``False``: act inline in
        :meth:`handle` (a synchronous direct replay).
    :param on_hand_done: called with the script after the dealer reports a hand complete.

    ``history`` keeps the physical picture of every finished hand (:class:`TablePicture`).

    It is a sink: :meth:`handle` only queues the command (never blocks the controller).
    """

    def __init__(self, shoe: ShoeLike, post: Callable[[DealerInput], object], hands: Iterable[HandScript], *,
                 pace: float = 0.0, seed: int = 0, auto_ack: bool = False, threaded: bool = True,
                 on_hand_done: Callable[[HandScript], None] | None = None) -> None:
        super().__init__()
        self.shoe = shoe
        self.post = post
        self._hands = iter(hands)
        self.pace = pace
        self.rng = random.Random(seed)
        self.auto_ack = auto_ack
        self.threaded = threaded
        self.on_hand_done = on_hand_done
        self.stats = DealerStats()
        self.table = TablePicture()
        self.history: list[TablePicture] = []
        self.script: HandScript | None = None
        self.in_hand: list[int] = []
        self.done = threading.Event()
        self.stalled: str | None = None
        self._gathered: list[Card] = []
        self._preloaded: tuple[list[Card], Card | None] | None = None  # the next deck, its first card out
        self._after_read: bool | None = None  # a showdown (contested?) to finish once that card is read
        self._done: set[tuple[Any, ...]] = set()
        self._resync = False
        self._new_hand_input: DealerInput | None = None
        self._last_script: HandScript | None = None
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._hooks: list[Irregularity] = []
        self._pending: list[tuple[int, DealerInput]] = []
        self._await_ref: int | None = None
        self._ref = 0
        self._latched: list[str] = []
        self._acked: set[str] = set()  # alert codes this dealer has acknowledged
        self._held: Card | None = None
        self._street_now: str | None = None
        self._acked_stop: str | None = None  # the stop last answered with an acknowledgement
        self._auto_acked: str | None = None  # the stop last acknowledged by ``auto_ack``, until a card is pulled
        self._check_street: str | None = None  # a street whose seats the dealer counts before betting
        self._premature: list[tuple[int, str, Card | None]] = []
        self._active = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_state: dict[str, Any] | None = None
        # a shoe that can dispense two cards at once reports them (``last_dispensed``) after each
        # pull; one that never does (the direct replay's) says so once, and is not asked per card
        self._doubles = not getattr(shoe, "single_pulls", False)

    # ------------------------------------------------------------------ sink

    def handle(self, command: object) -> None:
        """Take one command (sink interface)."""
        if isinstance(command, Instruction):  # the common case first (the types are disjoint)
            if self.threaded:
                self._inbox.put(command)
            else:
                self.act(command)
            return
        if isinstance(command, DisplayUpdate):
            self.last_state = command.state
            return
        if isinstance(command, Alert):
            self.stats.alerts.append(command.code)
            if not (command.moves or command.latched or command.code == "input-wrong-time"):
                return
        elif not isinstance(command, Instruction):
            return
        if self.threaded:
            self._inbox.put(command)
        elif isinstance(command, Alert):
            self.on_alert(command)
        else:
            self.act(command)

    def _closing(self) -> None:
        self._stop.set()
        self._inbox.put(None)

    def _close(self) -> None:
        """``close()``: stop the dealer's thread."""
        join_thread(self._thread, 5)

    def start(self) -> SimulatedDealer:
        """Start the dealer's thread (threaded mode)."""
        if self.threaded and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sim-dealer", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            ins = self._inbox.get()
            if ins is None:
                return
            try:
                if isinstance(ins, Alert):
                    self.on_alert(ins)
                else:
                    self.act(ins)
            except Exception as exc:  # noqa: BLE001 - a dealer error ends the run, visibly
                log.exception("simulated dealer failed")
                self.stalled = f"{type(exc).__name__}: {exc}"
                self.done.set()
                return

    # ------------------------------------------------------------------ acting

    def _pause(self) -> None:
        if self.pace > 0:
            self._stop.wait(self.pace)

    def _once(self, key: tuple[Any, ...]) -> bool:
        """True the first time ``key`` is seen in this hand: an instruction shown again after an
        interruption (same card number, same betting round) is not done twice."""
        if key in self._done:
            return False
        self._done.add(key)
        return True

    def resync(self) -> None:
        """The service restarted (or may have lost dealer inputs): the next instruction this
        dealer has already done is answered again with its dealer inputs — without doing the
        physical part twice (no second pull, scramble or cut) and without reporting again what
        the display already shows (a seat already folded or all-in)."""
        self._resync = True

    def on_alert(self, alert: Alert) -> None:
        """Carry out the card moves of an alert (in stream order) and note a latched one. A
        new-hand input refused (a stop came first, e.g. ``journal-write-failed``) is posted again
        at the next *waiting for a new hand*, as a dealer taps *New hand* again; an input refused
        under a STOP (*betting complete*, *hand complete*) is posted again when its instruction
        shows again after the acknowledgement."""
        for move in alert.moves:
            self.table.move(move)
        if alert.code == "input-wrong-time" and (alert.message.startswith(f"'{DealerAction.NEW_HAND.value}'")
                                                 or STOP_REFUSAL in alert.message):
            self._resync = True  # taken again once the STOP is acknowledged
        if alert.latched:
            self._latched.append(alert.code)
        if alert.code == "card-not-expected" and self._after_read is not None and self.script is not None:
            contested, self._after_read = self._after_read, None
            self._finish_showdown(self.script, contested)

    def act(self, ins: Instruction) -> None:
        """Do what one instruction says (once: see :attr:`Instruction.card_no`)."""
        sig = ins.signal
        self.stats.signals.append(sig._value_)  # the member's value, without the enum property's call
        if (sig is _DEAL or sig is _BURN or sig is _COMMUNITY) and self._await_ref is None \
                and not self._pending and not self._hooks:
            # a card step with no report awaited, none pending and nothing scripted: what the
            # general path below does for it, without its other tests
            self._active = True
            self._acked_stop = self._auto_acked = None
            if ins.card_no is not None and ins.card_no <= self.table.total:
                return  # this card has already left the shoe; its read is on its way
            if self.pace > 0:
                self._pause()
            self._pull(ins)
            return
        if self._await_ref is not None:
            if ins.ref != self._await_ref:
                return  # shown before the machine took the report: wait for its answer
            self._await_ref = None
        if self._pending:
            if ins.card_no is None or ins.card_no <= self.table.total:
                if sig is not _IDLE:
                    return  # the machine has not read every card pulled yet
            else:
                self._report(self._pending.pop(0)[1])
                return
        if sig is _IDLE and ins.card_no is not None:
            return  # idle inside a hand: wait (the shoe is confirming its counter reset)
        if sig is _IDLE and self.script is not None and self._active and ins.text.startswith("Misdeal"):
            self._end_misdeal()
            return
        if sig is not _IDLE:
            self._active = True
        if sig is not _STOP:
            self._acked_stop = None
        if self._hooks and self._hook_first(ins):  # nothing scripted (every recorded hand): no call
            return
        card_step = sig is _DEAL or sig is _BURN or sig is _COMMUNITY
        if card_step and ins.card_no is not None and ins.card_no <= self.table.total:
            return  # this card has already left the shoe; its read is on its way
        repeated = False
        if sig in (_SCRAMBLE, _CUT):
            repeated = not self._once((sig._value_, ins.card_no))
        elif sig is _BETTING:
            repeated = not self._once(("betting", ins.street))
        elif sig is _SHOWDOWN:
            repeated = not self._once(("showdown", self.stats.hands_started))
        elif sig is _IDLE:
            repeated = self.script is not None and self._new_hand_input is not None
        if repeated:
            if self._resync:
                self._resync = False
                self._repost(ins)
            return
        if sig is _IDLE:
            self._next_hand()
        elif card_step:
            self._auto_acked = None  # the deal goes on: a stop after this is a new one
            if self.pace > 0:
                self._pause()
            self._pull(ins)
        elif sig is _SCRAMBLE:
            self._pause()
            self._street_now = ins.street
            self._scramble(ins.cards)
        elif sig is _CUT:
            self._pause()
            self._cut()
        elif sig is _BETTING:
            self._betting(ins.street or "")
        elif sig is _SHOWDOWN:
            self._showdown(contested=ins.seat is None)
        elif sig is _STOP and ins.text.startswith("Sequence gap") and ins.card_no is not None:
            # docs/irregularities.md, *Sequence gap*: count the cards on the felt against the
            # screen's card number and report the cards found beyond it (they lie at the places
            # the screen had next, since this dealer follows the screen)
            if self._once(("gap", ins.card_no)):
                self._input(DealerAction.GAP_CARDS, cards=max(0, self.table.total - (ins.card_no - 1)))
        elif sig is _STOP and ins.text.startswith("Stop: card-placement"):
            self._place(ins.street)
        elif sig is _STOP:
            acks = [*(self.script.acks if self.script is not None else ()),
                    *(self._last_script.acks if self._last_script is not None else ())]
            wanted = [c for c in self._latched if c in acks]
            named = ins.text.removeprefix("Stop: ").split(" ", 1)[0]
            if wanted:
                for code in wanted:  # one each: an acknowledgement by code takes its oldest alert only
                    self._input(DealerAction.ACK_ALERT, code=code)
                    self._acked.add(code)
                self._latched = [c for c in self._latched if c not in wanted]
                self._acked_stop = ins.text
            elif self._acked_stop == ins.text:
                return  # the same stop shown again before the acknowledgement was read: wait
            elif self.auto_ack:
                if self._auto_acked == ins.text and self.threaded:
                    # the same stop back after its acknowledgement: its cause is still there (a
                    # journal that cannot be written); a person looks again a moment later
                    self._stop.wait(AUTO_ACK_AGAIN_S)
                self._auto_acked = ins.text
                self._latched = []
                self.post(DealerInput(DealerAction.ACK_ALERT))
            elif named in self._acked:
                pass  # the stop names an alert already acknowledged: the acknowledgement is on its way
            elif ins.card_no is not None and ins.card_no <= self.table.total:
                pass  # cards pulled are not all read yet: the stop may be answered by their reads
            else:
                self.stalled = ins.text
        # SHOE_FAULT, DEGRADED: wait for the next instruction.

    def _input(self, action: DealerAction, seat: int | None = None, **args: object) -> None:
        self.post(DealerInput(action, seat, dict(args)))

    def _next_hand(self) -> None:
        if self.script is not None:
            return  # the hand's own IDLE echo; the next IDLE after hand complete starts a hand
        try:
            script = next(self._hands)
        except StopIteration:
            self.done.set()
            return
        self._pause()
        if self._preloaded is not None:  # the deck is in the shoe already, its first card aside
            deck, first = self._preloaded
            self._preloaded = None
            self.table = TablePicture(seats={s: [] for s in script.seats}, loaded=deck, aside=[first], pulled=1,
                                      total=1)
            self.shoe.reload(deck[1:])  # the same cards in the shoe; its counter reset as the new hand asks
        else:
            deck = list(script.deck) if script.deck is not None else self._shuffled(full_deck())
            self.table = TablePicture(seats={s: [] for s in script.seats}, loaded=deck)
            self.shoe.reload(deck)
        self._done = set()
        self.script = script
        self._hooks = list(script.irregular)
        self._pending, self._await_ref, self._held = [], None, None
        self._premature, self._active = [], False
        self.in_hand = list(script.seats)
        self.stats.hands_started += 1
        args: dict[str, Any] = {"seats": list(script.seats), "game": script.game}
        if script.rules:
            args["rules"] = script.rules
        if script.ante_all_in:
            args["all_in"] = list(script.ante_all_in)
        self._new_hand_input = DealerInput(DealerAction.NEW_HAND, None, args)
        self.post(self._new_hand_input)

    def _shuffled(self, cards: list[Card]) -> list[Card]:
        self.rng.shuffle(cards)
        return cards

    def _take_card(self) -> Card | None:
        """One card out of the shoe (the held second card of a double pull first)."""
        card: Card | None
        if self._held is not None:
            card, self._held = self._held, None
        else:
            card = self.shoe.pull()
            self.stats.pulls += 1
            self.table.pulled += 1
            if self._doubles:
                both = getattr(self.shoe, "last_dispensed", ())
                if both and isinstance(both, tuple) and len(both) == 2:
                    self._held = both[1]  # a double pull: the second card goes where the next instruction says
                    self.table.pulled += 1
        self.table.total += 1
        return card

    def _pull(self, ins: Instruction, face: str | None = None) -> None:
        table = self.table
        if self._held is None and not self._doubles:  # _take_card's work for a single-pull shoe, inline
            card = self.shoe.pull()
            self.stats.pulls += 1
            table.pulled += 1
            table.total += 1
        else:
            card = self._take_card()
        seat = ins.seat
        if ins.signal is _DEAL and seat is not None:
            face = face or ins.face or "down"
            held = table.seats.get(seat)
            if held is None:
                held = table.seats[seat] = []
            held.append((face, card))
            entry = _PLACES.get((ins.street, seat, face))  # _placed's look-up, called on a miss
            table.log.append(entry if entry is not None else _placed(ins.street, seat, face))
        elif ins.signal is _BURN and "set-aside" in ins.cards:
            table.aside.append(card)
            table.log.append((None, "set-aside"))  # a house 16.16 card: no street's read
        elif ins.signal is _BURN:
            table.burns.setdefault(ins.street or "", []).append(card)
            table.log.append(_placed(ins.street, None, "burn"))
        else:
            table.community.append(card)
            table.log.append(_placed(ins.street, None, "centre"))

    # ------------------------------------------------------------------ scripted irregularities

    def _report(self, inp: DealerInput) -> None:
        """Post a report and wait for the instruction that answers it."""
        self._ref += 1
        self.post(DealerInput(inp.action, inp.seat, {**inp.args, "ref": self._ref}))
        self._await_ref = self._ref

    def _later(self, action: DealerAction, seat: int | None = None, **args: object) -> None:
        """Report once the machine has read every card pulled so far."""
        self._pending.append((self.table.total + 1, DealerInput(action, seat, dict(args))))

    def _hook(self, kinds: tuple[str, ...], street: str | None, seat: int | None = None,
              rnd: int | None = None) -> Irregularity | None:
        for h in self._hooks:
            if h.kind in kinds and h.street == street and (seat is None or h.seat == seat) \
                    and (rnd is None or h.round == rnd):
                return h
        return None

    def _deal_on(self, ins: Instruction, street: str | None) -> int:
        """One card to each live seat after ``ins.seat`` in the order of the deal, the display
        not looked at; the last seat dealt (``ins.seat`` when none comes after it)."""
        assert ins.seat is not None
        order = self._live_order()
        after = order[order.index(ins.seat) + 1:] if ins.seat in order else []
        for seat in after:
            self._pull(Instruction(Signal.DEAL, "", seat=seat, face=ins.face, street=street))
        return after[-1] if after else ins.seat

    def _live_order(self) -> list[int]:
        status = self._statuses()
        return [s for s in self.in_hand if status.get(s, "live") in ("live", "all-in")]

    def _hook_first(self, ins: Instruction) -> bool:
        """Act out a scripted irregularity instead of the instruction; True when it did."""
        if not self._hooks:
            return False  # nothing scripted (every recorded hand): no search
        sig, street = ins.signal, ins.street
        if sig is Signal.DEAL and ins.seat is not None and ins.card_no is not None \
                and ins.card_no > self.table.total:
            on_seat = sum(1 for _ in self.table.seats.get(ins.seat, ())) if street == "3rd" else None
            h = self._hook(("misdeal",), street, ins.seat, on_seat)
            if h is not None:
                self._hooks.remove(h)
                self._report(DealerInput(DealerAction.MISDEAL))
                return True
            h = next((x for x in self._hooks if x.kind in ("absent", "undo") and x.street == street
                      and x.args.get("at", "deal") == "deal"), None)
            if h is not None:
                self._hooks.remove(h)
                if h.kind == "absent":
                    args = {k: v for k, v in h.args.items() if k != "at"}
                    self._report(DealerInput(DealerAction.ABSENT_PLAYER, h.seat, args))
                else:
                    self._report(DealerInput(DealerAction.UNDO))
                return True
            h = self._hook(("extra-card",), street, ins.seat)
            if h is not None:
                # a second card to the seat by mistake; the dealer counts the seat when stopped
                self._hooks.remove(h)
                self._pause()
                self._pull(ins)
                if h.args.get("report", "count") == "count":
                    self._pull(ins)
                    held = len(self.table.seats.get(ins.seat, ()))
                    self._later(DealerAction.CARD_COUNT, ins.seat, cards=held)
                else:  # the second card as if to the next seat's turn; seen when the seats are checked
                    self._pull(Instruction(Signal.DEAL, "", seat=ins.seat, face=ins.face, street=street))
                    if h.args.get("report") == "round":  # and on round the table, one card a seat
                        self._deal_on(ins, street)
                    if h.args.get("report") == "round-early":  # the count before the last seat's card
                        order = self._live_order()
                        later = order[order.index(ins.seat) + 1:] if ins.seat in order else []
                        for seat in later[:-1]:
                            self._pull(Instruction(Signal.DEAL, "", seat=seat, face=ins.face, street=street))
                        self._input(DealerAction.CARD_COUNT, ins.seat,
                                    cards=len(self.table.seats.get(ins.seat, ())))
                        for seat in later[-1:]:
                            self._pull(Instruction(Signal.DEAL, "", seat=seat, face=ins.face, street=street))
                        return True
                    self._check_street = street
                return True
            h = self._hook(("skip-seat",), street, ins.seat)
            if h is not None:
                # the seat's card to the next seat and on round the table; when the display asks
                # for the last seat's card, the dealer sees it there and the seat skipped bare,
                # counts both (card-count) and then deals as the display says
                self._hooks.remove(h)
                self._pause()
                last = self._deal_on(ins, street)
                for seat in (last, ins.seat):
                    self._later(DealerAction.CARD_COUNT, seat, cards=len(self.table.seats.get(seat, ())))
                return True
            h = self._hook(("expose", "expose-both", "off-table"), street, ins.seat,
                           on_seat if street == "3rd" else None)
            if h is not None:
                self._pause()
                self._pull(ins, face="up")
                if h.kind == "expose-both" and h.round == 0:
                    h.round = 1  # the second hole card goes face up too; reported then
                    return True
                self._hooks.remove(h)
                rep: dict[str, Any] = {"street": street, **h.args}
                if h.kind == "off-table":
                    self._later(DealerAction.CARD_OFF_TABLE, ins.seat, face=ins.face, **h.args)
                elif h.kind == "expose-both":
                    self._later(DealerAction.EXPOSED_CARD, ins.seat, both=True, **rep)
                else:
                    if street == "3rd":
                        rep["which"] = h.round
                    self._later(DealerAction.EXPOSED_CARD, ins.seat, **rep)
                return True
        if sig is Signal.BURN and "set-aside" not in ins.cards and ins.card_no is not None \
                and ins.card_no > self.table.total:
            h = self._hook(("burn-two", "no-burn"), street)
            if h is not None:
                self._hooks.remove(h)
                self._pause()
                face = "down" if street == "7th" else "up"
                args = {k: v for k, v in h.args.items() if k != "after"}
                if h.kind == "burn-two":
                    self._pull(ins)
                    self._pull(ins)
                    if h.args.get("after") == "street":  # the street dealt in order, then noticed
                        for seat in self._live_order():
                            self._pull(Instruction(Signal.DEAL, "", seat=seat, face=face, street=street))
                    self._later(DealerAction.BURN_ERROR, burns=2, **args)
                else:
                    for seat in self._live_order()[: max(h.count, 1)]:
                        self._pull(Instruction(Signal.DEAL, "", seat=seat, face=face, street=street))
                    self._later(DealerAction.BURN_ERROR, burns=0, **args)
                return True
        if sig is Signal.COMMUNITY and ins.card_no is not None and ins.card_no > self.table.total:
            h = self._hook(("community-to-seat",), street)
            if h is not None and h.seat is not None:
                # the community card dealt down to a seat; the next card to the centre; the seat counted
                self._hooks.remove(h)
                self._pause()
                self._pull(Instruction(Signal.DEAL, "", seat=h.seat, face="down", street=street))
                self._pull(ins)
                self._later(DealerAction.CARD_COUNT, h.seat, cards=len(self.table.seats.get(h.seat, ())))
                return True
        if sig is Signal.BETTING and street is not None:
            h = self._hook(("premature",), street)
            if h is not None:
                self._hooks.remove(h)
                self._premature_deal(h, street)
                return True
        return False

    def _place(self, street: str | None) -> None:
        """docs/irregularities.md, *Placing a street's cards*: the dealer counts every seat whose
        cards on the felt differ from the display's, then places each card of the street, in the
        order pulled, where it lies (once per street and pull)."""
        log = [place for st, place in self.table.log if st == street]
        if not self._once(("placement", street, len(log))):
            return
        shown = {int(e["seat"]): int(e.get("down_count", 0)) + len(e.get("up", ())) + int(e.get("extra", 0))
                 for e in (self.last_state or {}).get("seats", []) if "seat" in e}
        for seat, n in shown.items():
            held = len(self.table.seats.get(seat, ()))
            if held != n:
                self._input(DealerAction.CARD_COUNT, seat, cards=held)
        self._input(DealerAction.PLACE_CARDS, places=log)

    def _premature_deal(self, h: Irregularity, street: str) -> None:
        """Deal ``h.count`` cards of the next street during the betting: its burn, then one per
        player in order; report once the machine has read them."""
        streets = ("3rd", "4th", "5th", "6th", "7th")
        nxt = streets[streets.index(street) + 1]
        face = "down" if nxt == "7th" else "up"
        self._pause()
        self.table.burns.setdefault(nxt, []).append(self._take_card())
        merged = set(h.args.get("merged", ())) if nxt == "7th" else set()
        for seat in self._live_order()[: max(h.count - 1, 0)]:
            card = self._take_card()
            self.table.seats.setdefault(seat, []).append((face, card))
            if seat not in merged:  # a merged final downcard cannot be told from the hole cards
                self._premature.append((seat, face, card))
        self._done.discard(("betting", street))  # the betting round is still to be reported
        self._later(DealerAction.PREMATURE_DONE, **h.args)

    def _end_misdeal(self) -> None:
        """The machine ended the hand in a misdeal: every card back; the next hand."""
        script = self.script
        assert script is not None
        self.table.misdeal = True
        self.script = None
        self._last_script = script
        self._new_hand_input = None
        self.history.append(self.table)
        self.stats.hands_done += 1
        if self.on_hand_done is not None:
            self.on_hand_done(script)
        self._next_hand()

    def _scramble(self, names: Sequence[str]) -> None:
        pool: list[Card] = []
        for name in names:
            if name == "stub":
                pool.extend(self.table.stub())
                self.table.loaded, self.table.pulled = [], 0
            elif name.startswith("burn "):
                pool.extend(c for c in self.table.burns.pop(name[5:], []) if c is not None)
            elif name == "set-aside":
                pool.extend(c for c in self.table.aside if c is not None)
                self.table.aside = []
            elif name.startswith("premature "):
                for seat, face, _card in self._premature:
                    back = self.table.take(f"seat {seat} {face}")
                    if back is not None:
                        pool.append(back)
                self._premature = []
        mixed = self._hook(("stub-mixed",), self._street_now) if self._street_now else None
        if mixed is not None:
            # RP-4: the muck (the folded hands) goes into the new stub by mistake, then is declared
            self._hooks.remove(mixed)
            status = self._statuses()
            muck: list[Card] = []
            for seat, cards in self.table.seats.items():
                if status.get(seat) in ("folded", "killed", "dead"):
                    muck.extend(c for _f, c in cards if c is not None)
                    self.table.seats[seat] = []
            pool.extend(muck)
        self._gathered = self._shuffled(pool)
        self.table.scrambles += 1
        if any(n.startswith("premature ") for n in names):
            # RP-5-D: the stub with the premature cards is reshuffled and loaded; no cut.
            self.table.loaded, self.table.pulled = list(self._gathered), 0
            self.shoe.reload(self._gathered)
            self._gathered = []
        self._input(DealerAction.SCRAMBLE_DONE)
        if mixed is not None:
            extra = dict(mixed.args)
            for _ in range(extra.pop("reports", 1)):  # a report repeated (a second tap)
                self._input(DealerAction.STUB_MIXED, piles=["muck"], **extra)

    def _cut(self) -> None:
        cards = self._gathered
        k = self.rng.randint(1, len(cards) - 1) if len(cards) > 1 else 0
        cards = cards[k:] + cards[:k]
        self.table.loaded, self.table.pulled = list(cards), 0
        self.shoe.reload(cards)
        self._gathered = []
        self._input(DealerAction.CUT_DONE)

    def _statuses(self) -> dict[int, str]:
        state = self.last_state or {}
        # between hands the display lists the last hand's seats without a status
        return {int(e["seat"]): str(e["status"]) for e in state.get("seats", []) if "seat" in e and "status" in e}

    def _repost(self, ins: Instruction) -> None:
        """Report again the dealer inputs of an instruction already done (see :meth:`resync`)."""
        sig = ins.signal
        status = self._statuses()
        if sig is Signal.IDLE and self._new_hand_input is not None:
            self.post(self._new_hand_input)
        elif sig is Signal.SCRAMBLE:
            self._input(DealerAction.SCRAMBLE_DONE)
        elif sig is Signal.CUT:
            self._input(DealerAction.CUT_DONE)
        elif sig is Signal.BETTING and self.script is not None:
            live = [s for s, st in status.items() if st in ("live", "all-in")]
            for kind, seat in self.script.actions.get(ins.street or "", []):
                if kind == "fold" and seat in live:
                    live.remove(seat)
                    self._input(DealerAction.FOLD, seat)
                    if len(live) == 1:
                        return
                elif kind == "all-in" and status.get(seat) == "live":
                    self._input(DealerAction.ALL_IN, seat)
            self._input(DealerAction.BETTING_COMPLETE)
        elif sig is Signal.SHOWDOWN and self._last_script is not None:
            if ins.seat is None:
                for seat, st in status.items():
                    if st in ("live", "all-in"):
                        muck = seat in self._last_script.muck
                        self._input(DealerAction.FOLD if muck else DealerAction.SHOW, seat)
            self._input(DealerAction.HAND_COMPLETE)

    @staticmethod
    def _killed_on_absence(h: Irregularity) -> bool:
        return bool(h.args.get("kills", True))

    def _betting(self, street: str) -> None:
        script = self.script
        if script is None:
            return
        if self.pace > 0:
            self._pause()
        if self._check_street == street:
            # the dealer checks every seat before the betting: a seat with a card too many or too
            # few is counted (card-count); the street is re-dealt where the display says
            self._check_street = None
            normal = 3 + ("3rd", "4th", "5th", "6th", "7th").index(street)
            status = self._statuses()
            odd = [s for s in self.in_hand if status.get(s, "live") in ("live", "all-in")
                   and len(self.table.seats.get(s, ())) != normal]
            if odd:
                for seat in sorted(odd, key=lambda s: -len(self.table.seats.get(s, ()))):
                    self._input(DealerAction.CARD_COUNT, seat, cards=len(self.table.seats.get(seat, ())))
                self._done.discard(("betting", street))
                return
        if self._hooks:  # nothing scripted (every recorded hand): no search
            self._betting_hooks(street)
        post, in_hand = self.post, self.in_hand
        for kind, seat in script.actions.get(street, ()):
            if seat not in in_hand:
                continue
            if kind == "fold":
                in_hand.remove(seat)
                post(DealerInput(_FOLD, seat, {}))
                if len(in_hand) == 1:
                    return  # the hand is won: no betting complete
            elif kind == "all-in":
                post(DealerInput(_ALL_IN, seat, {}))
        post(DealerInput(_BETTING_COMPLETE, None, {}))

    def _betting_hooks(self, street: str) -> None:
        """The irregularities scripted for the betting of ``street``, reported before its actions."""
        for h in [x for x in self._hooks if x.street == street and (
                x.kind in ("wrong-bring-in", "flash") or (x.kind in ("absent", "undo") and x.args.get("at") == "betting"))]:
            self._hooks.remove(h)
            if h.kind == "flash":  # a hole card seen, back face down: the dealer reports it
                action = DealerAction.CARD_OFF_TABLE if h.args.get("off") else DealerAction.EXPOSED_CARD
                self._input(action, h.seat, street=street)
            elif h.kind == "wrong-bring-in":
                self._input(DealerAction.WRONG_BRING_IN, h.seat, **h.args)
            elif h.kind == "absent":
                self._input(DealerAction.ABSENT_PLAYER, h.seat,
                            **{k: v for k, v in h.args.items() if k != "at"})
                if h.seat in self.in_hand and self._killed_on_absence(h):
                    self.in_hand.remove(h.seat)
            else:
                self._input(DealerAction.FOLD, h.seat)  # by mistake ...
                self._input(DealerAction.UNDO)          # ... and taken back

    def _showdown(self, *, contested: bool) -> None:
        script = self.script
        if script is None:
            return
        if self.pace > 0:
            self._pause()
        if self._hooks:  # nothing scripted (every recorded hand): no search
            for h in [x for x in self._hooks if x.kind == "card-count"]:
                self._hooks.remove(h)
                self._input(DealerAction.CARD_COUNT, h.seat, **h.args)
            for h in [x for x in self._hooks if x.kind == "next-deck"]:
                # the next deck loaded and its first card pulled before hand complete: held aside;
                # the dealer goes on once the machine has read it (its alert)
                self._hooks.remove(h)
                deck = self._shuffled(full_deck())
                self.shoe.reload(deck)
                self.stats.pulls += 1
                self._after_read = contested
                self._preloaded = (deck, self.shoe.pull())
                return
        self._finish_showdown(script, contested)

    def _finish_showdown(self, script: HandScript, contested: bool) -> None:
        if contested:
            post, muck = self.post, script.muck
            for seat in self._live_order():
                post(DealerInput(_FOLD if seat in muck else _SHOW, seat, {}))
        self.script = None
        self._last_script = script
        self._new_hand_input = None
        self.history.append(self.table)
        self.stats.hands_done += 1
        self.post(DealerInput(_HAND_COMPLETE, None, {}))
        if self.on_hand_done is not None:
            self.on_hand_done(script)


def wait_done(dealer: SimulatedDealer, timeout: float, poll: float = 0.05) -> bool:
    """Wait until the dealer has run out of hands (or stalled); False on timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if dealer.done.wait(poll):
            return True
        if dealer.stalled:
            return False
    return dealer.done.is_set()


class DirectShoe:
    """A shoe without a wire, for direct replays: each pull posts a ``CardRead`` straight to the
    consumer (sequence and dispense counters as a real shoe keeps them)."""

    single_pulls = True
    """Every pull dispenses one card: the dealer does not ask after each pull which cards left
    (``last_dispensed``, what a shoe that can double-pull reports)."""

    def __init__(self, post: Callable[[Any], object]) -> None:
        self._read = CardRead
        self.post = post
        self.cards: list[Card] = []
        self.seq = 0
        self.dispense = 0

    def pull(self) -> Card | None:
        """Dispense the next card (``None`` and nothing posted when the shoe is empty)."""
        if not self.cards:
            return None
        card = self.cards.pop(0)
        self.seq += 1
        self.dispense += 1
        self.post(self._read(self.seq, card, "rfid", self.dispense))
        return card

    def reload(self, cards: Sequence[Card]) -> None:
        """Load a new stub; the dispense counter restarts."""
        self.cards = list(cards)
        self.dispense = 0

    def remaining(self) -> int:
        """Cards in the shoe."""
        return len(self.cards)
