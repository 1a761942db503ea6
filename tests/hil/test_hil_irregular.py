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


# --------------------------------------------------------------------------- RP-10-B, 16.21-16.24


def _boards(e: Ended, seats: list[int]) -> list[list[Card]]:
    assert e.picture is not None
    return [[c for f, c in e.picture.seats[s] if f == "up" and c is not None] for s in seats]


def test_rp_10_b_exposed_seventh_replaced_when_action_remains_wire() -> None:
    """Seat 2's 7th card dealt face up with betting action left (3 players): it goes out of play
    and the seat gets the next card face down; the stub gives one card more than normal."""
    sc = _script("tda", [Irregularity("expose", "7th", 2)], actions={"3rd": [("fold", 4)]})
    (e,), _ = run([sc], wire=True)
    assert "RP-10-B" in e.codes()
    moves = next(a.moves for a in e.alerts if a.code == "RP-10-B")
    assert moves == ("seat 2 up -> out",)
    s2 = e.seat(2)
    assert len(s2["down"]) == 3 and len(s2["up"]) == 4
    assert len(e.hand.dead_cards) == 1 and e.hand.dead_cards[0] not in e.hand.seats[1].down
    # deal 3 was shown before the report was read; the answer is the replacement for seat 2
    assert _dedup(e.signals)[-8:] == ["burn", "deal:1:down", "deal:2:down", "deal:3:down", "deal:2:down",
                                      "deal:3:down", "betting", "showdown"]
    assert e.hand.stub_count() == 52 - 12 - 4 * (1 + 3) - 1
    assert_table_matches(e)


def test_rp_10_b_no_action_left_the_card_stands_and_not_at_risk_expose_first() -> None:
    """Both players all-in: no betting action remains, the exposed 7th card stands face up; the
    showdown tells the players not at risk to expose first."""
    acts = {"3rd": [("fold", 3), ("fold", 4), ("all-in", 1), ("all-in", 2)]}
    sc = _script("tda", [Irregularity("expose", "7th", 1)], actions=acts)
    (e,), _ = run([sc])
    assert "RP-10-B" in e.codes() and not e.hand.dead_cards
    assert any("not at risk expose first" in t for t in e.texts)
    assert len(e.seat(1)["up"]) == 5 and len(e.seat(1)["down"]) == 2 and len(e.seat(2)["down"]) == 3
    assert e.hand.stub_count() == 52 - 12 - 4 * 3
    assert_table_matches(e)


def test_house_16_22_16_23_three_players_card_stands_others_down_high_board_acts() -> None:
    """House 16.22/16.23: the exposed 7th card stands, every other 7th card is dealt down, the
    exposed player may move all-in; the high hand using all up-cards acts first."""
    sc = _script("house", [Irregularity("expose", "7th", 1)], actions={"3rd": [("fold", 4)]})
    (e,), _ = run([sc])
    codes = e.codes()
    assert "house-16.22" in codes
    msg = next(a.message for a in e.alerts if a.code == "house-16.22")
    assert "house-16.23" in msg and "all-in" in msg
    assert len(e.seat(1)["up"]) == 5 and [len(e.seat(s)["down"]) for s in (2, 3)] == [3, 3]
    assert _dedup(e.signals)[-5:] == ["deal:1:down", "deal:2:down", "deal:3:down", "betting", "showdown"]
    live = [1, 2, 3]
    expected = first_to_act(Game.STUD, _boards(e, live), [True] * 3, [True] * 3, TieRule.SUIT)
    assert expected is not None and e.first["7th"] == live[expected]
    assert e.hand.stub_count() == 52 - 12 - 4 * 4
    assert_table_matches(e)


def test_house_16_24_two_players_the_other_last_card_face_up_too() -> None:
    sc = _script("house", [Irregularity("expose", "7th", 1)], actions={"3rd": [("fold", 3), ("fold", 4)]})
    (e,), _ = run([sc])
    msg = next(a.message for a in e.alerts if a.code == "house-16.22")
    assert "house-16.24" in msg
    assert "deal:2:up" in e.signals[-4:]
    assert len(e.seat(1)["up"]) == 5 and len(e.seat(2)["up"]) == 5
    assert e.seat(1)["down"] == physical(e.picture, 1)["down"] and len(e.seat(2)["down"]) == 2
    assert_table_matches(e)


