"""Finished hands from the journal, written as PHH (the uoftcprg Poker Hand History format).

The journal holds the events; the dealing machine's decisions are re-made by replaying them into a
fresh machine (the journal's promise: same events in, same state out), so every card read is
placed exactly where the controller placed it at the table. What a PHH file records from that:

- ``variant``: ``F7S``, ``F7S/8`` or ``FR``; ``players`` ``P1``..``Pn`` in player order (clockwise
  from the dealer's left); ``seats``: the table seat numbers in the same order; ``hand``: the
  journal's hand number (its ``hand-start`` record), else the hand's place in the replay;
  ``table``.
- ``actions``: ``d dh pN <cards>`` per player and street (3rd street: down, down, door card, in one
  line; 4th-6th one upcard; 7th one downcard; ``??`` for an unreadable card), ``d db <card>`` for a
  community card, ``pN f`` for a fold the machine accepted, ``pN sm`` for a hand mucked at showdown
  and ``pN sm <cards>`` for a hand shown (all its cards in deal order). Lines come in table order; within a
  street the cards a player got are grouped, so the round-robin order of the physical deal is in
  the journal, not in the file.
- Amounts: the dealer reports no bets, so ``pb``/``cbr``/``cc`` never appear and a betting round's
  completion has no PHH action; it is listed in ``_inputs`` with all-ins and other dealer inputs
  (``"<actions index> <input> [pN]"``: the input came after that many actions). ``antes``,
  ``bring_in``, ``small_bet``, ``big_bet`` and ``starting_stacks`` come from the new-hand input's
  ``args`` when the table sent them; otherwise placeholders are written (0 antes, 1/2/4, stacks
  of 1,000,000) and ``_amounts = "placeholder"`` says so.
- The controller's decisions as user-defined fields (``phh-std`` ``user.rst``: a leading
  underscore): ``_rules``, ``_bring_in`` and ``_first_to_act`` (1-based players), ``_procedures``
  (``"<street> <procedure>"``, e.g. ``"7th C"``), ``_community_card``, ``_seventh``, ``_burns``
  (``"<street> <card>"``), ``_set_aside`` (cards read when none was expected), ``_alerts``
  (``"<code>: <message>"``), ``_journal`` (first and last journal sequence of the hand),
  ``_started_utc``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoe_ctl.events import Alert, DealerAction, DealerInput
from shoe_ctl.rules.cards import card_text
from shoe_ctl.service.journal import Journal

VARIANTS = {"stud": "F7S", "stud8": "F7S/8", "razz": "FR"}

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
    burns: list[str] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    last_seq: int = 0
    finished: bool = False
    cards: dict[int, list[str]] = field(default_factory=dict)
    _pending: dict[tuple[str, int], list[str]] = field(default_factory=dict)

    def flush(self) -> None:
        """Write the buffered deal lines (one per player and street) into ``actions``."""
        for (_street, player), cards in self._pending.items():
            self.actions.append(f"d dh p{player} {''.join(cards)}")
            self.cards.setdefault(player, []).extend(cards)
        self._pending.clear()

    def phh(self) -> str:
        """The hand as PHH (TOML) text."""
        n = len(self.seats)
        a = self.args
        known = all(k in a for k in ("antes", "bring_in", "small_bet", "big_bet", "stacks"))

        def per_player(value: Any, default: int) -> list[int]:
            if isinstance(value, list) and len(value) == n:
                return [int(v) for v in value]
            if isinstance(value, int) and not isinstance(value, bool):
                return [value] * n
            return [default] * n

        s = self.summary
        lines = [
            f"variant = {_toml(VARIANTS.get(self.game, self.game))}",
            f"antes = {_toml(per_player(a.get('antes'), 0))}",
            f"bring_in = {int(a.get('bring_in', 1))}",
            f"small_bet = {int(a.get('small_bet', 2))}",
            f"big_bet = {int(a.get('big_bet', 4))}",
            f"starting_stacks = {_toml(per_player(a.get('stacks'), 1_000_000))}",
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
        for name, values in (("_burns", self.burns), ("_set_aside", self.set_aside),
                             ("_inputs", self.inputs), ("_alerts", self.alerts)):
            if values:
                lines.append(f"{name} = {_toml(values)}")
        return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    """A TOML value: strings as basic strings (JSON escapes are valid TOML), lists inline."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _utc(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def replay_hands(journal: Journal, make_machine: MachineFactory, *, table: str | None = None) -> Iterator[ExportedHand]:
    """Replay every event in the journal into one fresh machine and yield each hand it dealt
    (finished or not: see ``ExportedHand.finished``), in order.

    :param make_machine: builds the machine for the journal's rule profile; it must offer
        ``handle(event) -> list[Command]``, ``hand_no``, ``hand`` (``seats[i].seat``, ``.folded``),
        ``reads`` (``seq``, ``card``, ``role``, ``street``, ``seat``), ``state``, ``game``,
        ``profile.name`` and ``summary()`` — :class:`shoe_ctl.machine.Dealing` does.
    """
    meta_table, meta_profile = journal.identity()
    machine = make_machine(meta_profile or "tda")
    tbl = table or meta_table or ""
    current: ExportedHand | None = None
    numbered = False
    for rec in journal.records():
        if rec.kind == "hand-start" and current is not None and not numbered and rec.hand is not None:
            current.number = rec.hand  # the journal's number (stable across restarts and pruning)
            numbered = True
        item = rec.item
        if item is None or isinstance(item, Alert) or not _is_event(item):
            continue
        before_no = machine.hand_no
        before_reads = len(machine.reads)
        folded_before = _folded(machine)
        shown_before = set(getattr(machine, "shown", ()))
        cmds = machine.handle(item)
        if machine.hand_no != before_no:
            if current is not None:
                current.flush()
                yield current
            hand = machine.hand
            args = dict(item.args) if isinstance(item, DealerInput) else {}
            current = ExportedHand(
                number=machine.hand_no, table=tbl, rules=machine.profile.name, game=machine.game.value,
                seats=[s.seat for s in hand.seats], first_seq=rec.seq, started=rec.time, args=args,
            )
            numbered = False
            before_reads = 0
        if current is None:
            continue
        current.last_seq = rec.seq
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
        if isinstance(item, DealerInput):
            folded_now = _folded(machine)
            mucked: set[int] = set(getattr(machine, "mucked", ()))
            for i in sorted(folded_now - folded_before):
                current.flush()
                current.actions.append(f"p{i + 1} sm" if i in mucked else f"p{i + 1} f")
            for i in sorted(set(getattr(machine, "shown", ())) - shown_before):
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
        current.flush()
        yield current


