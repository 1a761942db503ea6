"""Start-up after a crash or power cut: :func:`recover` replays the journal's events since the
last finished hand into a fresh machine (same hand, same stub, same instruction) and gives the
link its resume point; :class:`HandMarks` keeps the journal's hand marks in step with the machine.
docs/journal.md, *Recovery*, and docs/recovery.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from shoe_ctl import events
from shoe_ctl.service import codec
from shoe_ctl.service.journal import Damage, Journal

HAND_ENDERS = frozenset({events.DealerAction.HAND_COMPLETE, events.DealerAction.MISDEAL})
"""The dealer inputs that end a hand (the chart's ``hand_complete`` and ``misdeal``)."""

ENDER_LOOK_BACK = 64
"""The records before the last ``hand-end`` searched for the input that ended the hand (the mark
follows it at once, after the input's own alerts)."""

EVENT_TYPES = (
    events.CardRead,
    events.ShoeFault,
    events.ForeignCard,
    events.StubDeck,
    events.ShoeButton,
    events.LinkChanged,
    events.SequenceGap,
    events.ShoeRestarted,
    events.DealerInput,
    events.TimerFired,
)


class Machine(Protocol):
    """What :func:`recover` needs of a machine."""

    def handle(self, event: events.Event) -> list[events.Command]: ...


@dataclass
class RecoveryReport:
    """What :func:`recover` did.

    ``replayed``: events handed to the machine; ``from_seq``: the journal sequence after which the
    replay started; ``hand``: the journal's open hand (``None`` between hands); ``instruction`` and
    ``display``: the last Instruction / DisplayUpdate the replay produced (what the dealer must see
    again); ``mismatches``: journaled alerts of the machine the replay did not produce the same
    way (the machine is not deterministic, or its code changed since the journal was written; the
    service's alerts, ``Alert.service``, are not compared); ``damage``: what the
    journal found at open; ``undecodable``: records skipped because they do not decode;
    ``completed_alerts``: alerts of the last event that the stop kept out of the journal, appended
    by the recovery.
    """

    from_seq: int = 0
    replayed: int = 0
    hand: int | None = None
    instruction: events.Instruction | None = None
    display: events.DisplayUpdate | None = None
    mismatches: list[str] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    undecodable: list[str] = field(default_factory=list)
    completed_alerts: int = 0

    @property
    def clean(self) -> bool:
        """True when the replay matched the journal and the journal was undamaged."""
        return not (self.mismatches or self.damage or self.undecodable)

    def lines(self) -> list[str]:
        """The report as short lines for the log and the display (no card identities)."""
        out = [f"recovery: replayed {self.replayed} events after journal record {self.from_seq}"
               + (f", hand {self.hand} resumed" if self.hand is not None else ", no hand open")]
        if self.instruction is not None:
            out.append(f"recovery: dealer signal {self.instruction.signal.value}: {self.instruction.text}")
        out += [f"recovery: journal damage: {d}" for d in self.damage]
        out += [f"recovery: mismatch: {m}" for m in self.mismatches]
        out += [f"recovery: skipped: {u}" for u in self.undecodable]
        return out


def recover(journal: Journal, make_machine: Callable[[], Any], *,
            shown: Callable[[list[events.Command]], object] | None = None) -> tuple[Any, int | None, RecoveryReport]:
    """Replay the journal's events since the last finished hand into ``make_machine()``.

    :param journal: the open journal (its open-time ``report.damage`` is carried into the report).
    :param make_machine: builds a fresh machine with ``handle(event) -> list[Command]``; when
        the replay starts after a hand that an input ended (``hand-complete``, ``misdeal``), its
        ``undo.ended_by(action)`` is told so first: an ``undo`` is then refused in the same words
        as before the stop.
    :param shown: takes each replayed event's commands in order (the dealer display's model), so
        that the display shows after the restart what it showed before the stop: an alert
        acknowledged, or shown only as the answer to the page's input, stays hidden.
    :returns: ``(machine, last_seq, report)``: the machine in the state it had at the stop;
        ``last_seq`` for ``ShoeLink(resume_seq=...)`` (``None``: the journal has no shoe event);
        the :class:`RecoveryReport`.
    :raises JournalError: when a record's checksum fails while reading (damage found at open has
        already been repaired and is only reported).
    """
    machine = make_machine()
    if hasattr(machine, "quiet"):
        machine.quiet = True  # the replay's alerts were logged when they were raised: not again
    report = RecoveryReport(from_seq=journal.replay_start(), hand=journal.current_hand,
                            damage=list(journal.report.damage))
    ended, shown_at_end = _hand_end(journal, report.from_seq)
    undo = getattr(machine, "undo", None)
    if ended is not None and undo is not None:
        undo.ended_by(ended)
    show_again = getattr(machine, "show_again", None)
    if callable(show_again):
        for key, latched in (("stops", True), ("notices", False)):
            if shown_at_end.get(key):
                show_again(shown_at_end[key], latched=latched)
    expected: list[events.Alert] = []  # alerts the replay produced for the last event, not yet matched
    last_event_seq = 0
    for rec in journal.records(since=report.from_seq):
        if rec.kind not in codec.TYPES:
            continue
        try:
            item = rec.item
        except codec.CodecError as exc:
            report.undecodable.append(str(exc))
            continue
        if isinstance(item, EVENT_TYPES):
            for alert in expected:
                report.mismatches.append(
                    f"after record {last_event_seq} the replay raised {alert.code!r}, the journal has no such alert"
                )
            cmds = machine.handle(item)
            report.replayed += 1
            last_event_seq = rec.seq
            expected = [c for c in cmds if isinstance(c, events.Alert)]
            if shown is not None:
                shown(cmds)
            for c in cmds:
                if isinstance(c, events.Instruction):
                    report.instruction = c
                elif isinstance(c, events.DisplayUpdate):
                    report.display = c
        elif isinstance(item, events.Alert):
            if item.service:
                continue  # the service's, not the machine's: no replay raises it again
            if expected and expected[0] == item:
                expected.pop(0)
            else:
                got = expected.pop(0).code if expected else "nothing"
                report.mismatches.append(
                    f"record {rec.seq}: journaled alert {item.code!r}, the replay raised {got}"
                )
    # Alerts of the very last event may be missing from the journal: the stop came between the
    # event's append and its alerts' append. That is not a mismatch; they are journaled now, in
    # their place (nothing was appended after that event), so the hand's record is complete.
    if expected and not journal.readonly:
        journal.append_many(expected)
        report.completed_alerts = len(expected)
    if hasattr(machine, "quiet"):
        machine.quiet = False
    return machine, journal.last_shoe_seq(), report


def _hand_end(journal: Journal, end_seq: int) -> tuple[events.DealerAction | None, dict[str, list[Any]]]:
    """Of the hand whose ``hand-end`` mark is record ``end_seq``: the input that ended it (the
    last dealer input before the mark that the controller's gate let through) if one of
    :data:`HAND_ENDERS`, else ``None`` (no mark, an abandoned hand); and the alerts the dealer
    still saw after it (the mark's ``stops`` and ``notices``, :class:`HandMarks`), by key."""
    shown: dict[str, list[Any]] = {}
    if end_seq <= 0:
        return None, shown
    last = None
    for rec in journal.records(since=max(0, end_seq - ENDER_LOOK_BACK)):
        if rec.seq > end_seq:
            break
        if rec.seq == end_seq:
            try:
                body = json.loads(rec.body)
            except (ValueError, RecursionError):
                break
            if isinstance(body, dict):
                shown = {key: body[key] for key in ("stops", "notices") if isinstance(body.get(key), list)}
            break
        if rec.kind != "DealerInput":
            continue
        try:
            item = rec.item
        except codec.CodecError:
            continue
        if isinstance(item, events.DealerInput) and not item.gate:
            last = item.action
    return (last if last in HAND_ENDERS else None), shown


class HandMarks:
    """Keeps the journal's ``hand-start``/``hand-end`` records in step with the machine.

    Call :meth:`after` with the machine after every event it handled (the controller thread).
    A machine whose ``hand_no`` grew started a hand: ``begin_hand`` (ending an open one as
    abandoned); a machine back in ``idle`` with a journal hand open: ``end_hand`` with the
    machine's ``summary()``. Build it after :func:`recover` so the baseline is the replayed
    machine; ``after`` at once fixes a stop that fell between an event and its mark.

    With ``wait`` false (the service's wiring) the marks are queued for the journal's writer and
    :meth:`after` returns at once: the writer commits in order, so a mark is on disk before any
    record the controller queues after it, and the controller thread does not wait for an fsync
    at each hand boundary (``docs/journal.md``, "The writer"). With ``wait`` true (the default)
    :meth:`after` returns once each mark is written (or the journal is failing).
    """

    def __init__(self, journal: Journal, machine: object, *, replayed_hands: int | None = None,
                 wait: bool = True) -> None:
        self.journal = journal
        self.machine = machine
        self.wait = wait
        self.seen = getattr(machine, "hand_no", 0) if replayed_hands is None else replayed_hands
        if replayed_hands is None and journal.current_hand is None and getattr(machine, "state", "idle") != "idle":
            self.seen -= 1  # the machine is in a hand the journal has not marked yet

    def after_event(self, _event: object, commands: list[events.Command]) -> None:
        """The controller's after-event hook (``Controller.add_hook``): :meth:`after` with the
        machine this was built for and the event's commands."""
        self.after(self.machine, commands)

    def after(self, machine: object, commands: Sequence[events.Command] = ()) -> None:
        """Append the hand marks the machine's state calls for (none most of the time). A
        ``hand-end`` keeps what the dealer still sees of the hand's alerts after it: the STOPs
        still up (``stops``) and the information alerts of the event that ended it, ``commands``
        (``notices``: the misdeal's own, say; the display drops the hand's earlier ones)."""
        no = getattr(machine, "hand_no", 0)
        state = getattr(machine, "state", "idle")
        if no != self.seen:
            self.seen = no
            hand = getattr(machine, "hand", None)
            info: dict[str, Any] = {}
            if hand is not None:
                info["seats"] = [s.seat for s in hand.seats]
            summary = getattr(machine, "summary", None)
            if callable(summary):
                s = summary()
                info["game"], info["rules"] = s.get("game"), s.get("rules")
            self.journal.begin_hand(info, wait=self.wait)
        elif self.journal.current_hand is not None and state == "idle":
            summary = getattr(machine, "summary", None)
            info = summary() if callable(summary) else {}
            open_stops = getattr(machine, "open_stops", None)
            stops = open_stops() if callable(open_stops) else None
            if stops:  # still up at the hand's end: a recovery after it shows them again
                info = {**info, "stops": stops}
            notices = [{"code": c.code, "message": c.message, "street": c.street, "seat": c.seat,
                        "moves": list(c.moves)} for c in commands if isinstance(c, events.Alert) and not c.latched]
            if notices:
                info = {**info, "notices": notices}
            self.journal.end_hand(info, wait=self.wait)