def test_house_16_21_all_in_player_exposed_seventh_stands() -> None:
    acts = {"3rd": [("fold", 4)], "5th": [("all-in", 2)]}
    sc = _script("house", [Irregularity("expose", "7th", 2)], actions=acts)
    (e,), _ = run([sc])
    alert = next(a for a in e.alerts if a.code == "house-16.21")
    assert "house-16.22" in alert.message and "may move all-in" not in alert.message
    assert len(e.seat(2)["up"]) == 5 and e.seat(2)["status"] == "all-in"
    assert_table_matches(e)


# --------------------------------------------------------------------------- RP-10-C / Rule 30, 16.9-16.11


def test_rp_10_c_rule_30_absent_player_killed_after_the_deal_still_posts_bring_in_wire() -> None:
    """TDA: seat 4 (holding the bring-in card 6s) is away during the deal: the hand is killed when
    the initial deal is complete, it still posts the bring-in, the betting starts to its left
    (seat 1), and no 4th-street card goes to it."""
    sc = _script("tda", [Irregularity("absent", "3rd", 4)])
    (e,), _ = run([sc], wire=True)
    alert = next(a for a in e.alerts if a.code == "RP-10-C")
    assert "Rule 30" in alert.message and "bring-in" in alert.message
    assert e.bring_in == 4 and e.first["3rd"] == 1
    assert e.seat(4) == {"down": ["Qs", "Jh"], "up": ["6s"], "status": "killed"}
    assert all(not w.startswith("deal:4") for w in e.signals[13:])
    for s in (1, 2, 3):
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert e.hand.stub_count() == 52 - 12 - 4 * (1 + 3)
    assert_table_matches(e)


def test_house_16_11_16_9_empty_seat_dealt_until_killed_when_the_action_reaches_it() -> None:
    """House cash game: the empty seat keeps receiving cards (16.11) so the others get the cards
    they would have had; when the betting reaches it on 4th street it is killed (16.9)."""
    irr = [Irregularity("absent", "3rd", 4), Irregularity("absent", "4th", 4, args={"at": "betting",
                                                                                  "action_reached": True})]
    sc = _script("house", irr)
    (e,), _ = run([sc])
    assert e.codes().count("house-16.11") == 1 and e.codes().count("house-16.9") == 1
    assert e.seat(4)["status"] == "killed" and len(e.seat(4)["up"]) == 2 and len(e.seat(4)["down"]) == 2
    ref = _script("house", [])
    (plain,), _ = run([ref])
    for s in (1, 2, 3):  # the others got exactly the cards they would have had through 4th street
        assert e.seat(s)["up"][:2] == plain.seat(s)["up"][:2]
    assert e.hand.stub_count() == 52 - 12 - 5 - 3 * 4
    assert_table_matches(e)


def test_house_16_10_tournament_absent_player_killed_after_the_deal() -> None:
    sc = _script("house-tournament", [Irregularity("absent", "3rd", 2)])
    (e,), _ = run([sc])
    assert "house-16.10" in e.codes()
    assert e.seat(2) == {"down": ["Ks", "Kh"], "up": ["8s"], "status": "killed"}
    assert e.hand.stub_count() == 52 - 12 - 4 * 4
    assert_table_matches(e)


# --------------------------------------------------------------------------- RP-5-D, 16.16, 16.17

EIGHT = [1, 2, 3, 4, 5, 6, 7, 8]


def test_rp_5_d_premature_cards_back_into_the_stub_reshuffled_no_second_burn_wire() -> None:
    """The 4th-street burn and two cards dealt before the 3rd-street betting ended: the two cards
    go back into the stub, the stub is reshuffled and reloaded (no cut), and 4th street is dealt
    without another burn; every later card is checked against the reshuffled stub."""
    sc = _script("tda", [Irregularity("premature", "3rd", count=3)])
    (e,), _ = run([sc], wire=True)
    codes = e.codes()
    assert codes.count("card-not-expected") == 3 and "RP-5-D" in codes
    assert "card-not-in-stub" not in codes and "duplicate-card" not in codes
    words = _dedup(e.signals)
    k = words.index("scramble")
    assert words[k + 1: k + 7] == ["betting", "deal:1:up", "deal:2:up", "deal:3:up", "deal:4:up", "betting"]
    assert len(e.hand.burns["4th"]) == 1 and e.hand.set_aside == [] and e.hand.returned == 2
    assert e.hand.new_stub is not None
    for s in FOUR:
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert e.hand.stub_count() == 52 - 12 - 4 * 5
    assert_table_matches(e)


