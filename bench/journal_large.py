"""A large journal, built quickly: ``hands`` hands over the last ``days`` days, as the service
writes them (records and their hash chain), in one transaction (``executemany``), not through the
dealing machine.

The records of a few random hands are made once the real way (the simulated dealer deals them
into a :class:`~shoe_ctl.machine.Dealing` machine; the events, the machine's alerts and the hand
marks encoded by the journal's codec), then repeated with fresh journal sequences, hand numbers,
shoe sequences, times and checksums. Used by ``python -m bench`` (``ready_large_journal_s``) and
``bench/bench_journal.py``; ``docs/performance.md``.
"""

from __future__ import annotations

import collections
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from shoe_ctl.service import codec
from shoe_ctl.service.journal import Journal, chain
from shoe_ctl.service.journal.records import COLS, SHOE_SEQ_TYPES, record_crc

Template = list[tuple[str, dict[str, Any] | str, bool]]
"""One hand's records: (kind, body, has a shoe sequence); a body dict is a hand mark's."""


def template_hands(count: int = 12, seed: int = 3) -> list[Template]:
    """The records of ``count`` random 8-seat stud hands dealt the real way (no wire)."""
    from hil.dealer import DirectShoe, SimulatedDealer, random_hands
    from shoe_ctl.config import load_profile
    from shoe_ctl.events import Alert
    from shoe_ctl.machine import Dealing

    profs = {"tda": load_profile("tda"), "house": load_profile("house")}
    machine = Dealing(profs, default_rules="tda", display=False)
    events: collections.deque[Any] = collections.deque()
    dealer = SimulatedDealer(DirectShoe(events.append), events.append, random_hands(seed, count=count), seed=seed,
                             threaded=False, auto_ack=True)
    hands: list[Template] = []
    cur: Template = []
    seen = 0

    def deliver(cmds: list[Any]) -> None:
        for cmd in cmds:
            if isinstance(cmd, Alert):
                cur.append(("Alert", codec.dumps(cmd), False))
            dealer.handle(cmd)

    deliver(machine.start())
    while events and not dealer.stalled:
        ev = events.popleft()
        cur.append((type(ev).__name__, codec.dumps(ev), isinstance(ev, SHOE_SEQ_TYPES)))
        deliver(machine.handle(ev))
        if machine.hand_no != seen:  # a hand started with this event
            seen = machine.hand_no
            s = machine.summary()
            cur.insert(len(cur) - 1, ("hand-start", {"game": s.get("game"), "rules": s.get("rules"),
                                                      "seats": [x.seat for x in machine.hand.seats]}, False))
        elif machine.state == "idle" and any(k == "hand-start" for k, _, _ in cur):
            cur.append(("hand-end", dict(machine.summary()), False))
            hands.append(cur)
            cur = []
    return hands


def build(path: Path, hands: int, *, table: str, profile: str, days: float = 29.0,
          templates: list[Template] | None = None) -> dict[str, float]:
    """Write a journal of ``hands`` finished hands spread evenly over the last ``days`` days.

    :returns: ``{"seconds", "records", "bytes", "bytes_per_hand"}``.
    """
    t0 = time.perf_counter()
    tpl = templates or template_hands()
    with Journal(path, table=table, profile=profile, retention_days=0):
        pass
    # each body as text around its number: no JSON work per record
    parts = []
    for hand_tpl in tpl:
        out = []
        for kind, body, has_seq in hand_tpl:
            if isinstance(body, dict):
                text = json.dumps({**body, "hand": -777}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                out.append((kind, text.split("-777"), False))
            elif has_seq:
                d = json.loads(body)
                d["seq"] = -777
                out.append((kind, json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).split("-777"),
                            True))
            else:
                out.append((kind, [body], False))
        parts.append(out)
    now_us = int(time.time() * 1e6)
    step_us = int(days * 86400e6 / max(hands, 1))
    rows = []
    links: list[tuple[int, bytes]] = []  # the hash chain, as the service writes it beside each record
    prev = chain.ZERO
    seq = 0
    shoe_seq = 0
    for h in range(1, hands + 1):
        t_us = now_us - (hands - h + 1) * step_us
        for kind, pieces, has_seq in parts[h % len(parts)]:
            seq += 1
            s: int | None = None
            if has_seq:
                shoe_seq += 1
                s = shoe_seq
                text = f"{pieces[0]}{s}{pieces[1]}"
            elif len(pieces) == 2:
                text = f"{pieces[0]}{h}{pieces[1]}"
            else:
                text = pieces[0]
            t_us += 1000
            rows.append((seq, t_us, kind, h, s, text, record_crc(seq, t_us, kind, h, s, text)))
            prev = chain.link(prev, seq, t_us, kind, h, s, text)
            links.append((seq, prev))
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")  # a bulk load: no log, no fsync; WAL again after
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("BEGIN")
        conn.executemany(f"INSERT INTO records ({COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        conn.executemany("INSERT INTO chain (seq, hash) VALUES (?, ?)", links)
        if links:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('chain_from', ?)", (str(links[0][0]),))
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('verified_seq', ?)", (str(seq),))
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
    size = path.stat().st_size
    return {"seconds": round(time.perf_counter() - t0, 2), "records": seq, "bytes": size,
            "bytes_per_hand": round(size / max(hands, 1))}
