"""Acknowledging one alert of a code that is up twice (docs/irregularities.md, *Acknowledging an
alert*): an ``ack-alert`` naming an id takes that alert down and no other; one naming a code
alone takes the oldest of that code; ``of`` names a later one (the journal's words); one naming
neither takes every alert. Two ``duplicate-card`` STOPs (reads 2 and 3 copy read 1) in each rule
profile."""

from __future__ import annotations

from typing import Any

import pytest
from rule_profiles import PROFILES

from shoe_ctl.events import CardRead, DealerAction, DealerInput
from shoe_ctl.input_spec import ack_pinned, ack_targets
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import full_deck


def two_stops(rules: str) -> Dealing:
    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3, 4], "rules": rules}))
    card = full_deck()[0]
    for seq in (1, 2, 3):
        m.handle(CardRead(seq, card, "rfid", seq))
    assert [(a["code"], a["seat"], a["latched"]) for a in m.alerts] == [
        ("duplicate-card", 2, True), ("duplicate-card", 3, True)]
    return m


def ack(m: Dealing, **args: Any) -> list[str]:
    """The codes of the alerts the acknowledgement raised (a refusal)."""
    return [getattr(c, "code", "") for c in m.handle(DealerInput(DealerAction.ACK_ALERT, args=args))
            if type(c).__name__ == "Alert"]


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_an_ack_by_id_takes_that_stop_down_and_the_other_of_its_code_stays(rules: str) -> None:
    m = two_stops(rules)
    older, newer = (a["id"] for a in m.alerts)
    assert ack(m, id=newer, code="duplicate-card") == []
    assert [a["id"] for a in m.alerts] == [older]
    assert m.instruction().signal.value == "stop", "the second STOP of the code no longer stops the deal"
    assert ack(m, id=newer, code="duplicate-card") == ["input-wrong-time"], "an id acknowledged twice"
    assert [a["id"] for a in m.alerts if a["latched"]] == [older]


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_an_ack_by_code_alone_takes_the_oldest_of_that_code(rules: str) -> None:
    m = two_stops(rules)
    older, newer = (a["id"] for a in m.alerts)
    assert ack(m, code="duplicate-card") == []
    assert [a["id"] for a in m.alerts] == [newer]
    assert ack(m, code="duplicate-card") == []
    assert m.alerts == []


def test_an_ack_naming_nothing_takes_every_alert_down() -> None:
    m = two_stops("tda")
    assert ack(m) == [] and m.alerts == []


def test_an_id_of_another_code_is_refused_and_changes_nothing() -> None:
    m = two_stops("tda")
    before = [a["id"] for a in m.alerts]
    assert ack(m, id=before[0], code="card-not-in-stub") == ["input-wrong-time"]
    assert [a["id"] for a in m.alerts if a["latched"]] == before


def test_the_pinned_words_name_the_same_alert_whatever_the_numbering() -> None:
    """The journal's words for an acknowledgement by id (:func:`ack_pinned`) pick the same alert
    in a list numbered otherwise (a replay's), and pick none where the id named none."""
    live = [{"id": 7, "code": "x"}, {"id": 9, "code": "y"}, {"id": 12, "code": "x"}]
    replay = [{"id": 1, "code": "x"}, {"id": 2, "code": "y"}, {"id": 3, "code": "x"}]
    for aid, place in ((7, 0), (12, 2)):
        pinned = ack_pinned(live, {"id": aid})
        assert [a["id"] for a in ack_targets(live, pinned)] == [aid]
        assert [a["id"] for a in ack_targets(replay, {**pinned, "id": 99})] == [replay[place]["id"]]
    for missing in ({"id": 8}, {"id": 9, "code": "x"}):
        pinned = ack_pinned(live, missing)
        assert ack_targets(live, pinned) == [] and ack_targets(replay, pinned) == []


def test_an_acknowledgement_by_code_takes_the_oldest_stop_of_it_before_a_notice() -> None:
    """Under TDA a hole card exposed raises an RP-10-A notice and the second one an RP-10-A STOP:
    the floor's acknowledgement by code (the dealer port's) is the STOP's, not the notice's; with
    no STOP of the code up it is the oldest alert of it."""
    notice = {"id": 1, "code": "RP-10-A", "latched": False}
    first, second = ({"id": n, "code": "RP-10-A", "latched": True} for n in (2, 3))
    other = {"id": 4, "code": "duplicate-card", "latched": True}
    assert ack_targets([notice, first, second, other], {"code": "RP-10-A"}) == [first]
    assert ack_targets([notice, other], {"code": "RP-10-A"}) == [notice]
    assert ack_targets([notice, first], {"id": 1}) == [notice]  # by id: exactly that one
