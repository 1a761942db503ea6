"""HIL: the shoe unplugged in the middle of a hand and back: the ``shoe-disconnected``
information band goes once the shoe is heard again (it does not stay up for the rest of the
hand), on every path back: the link connected again, or a degraded link heard again. Through the
machine alone and through the virtual shoe on a pty (an unplug mid-hand)."""

from __future__ import annotations

from typing import Any

import pytest
from rule_profiles import PROFILES

from hil.dealer import HandScript
from hil.deck import Deck
from hil.replay import run_full
from shoe_ctl.events import CardRead, DealerAction, DealerInput, DisplayUpdate, LinkChanged, LinkStatus
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import full_deck


@pytest.mark.parametrize("lost, code", [(LinkStatus.DISCONNECTED, "shoe-disconnected"),
                                        (LinkStatus.DEGRADED, "shoe-link-degraded")])
def test_the_band_goes_when_the_shoe_is_heard_again(lost: LinkStatus, code: str) -> None:
    m = Dealing(PROFILES, await_counter_reset=True)
    m.handle(LinkChanged(LinkStatus.CONNECTED, "up"))
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
    deck = full_deck()
    m.handle(CardRead(1, deck.pop(), "rfid", 1))
    m.handle(LinkChanged(lost, "cable"))
    assert code in [a["code"] for a in m.public_state()["alerts"]]
    m.handle(LinkChanged(LinkStatus.CONNECTED, "back"))
    state = m.public_state()
    assert code not in [a["code"] for a in state["alerts"]]
    assert state["shoe"]["status"] == "connected" and state["hand"] == 1


class _States:
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def handle(self, c: object) -> None:
        if isinstance(c, DisplayUpdate):
            self.seen.append(c.state)

    def close(self) -> None:
        return None


@pytest.mark.faults
def test_an_unplug_mid_hand_through_the_pty_leaves_no_band_once_back() -> None:
    states = _States()
    scripts = [HandScript([1, 2, 3, 4], "stud", "tda", Deck.seeded(5).cards(), {}, name="unplugged")]
    _recorder, dealer = run_full(scripts, PROFILES, seed=4, timeout=60, sinks=[states],
                                 faults="unplug-every=9,unplug-ms=600")
    assert dealer.stalled is None
    down = [k for k, s in enumerate(states.seen) if "shoe-disconnected" in [a["code"] for a in s["alerts"]]]
    assert down, "the unplug raised no band"
    back = [s for s in states.seen[down[0]:] if s["shoe"]["status"] == "connected" and s["hand"] is not None]
    assert back and "shoe-disconnected" not in [a["code"] for a in back[-1]["alerts"]]
