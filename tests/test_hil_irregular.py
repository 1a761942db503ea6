"""HIL: every irregularity of the rule texts, acted out by the simulated dealer (which sees only
the command stream) and reported as a dealer would, in both profiles where they differ. Each test
checks every seat's cards (the machine's record against what the dealer physically put there, by
identity, face and order), the burn and set-aside piles, the cards out of play and the stub after
the ruling, not only the alert. Tests marked ``wire`` in their name go through the virtual shoe on
a real pty and ``ShoeLink``; the others use the ``DirectShoe`` where the link adds nothing."""

from __future__ import annotations

import dataclasses

import pytest
from irregular_help import PROFILES, Ended, assert_table_matches, deck, physical, run

from hil.dealer import HandScript, Irregularity
from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.games import Game, TieRule, first_to_act

PROFILES["house-tournament"] = dataclasses.replace(PROFILES["house"], tournament=True)

FOUR = [1, 2, 3, 4]
# 4 seats: hole cards As Ks 2c Qs / Ah Kh Qh Jh, door cards 9s 8s 7s 6s (seat 4 brings in with 6s)
THIRD = ["As", "Ks", "2c", "Qs", "Ah", "Kh", "Qh", "Jh", "9s", "8s", "7s", "6s"]


def _script(rules: str, irregular: list[Irregularity], *, seats: list[int] = FOUR, prefix: list[str | None] = THIRD,
            actions: dict | None = None, acks: tuple[str, ...] = (), name: str = "") -> HandScript:
    return HandScript(list(seats), "stud", rules, deck(list(prefix)), actions if actions is not None else {},
                      irregular=irregular, acks=list(acks), name=name)


def _dedup(words: list[str]) -> list[str]:
    """The LED words without immediate repeats (an instruction shown again answering a report)."""
    return [w for k, w in enumerate(words) if k == 0 or words[k - 1] != w]


def _plain(rules: str = "tda") -> HandScript:
    return _script(rules, [], name="plain")


# --------------------------------------------------------------------------- RP-10-A, 16.1, 16.2


@pytest.mark.parametrize("rules, code", [("tda", "RP-10-A"), ("house", "house-16.1")])
def test_rp_10_a_house_16_1_exposed_hole_card_is_the_upcard_and_the_bring_in_wire(rules: str, code: str) -> None:
    """Seat 3's first hole card (2c) is dealt face up: it stands as the upcard, the seat's 3rd
    card is dealt down, and 2c brings in (without the exposure seat 4's 6s would)."""
    sc = _script(rules, [Irregularity("expose", "3rd", 3, 0)], actions={"3rd": [("fold", 1), ("fold", 2)]})
    (e,), _ = run([sc], wire=True)
    assert e.codes().count(code) == 1 and e.misdeal is None
    assert _dedup(e.signals)[:13] == ["deal:1:down", "deal:2:down", "deal:3:down", "deal:4:down",
                                      "deal:1:down", "deal:2:down", "deal:3:down", "deal:4:down",
                                      "deal:1:up", "deal:2:up", "deal:3:down", "deal:4:up", "betting"]
    assert e.bring_in == 3
    s3 = e.seat(3)
    assert s3["up"][0] == "2c" and s3["down"][:2] == ["Qh", "7s"] and len(s3["down"]) == 3 and len(s3["up"]) == 4
    assert e.seat(1) == {"down": ["As", "Ah"], "up": ["9s"], "status": "folded"}
    assert e.seat(2) == {"down": ["Ks", "Kh"], "up": ["8s"], "status": "folded"}
    assert_table_matches(e)
    assert e.hand.stub_count() == 52 - 12 - 4 * (1 + 2)  # 3rd street, then a burn and two cards on 4th-7th


def test_house_16_1_tournament_misdeal_then_a_new_hand() -> None:
    """House 16.1 in a tournament: an exposed hole card is a misdeal; the hand ends with the cards
    dealt so far, the next hand starts from a full deck."""
    sc = _script("house-tournament", [Irregularity("expose", "3rd", 2, 1)])
    hands, dealer = run([sc, _plain("house")])
    e, nxt = hands
    assert e.misdeal == "house-16.1" and "house-16.1" in e.codes()
    assert e.picture is not None and e.picture.misdeal
    assert e.seat(1) == {"down": ["As", "Ah"], "up": [], "status": "live"}
    assert e.seat(2)["down"] == ["Ks", "Kh"] and e.seat(2)["up"] == [] and e.seat(3)["down"] == ["2c"]
    assert e.hand.stub_count() == 52 - 6 == len(e.picture.stub())
    assert physical(e.picture, 2) == {"down": ["Ks"], "up": ["Kh"]}  # the exposed card lies face up
    assert nxt.misdeal is None and all(len(s.down) + len(s.up) == 7 for s in nxt.hand.seats)
    assert_table_matches(nxt)


@pytest.mark.parametrize("rules, code", [("house", "house-16.2"), ("house-tournament", "house-16.2")])
def test_house_16_2_both_hole_cards_exposed_dead_hand(rules: str, code: str) -> None:
    """Both hole cards of seat 4 face up: the hand is dead (ante returned), gets no door card and
    takes no part in the bring-in; the others are dealt as normal."""
    sc = _script(rules, [Irregularity("expose-both", "3rd", 4, 0)], actions={"3rd": [("fold", 1)]})
    (e,), _ = run([sc])
    assert code in e.codes() and e.misdeal is None
    msg = next(a.message for a in e.alerts if a.code == code)
    assert "ante" in msg
    assert e.seat(4) == {"down": [], "up": ["Qs", "Jh"], "status": "dead"}
    assert e.bring_in == 3  # 7s, seat 4's hand is out
    for s in (2, 3):
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert_table_matches(e)


def test_rp_10_a_both_exposed_is_a_misdeal_and_the_floor() -> None:
    sc = _script("tda", [Irregularity("expose-both", "3rd", 1, 0)], acks=("RP-10-A",))
    hands, _ = run([sc, _plain()])
    assert hands[0].misdeal == "RP-10-A" and any(a.code == "RP-10-A" and a.latched for a in hands[0].alerts)
    assert hands[0].seat(1)["up"] == ["As", "Ah"] or hands[0].seat(1)["down"] == ["As", "Ah"]
    assert hands[1].misdeal is None
    assert_table_matches(hands[1])