def test_house_16_16_set_aside_cards_serve_a_shortage_before_seventh_wire() -> None:
    """Eight players; the 5th-street burn and three cards dealt before the 4th-street betting
    ended: all four go aside, then one more per active player (8) after the betting; 5th street
    is then short (stub 7) and house 16.18 gathers the set-aside cards into the new stub: burn,
    deal 5, scramble the last card with the burns and the set-aside cards, cut, burn, deal 3."""
    sc = HandScript(list(EIGHT), "stud", "house", deck([]), {}, irregular=[Irregularity("premature", "4th", count=4)])
    (e,), _ = run([sc], wire=True, timeout=40)
    assert "house-16.16" in e.codes()
    assert e.procedures["5th"] == "16.18"
    aside = [k for k, t in enumerate(e.texts) if t.startswith("Take one card aside")]
    assert sorted({e.texts[k] for k in aside}) == [f"Take one card aside face down (house 16.16): {n} of 8"
                                                   for n in range(1, 9)]
    assert {e.signals[k] for k in aside} == {"burn"}
    fifth = _dedup(e.signals[aside[-1] + 1:])
    assert fifth[:11] == ["burn", "deal:1:up", "deal:2:up", "deal:3:up", "deal:4:up", "deal:5:up",
                          "scramble", "cut", "burn", "deal:6:up", "deal:7:up"]
    assert "5th" in e.hand.scrambles and e.hand.set_aside == []
    assert "card-not-in-stub" not in e.codes() and "duplicate-card" not in e.codes()
    for s in EIGHT:
        assert e.seat(s)["status"] == "live"
        assert len(e.seat(s)["down"]) + len(e.seat(s)["up"]) + (1 if e.hand.community_street else 0) == 7
    assert_table_matches(e)


def test_house_16_17_premature_final_downcard_merged_stands_no_bet() -> None:
    """The 7th-street burn and seat 1's final downcard dealt before the 6th-street betting ended;
    the card merged with the hole cards: it stands and seat 1 may not bet or raise; the burn goes
    aside with one card per active player; 7th street then burns again and deals the others."""
    sc = _script("house", [Irregularity("premature", "6th", count=2, args={"merged": [1]})])
    (e,), _ = run([sc])
    alert = next(a for a in e.alerts if a.code == "house-16.16")
    assert "house-16.17" in alert.message and alert.moves == ("burn 7th -> set-aside",)
    s1 = e.hand.seats[0]
    assert s1.no_bet and len(s1.down) == 3 and len(s1.up) == 4
    assert any(t.startswith("Betting on 7th") and "seat 1 may not bet or raise (house 16.17)" in t for t in e.texts)
    assert len(e.hand.set_aside) == 1 + 4 and len(e.hand.burns["7th"]) == 1  # the premature burn is aside
    aside = [k for k, t in enumerate(e.texts) if t.startswith("Take one card aside")]
    assert len({e.texts[k] for k in aside}) == 4
    assert _dedup(e.signals[aside[-1] + 1:])[:4] == ["burn", "deal:2:down", "deal:3:down", "deal:4:down"]
    for s in FOUR:
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert e.hand.stub_count() == 52 - 12 - 3 * 5 - 2 - 4 - 4
    assert_table_matches(e)


# --------------------------------------------------------------------------- 16.15, 16.13, 16.6, 16.25, 16.26, misdeal


