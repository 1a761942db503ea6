"""Recorded and scripted hands through the whole service: the simulated dealer, the shoe, the
controller and the dealing machine.

- :func:`script_from_record` turns a PHH hand into a :class:`~hil.dealer.HandScript`: the deck
  stacked in physical deal order from the record's known cards (unknown ones and burns seeded
  random, :meth:`hil.deck.Deck.from_phh`), its folds and all-ins by betting round (all-ins from
  the chips: a player whose stack reaches 0), the mucks at showdown, the players all-in for the
  ante.
- :class:`HandRecorder` is a sink that keeps, per hand, the instructions in order, the machine's
  decisions (:meth:`~shoe_ctl.machine.Dealing.summary`), its alerts, every seat's cards and the
  stub left.
- :func:`run_direct` deals scripts straight into the machine (no wire, one thread);
  :func:`run_full` through a whole table (:class:`shoe_ctl.table.Table`: the virtual shoe on a
  pty, ``ShoeLink`` and the controller thread).
"""

from __future__ import annotations

import collections
import contextlib
import gc
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from hil.dealer import DirectShoe, HandScript, SimulatedDealer
from hil.deck import stacked_order
from shoe_ctl.events import Alert, Command, Instruction, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.phh import TABLE_SEATS, RecordedHand
from shoe_ctl.rules.cards import Card, card_text, full_deck
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.values import FACTORY, Value, value

log = logging.getLogger(__name__)

__all__ = ["BATCH_YOUNG_THRESHOLD", "HandRecord", "HandRecorder", "few_young_collections", "run_direct", "run_full",
           "script_from_record"]

_IDLE = Signal.IDLE  # looked up once: the recorder compares every instruction with it
_CODE_TEXTS = tuple(card_text(c) for c in full_deck())  # by card code, 0..51
_UNKNOWN_TEXT = card_text(None)


def _card_text(card: Card | None) -> str:
    """:func:`card_text` from a table by card code (the recorder writes out every hand's cards)."""
    return _UNKNOWN_TEXT if card is None else _CODE_TEXTS[card.code]


def _card_texts(cards: Iterable[Card | None]) -> list[str]:
    """:func:`_card_text` of each card, the table read in the one loop."""
    texts, unknown = _CODE_TEXTS, _UNKNOWN_TEXT
    return [unknown if c is None else texts[c.code] for c in cards]


def script_from_record(rec: RecordedHand, *, seed: int = 0, rules: str | None = None,
                       path: str | Path | None = None, table_seats: bool = False) -> HandScript:
    """The simulated dealer's script for one recorded hand: table seats 1..n in player order, or
    with ``table_seats`` the record's own seats (:meth:`RecordedHand.table_seats`: ``seats`` /
    ``_seats``, counted from 1) where it has them and they fit the machine's seats 1..8.

    :param path: the PHH file (the deck is stacked from it); default ``rec.path``.
    :raises hil.deck.DeckError: a card twice in the record.
    """
    n = rec.n
    recorded = rec.table_seats(TABLE_SEATS) if table_seats else None
    seats = recorded if recorded is not None else list(range(1, n + 1))
    deck = stacked_order(deal_order(rec)[:52], seed)
    stacks = [max(s - a, 0) for s, a in zip(rec.starting_stacks, rec.antes, strict=True)]
    ante_all_in = [seats[i] for i in range(n) if stacks[i] == 0]
    actions: dict[str, list[tuple[str, int]]] = {}
    committed: list[int | float] = [0] * n  # starting stacks may be inf (unknown)
    street = ""
    folded = [False] * n
    shows: dict[int, bool] = {}
    bring_in = rec.bring_in or 0
    for _index, a_street, kind, i, amount, shown in rec.actions:  # an Action's fields, unpacked once
        if kind == "dh" or kind == "db":
            if a_street != street:
                street = a_street
                committed = [0] * n
            continue
        if i is None:
            continue
        if kind == "sm":
            shows[i] = bool(shown)  # "sm" with cards, known or not: shown; a bare "sm": mucked
            continue
        before = stacks[i]
        if kind == "f":
            folded[i] = True
            actions.setdefault(a_street, []).append(("fold", seats[i]))
            continue
        owed: int | float  # committed chips are ints; a stack may be inf (unknown)
        if kind == "pb":
            owed = bring_in
        elif kind == "cbr":
            owed = (amount or 0) - committed[i]
        else:  # cc
            owed = max(committed) - committed[i]
        if owed <= 0:  # nothing to put in: no chips move
            continue
        if owed < before:
            committed[i] += owed
            stacks[i] = before - owed
        else:  # the player's last chips: all-in (a stack already at 0 was all-in for the ante)
            committed[i] += before
            stacks[i] = 0
            if before > 0:
                actions.setdefault(a_street, []).append(("all-in", seats[i]))
    muck = [seats[i] for i, showed in shows.items() if not showed and not folded[i]]
    return HandScript(seats, rec.game.value, rules, deck, actions, ante_all_in, muck, name=str(path or rec.path))


