"""Finished hands from the journal, written as PHH (``shoe-ctl export``): the journal's events are
replayed into a fresh machine, so each card is placed where the controller placed it, and the
machine's decisions (bring-in, first to act, procedures, irregular hands) go into the file as
PHH actions and user fields. What each field means: docs/journal.md, *Export to PHH*.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoe_ctl import events
from shoe_ctl.config import load_profile
from shoe_ctl.events import Alert, DealerAction, DealerInput, StubDeck
from shoe_ctl.machine import Dealing, layout
from shoe_ctl.rules.cards import card_text
from shoe_ctl.rules.hand import HandState
from shoe_ctl.rules.stub import StreetPlan
from shoe_ctl.service.codec import CodecError
from shoe_ctl.service.journal import Journal

VARIANTS = {"stud": "F7S", "stud8": "F7S/8", "razz": "FR"}

STREET_ORDER = {"3rd": 0, "4th": 1, "5th": 2, "6th": 3, "7th": 4}

PLACEHOLDER = {"antes": 1, "bring_in": 1, "small_bet": 2, "big_bet": 4, "stacks": 1_000_000}
"""Amounts written when the new-hand input carried none (``_amounts = "placeholder"``); an unknown
stack is written ``inf`` unless the player went all-in (the stack placeholder is then written)."""

MachineFactory = Callable[[str], Any]
"""Builds a fresh dealing machine for a rule profile name (``"tda"``, ``"house"``)."""


@dataclass
class ExportedHand:
    """One hand rebuilt from the journal, ready to write (:meth:`phh`)."""

    number: int
    table: str
    rules: str
    game: str
    seats: list[int]
    first_seq: int
    started: float
    args: dict[str, Any]
    actions: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    chain_head: str = ""
    burns: list[str] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    last_seq: int = 0
    finished: bool = False
    cards: dict[int, list[str]] = field(default_factory=dict)
    ante_all_in: list[int] = field(default_factory=list)
    opened: set[str] = field(default_factory=set)
    stacks: list[int] = field(default_factory=list)
    committed: list[int] = field(default_factory=list)
    all_in_reported: set[int] = field(default_factory=set)
    money_street: str = ""
    stubs: dict[str, int] = field(default_factory=dict)
    killed: list[str] = field(default_factory=list)
    out_pending: list[int] = field(default_factory=list)
    software: dict[str, Any] = field(default_factory=dict)
    decks: list[str] = field(default_factory=list)
    _pending: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    _lines: dict[tuple[str, int], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.stacks = [s - a for s, a in zip(self.starting_stacks(), self.antes(), strict=True)]
        self.committed = [0] * len(self.seats)

    def known_amounts(self) -> bool:
        """True when the new-hand input carried every amount (else placeholders are written)."""
        return all(k in self.args for k in ("antes", "bring_in", "small_bet", "big_bet", "stacks"))

    def _per_player(self, key: str, default: int) -> list[int]:
        n = len(self.seats)
        value = self.args.get(key)
        if isinstance(value, list) and len(value) == n and all(isinstance(v, int) for v in value):
            return [int(v) for v in value]
        if isinstance(value, int) and not isinstance(value, bool):
            return [value] * n
        return [default] * n

    def antes(self) -> list[int]:
        """Per player: the ante from the new-hand input, else the placeholder 1."""
        return self._per_player("antes", PLACEHOLDER["antes"])

    def bring_in(self) -> int:
        """The bring-in amount from the new-hand input, else the placeholder."""
        value = self.args.get("bring_in")
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else PLACEHOLDER["bring_in"]

    def stacks_sent(self) -> bool:
        """True when the new-hand input carried the stacks (one for all, or one per player)."""
        value = self.args.get("stacks")
        if isinstance(value, int) and not isinstance(value, bool):
            return True
        return isinstance(value, list) and len(value) == len(self.seats) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value)

    def written_stacks(self) -> list[int | float]:
        """``starting_stacks`` as written: :meth:`starting_stacks`, with ``math.inf`` (``inf``,
        phh-std's unknown stack) for each player whose stack the table did not send and who was
        not reported all-in."""
        stacks: list[int | float] = list(self.starting_stacks())
        if not self.stacks_sent():
            finite = set(self.ante_all_in) | self.all_in_reported
            stacks = [s if i in finite else math.inf for i, s in enumerate(stacks)]
        return stacks

    def starting_stacks(self) -> list[int]:
        """Per player: the stack before the ante from the new-hand input (else the placeholder);
        a player the dealer reported all-in for the ante has exactly the ante (at most)."""
        stacks = self._per_player("stacks", PLACEHOLDER["stacks"])
        antes = self.antes()
        for i in self.ante_all_in:
            stacks[i] = min(stacks[i], antes[i])
        return stacks

    def _money(self, street: str) -> None:
        if street != self.money_street:
            self.money_street = street
            self.committed = [0] * len(self.seats)

    def _pay(self, i: int, amount: int) -> None:
        pay = max(min(amount, self.stacks[i]), 0)
        self.committed[i] += pay
        self.stacks[i] -= pay

    def open_street(self, street: str, first: int, bring_in: int | None, lead: tuple[str, int] | None) -> None:
        """Write the opening of ``street``'s betting as the machine signalled it: on 3rd the
        bring-in's post (``pN pb``) when the bring-in player acts first, else (and on later
        streets) ``pN cc`` for the first to act — unless ``lead`` (the dealer's first report,
        ``("fold"|"all-in", player)``) is that player's own action, which then opens it."""
        self.flush()
        self._money(street)
        self.opened.add(street)
        if street == "3rd" and bring_in is not None and bring_in == first:
            self.actions.append(f"p{first + 1} pb")
            self._pay(first, self.bring_in())
            return
        if lead is not None and lead[1] == first:
            return
        self.actions.append(f"p{first + 1} cc")
        self._pay(first, max(self.committed) - self.committed[first])

    def all_in(self, street: str, i: int) -> None:
        """Write an all-in the dealer reported: the player puts in the rest of the stack
        (``pN cbr <street total>``, or ``pN cc`` when that is no more than a call)."""
        self.flush()
        self._money(street)
        self.all_in_reported.add(i)
        total = self.committed[i] + self.stacks[i]
        if total > max(self.committed):
            self.actions.append(f"p{i + 1} cbr {total}")
        else:
            self.actions.append(f"p{i + 1} cc")
        self._pay(i, self.stacks[i])

    def flush(self) -> None:
        """Write the buffered deal lines (one per player and street) into ``actions``."""
        for (street, player), cards in self._pending.items():
            if (street, player) in self._lines:
                continue  # a second card of the street for the player (a replaced card): one line
            self._lines[(street, player)] = len(self.actions)
            self.actions.append(f"d dh p{player} {''.join(cards)}")
            self.cards.setdefault(player, []).extend(cards)
        self._pending.clear()

    def unfold(self, i: int) -> None:
        """Take back the last fold line of player index ``i`` (the fold was undone)."""
        line = f"p{i + 1} f"
        for k in range(len(self.actions) - 1, -1, -1):
            if self.actions[k] == line:
                del self.actions[k]
                for key, at in self._lines.items():
                    if at > k:
                        self._lines[key] = at - 1
                return

    def write_out_pending(self) -> None:
        """The fold lines of players ruled out of the hand while a street was dealt."""
        if self.out_pending:
            self.flush()
            self.actions.extend(f"p{i + 1} f" for i in self.out_pending)
            self.out_pending = []

    def settle(self, hand: HandState) -> None:
        """At the hand's end: write every deal line with the cards the hand record finally holds
        on that street (rulings move cards after they were read: an exposed hole card becomes the
        door card, a replaced 7th card, cards moved back to their normal positions, a premature
        card that stands), one line per player and street, in deal positions (two downcards, the
        door card, the 4th-6th upcards, the 7th card: a seat's downcards first two, then its
        upcards, then the rest of its downcards); a player who ends with a card of a street that
        no line gave gets a line after that street's last; a line left with no card goes.
        ``hand``: the machine's :class:`~shoe_ctl.rules.hand.HandState`."""
        self.write_out_pending()
        self.extra = [f"p{i + 1} {''.join(card_text(c) for c in seat.extra)}"
                      for i, seat in enumerate(hand.seats) if seat.extra]
        # read before the count as a card none was expected for, then given to the seat (or, placed
        # by the dealer, made the community card: docs/irregularities.md, *Placing a street's cards*)
        mine = {card_text(c) for seat in hand.seats for c in seat.extra}
        if hand.community_street is not None:
            mine.add(card_text(hand.community))
            self.actions = [f"d db {card_text(hand.community)}" if a.startswith("d db ") else a for a in self.actions]
        self.set_aside = [x for x in self.set_aside if x.split(" ", 1)[1] not in mine]
        self.burns = [f"{street} {card_text(c)}" for street in STREET_ORDER for c in hand.burns.get(street, ())]
        final: dict[tuple[str, int], list[str]] = {}
        for i, seat in enumerate(hand.seats):
            cards = [card_text(c) for c in [*seat.down[:2], *seat.up, *seat.down[2:]]]
            for street, part in (("3rd", cards[:3]), ("4th", cards[3:4]), ("5th", cards[4:5]),
                                 ("6th", cards[5:6]), ("7th", cards[6:7])):
                if part:
                    final[(street, i + 1)] = part
        lines: list[str | None] = list(self.actions)
        after: dict[int, list[str]] = {}
        last_of: dict[str, int] = {}
        for (street, player), k in self._lines.items():
            last_of[street] = max(last_of.get(street, -1), k)
            got = final.get((street, player))
            lines[k] = f"d dh p{player} {''.join(got)}" if got else None
        for (street, player), got in final.items():
            if (street, player) not in self._lines and street in last_of:
                after.setdefault(last_of[street], []).append(f"d dh p{player} {''.join(got)}")
        by_player: dict[int, list[str]] = {}
        for (_street, player), got in sorted(final.items(), key=lambda kv: STREET_ORDER[kv[0][0]]):
            by_player.setdefault(player, []).extend(got)
        out: list[str] = []
        for k, line in enumerate(lines):
            words = line.split() if line is not None else []
            if len(words) == 3 and words[1] == "sm" and words[0][1:].isdigit():
                line = f"{words[0]} sm {''.join(by_player.get(int(words[0][1:]), []))}"  # a shown hand
            if line is not None:
                out.append(line)
            out.extend(sorted(after.get(k, ()), key=lambda t: int(t.split()[2][1:])))
        self.actions = out
        self.cards = by_player
        self._lines = {}

    def phh(self) -> str:
        """The hand as PHH (TOML) text, with ``#`` comments saying what the actions and any
        placeholder amounts mean."""
        n = len(self.seats)
        a = self.args
        known = self.known_amounts()
        s = self.summary
        lines = [
            "# Exported from the journal by shoe-ctl. Cards are where the machine placed each read.",
            "# Betting: the dealer reports no amounts. 'pN pb' (3rd) or 'pN cc' at a street's start is",
            "# the player the machine signalled to act first (the bring-in's post, or the opening",
            "# action, amount unknown); 'pN cbr X' / a later 'pN cc' is an all-in the dealer reported",
            "# (the whole stack); 'pN f' a fold. Other bets, calls and checks are not known.",
        ]
        if not known:
            lines += [
                "# Amounts: the table sent none with the new hand, so antes, bring-in and bets are",
                "# placeholders (_amounts); an unknown stack is inf; a player all-in for the ante has a",
                "# stack equal to the ante, one all-in later the placeholder stack 1000000.",
            ]
        lines += [
            f"variant = {_toml(VARIANTS.get(self.game, self.game))}",
            f"antes = {_toml(self.antes())}",
            f"bring_in = {self.bring_in()}",
            f"small_bet = {int(a.get('small_bet', PLACEHOLDER['small_bet']))}",
            f"big_bet = {int(a.get('big_bet', PLACEHOLDER['big_bet']))}",
            f"starting_stacks = {_toml(self.written_stacks())}",
            "actions = [",
            *[f"  {_toml(x)}," for x in self.actions],
            "]",
            f"players = {_toml([f'P{i + 1}' for i in range(n)])}",
            f"seats = {_toml(self.seats)}",
            f"hand = {self.number}",
            f"table = {_toml(self.table)}",
            f"_rules = {_toml(self.rules)}",
            f"_started_utc = {_toml(_utc(self.started))}",
            f"_journal = {_toml([self.first_seq, self.last_seq])}",
        ]
        if self.chain_head:
            lines.append(f"_chain_head = {_toml(self.chain_head)}")
        if self.software:
            lines.append(f"_software = {_toml(json.dumps(self.software, sort_keys=True))}")
        if not known:
            lines.append('_amounts = "placeholder"')
        if s.get("bring_in") is not None:
            lines.append(f"_bring_in = {int(s['bring_in'])}")
        first = s.get("first_to_act") or {}
        if first:
            lines.append(f"_first_to_act = {_toml([f'{k} {v}' for k, v in first.items() if v is not None])}")
        procs = s.get("procedures") or {}
        if procs:
            lines.append(f"_procedures = {_toml([f'{k} {v}' for k, v in procs.items()])}")
        if s.get("community_card"):
            lines.append(f"_community_card = {_toml(s['community_card'])}")
        if s.get("seventh"):
            lines.append(f"_seventh = {_toml(json.dumps(s['seventh'], sort_keys=True))}")
        if self.killed:
            lines.append(f"_killed = {_toml(self.killed)}")
        if self.stubs:
            lines.append(f"_stubs = {_toml([f'{k} {v}' for k, v in self.stubs.items()])}")
        if self.decks:
            lines.append(f"_decks = {_toml(self.decks)}")
        for name, values in (("_burns", self.burns), ("_set_aside", self.set_aside), ("_extra", self.extra),
                             ("_inputs", self.inputs), ("_alerts", self.alerts)):
            if values:
                lines.append(f"{name} = {_toml(values)}")
        return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    """A TOML value: strings as basic strings (JSON escapes are valid TOML), lists inline,
    ``math.inf`` as ``inf``."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value == math.inf:
        return "inf"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _utc(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def replay_hands(journal: Journal, make_machine: MachineFactory, *, table: str | None = None,
                 undecodable: list[str] | None = None) -> Iterator[ExportedHand]:
    """Replay every event in the journal into one fresh machine and yield each hand it dealt
    (finished or not: see ``ExportedHand.finished``), in order.

    A record whose checksum holds but whose body is no event (an altered record with its checksum
    made again, a bug that wrote one) is skipped like a damaged record: ``"record N: reason"`` is
    appended to ``undecodable`` (when given), never raised.

    :param make_machine: builds the machine for the journal's rule profile; it must offer
        ``handle(event) -> list[Command]``, ``hand_no``, ``hand`` (``seats[i].seat``, ``.folded``),
        ``reads`` (``seq``, ``card``, ``role``, ``street``, ``seat``), ``state``, ``game``,
        ``profile.name`` and ``summary()`` — :class:`shoe_ctl.machine.Dealing` does.
    """
    meta_table, meta_profile = journal.identity()
    machine = make_machine(meta_profile or "tda")
    head_of = getattr(journal, "chain_head", None)
    head = "{}:{}".format(*head_of()) if head_of is not None else ""
    tbl = table or meta_table or ""
    current: ExportedHand | None = None
    numbered = False
    for rec in journal.records():
        if rec.kind == "hand-start" and current is not None and not numbered and rec.hand is not None:
            current.number = rec.hand  # the journal's number (stable across restarts and pruning)
            numbered = True
        try:
            item = rec.item
        except CodecError as exc:
            if undecodable is not None:
                undecodable.append(f"record {rec.seq}: {exc}")
            continue
        if isinstance(item, Alert) and item.service:
            if current is not None and machine.state != "idle":  # raised in the hand: the hand's
                current.alerts.append(f"{item.code}: {item.message}")
            continue  # the machine's own alerts come again from the replay below
        if item is None or isinstance(item, Alert) or not _is_event(item):
            continue
        if isinstance(item, DealerInput) and item.gate:
            continue  # refused (or taken) by the controller's gate: the machine never saw it
        if current is not None and isinstance(item, DealerInput):
            _open_betting(current, machine, item)
        before_no = machine.hand_no
        before_state = machine.state
        last_hand = machine.hand
        before_reads = len(machine.reads)
        all_in_before = _all_in(machine)
        folded_before = _folded(machine)
        shown_before = set(machine.p.shown)
        cmds = machine.handle(item)
        if machine.hand_no != before_no:
            if current is not None:
                current.settle(last_hand)
                yield current
            hand = machine.hand
            args = dict(item.args) if isinstance(item, DealerInput) else {}
            current = ExportedHand(
                number=machine.hand_no, table=tbl, rules=machine.p.profile.name, game=machine.p.game.value,
                seats=[s.seat for s in hand.seats], first_seq=rec.seq, started=rec.time, args=args,
                ante_all_in=sorted(_all_in(machine)), chain_head=head,
            )
            all_in_before = _all_in(machine)
            numbered = False
            before_reads = 0
        if current is None:
            continue
        current.last_seq = rec.seq
        if isinstance(item, StubDeck) and item.deck not in current.decks:
            current.decks.append(item.deck)  # the enrolled deck the shoe said the stub is
        if before_state != "idle" or machine.hand_no != before_no:  # an alert raised between hands is no hand's
            for cmd in cmds:
                if isinstance(cmd, Alert):
                    current.alerts.append(f"{cmd.code}: {cmd.message}")
        players = {seat: i + 1 for i, seat in enumerate(current.seats)}
        for read in machine.reads[before_reads:]:
            text = card_text(read.card)
            if read.role in ("down", "up") and read.seat in players:
                current._pending.setdefault((read.street, players[read.seat]), []).append(text)
            elif read.role == "burn":
                current.flush()
                current.burns.append(f"{read.street} {text}")
            elif read.role == "community":
                current.flush()
                current.actions.append(f"d db {text}")
            else:
                current.set_aside.append(f"{read.street} {text}")
        plan = machine.p.plan
        if plan is not None and plan.street not in current.stubs:
            current.stubs[plan.street] = _stub_at_start(machine.hand, plan)
        folded_now = _folded(machine)
        mucked: set[int] = set(machine.p.mucked)
        for i in sorted(folded_before - folded_now) if machine.hand_no == before_no else ():
            current.unfold(i)  # an undone fold: the player is back in the hand
        for i in sorted(folded_now - folded_before):
            seat = machine.hand.seats[i]
            if (seat.killed or seat.dead) and not seat.folded and layout.street_of(machine.state) is None:
                continue  # a hand ruled dead at the showdown: it shows nothing; no action to write
            if (seat.killed or seat.dead) and not seat.folded:
                # Out of the hand by a ruling (absent player killed, dead hand): no player action;
                # ``_killed`` tells analyze, and a fold line after the street's deal lines and its
                # opening keeps the player out of the later streets.
                street = layout.street_of(machine.state) or current.money_street or "3rd"
                current.killed.append(f"{street} {i + 1}")
                if layout.sub_of(machine.state) == "betting" and street in current.opened:
                    current.flush()
                    current.actions.append(f"p{i + 1} f")
                else:
                    current.out_pending.append(i)
                continue
            current.flush()
            current.actions.append(f"p{i + 1} sm" if i in mucked else f"p{i + 1} f")
        if isinstance(item, DealerInput):
            for i in sorted(_all_in(machine) - all_in_before):
                current.all_in(layout.street_of(machine.state) or current.money_street or "3rd", i)
            for i in sorted(set(machine.p.shown) - shown_before):
                current.flush()
                current.actions.append(f"p{i + 1} sm {''.join(current.cards.get(i + 1, []))}".rstrip())
            if item.action not in (DealerAction.FOLD, DealerAction.SHOW, DealerAction.NEW_HAND):
                who = f" p{players[item.seat]}" if item.seat in players else ""
                current.flush()
                current.inputs.append(f"{len(current.actions)} {item.action.value}{who}")
            if item.action is DealerAction.HAND_COMPLETE and machine.state == "idle":
                current.finished = True
        current.summary = machine.summary()
    if current is not None:
        current.settle(machine.hand)
        yield current


def _stub_at_start(hand: HandState, plan: StreetPlan) -> int:
    """``_stubs``: the stub as ``plan``'s street starts, counting back in the cards of the street
    already out before its plan (a burn taken early, RP-5-D; a premature final downcard that
    stands, house 16.17), which ``analyze`` deals as part of the street; on 7th street the stub
    of the plan itself (the 7th-street check is made on it)."""
    if plan.street == "7th" or plan.street == "3rd":
        return int(plan.stub)
    early = len(hand.burns.get(plan.street, ()))
    early += sum(1 for k, s in enumerate(hand.seats) if s.in_hand and not hand.needs_card(k, plan.street))
    return int(plan.stub) + early


def _is_event(item: object) -> bool:
    return isinstance(item, events.CardRead | events.ShoeFault | events.ForeignCard | events.StubDeck | events.ShoeButton
                      | events.LinkChanged
                      | events.SequenceGap | events.DealerInput | events.TimerFired)


def _all_in(machine: Dealing) -> set[int]:
    hand = machine.hand
    if hand is None:
        return set()
    return {i for i, s in enumerate(hand.seats) if s.all_in}


def _open_betting(current: ExportedHand, machine: Dealing, item: DealerInput) -> None:
    """Before the first dealer input of a betting round: write who opened it (the machine's
    bring-in and first to act), once per street."""
    state = str(machine.state)
    street = layout.street_of(state)
    if street is None or layout.sub_of(state) != "betting" or street in current.opened:
        return
    first = machine.p.first_by_street.get(street)
    if first is None:
        return
    players = {s.seat: i for i, s in enumerate(machine.hand.seats)}
    lead = None
    if item.action in (DealerAction.FOLD, DealerAction.ALL_IN) and item.seat in players:
        lead = (item.action.value, players[item.seat])
    current.open_street(street, first, machine.p.bring_in_idx, lead)
    current.write_out_pending()


def _folded(machine: Dealing) -> set[int]:
    """Players out of the hand: folded, mucked, killed or dead."""
    hand = machine.hand
    if hand is None:
        return set()
    return {i for i, s in enumerate(hand.seats) if not s.in_hand}


def default_machine_factory(profile: str) -> Any:
    """A :class:`shoe_ctl.machine.Dealing` with both shipped profiles, ``profile`` the default."""
    profiles = {name: load_profile(name) for name in ("tda", "house")}
    machine = Dealing(profiles, default_rules=profile if profile in profiles else "tda")
    machine.quiet = True  # a replay: the journal's alerts were logged when they were raised
    return machine


def export_hands(
    journal: Journal,
    out_dir: Path,
    *,
    hands: Iterable[int] | None = None,
    make_machine: MachineFactory = default_machine_factory,
    undecodable: list[str] | None = None,
    software: dict[str, Any] | None = None,
    repeated: list[str] | None = None,
) -> list[Path]:
    """Write each finished hand (or only ``hands``) as ``<out_dir>/<table>-hand-<n>.phh``, mode
    0600 (a hand history holds every hole card, as the journal does). ``undecodable``: see
    :func:`replay_hands`. ``software``: the software identity written in each file as
    ``_software`` (JSON: version, manifest digest, verified, shoe serial and firmware;
    docs/compliance.md).

    A hand number met again (a journal written before hand numbers ran on across restarts) is
    never written over the first one's file: the later hand is written as
    ``<table>-hand-<n>-at-<seq>.phh`` (``seq``: the journal record its hand starts at) and
    ``"hand N at record S (also at record F): written as NAME"`` is appended to ``repeated``
    (when given).

    :returns: the files written, in hand order.
    """
    wanted = set(hands) if hands is not None else None
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    first_at: dict[int, int] = {}
    for h in replay_hands(journal, make_machine, undecodable=undecodable):
        if not h.finished or (wanted is not None and h.number not in wanted):
            continue
        if software:
            h.software = dict(software)
        name = f"{h.table or 'table'}-hand-{h.number}.phh".replace("/", "_")
        if h.number in first_at:
            name = f"{h.table or 'table'}-hand-{h.number}-at-{h.first_seq}.phh".replace("/", "_")
            if repeated is not None:
                repeated.append(f"hand {h.number} at record {h.first_seq} (also at record {first_at[h.number]}): "
                                f"written as {name}")
        else:
            first_at[h.number] = h.first_seq
        path = out_dir / name
        # mode 0600 like the journal: a hand history holds every hole card
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)  # a file that existed keeps its mode through O_CREAT
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(h.phh())
        written.append(path)
    return written