def test_house_16_15_two_burns_the_top_burn_goes_to_the_first_player_wire() -> None:
    """Two cards burned on 4th street: the second is moved to seat 1 as its upcard (the record
    already has it there); every seat and the stub end as in a normal deal."""
    sc = _script("house", [Irregularity("burn-two", "4th")])
    (e,), _ = run([sc], wire=True)
    alert = next(a for a in e.alerts if a.code == "house-16.15")
    assert alert.moves == ("burn 4th -> seat 1 up",)
    assert len(e.hand.burns["4th"]) == 1
    for s in FOUR:
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert e.hand.stub_count() == 52 - 12 - 4 * 5
    assert_table_matches(e)


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_house_16_15_no_burn_cards_moved_back_to_their_normal_positions(rules: str) -> None:
    """No burn on 5th: three cards went to seats 1-3; the first becomes the burn and each card
    moves one seat back; seat 3 is dealt again. TDA names Rule 38 with it."""
    sc = _script(rules, [Irregularity("no-burn", "5th", count=3)])
    (e,), _ = run([sc])
    alert = next(a for a in e.alerts if a.code == "house-16.15")
    assert alert.moves == ("seat 1 up -> burn 5th", "seat 2 up -> seat 1 up", "seat 3 up -> seat 2 up")
    assert ("Rule 38" in alert.message) == (rules == "tda")
    for s in FOUR:
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert e.hand.stub_count() == 52 - 12 - 4 * 5
    assert_table_matches(e)


def test_house_16_15_two_burns_on_the_final_downcard_the_extra_burn_stands() -> None:
    """Two burns on 7th and the card seen: the extra burn stays a burn (16.15 'the card will
    stand'); seat 1 is dealt the next card; the stub gives one card more."""
    sc = _script("house", [Irregularity("burn-two", "7th", args={"stands": True})])
    (e,), _ = run([sc])
    assert "house-16.15" in e.codes()
    assert len(e.hand.burns["7th"]) == 2
    for s in FOUR:
        assert len(e.seat(s)["down"]) == 3
    assert e.hand.stub_count() == 52 - 12 - 4 * 5 - 1
    assert_table_matches(e)


@pytest.mark.parametrize("rules, hole_code", [("tda", "RP-10-A"), ("house", "house-16.1")])
def test_house_16_13_card_off_the_table_is_an_exposed_card(rules: str, hole_code: str) -> None:
    """A door card off the table stands as the upcard; a hole card off the table is an exposed
    hole card (house 16.1 / RP-10-A): it is the upcard and the 3rd card goes down."""
    irr = [Irregularity("off-table", "3rd", 1, 2), Irregularity("off-table", "3rd", 2, 0)]
    sc = _script(rules, irr, actions={"3rd": [("fold", 3), ("fold", 4)]})
    (e,), _ = run([sc])
    offs = [a for a in e.alerts if a.code == "house-16.13"]
    assert len(offs) == 2 and [f", {hole_code})" in o.message for o in offs] == [True, False]  # hole card first
    assert e.seat(1)["up"][0] == "9s" and e.seat(1)["down"][:2] == ["As", "Ah"]
    assert e.seat(2)["up"][0] == "Ks" and e.seat(2)["down"][:2] == ["Kh", "8s"]
    assert_table_matches(e)


@pytest.mark.parametrize("next_acted, action", [(False, "return the bet"), (True, "the bet stands")])
def test_house_16_6_wrong_bring_in(next_acted: bool, action: str) -> None:
    """Seat 1 was named the low card and bet; seat 4 holds it (6s). The cards do not change."""
    sc = _script("house", [Irregularity("wrong-bring-in", "3rd", 1, args={"next_acted": next_acted})])
    (e,), _ = run([sc])
    alert = next(a for a in e.alerts if a.code == "house-16.6")
    assert action in alert.message.lower() and e.bring_in == 4
    (plain,), _ = run([_script("house", [])])
    for s in FOUR:
        assert e.seat(s) == plain.seat(s)
    assert_table_matches(e)


@pytest.mark.parametrize("rules, cards, code, status", [
    ("house", 8, "house-16.25", "dead"), ("house", 6, "house-16.26", "dead"), ("tda", 8, "house-16.25", "live")])
