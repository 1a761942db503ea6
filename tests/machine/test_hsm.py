"""The memoised HierarchicalMachine answers every state lookup and every trigger as the library's
own does (shoe_ctl/machine/hsm.py)."""

from __future__ import annotations

from typing import Any

import pytest
from transitions.extensions import HierarchicalMachine

from shoe_ctl.machine import layout
from shoe_ctl.machine.hsm import LeanHierarchicalMachine


class _Model:
    """The dealing layout's callbacks as no-ops; ``can`` decides ``two_can_act``."""

    def __init__(self) -> None:
        self.can = True
        self.calls: list[str] = []

    def two_can_act(self, _event: Any) -> bool:
        return self.can

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") and not name.startswith("__"):
            return lambda _event: self.calls.append(name)
        raise AttributeError(name)


def _machine(cls: type[HierarchicalMachine]) -> tuple[_Model, HierarchicalMachine]:
    model = _Model()
    machine = cls(model=model, states=layout.states(), transitions=layout.transitions(), initial=layout.IDLE,
                  send_event=True, queued=True, auto_transitions=False, on_exception="_on_exception",
                  model_override=False)
    return model, machine


def test_every_state_lookup_matches_the_library() -> None:
    _, plain = _machine(HierarchicalMachine)
    _, lean = _machine(LeanHierarchicalMachine)
    names = plain.get_nested_state_names()
    assert len(names) > 30
    for name in names:
        for _ in range(2):  # the second lookup comes from the memo
            assert lean.get_state(name).name == plain.get_state(name).name
            assert lean.get_state(name.split("_")).name == plain.get_state(name.split("_")).name
    with pytest.raises(ValueError):
        lean.get_state("hand_eighth_deal")
    with pytest.raises(ValueError):
        lean.get_state("hand_eighth_deal")  # an unknown name is never memoised


def test_a_hand_of_triggers_walks_the_same_states_and_callbacks() -> None:
    plain_model, _ = _machine(HierarchicalMachine)
    lean_model, _ = _machine(LeanHierarchicalMachine)
    script = ["newhand", "dealt", "bettingdone", "dealt", "bettingdone", "scramble", "scrambled", "cutdone",
              "reloaded", "dealt", "bettingdone", "dealt", "bettingdone", "dealt", "bettingdone", "handdone", "newhand",
              "dealt", "allfolded", "handdone"]
    for k, trigger in enumerate(script):
        for model in (plain_model, lean_model):
            model.can = k != 13  # 7th: fewer than two players able to act: the street is confirmed, not bet
            model.trigger(trigger)
        assert lean_model.state == plain_model.state, trigger
    assert lean_model.calls == plain_model.calls and "_on_exception" not in lean_model.calls
    assert lean_model.state == layout.IDLE and "_begin_showdown" in lean_model.calls
    assert "_begin_confirm" in lean_model.calls
