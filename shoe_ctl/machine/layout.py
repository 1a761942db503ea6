"""The shape of the dealing state machine, as data: its states, transitions and tags, from which
both the machine (:mod:`shoe_ctl.machine.dealing`) and its diagram are built. The states, the
streets, the scramble's and the irregularities' detours: docs/state-machine.md."""

from __future__ import annotations

from typing import Any, TypeVar

from transitions.extensions.nesting import HierarchicalMachine
from transitions.extensions.states import Tags, add_state_features

STREETS: tuple[str, ...] = ("3rd", "4th", "5th", "6th", "7th")
"""The streets, in order."""

STREET_STATE: dict[str, str] = {
    "3rd": "third",
    "4th": "fourth",
    "5th": "fifth",
    "6th": "sixth",
    "7th": "seventh",
}
"""Street name -> the name of its state under ``hand``."""

STATE_STREET: dict[str, str] = {v: k for k, v in STREET_STATE.items()}

IDLE = "idle"
ATTENTION = "attention"
SHOWDOWN = "hand_showdown"
UNCONTESTED = "hand_uncontested"


def deal_state(street: str) -> str:
    """``"hand_fourth_deal"`` for ``"4th"``."""
    return f"hand_{STREET_STATE[street]}_deal"


def betting_state(street: str) -> str:
    """``"hand_fourth_betting"`` for ``"4th"``."""
    return f"hand_{STREET_STATE[street]}_betting"


def street_of(state: str) -> str | None:
    """The street a state belongs to (``"4th"`` for ``"hand_fourth_cut"``), else ``None``."""
    parts = state.split("_")
    if len(parts) >= 2 and parts[0] == "hand":
        return STATE_STREET.get(parts[1])
    return None


_SUB: dict[str, str] = {}


def sub_of(state: str) -> str:
    """The innermost name of a state (``"cut"`` for ``"hand_fourth_cut"``)."""
    sub = _SUB.get(state)
    if sub is None:
        sub = state.rsplit("_", 1)[-1]
        if len(_SUB) < 256:  # the layout has some forty states; anything else is not kept
            _SUB[state] = sub
    return sub


M = TypeVar("M", bound=HierarchicalMachine)


def tagged(machine_cls: type[M]) -> type[M]:
    """A subclass of ``machine_cls`` whose states take the chart's tags (``transitions``' ``Tags``
    state feature: ``state.tags``, ``state.is_<tag>``): every state in a hand is tagged ``hand``;
    a street's states by what is done there (``deal``, ``betting``, ``aside``, ``scramble``,
    ``cut``, ``reload``, ``reshuffle``); the ends of a hand ``over``."""
    return add_state_features(Tags)(type(machine_cls.__name__, (machine_cls,), {}))  # type: ignore[no-any-return]


def _leaf(name: str, *tags: str) -> dict[str, Any]:
    return {"name": name, "tags": ["hand", name, *tags]}


def states() -> list[Any]:
    """The nested state definition handed to ``HierarchicalMachine`` (leaves with their tags)."""
    streets: list[Any] = []
    for street in STREETS:
        children = ["deal"] if street == "3rd" else ["aside", "deal", "scramble", "cut", "reload"]
        children.append("betting")
        if street != "7th":
            children.append("reshuffle")
        streets.append({"name": STREET_STATE[street], "children": [_leaf(c) for c in children], "initial": "deal"})
    return [
        IDLE,
        {"name": "hand", "children": [*streets, _leaf("showdown", "over"), _leaf("uncontested", "over")],
         "initial": "third"},
        ATTENTION,
    ]


def _tags() -> dict[str, frozenset[str]]:
    """Every leaf state's full name by tag, from the definition :func:`states`."""
    found: dict[str, set[str]] = {}

    def walk(prefix: str, defs: list[Any]) -> None:
        for d in defs:
            if isinstance(d, str):
                continue
            if "children" in d:
                walk(f"{prefix}{d['name']}_", d["children"])
            for tag in d.get("tags", ()):
                found.setdefault(tag, set()).add(prefix + d["name"])

    walk("", states())
    return {tag: frozenset(names) for tag, names in found.items()}


TAGS: dict[str, frozenset[str]] = _tags()
"""The leaf states carrying each tag (:func:`tagged`; the chart's predicates, as sets:
``state in DEAL`` is what ``machine.get_state(state).is_deal`` says, without the lookup)."""