def test_house_16_25_16_26_hand_with_too_many_or_too_few_cards(rules: str, cards: int, code: str,
                                                                 status: str) -> None:
    """The dealer counts seat 2's hand at the showdown: eight or more cards, or six or fewer, is a
    dead hand (house); under TDA the floor decides (latched alert, the floor's acknowledgement)."""
    sc = _script(rules, [Irregularity("card-count", "7th", 2, args={"cards": cards})], acks=(code,))
    (e,), _ = run([sc])
    alert = next(a for a in e.alerts if a.code == code)
    assert alert.latched == (rules == "tda")
    assert "card-count-mismatch" in e.codes()
    assert e.seat(2)["status"] == status
    assert len(e.seat(2)["down"]) == 3 and len(e.seat(2)["up"]) == 4
    assert_table_matches(e)


def test_misdeal_declared_by_the_dealer_ends_the_hand_and_the_next_starts_full() -> None:
    sc = _script("tda", [Irregularity("misdeal", "4th", 3)])
    hands, _ = run([sc, _plain()])
    e, nxt = hands
    assert e.misdeal == "misdeal" and "misdeal" in e.codes()
    assert e.hand.stub_count() == 52 - 12 - 3 == len(e.picture.stub())  # burn, seats 1 and 2 on 4th
    assert [len(e.seat(s)["up"]) for s in FOUR] == [2, 2, 1, 1]
    assert nxt.misdeal is None and nxt.hand.stub_count() == 52 - 12 - 4 * 5
    assert_table_matches(e)
    assert_table_matches(nxt)


# --------------------------------------------------------------------------- undo, determinism


def test_undo_of_a_mistaken_fold_and_an_undo_refused_after_a_card_left_wire() -> None:
    """A fold reported by mistake on 4th is undone (the seat plays on to the showdown with seven
    cards); an undo asked on 5th after its burn has left the shoe is refused and changes nothing."""
    irr = [Irregularity("undo", "4th", 2, args={"at": "betting"}), Irregularity("undo", "5th", args={"at": "deal"})]
    sc = _script("tda", irr)
    (e,), _ = run([sc], wire=True)
    codes = e.codes()
    assert codes.count("undo") == 1 and codes.count("undo-refused") == 1
    refused = next(a.message for a in e.alerts if a.code == "undo-refused")
    assert "a card has left the shoe" in refused
    assert e.seat(2)["status"] == "live" and len(e.seat(2)["down"]) == 3 and len(e.seat(2)["up"]) == 4
    assert e.hand.stub_count() == 52 - 12 - 4 * 5
    assert_table_matches(e)


def test_undo_of_an_exposure_restores_the_plan_and_refuses_what_cannot_be_undone() -> None:
    from shoe_ctl.events import CardRead, DealerAction, DealerInput, Signal
    from shoe_ctl.machine import Dealing

    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
    cards = deck(THIRD)
    for k in range(2):
        m.handle(CardRead(k + 1, cards[k], "rfid", k + 1))
    before = (m.public_state(), m.instruction())
    out = m.handle(DealerInput(DealerAction.EXPOSED_CARD, 2, {"which": 0}))
    assert [a.code for a in out if hasattr(a, "code")] == ["RP-10-A"]
    assert m.hand is not None and m.hand.seats[1].up == [cards[1]]
    out = m.handle(DealerInput(DealerAction.UNDO))
    assert [a.code for a in out if hasattr(a, "code")] == ["undo"]
    assert m.hand.seats[1].up == [] and m.hand.seats[1].down == [cards[1]]
    assert (m.public_state()["seats"], m.instruction()) == (before[0]["seats"], before[1])
    out = m.handle(DealerInput(DealerAction.UNDO))
    assert [a.code for a in out if hasattr(a, "code")] == ["undo-refused"]
    m.handle(DealerInput(DealerAction.ACK_ALERT))
    out = m.handle(DealerInput(DealerAction.UNDO))
    msg = [a.message for a in out if hasattr(a, "code")]
    assert len(msg) == 1 and "ack-alert" in msg[0] and m.instruction().signal is Signal.DEAL