def _is_event(item: object) -> bool:
    from shoe_ctl import events

    return isinstance(item, events.CardRead | events.ShoeFault | events.ShoeButton | events.LinkChanged
                      | events.SequenceGap | events.DealerInput | events.TimerFired)


def _folded(machine: Any) -> set[int]:
    hand = machine.hand
    if hand is None:
        return set()
    return {i for i, s in enumerate(hand.seats) if s.folded}


def default_machine_factory(profile: str) -> Any:
    """A :class:`shoe_ctl.machine.Dealing` with both shipped profiles, ``profile`` the default."""
    from shoe_ctl.config import load_profile
    from shoe_ctl.machine import Dealing

    profiles = {name: load_profile(name) for name in ("tda", "house")}
    return Dealing(profiles, default_rules=profile if profile in profiles else "tda")


def export_hands(
    journal: Journal,
    out_dir: Path,
    *,
    hands: Iterable[int] | None = None,
    make_machine: MachineFactory = default_machine_factory,
) -> list[Path]:
    """Write each finished hand (or only ``hands``) as ``<out_dir>/<table>-hand-<n>.phh``, mode
    0600 (a hand history holds every hole card, as the journal does).

    :returns: the files written, in hand order.
    """
    wanted = set(hands) if hands is not None else None
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for h in replay_hands(journal, make_machine):
        if not h.finished or (wanted is not None and h.number not in wanted):
            continue
        name = f"{h.table or 'table'}-hand-{h.number}.phh".replace("/", "_")
        path = out_dir / name
        # mode 0600 like the journal: a hand history holds every hole card
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)  # a file that existed keeps its mode through O_CREAT
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(h.phh())
        written.append(path)
    return written
