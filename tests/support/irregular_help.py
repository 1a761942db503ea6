"""Runners for the irregularity HIL tests: scripted hands dealt by the simulated dealer into the
dealing machine, straight (``DirectShoe``) or through the virtual shoe on a pty and ``ShoeLink``;
the machine's record of every hand is kept at the hand's end (:class:`Ended`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rule_profiles import PROFILES

from hil.dealer import HandScript, SimulatedDealer, TablePicture
from hil.deck import Deck
from shoe_ctl.events import Alert, Instruction, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card, card_text
from shoe_ctl.rules.hand import HandState


@dataclass
class Ended:
    """One hand as the machine left it: the hand record, its alerts, its LED words."""

    hand: HandState
    misdeal: str | None
    alerts: list[Alert] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    first: dict[str, int | None] = field(default_factory=dict)
    bring_in: int | None = None
    procedures: dict[str, str] = field(default_factory=dict)
    picture: TablePicture | None = None

    def codes(self) -> list[str]:
        return [a.code for a in self.alerts]

    def seat(self, n: int) -> dict[str, Any]:
        s = next(x for x in self.hand.seats if x.seat == n)
        return {"down": [card_text(c) for c in s.down], "up": [card_text(c) for c in s.up], "status": s.status}


class Snap:
    """A sink keeping each hand's record at its end (the IDLE instruction after it)."""

    def __init__(self, machine: Dealing) -> None:
        self.machine = machine
        self.hands: list[Ended] = []
        self._alerts: list[Alert] = []
        self._signals: list[str] = []
        self._texts: list[str] = []
        self._started = False

    def handle(self, c: object) -> None:
        if isinstance(c, Alert):
            self._alerts.append(c)
        elif isinstance(c, Instruction):
            if c.signal is Signal.IDLE:
                m = self.machine
                if self._started and m.hand is not None:
                    seats = {s.seat: k for k, s in enumerate(m.hand.seats)}
                    first = {st: (None if v is None else m.hand.seats[v].seat) for st, v in m.p.first_by_street.items()}
                    bi = None if m.p.bring_in_idx is None else m.hand.seats[m.p.bring_in_idx].seat
                    del seats
                    self.hands.append(Ended(m.hand.copy(), m.p.misdeal, self._alerts, self._signals, self._texts,
                                            first, bi, dict(m.p.procedures)))
                self._alerts, self._signals, self._texts, self._started = [], [], [], False
            else:
                self._started = True
                word = c.signal.value
                if c.signal is Signal.DEAL:
                    word += f":{c.seat}:{c.face}"
                self._signals.append(word)
                self._texts.append(c.text)

    def close(self) -> None:
        return None


def run(scripts: list[HandScript], *, wire: bool = False, faults: str | None = None, seed: int = 3,
        timeout: float = 30.0, log: list[Any] | None = None,
        sinks: tuple[Any, ...] = ()) -> tuple[list[Ended], SimulatedDealer]:
    """Deal ``scripts``; each :class:`Ended` gets the dealer's physical picture of its hand.
    ``log`` (direct runs): receives every event handled, in order (what a journal keeps)."""
    machine = Dealing(PROFILES, default_rules="tda")
    snap = Snap(machine)
    from hil.replay import run_direct, run_full

    if not wire:
        _, dealer = run_direct(scripts, PROFILES, machine=machine, seed=seed, sinks=(snap, *sinks),
                               auto_ack=False, log=log)
    else:
        _, dealer = run_full(scripts, PROFILES, machine=machine, seed=seed, timeout=timeout,
                             sinks=(snap, *sinks), faults=faults, auto_ack=False)
    assert dealer.stalled is None, dealer.stalled
    for ended, picture in zip(snap.hands, dealer.history, strict=False):
        ended.picture = picture
    return snap.hands, dealer


def physical(picture: TablePicture, seat: int) -> dict[str, list[str]]:
    """What the dealer put on a seat, by face."""
    cards = picture.seats.get(seat, [])
    return {"down": [card_text(c) for f, c in cards if f == "down"], "up": [card_text(c) for f, c in cards if f == "up"]}


def assert_table_matches(e: Ended, *, unknown: bool = False) -> None:
    """The machine's record of every seat (down and up, in order), the burn pile, the set-aside
    pile, the cards out of play and the stub equal what the dealer physically has.
    ``unknown``: unreadable cards (``??``) in the record stand for any card."""
    assert e.picture is not None
    for s in e.hand.seats:
        mine = e.seat(s.seat)
        phys = physical(e.picture, s.seat)
        for face in ("down", "up"):
            got, want = mine[face], phys[face]
            if unknown:
                want = [w if g != "??" else "??" for g, w in zip(got, want, strict=False)] + want[len(got):]
            assert got == want, (s.seat, face, got, want)
    burns: dict[str, list[str]] = {}
    for st, c in e.hand.burn_pile:
        burns.setdefault(st, []).append(card_text(c))
    phys_burns = {st: [card_text(c) for c in v] for st, v in e.picture.burns.items() if v}
    if not unknown:
        assert burns == phys_burns
        assert sorted(card_text(c) for c in e.hand.set_aside) == sorted(card_text(c) for c in e.picture.aside)
        assert [card_text(c) for c in e.hand.dead_cards] == [card_text(c) for c in e.picture.out]
    assert e.hand.stub_count() == len(e.picture.stub())


def assert_matches_with_extras(e: Ended) -> None:
    """Every seat's cards, by face and in the order dealt (any card too many apart), equal the
    dealer's, the cards too many included; the stub too."""
    assert e.picture is not None
    for s in e.hand.seats:
        phys = physical(e.picture, s.seat)
        extra = {card_text(c) for c in s.extra}
        for face in ("down", "up"):
            assert [card_text(c) for c in getattr(s, face)] == [c for c in phys[face] if c not in extra], s.seat
        assert sorted(card_text(c) for c in s.down + s.up + s.extra) == sorted(phys["down"] + phys["up"]), s.seat
    assert e.hand.stub_count() == len(e.picture.stub())


def deck(prefix: list[str | None], seed: int = 11) -> list[Card]:
    """A deck whose first cards are ``prefix`` (``None``: any), the rest seeded."""
    return Deck.with_prefix([None if t is None else Card.parse(t) for t in prefix], seed=seed).cards()