def test_irregular_hands_rebuild_exactly_from_their_events() -> None:
    """Every event of hands full of irregularities (undo included), replayed into a fresh machine,
    gives the same public state, the same record of every seat and the same alerts."""
    from shoe_ctl.machine import Dealing
    from shoe_ctl.rules.cards import card_text

    scripts = [
        _script("tda", [Irregularity("expose", "3rd", 3, 0), Irregularity("undo", "4th", 2, args={"at": "betting"})]),
        _script("house", [Irregularity("premature", "4th", count=3), Irregularity("burn-two", "6th")]),
        _script("tda", [Irregularity("premature", "3rd", count=2), Irregularity("expose", "7th", 1)]),
        _script("house", [Irregularity("absent", "3rd", 4), Irregularity("no-burn", "5th", count=2)]),
    ]
    log: list = []
    hands, _ = run(scripts, log=log)
    assert len(hands) == 4
    first = Dealing(PROFILES)
    second = Dealing(PROFILES)
    out1 = [c for ev in log for c in first.handle(ev)]
    out2 = [c for ev in log for c in second.handle(ev)]
    assert out1 == out2
    assert first.public_state() == second.public_state()
    assert first.hand is not None and second.hand is not None
    live = hands[-1]  # the machine that dealt the hands, at the last hand's end
    for s in first.hand.seats:
        assert {"down": [card_text(c) for c in s.down], "up": [card_text(c) for c in s.up],
                "status": s.status} == live.seat(s.seat)
    assert first.hand.stub_count() == live.hand.stub_count()
    assert first.alerts == second.alerts and first.hand.stub_count() == second.hand.stub_count()
    assert [h.codes() for h in hands][1].count("house-16.16") == 1


# --------------------------------------------------------------------------- shoe faults mid-hand


def test_shoe_faults_mid_hand_unreadable_double_pull_jam_counted_right_wire() -> None:
    """On the wire: an unreadable card (counted, identity unknown, dealt where the plan says), a
    double pull (both cards read and counted; the dealer puts the second where the next
    instruction says) and a jam (the dealer waits for the shoe): every seat holds what the dealer
    put there and the stub is right."""
    sc = _script("house", [])
    (e,), dealer = run([sc], wire=True, faults="unreadable-at=5,double-pull-at=14,jam-at=20")
    codes = e.codes()
    assert "unreadable-card" in codes and "shoe-double-pull" in codes and "shoe-jam" in codes
    assert sum(1 for s in e.hand.seats for c in s.down + s.up if c is None) == 1
    assert e.seat(1)["down"][1] == "??"  # the 5th card: seat 1's second hole card
    for s in FOUR:
        assert len(e.seat(s)["down"]) == 3 and len(e.seat(s)["up"]) == 4
    assert e.hand.stub_count() == 52 - 12 - 4 * 5
    assert_table_matches(e, unknown=True)
    assert dealer.stats.pulls == 12 + 4 * 5 - 1  # 32 cards left the shoe in 31 pulls


# --------------------------------------------------------------------------- hole-card embargo


def test_embargo_exposed_cards_public_other_downcards_never_before_showdown(caplog: pytest.LogCaptureFixture) -> None:
    """An exposed hole card (RP-10-A, house 16.2) and an exposed 7th card that stands (house 16.22)
    are upcards from then on and show; no other downcard (the RP-10-B replacement included) reaches
    the display, an alert or an INFO log before the showdown."""
    import json
    import logging

    from shoe_ctl.events import Alert, DisplayUpdate

    class Watch:
        def __init__(self) -> None:
            self.by_hand: dict[int, list[str]] = {}
            self.hand = 0

        def handle(self, c: object) -> None:
            if isinstance(c, DisplayUpdate):
                if c.state.get("hand") is not None and c.state.get("state") not in ("hand_showdown", "idle"):
                    self.hand = c.state["hand"]
                    self.by_hand.setdefault(self.hand, []).append(json.dumps(c.state))
            elif isinstance(c, Alert):
                self.by_hand.setdefault(self.hand, []).append(c.message + " " + " ".join(c.moves))

        def close(self) -> None:
            return None

    watch = Watch()
    scripts = [_script("tda", [Irregularity("expose", "3rd", 3, 0), Irregularity("expose", "7th", 1)],
                       actions={"3rd": [("fold", 4)]}),
               _script("house", [Irregularity("expose-both", "3rd", 2, 0), Irregularity("expose", "7th", 3)])]
    with caplog.at_level(logging.INFO):
        hands, _ = run(scripts, sinks=(watch,))
    logs = " ".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)
    shown = [watch.by_hand[k] for k in sorted(watch.by_hand) if k]
    assert len(hands) == 2 and len(shown) >= 2
    for e, texts in zip(hands, shown, strict=False):
        blob = " ".join(texts)
        downs = [c for s in e.hand.seats for c in s.down if c is not None]
        assert downs
        for c in downs:
            assert f'"{c}"' not in blob and f" {c} " not in f" {logs} ", c
        for s in e.hand.seats:  # exposed cards are upcards now, and public
            for c in s.up:
                assert f'"{c}"' in blob
    out = hands[0].hand.dead_cards  # RP-10-B: the exposed card left play; the seat's new card is hidden
    assert len(out) == 1 and out[0] not in hands[0].hand.seats[0].down


