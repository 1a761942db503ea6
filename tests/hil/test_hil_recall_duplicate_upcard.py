"""HIL: the hole-card embargo in the recall. The shoe sends a copy of a card already dealt face down
(the virtual shoe's ``duplicate`` fault: a misread, or a second deck's card) as a door card; the
display shows that upcard as ``??`` for the whole hand (it would name the hole card), and the
recall anyone at the table may open (``GET /recall``) and the floor's ``recall`` topic must do the
same: was the hole card's name, before showdown and after it (docs/display.md, "Hole-card embargo
at the display"; docs/compliance.md, "Recall")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rule_profiles import PROFILES

from hil.dealer import HandScript
from hil.deck import Deck
from hil.replay import run_full
from shoe_ctl.export import default_machine_factory
from shoe_ctl.floor.topics import recall_hand
from shoe_ctl.recall import public, recall_hands
from shoe_ctl.service.journal import Journal

pytestmark = pytest.mark.faults


@pytest.mark.parametrize(("rules", "game", "seats"), [
    ("tda", "stud", [1, 2, 3]),      # pull 7: seat 1's door card, a copy of one of the six hole cards
    ("house", "razz", [4, 7]),       # heads-up: pull 5, a copy of one of the four
    ("tda", "stud8", [2, 5]),
])
def test_a_door_card_read_as_a_hole_cards_copy_is_not_named_in_the_public_recall(
        tmp_path: Path, rules: str, game: str, seats: list[int]) -> None:
    pull = 2 * len(seats) + 1  # the first door card: every card out before it is a hole card
    journal = Journal(tmp_path / "t.journal", table="t1", profile=rules)
    try:
        script = HandScript(seats, game, rules, Deck.seeded(11).cards(), {}, name="copy as door card")
        recorder, dealer = run_full([script], PROFILES, rules=rules, seed=2, timeout=60, auto_ack=True,
                                    faults=f"duplicate-at={pull}", journal=journal)
        (played,) = recorder.hands
        assert "duplicate-card" in played.alerts
        [hand] = recall_hands(journal.records, default_machine_factory, rules)
    finally:
        journal.close()
    cards = [e for e in hand["entries"] if e["kind"] == "card"]
    door = cards[pull - 1]
    assert door["role"] == "up" and door["seat"] == seats[0]
    named = door["card"]
    assert [e for e in cards if e["card"] == named and e["role"] == "down"]  # the full view: it is a hole card's
    word = re.compile(rf"(?<![A-Za-z0-9]){re.escape(named)}(?![A-Za-z0-9])")
    [shown] = public([hand])
    assert shown["entries"][hand["entries"].index(door)]["card"] == "??"
    assert word.search(json.dumps(shown)) is None  # the display's GET /recall
    assert word.search(json.dumps(recall_hand(hand))) is None  # the floor's recall topic
    # every other face-up card is still named
    ups = [e for e in cards if e["role"] == "up" and e is not door]
    assert ups and all(shown["entries"][hand["entries"].index(e)]["card"] == e["card"] for e in ups)
