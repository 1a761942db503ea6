"""Proof on real hands: `analyze` over every PHH hand of the shared data set against expected.jsonl.

expected.jsonl is read off the recorded actions (who acted first), never computed from a rule. Its
``bring_in`` is the player who opened 3rd street (compare with our ``first_to_act["3rd"]``), its
``first_to_act`` gives 4th-7th. Every street whose upcards the record gives must agree, under both
profiles, unless the hand and street are listed in DIFFERENCES and documented in docs/rules.md
("Real hands: differences"). On streets with unknown upcards our answer must be null or agree.

The data is read from ``../shared`` relative to the repository root (env SHOE_CTL_SHARED
overrides); the test is skipped when it is absent.
"""

import json

import pytest
from paths import ROOT, SHARED_PHH

from shoe_ctl.analyze import analyze_file, iter_phh_files
from shoe_ctl.config import load_profile

PHH = SHARED_PHH
EXPECTED = PHH / "expected.jsonl"

# (file, street) -> reason; each must also appear in the docs under "Real hands: differences".
DIFFERENCES: dict[tuple[str, str], str] = {}

pytestmark = pytest.mark.shared


def _expected() -> list[dict]:
    return [json.loads(line) for line in EXPECTED.read_text().splitlines() if line.strip()]


def _unknown_streets(entry: dict) -> set[str]:
    for note in entry["notes"]:
        if note.startswith("upcards-unknown:"):
            return {s.strip() for s in note.split(":", 1)[1].split(",")}
    return set()


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_every_real_hand_agrees_with_the_recorded_first_actor(rules):
    """house 16.3, RP-10-E, house 16.4, RP-10-D, house 16.14 on 208 real hands."""
    profile = load_profile(rules)
    entries = _expected()
    files = {str(p.relative_to(PHH)) for p in iter_phh_files([PHH])}
    assert files == {e["file"] for e in entries}, "expected.jsonl and the .phh files differ"
    compared = agreed = 0
    disagreements = []
    for e in entries:
        r = analyze_file(PHH / e["file"], profile)
        assert r.error is None, r.error
        assert r.game == e["game"]
        assert r.community_card == e["community_card"]
        want = dict(e["first_to_act"])
        unknown = _unknown_streets(e)
        if e["bring_in"] is None:
            assert "3rd" not in r.first_to_act, e["file"]  # nobody could act on 3rd
        else:
            want["3rd"] = e["bring_in"]
        for street, player in want.items():
            got = r.first_to_act.get(street, "not reported")
            if street in unknown:
                assert got in (None, player), (e["file"], street, got, player)
                continue
            compared += 1
            if got == player:
                agreed += 1
            elif (e["file"], street) not in DIFFERENCES:
                disagreements.append((e["file"], street, player, got))
        # no street reported that the table did not bet (fewer than two able to act)
        extra = set(r.first_to_act) - set(want) - ({"3rd"} if e["bring_in"] is None else set())
        assert not extra, (e["file"], extra)
    assert not disagreements, disagreements
    assert compared > len(entries)  # every hand contributes at least its 3rd street, most more
    assert agreed + sum(1 for k in DIFFERENCES if k[0] in files) == compared


def test_differences_are_documented():
    text = (ROOT / "docs" / "rules.md").read_text()
    assert "## Real hands: differences" in text
    for (file, street), _reason in DIFFERENCES.items():
        assert file in text and street in text


@pytest.mark.parametrize(("rules", "procedure", "rule"), [("tda", "C", "RP-10-H-D"), ("house", "16.20", "house-16.20")])
def test_community_card_hand(rules, procedure, rule):
    """RP-10-H-C / RP-10-H-D and house 16.20 on the one real short-stub hand (PokerStars #30506593746):
    eight players to 7th, stub 1, required 10; 6h dealt as a community card; P1 acts first."""
    r = analyze_file(PHH / "Stars" / "30506593746.phh", load_profile(rules))
    assert r.community_card == "6h"
    assert r.seventh == {"live": 8, "stub": 1, "required": 10, "procedure": procedure, "clause": r.seventh["clause"]}
    assert r.first_to_act["7th"] == 1
    assert r.alerts == []
    assert any(v.street == "7th" and rule in v.why for v in r.streets)
