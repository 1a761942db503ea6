"""The signal after an unreadable card from a shoe that names foreign cards (docs/protocol.md
section 16: CARD 0xFF, then FOREIGN or FAULT misread in the same pass): the dealer is never told
to go on before the shoe's next word on that card. The signal holds (``shoe-fault``, the signal
the misread that usually follows brings anyway) until that word, or until the controller's
bounded wait ends (``TimerFired`` named :data:`~shoe_ctl.machine.foreign.UNREAD_TIMER`)."""

from __future__ import annotations

import pytest

from shoe_ctl.config import load_profile
from shoe_ctl.events import (
    Alert,
    CardRead,
    CounterReset,
    DealerAction,
    DealerInput,
    FaultKind,
    ForeignCard,
    ForeignWhat,
    Instruction,
    LinkChanged,
    LinkStatus,
    ShoeFault,
    ShoeInfo,
    Signal,
    TimerFired,
)
from shoe_ctl.machine import Dealing
from shoe_ctl.machine.foreign import UNREAD_TIMER
from shoe_ctl.rules.cards import Card, full_deck

PROFILES = {"tda": load_profile("tda")}
HOLDS = (Signal.SHOE_FAULT, Signal.STOP)
"""Signals that tell the dealer not to go on."""


def _table(names_foreign: bool = True) -> tuple[Dealing, list[Card]]:
    m = Dealing(PROFILES, await_counter_reset=True)
    m.start()
    m.handle(LinkChanged(LinkStatus.CONNECTED, "shoe S1",
                         ShoeInfo(2, "fw", "S1", ("rfid",), 7, names_foreign=names_foreign)))
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4], "rules": "tda", "game": "stud"}))
    m.handle(CounterReset(1))
    return m, full_deck()


def _signals(cmds: list[object]) -> list[Signal]:
    return [c.signal for c in cmds if isinstance(c, Instruction)]


@pytest.mark.parametrize("what", list(ForeignWhat))
def test_no_go_on_signal_between_a_foreign_cards_card_and_its_stop(what: ForeignWhat) -> None:
    m, deck = _table()
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    shown = _signals(m.handle(CardRead(2, None, "none", 2, 1)))
    assert shown and all(s in HOLDS for s in shown), shown
    assert m.instruction().signal is Signal.SHOE_FAULT and m.instruction().seat is None
    card = None if what is ForeignWhat.UNKNOWN else Card.parse("9c")
    deck_id = "" if what is ForeignWhat.UNKNOWN else "D12"
    assert _signals(m.handle(ForeignCard(3, what, "04b20001", card, deck_id, "D17"))) == [Signal.STOP]


def test_an_unreadable_card_holds_through_its_misread_and_goes_on_at_the_misreads_end() -> None:
    m, deck = _table()
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    assert _signals(m.handle(CardRead(2, None, "none", 2, 1))) == [Signal.SHOE_FAULT]
    cmds = m.handle(ShoeFault(3, FaultKind.MISREAD, False, "no tag read"))
    assert [c.code for c in cmds if isinstance(c, Alert)] == ["unreadable-card", "shoe-misread"]
    assert m.instruction().signal is Signal.SHOE_FAULT
    m.handle(ShoeFault(4, FaultKind.MISREAD, True))
    ins = m.instruction()
    assert (ins.signal, ins.seat) == (Signal.DEAL, 3)


def test_a_shoe_silent_after_an_unreadable_card_is_told_when_the_wait_ends() -> None:
    """The shoe says nothing more on the card: the controller's bounded wait ends in the timer,
    which gives the notice and the next instruction; a stale timer (no card waiting) does nothing."""
    m, deck = _table()
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    m.handle(CardRead(2, None, "none", 2, 1))
    assert m.link.unread == 2
    cmds = m.handle(TimerFired(UNREAD_TIMER, m.state, m.entries))
    assert [c.code for c in cmds if isinstance(c, Alert)] == ["unreadable-card"]
    assert m.link.unread is None
    ins = m.instruction()
    assert (ins.signal, ins.seat) == (Signal.DEAL, 3)
    assert m.handle(TimerFired(UNREAD_TIMER, m.state, m.entries)) == []  # stale: no alert, no change
    assert not [a for a in m.alerts if a["code"].startswith("timer-")]


def test_a_foreign_event_after_the_wait_still_stops() -> None:
    """A FOREIGN resent late (a lossy link) after the wait ended: the card was told as unreadable,
    and the STOP still comes at its FOREIGN."""
    m, deck = _table()
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    m.handle(CardRead(2, None, "none", 2, 1))
    m.handle(TimerFired(UNREAD_TIMER, m.state, m.entries))
    cmds = m.handle(ForeignCard(3, ForeignWhat.UNKNOWN, "04ffee0001", None, "", "D17"))
    assert [(c.code, c.latched) for c in cmds if isinstance(c, Alert)] == [("foreign-card-floor", True)]
    assert m.instruction().signal is Signal.STOP


def test_a_shoe_that_does_not_name_foreign_cards_is_not_held() -> None:
    m, deck = _table(names_foreign=False)
    m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))
    assert _signals(m.handle(CardRead(2, None, "none", 2, 1))) == [Signal.DEAL]
    assert m.link.unread is None


def test_a_readable_card_is_never_held() -> None:
    m, deck = _table()
    assert _signals(m.handle(CardRead(1, deck.pop(), "rfid", 1, 1))) == [Signal.DEAL]
    assert m.link.unread is None