IN_HAND = TAGS["hand"]
DEAL = TAGS["deal"]
BETTING = TAGS["betting"]
ASIDE = TAGS["aside"]
RELOAD = TAGS["reload"]
OVER = TAGS["over"]


def transitions() -> list[dict[str, Any]]:
    """The transitions. Triggers are fired by :class:`~shoe_ctl.machine.dealing.Dealing` only at
    structure changes: a new hand, a street fully dealt, a betting round complete, a scramble, a
    cut, a hand won without showdown, the hand complete, a fault; and the irregularities:
    premature cards, their reshuffle, cards taken aside, a redeal of a card owed, a misdeal."""
    out: list[dict[str, Any]] = [
        {"trigger": "new_hand", "source": IDLE, "dest": "hand", "after": "_begin_street"},
    ]
    for k, street in enumerate(STREETS):
        nxt = STREETS[k + 1] if k + 1 < len(STREETS) else None
        deal, bet = deal_state(street), betting_state(street)
        after_dest = deal_state(nxt) if nxt else SHOWDOWN
        after_cb = "_begin_street" if nxt else "_begin_showdown"
        out.append({"trigger": "street_dealt", "source": deal, "dest": bet,
                    "conditions": "two_can_act", "after": "_begin_betting"})
        # No betting round can follow (fewer than two players can act): the dealer confirms the
        # street complete in the betting state before the next card, so a card read meanwhile is
        # held aside, booked to no seat (docs/irregularities.md, "A street with no betting").
        out.append({"trigger": "street_dealt", "source": deal, "dest": bet,
                    "unless": "two_can_act", "after": "_begin_confirm"})
        out.append({"trigger": "betting_complete", "source": bet, "dest": after_dest, "after": after_cb})
        if street != "3rd":
            base = f"hand_{STREET_STATE[street]}"
            out.append({"trigger": "scramble", "source": deal, "dest": f"{base}_scramble"})
            out.append({"trigger": "scramble_done", "source": f"{base}_scramble", "dest": f"{base}_cut"})
            out.append({"trigger": "cut_done", "source": f"{base}_cut", "dest": f"{base}_reload"})
            out.append({"trigger": "stub_reloaded", "source": f"{base}_reload", "dest": deal})
            out.append({"trigger": "set_aside", "source": deal, "dest": f"{base}_aside"})
            out.append({"trigger": "aside_done", "source": f"{base}_aside", "dest": deal, "after": "_plan_now"})
        base = f"hand_{STREET_STATE[street]}"
        out.append({"trigger": "redeal", "source": bet, "dest": deal, "after": "_replan"})
        if street != "7th":
            out.append({"trigger": "premature_done", "source": bet, "dest": f"{base}_reshuffle"})
            out.append({"trigger": "reshuffle_done", "source": f"{base}_reshuffle", "dest": bet})
    out.extend([
        {"trigger": "all_folded", "source": "hand", "dest": UNCONTESTED},
        {"trigger": "hand_complete", "source": [SHOWDOWN, UNCONTESTED], "dest": IDLE, "after": "_end_hand"},
        {"trigger": "misdeal", "source": "hand", "dest": IDLE, "after": "_end_hand"},
        {"trigger": "fault", "source": [IDLE, "hand"], "dest": ATTENTION},
    ])
    return out


def leaves() -> tuple[str, ...]:
    """Every leaf state's full name (``"idle"``, ``"hand_third_deal"``, ..., ``"attention"``)."""
    out: list[str] = []

    def walk(prefix: str, defs: list[Any]) -> None:
        for d in defs:
            if isinstance(d, str):
                out.append(prefix + d)
            elif "children" in d:
                walk(f"{prefix}{d['name']}_", d["children"])
            else:
                out.append(prefix + d["name"])

    walk("", states())
    return tuple(out)


def sources(trigger: str) -> frozenset[str]:
    """The leaf states ``trigger`` leaves from (a composite source stands for all its leaves)."""
    found: set[str] = set()
    every = leaves()
    for t in transitions():
        if t["trigger"] != trigger:
            continue
        src = t["source"]
        for s in [src] if isinstance(src, str) else src:
            found.update(leaf for leaf in every if leaf == s or leaf.startswith(s + "_"))
    return frozenset(found)
