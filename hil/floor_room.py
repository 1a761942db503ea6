"""A simulated room for the floor page, without tables or a broker: messages as tables publish them,
handed to a :class:`~shoe_ctl.floor.consumer.FloorConsumer` (``FloorConsumer.receive``), for the
page's screenshots (``scripts/floor_screenshots.py``) and its benchmark at 1,700 tables
(``bench/bench_floor_page.py``). Every table deals, bets, shows down or waits; a few are stopped, one
is tilted, some are offline or silent, some have alerts for the floor and routine notices.
``docs/floor.md``, "The room map".
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.floor.room import Pit
from shoe_ctl.machine.layout import leaves, street_of

__all__ = ["Room", "room_pits"]

_IN_HAND = [s for s in leaves() if s.startswith("hand_")]
_DEAL = [s for s in _IN_HAND if s.endswith("_deal")]
_BET = [s for s in _IN_HAND if s.endswith("_betting")]
_OTHER = [s for s in _IN_HAND if not s.endswith(("_deal", "_betting"))]


def room_pits(count: int, per_pit: int = 20, columns: int = 10) -> tuple[Pit, ...]:
    """``count`` tables ``table-1`` ... in pits of ``per_pit`` (two banks of ``columns`` facing
    each other across the pit, as a stud pit is laid out), the last pit with an empty place or more."""
    names = [f"table-{i}" for i in range(1, count + 1)]
    pits = []
    for p, start in enumerate(range(0, count, per_pit), 1):
        chunk: list[str | None] = list(names[start:start + per_pit])
        chunk += [None] * (per_pit - len(chunk))
        rows = tuple(tuple(chunk[r:r + columns]) for r in range(0, per_pit, columns))
        pits.append(Pit(f"Pit {p}", rows))
    return tuple(pits)


class Room:
    """``count`` simulated tables fed to ``consumer`` (seeded by ``seed``): :meth:`fill` once, then
    :meth:`burst` changes every table's state at once."""

    def __init__(self, consumer: FloorConsumer, count: int, seed: int = 7) -> None:
        self.consumer, self.count = consumer, count
        self.rnd = random.Random(seed)
        self.names = [f"table-{i}" for i in range(1, count + 1)]
        self.seq = dict.fromkeys(self.names, 0)
        self.hand = {n: self.rnd.randrange(100, 5000) for n in self.names}
        self.state = dict.fromkeys(self.names, "idle")

    def _send(self, table: str, leaf: str, payload: dict[str, Any]) -> None:
        self.consumer.receive(f"{self.consumer.room}/tables/{table}/{leaf}", json.dumps(payload).encode())

    def _event(self, table: str, kind: str, **body: Any) -> None:
        self.seq[table] += 1
        self._send(table, "events", {"v": 1, "table": table, "session": 1, "seq": self.seq[table],
                                     "time_us": int(time.time() * 1e6) - self.rnd.randrange(0, 600) * 1_000_000,
                                     "hand": self.hand[table], "kind": kind, **body})

    def _alert(self, table: str, code: str, message: str, latched: bool = False, street: str | None = None) -> None:
        self._event(table, "Alert", code=code, message=message, latched=latched, street=street, seat=None)

    def set_state(self, table: str, state: str) -> None:
        """Publish ``table``'s state (a state of the chart) with a stub and a shoe."""
        self.state[table] = state
        street = street_of(state)
        live = self.rnd.randrange(2, 9)
        count = self.rnd.randrange(4, 40)
        self._send(table, "state", {
            "v": 1, "table": table, "session": 1, "seq": self.seq[table], "time_us": int(time.time() * 1e6),
            "state": {"hand": self.hand[table], "game": "stud", "rules": "tda", "state": state, "street": street,
                      "stub": {"count": count, "required": live + 2,
                               "forecast": "7th" if street == "6th" and count < 2 * live + 2 else None},
                      "shoe": {"status": "connected", "detail": ""}}})

    def _pick_state(self) -> str:
        r = self.rnd.random()
        if r < 0.45:
            return self.rnd.choice(_DEAL)
        if r < 0.78:
            return self.rnd.choice(_BET)
        if r < 0.86:
            return self.rnd.choice(_OTHER)
        return "idle"

    def fill(self) -> dict[str, list[str]]:
        """Every table born and in a state; then the special ones: STOPs, a tilt, floor alerts,
        routine notices, offline and silent tables. Returns the tables of each special kind."""
        now_us = int(time.time() * 1e6)
        for name in self.names:
            self._send(name, "status", {"v": 1, "table": name, "online": True, "session": 1, "first": 1, "last": 0,
                                        "time_us": now_us, "keepalive": 15})
            self.set_state(name, self._pick_state())
        picks = self.rnd.sample(self.names, min(len(self.names), max(12, self.count // 25)))
        kinds: dict[str, list[str]] = {"stop": [], "tilt": [], "warning": [], "routine": [], "offline": [], "silent": []}
        stops = max(2, len(picks) // 6)
        for i, name in enumerate(picks):
            if i < stops:
                code = ("card-not-expected", "duplicate-card", "dispense-gap")[i % 3]
                self._alert(name, code, f"read {self.seq[name] + 1}: STOP and call the floor ({code})", latched=True,
                            street=street_of(self.state[name]))
                kinds["stop"].append(name)
            elif i == stops:
                self.set_state(name, "idle")  # a tilted table starts no hand
                self._alert(name, "software-mismatch", "software mismatch: the installed code differs from the "
                            "signed release. TILT: no hand starts", latched=True)
                kinds["tilt"].append(name)
            elif i < stops + 1 + len(picks) // 4:
                code = ("misdeal", "house-16.2", "RP-10-C", "role-refused")[i % 4]
                self._alert(name, code, f"{code}: a supervisor decides", street=street_of(self.state[name]))
                kinds["warning"].append(name)
            elif i < stops + 1 + len(picks) // 2:
                self._alert(name, "RP-10-H-C", "7th street: one community card, dealt face up", street="7th")
                kinds["routine"].append(name)
            elif i < stops + 1 + len(picks) // 2 + max(1, len(picks) // 8):
                self._send(name, "status", {"v": 1, "table": name, "online": False, "session": 1})
                kinds["offline"].append(name)
            else:
                kinds["silent"].append(name)
        for name in kinds["stop"]:
            self._recall(name)
        with self.consumer.lock:
            for name in kinds["silent"]:
                self.consumer.tables[name].last_seen = time.time() - 120
        self.consumer.check_silent(time.time())
        return kinds

    def _recall(self, table: str) -> None:
        """The table's last two hands as a table publishes them: every downcard written ``??``."""
        deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
        hands = []
        for k, hand in enumerate((self.hand[table] - 1, self.hand[table])):
            cards = self.rnd.sample(deck, 12)
            entries: list[dict[str, Any]] = []
            for i, street in enumerate(("3rd", "3rd", "3rd", "4th")):
                for seat in (1, 2, 3):
                    role = "down" if i < 2 else "up"
                    entries.append({"t": f"21:{10 + k:02d}:{i * 6 + seat:02d}", "kind": "card", "street": street,
                                    "seat": seat, "role": role, "card": "??" if role == "down" else cards[i * 3 + seat - 1]})
            if k == 1:
                entries.append({"t": "21:11:30", "kind": "alert", "code": "card-not-expected", "latched": True,
                                "message": "read 40: STOP and call the floor"})
            hands.append({"hand": hand, "started": f"21:{10 + k:02d}:00", "finished": k == 0, "entries": entries})
        self._send(table, "recall", {"v": 1, "table": table, "time_us": int(time.time() * 1e6), "hands": hands})

    def burst(self) -> int:
        """Every online table moves on (a new state published): the page gets all of them at once.
        Returns the number of tables changed."""
        for name in self.names:
            self.set_state(name, self._pick_state())
        return len(self.names)
