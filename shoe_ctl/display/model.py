"""What the dealer display shows: :class:`DisplayModel` folds the controller's commands into one
public snapshot (``GET /state``, ``GET /events``), plain data, each update passed through the
hole-card embargo filter (:mod:`shoe_ctl.embargo`) whatever the machine sends. See
docs/display.md.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from shoe_ctl.embargo import (
    MUCKED_STATUSES,
    SCALARS,
    TOKENS,
    Public,
    StateFilter,
    card_strings,
    is_plain,
    public_parts,
    public_with,
)
from shoe_ctl.events import Alert, Command, DisplayUpdate, Instruction
from shoe_ctl.input_spec import REFUSED_CODES
from shoe_ctl.machine.wording import state_words
from shoe_ctl.signals import pattern_dict

CARD_SIGNALS = frozenset({"deal", "burn", "community"})
"""Signals whose next step takes a card from the shoe (the instruction then has a ``stub_no``)."""


STATE_NAME = re.compile(r"\bin state ((?:hand_)?[a-z]+(?:_[a-z]+)*)")
"""A machine state name as older refusal texts write it (``in state hand_showdown``, e.g. in a
journal written before the machine said it in the dealer's words itself)."""


def dealer_words(text: str) -> str:
    """``text`` with every ``in state NAME`` written as ``now (WORDS)`` (the machine's
    :func:`~shoe_ctl.machine.wording.state_words`): the page never shows a state name."""
    return STATE_NAME.sub(lambda m: f"now ({state_words(m.group(1))})", text)

MAX_LISTED_ALERTS = 20
"""Alerts listed in a snapshot at most (latched ones first); the rest are counted in
``alerts_more``. Repeats are merged first (:func:`merge_alerts`). docs/security.md, "Floods and
connections": this bounds what one display update costs, however many alerts the machine keeps."""

MAX_REPLY_ALERTS = 16
"""Distinct alerts named in one ``reply`` at most."""

EMPTY_STATE: dict[str, Any] = {
    "hand": None, "game": "", "rules": "", "state": "", "street": None, "seats": [],
    "community": None, "stub": None, "instruction": None, "alerts": [], "shoe": None,
}


_FRESH = ("instruction", "alerts", "reply")
"""The snapshot's parts that are not the shown state's (already filtered when folded in)."""

_ABSENT = object()


def _numbers(ins: object, state: Mapping[str, Any]) -> bool:
    """True when an update of ``state`` with instruction ``ins`` gives the shown instruction its
    ``stub_no`` (a card signal, the stub's ``drawn`` a number): see :class:`DisplayModel`."""
    stub = state.get("stub")
    return (isinstance(ins, Mapping) and ins.get("signal") in CARD_SIGNALS
            and isinstance(stub, Mapping) and isinstance(stub.get("drawn"), int))


def _alert_key(a: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return a.get("code"), a.get("message"), a.get("seat")


def merge_alerts(alerts: Iterable[Any]) -> tuple[list[dict[str, Any]], dict[Any, list[Any]]]:
    """Merge repeated alerts (same ``code``, ``message`` and ``seat``) into the first of them.

    :returns: the merged list, in order of last appearance (a repeat is news), each alert a copy
        of the first whose ``count`` says how many it stands for (1 when never repeated), and
        ``{first id: [every merged id]}`` for the alerts that stand for more than one
        (acknowledging the first hides them all).
    """
    out: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    ids: dict[Any, list[Any]] = {}
    for a in alerts:
        if not isinstance(a, Mapping):
            continue
        key = _alert_key(a)
        first = out.get(key)
        if first is None:
            out[key] = {**a, "count": int(a.get("count", 1) or 1)}
            continue
        first["count"] += int(a.get("count", 1) or 1)
        first["latched"] = bool(first.get("latched") or a.get("latched"))
        ids.setdefault(first.get("id"), [first.get("id")]).append(a.get("id"))
        del out[key]
        out[key] = first  # to the end: ordered by last appearance
    return list(out.values()), ids


def list_alerts(alerts: list[dict[str, Any]], cap: int = MAX_LISTED_ALERTS) -> tuple[list[dict[str, Any]], int]:
    """At most ``cap`` of ``alerts``, in their order: every latched one first (they stop the
    deal), then the newest others. :returns: ``(listed, how many were left out)``."""
    if len(alerts) <= cap:
        return alerts, 0
    latched = [i for i, a in enumerate(alerts) if a.get("latched")]
    others = [i for i, a in enumerate(alerts) if not a.get("latched")]
    keep = set(latched[-cap:])
    keep.update(others[len(others) - (cap - len(keep)):] if cap > len(keep) else [])
    return [a for i, a in enumerate(alerts) if i in keep], len(alerts) - len(keep)


class DisplayModel:
    """The display's snapshot, built from the controller's commands.

    - ``DisplayUpdate``: its state (through :func:`~shoe_ctl.embargo.public_state`) replaces the table. Within one
      hand (same ``"hand"`` value) a folded, killed or dead seat keeps the upcards it showed,
      even if an update lists fewer (the dealer needs them for the high hand and the stub).
    - ``Instruction``: the next instruction, with its LED pattern (``instruction["led"]``).
      An update's own ``"instruction"`` also counts, the newer of the two wins. For a deal, burn
      or community card, the update that carries the instruction gives it ``stub_no``: the number
      of that card within the current stub (the stub's ``drawn`` + 1; it restarts at 1 with a
      scrambled new stub), which the page shows instead of the hand's ``card_no``.
    - The answer to a dealer input: the machine answers an input carrying ``args["ref"]`` with an
      ``Instruction`` of the same ``ref``, after the alerts the input caused. ``reply`` in the
      snapshot is ``{"ref", "refused", "alerts": [{"code", "message"}]}`` for the latest such
      answer, of the alerts since the event's start (the ``DisplayUpdate`` that ends the event
      before it: an input without a ref, the dealer port's, is answered by its band alone and
      its alerts are no later answer's): ``refused`` when one of those alerts is a refusal (:data:`REFUSED_CODES`: the input
      came at the wrong time or with bad arguments and changed nothing).
    - Words: a machine state name in an alert or a reply (``refused in state hand_showdown``) is
      written in the dealer's words (:func:`dealer_words`: ``refused now (at the showdown)``). A
      refusal that answers an input carrying a ``ref`` (the page's) is shown as that answer
      only, not as an alert band as well.
    - End of a hand: when the state goes from a hand to ``idle``, the information (not latched)
      alerts shown until then are dropped; latched ones stay until acknowledged.
    - ``Alert``: shown until acknowledged here (with its ``moves``; a repeat of one still shown
      raises its ``count``; at most :attr:`MAX_LOCAL_INFO` information ones). The display numbers these alerts itself (from
      :attr:`LOCAL_ID_BASE`). When the machine lists alerts in its state (with its own ids),
      those are shown too, less those acknowledged here, and an ``Alert`` command matching one
      of them (same code, message and seat) is shown once, under the machine's id.
    - Repeats: alerts with the same code, message and seat are shown once, with ``count`` (and
      acknowledging it hides them all); at most :data:`MAX_LISTED_ALERTS` are listed, the number
      left out is the snapshot's ``alerts_more``.

    Every ``apply`` that changes what is shown bumps :attr:`version`.
    """

    LOCAL_ID_BASE = 1_000_000
    """Ids the display gives alerts the machine did not number (far from the machine's own)."""
    MAX_LOCAL_INFO = 50
    """At most this many information alerts of its own numbering are kept (the oldest dropped); a
    repeat of one still shown is counted in it (``count``), not added."""

    def __init__(self, table_seats: int = 8) -> None:
        self.table_seats = table_seats
        self.version = 0
        self._state: dict[str, Any] = copy.deepcopy(EMPTY_STATE)
        self._filter = StateFilter()  # the updates' embargo filter, unchanged seats not filtered again
        self._public: Public | None = None  # the public cards of _state, as the filter read them
        self._state_name = ""  # the "state" of the last update folded in (shown or replaced)
        self._instruction: dict[str, Any] | None = None
        self._machine_alerts: list[dict[str, Any]] | None = None
        self._local_alerts: list[dict[str, Any]] = []
        self._acked: set[int] = set()
        self._next_local = self.LOCAL_ID_BASE
        self._kept_up: dict[int, list[str]] = {}
        self._hand: object = None
        self._since_instruction: list[Alert] = []
        self._reply: dict[str, Any] | None = None
        self._in_reply: set[tuple[Any, ...]] = set()
        self._stale: set[Any] = set()
        self._merged_ids: dict[Any, list[Any]] = {}
        self._machine_more = 0
        self._local_more = 0
        self.skimmed = 0
        """Replaced updates folded in by :meth:`_skim` (upcards and statuses only)."""

    # ------------------------------------------------------------------ commands
    def apply_all(self, commands: Sequence[Command]) -> bool:
        """Fold ``commands`` in, in order, as :meth:`apply` one by one would; True when the
        snapshot changed. A :class:`DisplayUpdate` followed by another one in ``commands`` is
        replaced by it before anyone can see it: of it only the parts the folding reads are
        filtered (:func:`public_parts`), not the whole state, or only its seats' upcards and
        statuses are read when nothing else of it can reach the screen (:meth:`_skim`;
        docs/display.md, "Updates")."""
        updates = [i for i, c in enumerate(commands) if isinstance(c, DisplayUpdate)]
        states: dict[int, Any] = {i: commands[i].state for i in updates}  # type: ignore[union-attr]
        last = updates[-1] if updates else -1
        final = states.get(last)
        changed = False
        u = 0
        for i, command in enumerate(commands):
            if i < last and isinstance(command, DisplayUpdate):
                u += 1
                nxt = updates[u]
                between = commands[i + 1:nxt]
                told = any(isinstance(c, Instruction) for c in between)
                alerted = any(isinstance(c, Alert) for c in between)
                if not self._skim(command.state, states[nxt], final, told, alerted):
                    self._apply_update(command.state, whole=False)
                self._since_instruction = []  # the end of an event's commands (below)
                self.version += 1
                changed = True
            else:
                changed = self.apply(command) or changed
        return changed

    def _skim(self, raw: object, nxt: object, final: object, told: bool, alerted: bool) -> bool:
        """Fold in an update that a later one in the same batch replaces, reading only each seat's
        upcards and status (a folded seat's kept upcards), when nothing else of it can matter;
        True when done, False for :meth:`_apply_update`'s path. It can: when the hand changes
        here (the per-hand resets); when the table goes to or from ``idle`` (the NO HAND screen
        drops that hand's alerts); when it lists alerts (they hide local ones for good) unless
        ``nxt`` lists the same ones, none names a card and no ``Alert`` command comes between
        (``alerted``); when its instruction is not followed by an ``Instruction`` command before
        ``nxt`` (``told``: the next update may keep it) unless ``nxt`` has the same one, naming no
        card, and numbers it in its stub too; when an upcard is anything but one card token (the
        filter would change it). ``nxt``: the next update's state; ``final``: the batch's last."""
        if type(raw) is not dict or type(nxt) is not dict:
            return False
        state, hand = raw.get("state"), raw.get("hand")
        if (type(state) is not str or state == "idle" or nxt.get("state") == "idle"
                or type(hand) is not int or hand != self._hand):
            return False
        alerts = raw.get("alerts", _ABSENT)
        if alerts is not _ABSENT and (type(final) is not dict or not isinstance(final.get("alerts"), list)
                                      or (alerts != [] and (alerted or alerts != nxt.get("alerts")
                                                            or not is_plain(alerts)))):
            return False
        if "instruction" in raw and not told:
            ins = raw["instruction"]
            if ins != nxt.get("instruction") or not is_plain(ins) or (_numbers(ins, raw) and not _numbers(ins, nxt)):
                return False
        seats = raw.get("seats")
        kept: list[tuple[int, list[str], Any]] = []
        if seats is not None:
            if type(seats) is not list:
                return False
            for seat in seats:
                if type(seat) is not dict or type(seat.get("seat")) is not int:
                    return False
                up = seat.get("up")
                cards: list[str] = []
                if type(up) is list:
                    for v in up:
                        if type(v) is str:
                            if v not in TOKENS:
                                return False
                            cards.append(v)
                        elif type(v) not in SCALARS:
                            return False
                elif up is not None:
                    return False
                kept.append((seat["seat"], cards, seat.get("status")))
        for number, cards, status in kept:
            self._keep_up(number, cards, status)
        self._state_name = state
        self.skimmed += 1
        return True

    def _keep_up(self, number: int, up: list[str], status: object) -> list[str] | None:
        """A seat's upcards in an update: a folded or mucked seat (``MUCKED_STATUSES``) sent with
        fewer upcards than it showed keeps showing those (returned, a copy); otherwise ``up`` is
        remembered as what the seat shows and None is returned."""
        kept = self._kept_up.get(number, ())
        if isinstance(status, str) and status in MUCKED_STATUSES and len(up) < len(kept):
            return list(kept)
        self._kept_up[number] = up
        return None

    def apply(self, command: Command) -> bool:
        """Fold one command in; True when the snapshot changed."""
        if isinstance(command, DisplayUpdate):
            self._apply_update(command.state)
            # the machine's update ends an event's commands: alerts before it that no Instruction
            # carrying a ref followed answered no page input, and a later answer does not take them
            self._since_instruction = []
        elif isinstance(command, Instruction):
            self._instruction = self._instruction_dict(
                {"signal": str(command.signal), "text": command.text, "seat": command.seat,
                 "face": command.face, "street": command.street, "cards": list(command.cards),
                 "card_no": command.card_no, "ref": command.ref})
            if command.ref is not None:
                said = [{"code": a.code, "message": dealer_words(a.message)} for a in self._since_instruction]
                self._reply = {"ref": command.ref,
                               "refused": any(a.code in REFUSED_CODES for a in self._since_instruction),
                               "alerts": said}
                # a refusal answering the page's input is shown once, as the page's answer, not as a band too
                self._in_reply.update((a.code, dealer_words(a.message), a.seat)
                                      for a in self._since_instruction if a.code in REFUSED_CODES)
            self._since_instruction = []
        elif isinstance(command, Alert):
            self._add_local(command)
        else:
            return False
        self.version += 1
        return True

    def _add_local(self, command: Alert) -> None:
        """Show an ``Alert`` command: a repeat of one shown counts up its ``count``; the list
        stays within :data:`MAX_LISTED_ALERTS`."""
        if len(self._since_instruction) < MAX_REPLY_ALERTS and not any(
                (a.code, a.message) == (command.code, command.message) for a in self._since_instruction):
            self._since_instruction.append(command)
        elif command.code in REFUSED_CODES and not any(a.code in REFUSED_CODES for a in self._since_instruction):
            self._since_instruction[-1] = command  # the reply must still say "refused"
        message = dealer_words(command.message)
        key = (command.code, message, command.seat)
        for i, a in enumerate(self._local_alerts):
            if _alert_key(a) == key:
                a["count"] = a.get("count", 1) + 1
                a["latched"] = bool(a.get("latched") or command.latched)
                self._local_alerts.append(self._local_alerts.pop(i))  # a repeat is news
                return
        self._next_local += 1
        self._local_alerts.append({
            "id": self._next_local, "code": command.code, "message": message,
            "street": command.street, "seat": command.seat, "latched": command.latched,
            "moves": list(command.moves), "count": 1})
        self._local_alerts, dropped = list_alerts(self._local_alerts)
        self._local_more += dropped

    def _instruction_dict(self, ins: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(ins)
        out["led"] = pattern_dict(str(out.get("signal", "")))  # shared: the snapshot's filter copies it
        return out

    def _apply_update(self, raw: Mapping[str, Any], whole: bool = True) -> None:
        """Fold one state in; ``whole`` False: an update a later one replaces (only the parts
        read here are filtered and the shown state is not replaced)."""
        listing = raw.get("alerts")
        if listing == [] and type(listing) is list:  # none: nothing to merge
            self._merged_ids, self._machine_more = {}, 0
        elif isinstance(listing, list):  # merged and capped before the (costly) filter
            merged, self._merged_ids = merge_alerts(
                a for a in listing if not isinstance(a, Mapping) or a.get("id") not in self._acked)
            listed, self._machine_more = list_alerts(merged)
            raw = {**raw, "alerts": listed}
        state = self._filter.public_state(raw) if whole else public_parts(raw)
        was = self._state_name
        if state.get("state") == "idle" and was.startswith("hand"):
            # the hand is over: its information alerts, seen during the hand, leave the NO HAND
            # screen (latched ones stay until acknowledged); so do those shown only as the answer
            # to the page's input (the replies are forgotten with the hand)
            old = list(self._machine_alerts or []) + self._local_alerts
            self._stale.update(a.get("id") for a in old if not a.get("latched"))
            self._local_alerts = [a for a in self._local_alerts if a.get("latched")]
        hand = state.get("hand")
        if hand != self._hand:
            self._hand = hand
            self._kept_up = {}
            self._local_more = 0
            # what hides a past hand's alerts is kept only while an alert it hides is still held
            # (the machine's listing, the display's own alerts): never one more id per hand
            held = {a.get("id") for a in listing if isinstance(a, Mapping)} if isinstance(listing, list) else None
            local = {a.get("id") for a in self._local_alerts}
            self._acked = {a for a in self._acked if a >= self.LOCAL_ID_BASE and a in local}
            if held is not None:
                self._stale &= held
            self._in_reply.clear()
        kept: list[str] = []
        for seat in state.get("seats") or []:
            if type(seat) is not dict and not isinstance(seat, dict) or not isinstance(seat.get("seat"), int):
                continue
            kept_up = self._keep_up(seat["seat"], card_strings(seat.get("up")), seat.get("status"))
            if kept_up is not None:
                seat["up"] = kept_up
                kept += kept_up
        ins = state.get("instruction")
        if isinstance(ins, Mapping):
            current = self._instruction or {}
            same = all(ins.get(k) == current.get(k) for k in ("signal", "text", "seat", "face"))
            if not same:  # keep the Instruction command's street and cards when it is the same one
                self._instruction = self._instruction_dict(ins)
            shown = self._instruction
            if shown is not None and _numbers(shown, state):
                self._instruction = {**shown, "stub_no": state["stub"]["drawn"] + 1}
        if isinstance(state.get("alerts"), list):
            self._machine_alerts = [{**a, "message": dealer_words(str(a.get("message", "")))}
                                    for a in state["alerts"] if isinstance(a, dict)]
            self._local_alerts = [a for a in self._local_alerts
                                  if not any(self._same(a, m) for m in self._machine_alerts)]
        self._state_name = str(state.get("state") or "")
        if whole:
            self._state = state
            public = self._filter.public
            self._public = public.adding(kept) if public is not None else None

    @staticmethod
    def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        return all(a.get(k) == b.get(k) for k in ("code", "message", "seat"))

    def restarted(self) -> None:
        """The commands folded in so far were a recovery's replay of what the stopped service showed
        (:func:`shoe_ctl.service.recovery.recover`): its answer to the page's last input is
        forgotten (the new service numbers the page's inputs from 1 again; a page never saw this
        answer to an input of its own), the rest stays as it was shown."""
        self._reply = None
        self._since_instruction = []

    # ------------------------------------------------------------------ alerts
    def alerts(self) -> list[dict[str, Any]]:
        """The alerts shown now (oldest first), none acknowledged."""
        shown = list(self._machine_alerts or []) + self._local_alerts
        return [a for a in shown if a.get("id") not in self._acked and a.get("id") not in self._stale
                and (a.get("code"), a.get("message"), a.get("seat")) not in self._in_reply]

    def acknowledge(self, alert_id: int) -> dict[str, Any] | None:
        """Hide alert ``alert_id``; returns it (for the ACK_ALERT input) or None if not shown."""
        for alert in self.alerts():
            if alert.get("id") == alert_id:
                self._acked.add(alert_id)
                self._acked.update(self._merged_ids.get(alert_id, ()))
                self._local_alerts = [a for a in self._local_alerts if a.get("id") != alert_id]
                self.version += 1
                return alert
        return None

    # ------------------------------------------------------------------ snapshot
    def snapshot(self) -> dict[str, Any]:
        """The public table state as shown (schema of ``DisplayUpdate.state``) plus ``"version"``,
        ``"reply"`` and ``"table_seats"`` (seats at the table, for the *New hand* sheet), with the
        next instruction (plus ``led``, ``card_no``, ``ref``) and the unacknowledged alerts;
        filtered once more on the way out: the shown state went through the filter as it was
        folded in (:meth:`_apply_update`), so only what was added since (the instruction, the
        alerts, the reply) goes through it again, under the same public cards
        (:func:`~shoe_ctl.embargo.public_with`): those the filter read from the update, plus the
        upcards a folded seat keeps showing, as a new reading of the shown state would find them."""
        out = dict(self._state)
        out["table_seats"] = self.table_seats
        out["instruction"] = self._instruction
        out["alerts"], more = list_alerts(self.alerts())
        out["alerts_more"] = more + self._machine_more + self._local_more
        out["reply"] = self._reply
        out["version"] = self.version
        return public_with(out, _FRESH, self._public)
