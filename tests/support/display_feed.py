"""A small scripted command feed for display tests: a 3rd street and a 4th street of one hand,
with downcards smuggled into the states to prove the embargo."""

from __future__ import annotations

import copy
import json
import urllib.request
from typing import Any

from shoe_ctl.events import Command, DisplayUpdate, Instruction, Signal

DOWNCARDS = {1: ["Ah", "Kd"], 2: ["7c", "7s"], 3: ["Qh", "2d"], 4: ["9s", "Tc"]}
UP3 = {1: ["5h"], 2: ["2c"], 3: ["Jd"], 4: ["8s"]}
UP4 = {1: ["5h", "5d"], 2: ["2c"], 3: ["Jd", "3c"], 4: ["8s", "Ks"]}


def seat(n: int, up: list[str], *, status: str = "live", down_count: int = 2, smuggle: bool = True,
         **flags: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": n, "status": status, "up": list(up), "down_count": down_count,
                           "bring_in": flags.get("bring_in", False),
                           "first_to_act": flags.get("first_to_act", False),
                           "open_pair": flags.get("open_pair", False)}
    if smuggle:  # a faulty publisher leaking hole cards
        out["down"] = list(DOWNCARDS[n])
        out["hole_cards"] = list(DOWNCARDS[n])
    return out


def state(street: str, seats: list[dict[str, Any]], *, machine: str = "online_hand_third_betting",
          hand: int = 7, stub: int = 40, required: int = 6, forecast: str | None = None) -> dict[str, Any]:
    return {"hand": hand, "game": "stud", "rules": "tda", "state": machine, "street": street,
            "seats": seats, "community": None,
            "stub": {"count": stub, "required": required, "forecast": forecast},
            "shoe": {"status": "connected", "detail": ""}}


def feed() -> list[Command]:
    """Commands of a short hand: 3rd street dealt, betting, seat 2 folds, 4th street burn."""
    s3 = [seat(n, UP3[n], bring_in=(n == 2)) for n in range(1, 5)]
    s3_fold = copy.deepcopy(s3)
    s3_fold[1]["status"] = "folded"
    s4 = [seat(1, UP4[1], first_to_act=True, open_pair=True), seat(2, [], status="folded"),
          seat(3, UP4[3]), seat(4, UP4[4])]
    return [
        Instruction(Signal.DEAL, "Deal seat 1 down", seat=1, face="down", street="3rd"),
        DisplayUpdate(state("3rd", s3, machine="online_hand_third_deal", stub=40)),
        Instruction(Signal.BETTING, "Betting: seat 2 brings in", street="3rd"),
        DisplayUpdate(state("3rd", s3, stub=40)),
        DisplayUpdate(state("3rd", s3_fold, stub=40)),
        Instruction(Signal.BURN, "Burn one card", street="4th"),
        DisplayUpdate(state("4th", s4, machine="online_hand_fourth_burn", stub=36, required=5,
                            forecast="7th")),
    ]


def all_downcards() -> set[str]:
    return {c for cards in DOWNCARDS.values() for c in cards}


def display_state(url: str) -> dict[str, Any]:
    """The display's ``/state`` at ``url`` (its base, ending in ``/``), as JSON."""
    with urllib.request.urlopen(url + "state", timeout=5) as r:
        return dict(json.loads(r.read()))
