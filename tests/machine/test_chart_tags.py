"""The machine's state predicates are the chart's tags (``transitions``' ``Tags``): the sets in
``layout`` are what each state of the built machine says of itself."""

from __future__ import annotations

from rule_profiles import PROFILES

from shoe_ctl.machine import Dealing, layout


def test_the_tag_sets_are_the_machines_states_tags() -> None:
    m = Dealing(PROFILES)
    for leaf in layout.leaves():
        state = m.machine.get_state(leaf)
        for tag, members in layout.TAGS.items():
            assert getattr(state, f"is_{tag}") is (leaf in members), (leaf, tag)
    assert layout.DEAL == {layout.deal_state(s) for s in layout.STREETS}
    assert layout.BETTING == {layout.betting_state(s) for s in layout.STREETS}
    assert layout.OVER == {layout.SHOWDOWN, layout.UNCONTESTED}
    assert layout.IN_HAND == {s for s in layout.leaves() if s.startswith("hand_")}


def test_triggers_are_named_after_what_the_dealer_did() -> None:
    names = {t["trigger"] for t in layout.transitions()}
    assert {"new_hand", "betting_complete", "scramble_done", "cut_done", "stub_reloaded",
            "hand_complete", "premature_done", "misdeal"} <= names