def deal_order(rec: RecordedHand) -> list[Card | None]:
    """The record's cards in physical order under live dealing: 3rd street one card to each
    player in turn (down, down, up), then on 4th-7th a burn (unknown) and one card to each player
    the record dealt one, the community card after its street's burn. A record that needs more
    than 52 cards (a community card after a scramble) runs past the deck: callers cut it at 52."""
    order: list[Card | None] = []
    for k in range(3):
        order.extend(cards[k] for cards in rec.cards if len(cards) > k)
    for k, street in ((3, "4th"), (4, "5th"), (5, "6th"), (6, "7th")):
        dealt = [cards[k] for cards in rec.cards if len(cards) > k]
        community = rec.community_street == street
        if not dealt and not community:
            continue
        order.append(None)
        order.extend(dealt)
        if community:
            order.append(rec.community)
    return order


@value
class HandRecord(Value):
    """What one hand did, as the controller saw it.

    :param instructions: every instruction of the hand, in order (new hand .. hand complete).
    :param summary: :meth:`Dealing.summary` at the end of the hand.
    :param alerts: the alert codes raised in the hand, in order.
    :param alert_details: the same alerts as ``{"code", "street", "seat", "latched", "message"}``.
    :param cards: per table seat, ``{"down": [...], "up": [...], "status": ...}`` (card texts).
    :param burns: per street, the burns still on the burn pile (card texts).
    :param stub: cards left in the stub.
    """

    instructions: list[Instruction] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    alerts: list[str] = field(default_factory=list)
    alert_details: list[dict[str, Any]] = field(default_factory=list)
    cards: dict[int, dict[str, Any]] = field(default_factory=dict)
    burns: dict[str, list[str]] = field(default_factory=dict)
    stub: int = 0

    def __init__(self, instructions: list[Instruction] = FACTORY, summary: dict[str, Any] = FACTORY,
                 alerts: list[str] = FACTORY, alert_details: list[dict[str, Any]] = FACTORY,
                 cards: dict[int, dict[str, Any]] = FACTORY, burns: dict[str, list[str]] = FACTORY,
                 stub: int = 0) -> None:
        self.instructions = list() if instructions is FACTORY else instructions
        self.summary = dict() if summary is FACTORY else summary
        self.alerts = list() if alerts is FACTORY else alerts
        self.alert_details = list() if alert_details is FACTORY else alert_details
        self.cards = dict() if cards is FACTORY else cards
        self.burns = dict() if burns is FACTORY else burns
        self.stub = stub

    def signals(self) -> list[str]:
        """The LED sequence: one word per instruction (``deal:3:down``, ``burn``, ``scramble``, ...)."""
        out = []
        for ins in self.instructions:
            word = ins.signal.value
            if ins.signal is Signal.DEAL:
                word += f":{ins.seat}:{ins.face}"
            out.append(word)
        return out


class HandRecorder:
    """A sink recording every hand (runs in the controller thread, reads the machine between
    events). ``hands`` holds the finished hands; ``changed`` is set after each one."""

    def __init__(self, machine: Dealing) -> None:
        self.machine = machine
        self.hands: list[HandRecord] = []
        self.current: HandRecord | None = None
        self.changed = threading.Event()

    def handle(self, command: Command) -> None:
        if not isinstance(command, Instruction):  # the common case first (the types are disjoint)
            if isinstance(command, Alert) and self.current is not None:
                self.current.alerts.append(command.code)
                self.current.alert_details.append({"code": command.code, "street": command.street,
                                                   "seat": command.seat, "latched": command.latched,
                                                   "message": command.message})
            return
        if command.signal is _IDLE:
            if self.current is not None:
                self._finish(self.current)
                self.hands.append(self.current)
                self.current = None
                self.changed.set()
            return
        if self.current is None:
            self.current = HandRecord()
        self.current.instructions.append(command)

    def _snapshot(self, rec: HandRecord) -> None:
        hand = self.machine.hand
        assert hand is not None
        texts = _card_texts
        rec.cards = {s.seat: {"down": texts(s.down), "up": texts(s.up), "status": s.status} for s in hand.seats}
        burns: dict[str, list[str]] = {}
        for st, c in hand.burn_pile:
            burns.setdefault(st, []).append(_card_text(c))
        rec.burns = burns
        rec.stub = hand.stub_count()
        rec.summary = self.machine.summary()

    def _finish(self, rec: HandRecord) -> None:
        if self.machine.hand is not None:
            self._snapshot(rec)

    def close(self) -> None:
        return None


MAX_EVENTS = 10_000_000
"""A direct replay that hands the machine more events than this is taken for one that does not end."""


BATCH_YOUNG_THRESHOLD = 20_000
"""The cycle collector's young-generation threshold (net new container objects between two
passes; CPython's default is 700) while :func:`run_direct` deals: what a replay allocates and
keeps (each hand's record, the machine's hand) lives at least a hand, so a pass every 700 found
nothing to free (docs/performance.md, *The replay's cycle collector*)."""


