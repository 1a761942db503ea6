"""A journal that cannot write during dealt hands, through the real pty: every card the shoe sent
ends either in the journal or still held (unacked) by the shoe, and the dealer is told at once
(``docs/journal.md``, "The writer").

Two ways to make the journal's storage fail and recover while the simulated dealer deals:

- ``tmpfs``: the journal lives on a small tmpfs (``mount -t tmpfs -o size=...``, needs root); a
  filler file takes the free space, and is deleted again once the journal reported the failure;
- ``max_page_count``: SQLite's own size cap (``PRAGMA max_page_count``) set to the file's current
  size and lifted again: the same ``database or disk is full`` from the pager, with no mount.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from small_fs import fill, small_tmpfs

from drivers import protocol as p
from hil.dealer import SimulatedDealer, random_hands
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.config import load_table_config
from shoe_ctl.events import Alert, CardRead
from shoe_ctl.machine import Dealing
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import HandMarks
from shoe_ctl.table import Table

ROOT = Path(__file__).resolve().parents[2]


class _Sink:
    """Collects the alerts the dealer is shown."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []

    def handle(self, command: Any) -> None:
        if isinstance(command, Alert):
            self.alerts.append(command)

    def close(self) -> None:
        return None


class _PacedShoe:
    """The dealer's view of the shoe: pulls every ``pace_s`` whether or not the host acked."""

    def __init__(self, shoe: VirtualShoe, pace_s: float) -> None:
        self.shoe = shoe
        self.pace_s = pace_s

    def pull(self) -> Any:
        time.sleep(self.pace_s)
        return self.shoe.pull()

    def reload(self, cards: Any) -> None:
        self.shoe.reload(cards)


def _deal_through_failures(journal: Journal, cycles: int, fail: Any, unfail: Any) -> dict[str, Any]:
    sent: list[int] = []

    def on_event(msg: Any) -> None:
        if isinstance(msg, p.CardMsg):
            sent.append(msg.seq)

    states: list[bool] = []
    journal.add_state_listener(lambda exc: states.append(exc is not None))
    machine = Dealing(load_profiles(), default_rules="tda")
    marks = HandMarks(journal, machine)
    marks.after(machine)
    sink = _Sink()
    shoe = VirtualShoe(Deck.seeded(5), transport="pty", seed=5, record=False, on_event=on_event)
    shoe.start()

    def dealer(device: Any, post: Any) -> Any:
        return SimulatedDealer(_PacedShoe(device, 0.004), post, random_hands(5), seed=5, auto_ack=True)

    devnull = open(os.devnull, "w")  # noqa: SIM115 - closed below
    table = Table.from_config(load_table_config(ROOT / "config" / "table.toml"), profiles=load_profiles(),
                              rules="tda", shoe_url=shoe.url, journal=journal, machine=machine, device=shoe,
                              console=False, led_stream=devnull, sinks=[sink], dealer=dealer,
                              wait_connected=10.0, say=lambda _line: None)
    table.controller.add_hook(lambda ev, cmds: marks.after(machine))
    failures = 0
    cycle_notes: list[str] = []
    try:
        with table:
            for k in range(cycles):
                start = len(sent)
                end = time.monotonic() + 20
                while len(sent) < start + 25 and time.monotonic() < end:
                    time.sleep(0.01)
                capped_at = len(sent)
                fail()
                end = time.monotonic() + 20  # until the writer has met the failure
                while journal.failing is None and time.monotonic() < end:
                    time.sleep(0.01)
                failures += journal.failing is not None
                if journal.failing is None:
                    cycle_notes.append(f"cycle {k + 1}: {capped_at - start} cards before the failure was made, "
                                       f"{len(sent) - capped_at} after it, and the writer never failed; "
                                       f"alerts so far {[a.code for a in sink.alerts]}, the dealer's last "
                                       f"signals {table.dealer.stats.signals[-6:]}, stalled "
                                       f"{table.dealer.stalled!r}, machine in {machine.state!r}")
                time.sleep(0.5)  # the dealer goes on pulling meanwhile
                unfail()
                end = time.monotonic() + 10
                while journal.failing is not None and time.monotonic() < end:
                    time.sleep(0.01)
            held_while_dealing = shoe.device.unacked()
        assert journal.flush(10)
    finally:
        shoe.close()
        devnull.close()
    journaled = {r.shoe_seq for r in journal.records() if r.kind == "CardRead"}
    return {"sent": sent, "held": set(shoe.device.unacked()), "journaled": journaled, "failures": failures,
            "states": states, "alerts": sink.alerts, "held_while_dealing": held_while_dealing,
            "cycle_notes": cycle_notes}


def load_profiles() -> Any:
    from shoe_ctl.config import load_profile

    return {"tda": load_profile("tda"), "house": load_profile("house")}


def _problems(out: dict[str, Any], cycles: int) -> list[str]:
    """What a run through ``cycles`` journal failures broke of the durability rule (docs/journal.md,
    "The writer"); empty when every card the shoe sent is journaled or still held by the shoe and
    the dealer and systemd were told at once."""
    print(f"cards sent {len(out['sent'])}, journaled {len(out['journaled'])}, held at the end "
          f"{len(out['held'])}, held while dealing {len(out['held_while_dealing'])}, failures {out['failures']}")
    problems: list[str] = []
    if out["failures"] != cycles:
        problems.append(f"the journal failed {out['failures']} times, not {cycles}: the run did not test it")
        problems.extend(out["cycle_notes"])
    if len(out["sent"]) <= 50:
        problems.append(f"only {len(out['sent'])} cards sent")
    missing = [s for s in out["sent"] if s not in out["journaled"] and s not in out["held"]]
    if missing:
        problems.append(f"cards acked but never journaled: {missing}")
    codes = [a for a in out["alerts"] if a.code == "journal-write-failed"]
    if not codes or not all(a.latched for a in codes):
        problems.append("no latched journal-write-failed alert")
    if out["states"].count(True) != cycles or out["states"].count(False) != cycles:
        problems.append(f"writer states {out['states']}")
    return problems


