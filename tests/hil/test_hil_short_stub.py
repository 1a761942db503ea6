"""HIL: every short-stub path of both profiles, dealt end to end.

Each hand goes through the virtual shoe on a real pty, ``ShoeLink``, the controller thread and the
dealing machine, dealt by the simulated dealer that sees only the command stream. Seven or eight
seats are dealt with folds placed so that 7th street takes the path under test (52 cards, no burn
before 3rd; stub before 7th = 52 - 3*seats - 3 burns - cards dealt on 4th..6th):

- TDA RP-10-H: ``normal`` (8 seats, 3 fold on 3rd: stub 10, required 7), ``A`` (8 seats, 2 fold:
  stub 7, required 8; 7 seats, none fold: stub 7, required 9), ``B`` (8 seats, 1 folds: stub 4,
  required 9), ``C`` (8 seats, none fold: stub 1, required 10), ``D`` (with the community card the
  first to act on 6th acts first on 7th, stacked so that the community card would make another
  board high).
- House 16.18-16.20: ``normal`` (3 fold), ``16.18`` (2 fold: burn, 5 from the stub, scramble the
  last card with the four burns, cut, burn, deal 1), ``16.19`` (1 folds: burn, 2 from the stub,
  scramble, cut, no burn, deal 5), ``16.20`` (none fold: scramble, cut, burn, community card).

Each test checks the exact LED sequence, the cards that end in each hand (the machine's record of
every seat equals what the dealer physically put there), the stub left, and who acts first on 7th.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from rule_profiles import PROFILES

from hil.dealer import HandScript, TablePicture
from hil.deck import Deck
from hil.replay import HandRecord, run_full
from shoe_ctl.rules.cards import Card, card_text
from shoe_ctl.rules.games import Game, TieRule, first_to_act

EIGHT = [1, 2, 3, 4, 5, 6, 7, 8]
SEVEN = [1, 2, 3, 4, 5, 6, 7]


def _c(text: str) -> Card:
    return Card.parse(text)


def _d_deck() -> list[Card]:
    """8 seats, seat 8 folds on 3rd (TDA B). On 6th seat 1 shows A K Q J (high); the community
    card 9h would pair seat 3's 9c (a house-16.20 high hand) — RP-10-H-D keeps seat 1 first."""
    ups = {1: "As Ks Qs Js", 2: "2c 3c 4c 6d", 3: "9c 5d 7h 2s", 4: "3d 4d 6h 8c",
           5: "3h 5c 7c Tc", 6: "4h 6c 8d Td", 7: "5h 7d 8h Th", 8: "2d"}
    board = {s: [_c(t) for t in v.split()] for s, v in ups.items()}
    order: list[Card | None] = [None] * 16 + [board[s][0] for s in EIGHT]
    for k in (1, 2, 3):
        order.append(None)  # burn
        order.extend(board[s][k] for s in SEVEN)
    order += [None, _c("9h")]  # 7th: burn, community card
    return Deck.with_prefix(order, seed=5).cards()


@dataclass(frozen=True)
class Case:
    name: str
    rules: str
    seats: list[int]
    folds: list[int]          # fold on 3rd
    seventh: list[str]        # the 7th-street LED words before betting
    procedure: str
    stub_left: int
    deck_seed: int = 0


def _deals(seats: list[int], face: str) -> list[str]:
    return [f"deal:{s}:{face}" for s in seats]


def _cases() -> list[Case]:
    five, six, seven = EIGHT[:5], EIGHT[:6], EIGHT[:7]
    return [
        Case("tda-normal", "tda", EIGHT, [6, 7, 8], ["burn", *_deals(five, "down")], "normal", 4),
        Case("tda-A", "tda", EIGHT, [7, 8], ["scramble", "cut", "burn", *_deals(six, "down")], "A", 3),
        Case("tda-A-7-seats", "tda", SEVEN, [], ["scramble", "cut", "burn", *_deals(seven, "down")], "A", 2),
        Case("tda-B-D", "tda", EIGHT, [8], ["burn", "community"], "B", 2),
        Case("tda-C", "tda", EIGHT, [], ["scramble", "cut", "burn", "community"], "C", 2),
        Case("house-normal", "house", EIGHT, [6, 7, 8], ["burn", *_deals(five, "down")], "normal", 4),
        Case("house-16.18", "house", EIGHT, [7, 8],
             ["burn", *_deals(six[:5], "down"), "scramble", "cut", "burn", *_deals(six[5:], "down")], "16.18", 3),
        Case("house-16.19", "house", EIGHT, [8],
             ["burn", *_deals(seven[:2], "down"), "scramble", "cut", *_deals(seven[2:], "down")], "16.19", 0),
        Case("house-16.20", "house", EIGHT, [], ["scramble", "cut", "burn", "community"], "16.20", 2),
    ]