def test_journal_recovery_mid_hand_after_irregularities_and_an_undo(tmp_path) -> None:
    """Every event (irregularity reports and the undo included) journaled; a stop in the middle of
    the hand, just after the undo: recovery from the journal rebuilds the same state, the same
    record of every seat, the same stub and the same instruction."""
    from shoe_ctl.events import DealerAction, DealerInput
    from shoe_ctl.machine import Dealing
    from shoe_ctl.service.journal import Journal
    from shoe_ctl.service.recovery import recover

    sc = _script("house", [Irregularity("premature", "3rd", count=3), Irregularity("undo", "4th", 1,
                                                                                       args={"at": "betting"}),
                           Irregularity("expose", "7th", 2)])
    log: list = []
    run([sc], log=log)
    stop = max(k for k, ev in enumerate(log) if isinstance(ev, DealerInput) and ev.action is DealerAction.UNDO) + 1
    live = Dealing(PROFILES)
    live.start()
    with Journal(tmp_path / "j.sqlite3", table="t", profile="house") as journal:
        for ev in log[:stop]:
            journal.append(ev)
            live.handle(ev)
        machine, _last, _report = recover(journal, lambda: Dealing(PROFILES))
    assert machine.state == live.state and machine.state.endswith("_betting")
    assert machine.public_state() == live.public_state() and machine.instruction() == live.instruction()
    assert machine.hand.set_aside == live.hand.set_aside and len(live.hand.set_aside) == 3 + 4  # 16.16
    assert [(s.down, s.up, s.status) for s in machine.hand.seats] == [(s.down, s.up, s.status) for s in live.hand.seats]
    assert live.hand.seats[0].status == "live"  # the undone fold


def test_reports_at_the_wrong_time_or_with_bad_arguments_change_nothing() -> None:
    from shoe_ctl.events import CardRead, DealerAction, DealerInput
    from shoe_ctl.machine import Dealing

    m = Dealing(PROFILES)
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
    cards = deck(THIRD)
    m.handle(CardRead(1, cards[0], "rfid", 1))
    assert m.hand is not None
    key = (m.state, m.p.step_i, [(s.down, s.up) for s in m.hand.seats], m.hand.stub_count())
    for inp, code in [
        (DealerInput(DealerAction.EXPOSED_CARD, 2), "input-wrong-time"),        # seat 2 has no card yet
        (DealerInput(DealerAction.EXPOSED_CARD, 9), "input-invalid"),           # not dealt in
        (DealerInput(DealerAction.EXPOSED_CARD, 1, {"which": 5}), "input-invalid"),
        (DealerInput(DealerAction.LAST_CARD_EXPOSED, 1), "input-wrong-time"),
        (DealerInput(DealerAction.PREMATURE_DONE), "input-wrong-time"),
        (DealerInput(DealerAction.BURN_ERROR, args={"burns": 2}), "input-wrong-time"),
        (DealerInput(DealerAction.WRONG_BRING_IN, 1), "input-wrong-time"),
        (DealerInput(DealerAction.CARD_COUNT, 1, {"cards": "x"}), "input-invalid"),
    ]:
        out = m.handle(inp)
        assert [a.code for a in out if hasattr(a, "code")] == [code], inp
        m.handle(DealerInput(DealerAction.ACK_ALERT))
        assert (m.state, m.p.step_i, [(s.down, s.up) for s in m.hand.seats], m.hand.stub_count()) == key