def test_a_small_tmpfs_that_fills_and_frees_loses_no_card(tmp_path: Path) -> None:
    cycles = 3
    with small_tmpfs(tmp_path / "mnt", 16384) as mnt:
        journal = Journal(mnt / "t.journal", table="table-1", profile="tda", retention_days=0)
        filler: list[Path] = []
        try:
            out = _deal_through_failures(journal, cycles, lambda: filler.append(fill(mnt)),
                                         lambda: filler.pop().unlink())
        finally:
            journal.close()
    assert _problems(out, cycles) == []


def test_a_sqlite_size_cap_that_is_reached_and_lifted_loses_no_card(tmp_path: Path) -> None:
    cycles = 3
    journal = Journal(tmp_path / "t.journal", table="table-1", profile="tda", retention_days=0)

    def cap() -> None:
        with journal.store.lock:
            db = journal.store.db()
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {pages}")

    def lift() -> None:
        with journal.store.lock:
            journal.store.db().execute("PRAGMA max_page_count = 1073741823")

    try:
        out = _deal_through_failures(journal, cycles, cap, lift)
    finally:
        journal.close()
    assert _problems(out, cycles) == []


def test_a_lock_held_by_another_program_never_blocks_the_controller(tmp_path: Path) -> None:
    """Another program holds the journal's write lock until the journal reports failing: the
    controller goes on taking events (none waits for the lock), nothing is acked meanwhile, and
    once the lock is gone everything is written in order and acked."""
    import sqlite3

    from shoe_ctl.service.controller import Controller
    from shoe_ctl.service.journal.store import BUSY_TIMEOUT_S

    journal = Journal(tmp_path / "t.journal", table="table-1", profile="tda", retention_days=0)
    acked: list[int] = []

    class Link:
        def ack(self, seq: int) -> None:
            acked.append(seq)

    machine = Dealing(load_profiles(), default_rules="tda")
    ctl = Controller(machine, journal=journal, link=Link())
    other = sqlite3.connect(tmp_path / "t.journal", isolation_level=None)
    try:
        with ctl:
            other.execute("BEGIN IMMEDIATE")
            took = []
            for seq in range(1, 11):
                t0 = time.monotonic()
                ctl.step(CardRead(seq, None, "none", seq))
                took.append(time.monotonic() - t0)
            deadline = time.monotonic() + 10
            while journal.failing is None and time.monotonic() < deadline:  # after the busy timeout
                time.sleep(0.02)
            assert journal.failing is not None
            assert acked == []
            # a step that waited for the lock would take about the busy timeout (the lock is held
            # throughout); half of it leaves room for a busy CPU
            assert max(took) < BUSY_TIMEOUT_S / 2, f"a step took {max(took):.2f} s"
            other.execute("ROLLBACK")
            assert journal.flush(5)
            deadline = time.monotonic() + 5  # the acks run in the writer thread after the commit
            while len(acked) < 10 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert acked == list(range(1, 11))
    finally:
        other.close()
        journal.close()
    assert [r.shoe_seq for r in Journal(tmp_path / "t.journal", table="table-1", profile="tda").records()
            if r.kind == "CardRead"] == list(range(1, 11))


def test_systemd_status_says_when_the_journal_cannot_be_written_and_when_it_writes_again(tmp_path: Path) -> None:
    from shoe_ctl.service.controller import Controller
    from shoe_ctl.table import _start_notifications

    class Notifier:
        enabled = True
        ping_interval_s = None

        def __init__(self) -> None:
            self.status_lines: list[str] = []

        def status(self, text: str) -> bool:
            self.status_lines.append(text)
            return True

        def ready(self, status: str = "") -> bool:
            return True

    class Link:
        def wait_connected(self, timeout: float) -> Any:
            time.sleep(timeout)
            from drivers.exc import ShoeTimeoutError

            raise ShoeTimeoutError("none")

    journal = Journal(tmp_path / "t.journal", table="table-1", profile="tda", retention_days=0)
    notifier = Notifier()
    stop = threading.Event()
    ctl = Controller(Dealing(load_profiles(), default_rules="tda"), journal=journal)
    _start_notifications(notifier, ctl, stop)
    try:
        with journal.store.lock:
            db = journal.store.db()
            db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
        end = time.monotonic() + 20  # the writer commits on its own thread: wait until it met the cap
        seq = 0
        while journal.failing is None and time.monotonic() < end:
            seq += 1
            ctl.step(CardRead(seq, None, "none", seq))
            if seq % 50 == 0:
                time.sleep(0.05)
        assert journal.failing is not None, f"{seq} cards and the journal never failed"
        with journal.store.lock:
            journal.store.db().execute("PRAGMA max_page_count = 1073741823")
        assert journal.flush(10)
        end = time.monotonic() + 10  # systemd is told from the notifier's own thread
        while (not notifier.status_lines or notifier.status_lines[-1] != "journal writes again") \
                and time.monotonic() < end:
            time.sleep(0.02)
        assert notifier.status_lines[0].startswith("journal cannot be written")
        assert notifier.status_lines[-1] == "journal writes again"
    finally:
        stop.set()
        ctl.close()
        journal.close()
