"""HIL: what the machine's public state tells the dealer, through the real pty: the open pair on
4th street only, in the words of the game and profile (RP-10-F, house 16.8); the stub gauge once a
short-stub procedure has fixed the shortage; no hand left in the public state once the hand is
complete; a refusal in the dealer's words."""

from __future__ import annotations

from typing import Any

import pytest
from irregular_help import assert_table_matches, deck, run

from hil.dealer import HandScript
from shoe_ctl.events import DisplayUpdate, Instruction

FOUR = [1, 2, 3, 4]
# 3rd street as in test_hil_irregular; 4th street: burn, then seat 1 gets 9h (pairs its 9s door card)
PAIRED = ["As", "Ks", "2c", "Qs", "Ah", "Kh", "Qh", "Jh", "9s", "8s", "7s", "6s", "2d", "9h", "3c", "4d", "5h"]


class States:
    """A sink keeping every public state and instruction the machine published."""

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []
        self.texts: list[str] = []

    def handle(self, c: object) -> None:
        if isinstance(c, DisplayUpdate):
            self.states.append(c.state)
        elif isinstance(c, Instruction):
            self.texts.append(c.text)

    def close(self) -> None:
        return None


@pytest.mark.parametrize("game, rules, clause, allows", [
    ("stud", "house", "house-16.8", "the smaller or the larger bet may be made"),
    ("stud", "tda", "RP-10-F", "bets stay small (not doubled)"),
    ("stud8", "house", "house-16.8", "bets stay small (stud8: no larger bet for a pair)"),
    ("stud8", "tda", "RP-10-F", "bets stay small (not doubled)"),
])
def test_open_pair_told_on_fourth_only_in_the_words_of_the_game_wire(game: str, rules: str, clause: str,
                                                                     allows: str) -> None:
    """Seat 1 pairs its door card on 4th street: on 4th (and only there) the seat is marked, the
    state names the clause and what it allows, and the 4th-street betting instruction says it; on
    5th street and later nothing says open pair any more."""
    watch = States()
    sc = HandScript(list(FOUR), game, rules, deck(PAIRED), {})
    (e,), _ = run([sc], wire=True, sinks=(watch,))
    assert_table_matches(e)
    fourth = [s for s in watch.states if s.get("street") == "4th" and s["state"].endswith("betting")]
    assert fourth
    for s in fourth:
        assert [x["seat"] for x in s["seats"] if x["open_pair"]] == [1]
        assert s["open_pair"]["clause"] == clause and s["open_pair"]["seats"] == [1]
        assert s["open_pair"]["big_bet"] == (clause == "house-16.8" and game == "stud")
        assert allows in s["open_pair"]["text"].lower()
    later = [s for s in watch.states if s.get("street") in ("5th", "6th", "7th") or s["state"] == "hand_showdown"]
    assert later and all(not x.get("open_pair") for s in later for x in s["seats"])
    assert all(s["open_pair"] is None for s in later)
    bets = [t for t in watch.texts if t.startswith("Betting on 4th")]
    assert bets and all(allows in t.lower() and clause.replace("house-", "house ") in t for t in bets)
    assert not any("open pair" in t.lower() for t in watch.texts if t.startswith(("Betting on 5th", "Betting on 6th")))


@pytest.mark.parametrize("game, prefix", [("stud", PAIRED[:13] + ["Th"]), ("razz", PAIRED)])
def test_no_open_pair_no_words(game: str, prefix: list[str]) -> None:
    """No pair showing, or razz (no open-pair rule: a pair is no asset there): nothing is said."""
    watch = States()
    (e,), _ = run([HandScript(list(FOUR), game, "house", deck(prefix), {})], sinks=(watch,))
    assert_table_matches(e)
    assert all(s["open_pair"] is None and not any(x.get("open_pair") for x in s["seats"]) for s in watch.states)
    assert not any("open pair" in t.lower() for t in watch.texts)


def test_idle_after_hand_complete_has_no_hand_in_its_public_state_wire() -> None:
    """After ``hand-complete`` the public state says no hand: ``hand`` is null, ``last_hand`` the
    hand's number, the seats only their numbers (for the next hand's sheet), no street and a
    full deck's stub."""
    watch = States()
    (e,), _ = run([HandScript(list(FOUR), "stud", "tda", deck([]), {})], wire=True, sinks=(watch,))
    assert_table_matches(e)
    last = watch.states[-1]
    assert last["state"] == "idle" and last["hand"] is None and last["last_hand"] == 1
    assert last["seats"] == [{"seat": s} for s in FOUR] and last["street"] is None
    assert last["stub"]["count"] == 52 and last["community"] is None and last["open_pair"] is None


def _stub_rows(watch: States, street: str) -> list[dict[str, Any]]:
    return [s for s in watch.states if s.get("street") == street and s["state"] != "idle"]


@pytest.mark.parametrize("rules, folds", [("house", 1), ("tda", 1), ("house", 2), ("tda", 0)])
def test_stub_gauge_shows_the_fixed_situation_after_the_procedure_wire(rules: str, folds: int) -> None:
    """Once the short-stub procedure of 7th street has gathered the new stub (scramble and cut) or
    dealt its community card, the gauge's required number is what the rest of the street takes
    and no shortage is forecast; the stub always holds what it shows."""
    watch = States()
    acts = {"3rd": [("fold", 8 - k) for k in range(folds)]}
    (e,), _ = run([HandScript(list(range(1, 9)), "stud", rules, deck([]), acts)], wire=True, sinks=(watch,),
                  timeout=40)
    assert_table_matches(e)
    assert e.procedures["7th"] != "normal"
    rows = _stub_rows(watch, "7th")
    short = [k for k, s in enumerate(rows) if s["stub"]["forecast"] == "7th"]
    assert short, "before the procedure's step the shortage is shown"
    fixed = rows[short[-1] + 1:]
    assert fixed, "the gauge never showed the fixed situation"
    for s in fixed:
        assert s["stub"]["forecast"] is None
        assert s["stub"]["count"] >= s["stub"]["required"]  # not short: the procedure fixed it
    assert any(s["state"].endswith(("deal", "reload")) for s in fixed) or e.procedures["7th"] in ("B", "C", "16.20")


def test_a_refusal_is_in_the_dealer_words() -> None:
    from irregular_help import PROFILES

    from shoe_ctl.events import DealerAction, DealerInput
    from shoe_ctl.machine import Dealing

    m = Dealing(PROFILES)
    m.start()
    out = m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
    msg = [c.message for c in out if hasattr(c, "code")]
    assert msg == ["'betting-complete' refused now (no hand running): no hand is running; nothing changed"]
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    out = m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
    msg = [c.message for c in out if hasattr(c, "code")]
    assert msg == ["'betting-complete' refused now (3rd street, dealing): no betting round is open; nothing changed"]
    assert all("hand_" not in t for t in msg)