@contextlib.contextmanager
def few_young_collections(threshold: int = BATCH_YOUNG_THRESHOLD) -> Iterator[None]:
    """The cycle collector's young-generation threshold raised to ``threshold`` for the block,
    then put back as it was; left alone when it is already as high, or automatic collection is
    off (a threshold of 0). The older generations' thresholds are kept; a collection still runs
    every ``threshold`` net new containers, so what the block leaves as cyclic garbage is
    bounded."""
    old = gc.get_threshold()
    if old[0] == 0 or old[0] >= threshold:
        yield
        return
    gc.set_threshold(threshold, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def run_direct(scripts: Iterable[HandScript], profiles: Mapping[str, RuleProfile], *, rules: str = "tda",
               seed: int = 0, sinks: Sequence[Any] = (), auto_ack: bool = True,
               display: bool = True, machine: Dealing | None = None,
               log: list[Any] | None = None) -> tuple[HandRecorder, SimulatedDealer]:
    """Deal ``scripts`` straight into a :class:`Dealing` machine, in this thread (no wire).
    ``display=False`` skips the display updates (bulk replays nobody watches); ``machine``: the
    dealing machine to drive (default: a new one for ``profiles``, ``rules`` and ``display``);
    ``log``: receives every event the machine handles, in order (what a journal keeps). The
    cycle collector's young passes are fewer while it deals (:func:`few_young_collections`).

    :returns: the recorder (one :class:`HandRecord` per hand) and the dealer (its stats).
    """
    if machine is None:
        machine = Dealing(profiles, default_rules=rules, display=display)
    events: collections.deque[Any] = collections.deque()
    shoe = DirectShoe(events.append)
    dealer = SimulatedDealer(shoe, events.append, scripts, seed=seed, threaded=False, auto_ack=auto_ack)
    recorder = HandRecorder(machine)
    all_sinks = [recorder, *sinks, dealer]

    def deliver(cmds: list[Command]) -> None:
        for cmd in cmds:
            for s in all_sinks:
                s.handle(cmd)

    handle, take = machine.handle, events.popleft
    # deliver(), inline: every command to every sink, in order (the recorder, the others, the
    # dealer), each sink's method looked up once; an instruction goes to the dealer's act, what
    # its handle does with one when it runs in this thread
    record, others, act, act_on = recorder.handle, [s.handle for s in sinks], dealer.handle, dealer.act
    with few_young_collections():
        deliver(machine.start())
        for _ in range(MAX_EVENTS + 1):
            if not events or dealer.stalled:
                return recorder, dealer
            ev = take()
            if log is not None:
                log.append(ev)
            for cmd in handle(ev):
                if cmd.__class__ is Instruction:
                    # the recorder's handle for an instruction inside a hand, written out
                    current = recorder.current
                    if current is not None and cmd.signal is not _IDLE:
                        current.instructions.append(cmd)
                    else:
                        record(cmd)
                    for other in others:
                        other(cmd)
                    act_on(cmd)
                else:
                    record(cmd)
                    for other in others:
                        other(cmd)
                    act(cmd)
    raise RuntimeError("direct replay does not end")


def run_full(scripts: Iterable[HandScript], profiles: Mapping[str, RuleProfile], *, rules: str = "tda",
             seed: int = 0, timeout: float = 120.0, sinks: Sequence[Any] = (),
             pace: float = 0.0, auto_ack: bool = True,
             faults: str | None = None, journal: Any = None,
             machine: Dealing | None = None) -> tuple[HandRecorder, SimulatedDealer]:
    """Deal ``scripts`` through the virtual shoe on a pty, ``ShoeLink`` and the controller thread.
    ``faults``: the virtual shoe's fault spec (``hil.virtual_shoe.Faults.parse``); ``journal``:
    what the controller appends every event to before its ack (default: nothing kept);
    ``machine``: the dealing machine to drive (default: a new one for ``profiles`` and ``rules``).

    :raises TimeoutError: when the hands are not done within ``timeout`` seconds (the dealer's
        ``stalled`` text says why, if it knows).
    """
    # imported here: the whole table (serial link, journal, floor client) is what the direct
    # replay, the path of ``shoe-ctl replay --direct``, leaves out, its imports included
    from shoe_ctl.config import TableConfig
    from shoe_ctl.service import shoes
    from shoe_ctl.table import Table

    if machine is None:
        machine = Dealing(profiles, default_rules=rules)
    recorder = HandRecorder(machine)

    built: list[SimulatedDealer] = []

    def dealer(device: Any, post: Any) -> SimulatedDealer:
        built.append(SimulatedDealer(device, post, scripts, seed=seed, pace=pace, auto_ack=auto_ack))
        return built[-1]

    table = Table.from_config(TableConfig(), profiles=profiles, rules=rules, shoe_url=shoes.SIM, seed=seed,
                              faults=faults, journal=journal, machine=machine, dealer_io=False,
                              sinks=[recorder, *sinks], dealer=dealer, wait_connected=10.0)
    with table:
        sim = built[0]
        ok = sim.done.wait(timeout)
        table.controller.wait_idle(5)
    if not ok:
        raise TimeoutError(f"hands not done in {timeout} s: {sim.stalled or machine.instruction().text}")
    return recorder, sim