CASES = _cases()


@pytest.fixture(scope="module")
def dealt() -> dict[str, tuple[HandRecord, TablePicture, HandScript]]:
    profiles = PROFILES
    scripts = []
    for k, case in enumerate(CASES):
        deck = _d_deck() if case.name == "tda-B-D" else Deck.seeded(100 + k).cards()
        scripts.append(HandScript(list(case.seats), "stud", case.rules, deck,
                                  {"3rd": [("fold", s) for s in case.folds]}, name=case.name))
    recorder, dealer = run_full(scripts, profiles, seed=7, timeout=60, auto_ack=False)
    assert dealer.stalled is None
    assert len(recorder.hands) == len(CASES) == len(dealer.history)
    return {c.name: (h, p, s) for c, h, p, s in zip(CASES, recorder.hands, dealer.history, scripts, strict=True)}


def _expected_leds(case: Case) -> list[str]:
    live = [s for s in case.seats if s not in case.folds]
    seq = _deals(case.seats, "down") * 2 + _deals(case.seats, "up") + ["betting"]
    for _ in ("4th", "5th", "6th"):
        seq += ["burn", *_deals(live, "up"), "betting"]
    seq += [*case.seventh, "betting", "showdown"]
    return seq


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_short_stub_path_led_sequence_cards_stub_and_first_on_7th(case: Case, dealt: dict) -> None:
    """RP-10-H, RP-10-H-A, RP-10-H-B, RP-10-H-C, RP-10-H-D, house 16.18, 16.19, 16.20 end to end."""
    hand, picture, _script = dealt[case.name]
    assert hand.signals() == _expected_leds(case)
    summary = hand.summary
    assert summary["seventh"]["procedure"] == case.procedure
    assert hand.stub == case.stub_left
    # The cards that end in each hand: 7 for every player at showdown (6 own + the community card
    # in a community-card procedure), 3 for those who folded on 3rd.
    community = summary["community_card"]
    assert (community is not None) == (case.procedure in ("B", "C", "16.20"))
    for seat in case.seats:
        cards = hand.cards[seat]
        held = len(cards["down"]) + len(cards["up"])
        if seat in case.folds:
            assert (held, cards["status"]) == (3, "folded")
        else:
            assert held == (6 if community else 7)
            assert len(cards["down"]) == (2 if community else 3)
    assert "duplicate-card" not in hand.alerts and "card-not-in-stub" not in hand.alerts
    # Who acts first on 7th (1-based player order == table seat here).
    first7 = summary["first_to_act"]["7th"]
    boards = [[Card.parse(t) for t in hand.cards[s]["up"]] for s in case.seats]
    in_hand = [s not in case.folds for s in case.seats]
    if case.name == "tda-B-D":
        assert community == "9h"
        assert first7 == 1 == summary["first_to_act"]["6th"]
        house_view = first_to_act(Game.STUD, boards, in_hand, in_hand, TieRule.SUIT, Card.parse("9h"))
        assert house_view == 2  # seat 3 (index 2) would act first with the community card counted
    elif case.procedure == "C":
        assert first7 == summary["first_to_act"]["6th"]  # RP-10-H-D
    else:
        comm = Card.parse(community) if community else None
        expected = first_to_act(Game.STUD, boards, in_hand, in_hand, TieRule.SUIT, comm)
        assert expected is not None and first7 == expected + 1


def test_machine_cards_equal_the_dealers_physical_cards(dealt: dict) -> None:
    """Every card the machine assigned to a seat is the card the dealer put there (by identity,
    face and order), for every seat of every hand; the stub left is what is physically in the shoe."""
    for name, (hand, picture, script) in dealt.items():
        for seat in script.seats:
            physical = picture.seats[seat]
            assert hand.cards[seat]["down"] == [card_text(c) for f, c in physical if f == "down"], name
            assert hand.cards[seat]["up"] == [card_text(c) for f, c in physical if f == "up"], name
        assert hand.stub == len(picture.stub()), name
        comm = hand.summary["community_card"]
        assert [card_text(c) for c in picture.community] == ([comm] if comm else []), name


def test_card_text_roundtrip_for_recorded_cards(dealt: dict) -> None:
    hand, _p, _s = dealt["tda-B-D"]
    assert hand.cards[1]["up"] == ["As", "Ks", "Qs", "Js"]
    assert card_text(Card.parse(hand.cards[3]["up"][0])) == "9c"
