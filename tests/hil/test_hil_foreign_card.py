"""A foreign card through the whole path: a tag of no deck, or a card of another enrolled deck,
passes the mouth of the shoe bridge (virtual PN532, mock beam) -> protocol v2, paired,
names-foreign taken -> ``shoe-ctl run`` (a child process) stops the deal at once with one latched
STOP naming it, with no signal to go on between the card's CARD and the STOP, (``foreign-card-floor``, ``foreign-card-other-deck-floor``) and no
``unreadable-card`` notice before it, on the dealer's stream or on the display's state; journals
the ``ForeignCard`` and acks it, and journals the deck the hand is dealt from (``StubDeck``;
docs/protocol.md section 16)."""

from __future__ import annotations

import queue
import time
from pathlib import Path
from typing import Any

import pytest

from hil.crash import DealerClient, ServiceProcess
from hil.reader_shoe import FOREIGN_TAG, ReaderShoe, seeded_uids
from hil.virtual_pn532 import Tag
from shoe_ctl.events import (
    Alert,
    DealerAction,
    DealerInput,
    DisplayUpdate,
    ForeignCard,
    ForeignWhat,
    Instruction,
    Signal,
)
from shoe_ctl.service.decks import NEW_DECK_ORDER, DeckFolder
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.shoe_secrets import SecretStore, new_secret


def wait_cmd(cmds: queue.Queue[Any], pred: Any, timeout: float = 30.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            cmd = cmds.get(timeout=0.5)
        except queue.Empty:
            continue
        if pred(cmd):
            return cmd
    raise AssertionError("the service never sent the command waited for")


OTHER_DECK = "other-9"
"""A second enrolled deck: a card of it in the stub of the first is a card of another deck."""
CASES = {ForeignWhat.UNKNOWN: "foreign-card-floor", ForeignWhat.OTHER_DECK: "foreign-card-other-deck-floor"}


def _unreadable_told(seen: list[Any]) -> list[str]:
    """Where an ``unreadable-card`` notice reached the dealer's stream: raised, or listed in the
    display's state."""
    out = [f"alert {c.message}" for c in seen if isinstance(c, Alert) and c.code == "unreadable-card"]
    return out + [f"display {a['message']}" for c in seen if isinstance(c, DisplayUpdate)
                  for a in c.state.get("alerts", ()) if a.get("code") == "unreadable-card"]


@pytest.mark.slow
@pytest.mark.parametrize("what", list(CASES))
def test_a_foreign_card_through_the_bridge_stops_shoe_ctl_run_at_its_first_read(tmp_path: Path,
                                                                                 what: ForeignWhat) -> None:
    secret = new_secret()
    SecretStore(tmp_path / "shoes").save("VS-0001", secret)
    (tmp_path / "table.toml").write_text(f'[shoe]\nserial = "VS-0001"\nsecrets = "{tmp_path / "shoes"}"\n')
    rig = ReaderShoe(tmp_path / "shoe", serial="VS-0001", secret=secret, seed=3)
    other = seeded_uids(9)
    DeckFolder(rig.decks, secret).write(OTHER_DECK, "hil", NEW_DECK_ORDER, other)
    stranger = FOREIGN_TAG if what is ForeignWhat.UNKNOWN else Tag(other[8])  # the other deck's 9th card
    rig.start()
    journal = tmp_path / "run.journal"
    proc = ServiceProcess(rig.url, journal, tmp_path / "run.sock", tmp_path / "run.log", rules="tda", game="stud",
                          config=str(tmp_path / "table.toml"))
    cmds: queue.Queue[Any] = queue.Queue()
    seen: list[Any] = []

    def got(cmd: Any) -> None:
        seen.append(cmd)
        cmds.put(cmd)

    dealer = DealerClient(tmp_path / "run.sock", got)
    proc.start()
    try:
        dealer.connect(60, proc.alive, lambda: None)
        for _ in range(20):  # refused until the service has heard the shoe
            dealer.post(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4]}))
            try:
                wait_cmd(cmds, lambda c: isinstance(c, Instruction) and c.signal is Signal.DEAL and c.seat == 1, 3.0)
                break
            except AssertionError:
                continue
        first = next(iter(rig.tags.values()))
        rig.pass_tags([first])  # seat 1's first downcard, a card of the stub's deck
        wait_cmd(cmds, lambda c: isinstance(c, Instruction) and c.signal is Signal.DEAL and c.seat == 2)
        before = len(seen)
        rig.pass_tags([stranger])  # to seat 2 by the plan: a tag of no deck, or the other deck's card
        stop = wait_cmd(cmds, lambda c: isinstance(c, Alert) and c.code == CASES[what])
        upto = next(i for i, c in enumerate(seen) if c is stop)
        go_on = [c for c in seen[before:upto] if isinstance(c, Instruction)
                 and c.signal not in (Signal.SHOE_FAULT, Signal.STOP)]
        assert go_on == []  # the card's CARD came first, but no "go on" was shown for it
        assert stop.latched and f"tag {stranger.uid.hex()}" in stop.message and f"deck {rig.deck_id}" in stop.message
        if what is ForeignWhat.OTHER_DECK:
            assert f"card of deck {OTHER_DECK}" in stop.message
        wait_cmd(cmds, lambda c: isinstance(c, Instruction) and c.signal is Signal.STOP)
        shown = wait_cmd(cmds, lambda c: isinstance(c, DisplayUpdate)
                         and [a["code"] for a in c.state.get("alerts", ())] == [CASES[what]], 10.0)
        assert shown.state["alerts"][0]["latched"]  # the display lists the one STOP
        assert rig.bridge.core.naming.ok is True
        end = time.monotonic() + 20
        while rig.unacked_count() and time.monotonic() < end:
            time.sleep(0.05)
        assert rig.unacked_count() == 0  # journaled, then acked: the ForeignCard and the misread's end too
        time.sleep(1.5)  # a STUB follows each heartbeat (0.5 s apart)
        assert _unreadable_told(seen[before:]) == []  # no notice before the STOP, nor after it
    finally:
        dealer.down()
        proc.stop()
        rig.close()
    with Journal(journal, table=None, profile=None, readonly=True) as j:
        recs = list(j.records())
    named = [r.item for r in recs if r.kind == "ForeignCard"]
    assert len(named) == 1 and named[0].what is what and named[0].stub == rig.deck_id
    assert isinstance(named[0], ForeignCard) and named[0].tag == stranger.uid.hex()
    assert not [r for r in recs if r.kind == "Alert" and r.item.code == "unreadable-card"]  # nor in the record
    assert not [r for r in recs if r.kind == "ShoeFault" and not r.item.cleared]  # no misread begun
    decks = [(r.hand, r.item.deck) for r in recs if r.kind == "StubDeck"]
    assert decks == [(1, rig.deck_id)]  # which deck hand 1 is dealt from, once
