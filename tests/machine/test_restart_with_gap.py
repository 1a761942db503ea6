"""A shoe restart that lost events (docs/state-machine.md, the shoe-restarted row): the sequence
gap posted first is the stop and its count closes it; the restart is information only, and a
shoe that kept its dispense counter across the restart shows no jump after the count."""

from __future__ import annotations

from shoe_ctl.config import load_profile
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, SequenceGap, ShoeRestarted, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card

PROFILES = {"tda": load_profile("tda"), "house": load_profile("house")}


def _alerts(cmds: list[object]) -> list[Alert]:
    return [c for c in cmds if isinstance(c, Alert)]


def test_a_restart_with_a_gap_stops_once_and_the_count_lets_the_hand_go_on() -> None:
    m = Dealing(PROFILES, default_rules="tda")
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4]}))
    for seq, card in enumerate(("As", "Kd", "Qc"), start=1):
        m.handle(CardRead(seq, Card.parse(card), "rfid", seq))
    m.handle(SequenceGap(4, 5))  # read 4 lost with the shoe's buffer
    (info,) = _alerts(m.handle(ShoeRestarted("SH-1", 1, 2, 1, 2, cards_counted=4, cards_reported=3)))
    assert info.code == "shoe-restarted" and not info.latched and "1 card(s)" in info.message
    assert m.instruction().text.startswith("Sequence gap")
    m.handle(DealerInput(DealerAction.GAP_CARDS, args={"cards": 1}))
    assert m.instruction().signal != Signal.STOP
    # the shoe kept its counter: the next read is dispense 5, no jump after the card found
    out = m.handle(CardRead(5, Card.parse("Jh"), "rfid", 5))
    assert not [a for a in _alerts(out) if a.code == "dispense-gap"]
    assert m.instruction().signal != Signal.STOP
