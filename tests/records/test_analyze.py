"""`shoe-ctl analyze` on the shipped example hands and on broken files."""

import dataclasses
import io
import json
from pathlib import Path

import pytest
from paths import EXAMPLES, HAVE_SHARED, SHARED

from shoe_ctl.analyze import analyze_file, analyze_hand
from shoe_ctl.cli import main
from shoe_ctl.config import load_profile
from shoe_ctl.phh import read_phh

KEYS = {"file", "game", "rules", "players", "bring_in", "first_to_act", "seventh", "community_card", "alerts", "error"}


@pytest.fixture(scope="module")
def tda():
    return load_profile("tda")


@pytest.fixture(scope="module")
def house():
    return load_profile("house")


def test_rp_10_h_c_house_16_20_community_card_hand(tda, house):
    """RP-10-H-C / house 16.20: eight players to 7th: stub 1, required 10, one community card.
    RP-10-H-D keeps the 6th-street opener (P3); house 16.20 gives the high hand using the community
    card (P5, trips) the action, so the record (which follows TDA) draws an alert under house."""
    path = EXAMPLES / "eight-players-community-card.phh"
    r = analyze_file(path, tda)
    assert r.error is None
    assert r.bring_in == 4
    assert r.first_to_act == {"3rd": 4, "4th": 3, "5th": 3, "6th": 3, "7th": 3}
    assert r.seventh is not None
    assert (r.seventh["live"], r.seventh["stub"], r.seventh["required"], r.seventh["procedure"]) == (8, 1, 10, "C")
    assert r.community_card == "5d"
    assert r.alerts == []
    h = analyze_file(path, house)
    assert h.seventh is not None and h.seventh["procedure"] == "16.20"
    assert h.first_to_act["7th"] == 5
    assert [(a["code"], a["street"], a["player"], a["expected"]) for a in h.alerts] == [("first-to-act", "7th", 3, 5)]


def test_rp_10_d_razz_suit_tie_example(tda):
    """RP-10-D: razz A-6 against A-6 on 4th: the six of spades acts first."""
    r = analyze_file(EXAMPLES / "razz-suit-tie.phh", tda)
    assert r.game == "razz" and r.bring_in == 1
    assert r.first_to_act == {"3rd": 1, "4th": 4, "5th": 4, "6th": 2, "7th": 2}
    assert r.seventh is not None and r.seventh["procedure"] == "normal"


def test_rp_10_e_house_16_4_stud8_bring_in_all_in_for_ante(tda):
    """RP-10-E / house 16.4: the low card is all-in for the ante; P4 to the left starts; on 4th
    the all-in open pair passes the action on clockwise."""
    r = analyze_file(EXAMPLES / "stud8-bring-in-all-in.phh", tda)
    assert r.game == "stud8" and r.bring_in == 3
    assert r.first_to_act["3rd"] == 4 and r.first_to_act["4th"] == 4
    assert r.seventh is not None and r.seventh["live"] == 3


def test_recorded_seventh_against_profile_is_an_alert(tmp_path, tda):
    """RP-10-H-C prescribes a community card; a record giving everyone a 7th card is an alert,
    not an error."""
    text = (EXAMPLES / "eight-players-community-card.phh").read_text()
    deals = ", ".join(f'"d dh p{i} ??"' for i in range(1, 9))
    p = tmp_path / "own-cards.phh"
    p.write_text(text.replace('"d db 5d",', deals + ","))
    r = analyze_file(p, tda)
    assert r.error is None and r.community_card is None
    codes = [(a["code"], a["street"]) for a in r.alerts]
    assert ("RP-10-H-C", "7th") in codes


def test_unknown_door_card_gives_null_not_error(tmp_path, tda):
    text = (EXAMPLES / "razz-suit-tie.phh").read_text().replace("8d9cQc", "8d9c??")
    p = tmp_path / "unknown.phh"
    p.write_text(text)
    r = analyze_file(p, tda)
    assert r.error is None
    assert r.bring_in is None and r.first_to_act["3rd"] is None
    assert r.first_to_act["4th"] == 4  # the unknown door card folded on 3rd


def _run(argv, capsys):
    code = main(argv)
    return code, capsys.readouterr()


def test_cli_json_one_object_per_line_and_bad_file_goes_on(tmp_path, capsys):
    bad = tmp_path / "a-broken.phh"
    bad.write_text('variant = "F7S"\nactions = [\n')
    worse = tmp_path / "b-wrong.phh"
    worse.write_text((EXAMPLES / "razz-suit-tie.phh").read_text().replace('"p1 pb"', '"p9 pb"'))
    code, out = _run(["analyze", str(tmp_path), str(EXAMPLES), "--json"], capsys)
    assert code == 1
    lines = out.out.splitlines()
    assert len(lines) == 5
    objs = [json.loads(line) for line in lines]
    for o in objs:
        assert KEYS <= set(o)
        assert o["rules"] == "tda"
    assert "a-broken.phh" in objs[0]["error"] and "not a PHH hand record (not TOML" in objs[0]["error"]
    assert "actions[5]" in objs[1]["error"] and "p9" in objs[1]["error"]
    assert [o["error"] for o in objs[2:]] == [None, None, None]
    assert objs[2]["community_card"] == "5d"


def test_cli_table_is_readable(capsys):
    code, out = _run(["analyze", str(EXAMPLES), "--rules", "house"], capsys)
    assert code == 0
    text = out.out
    assert "Rules: house" in text
    row = next(line for line in text.splitlines() if line.startswith("eight-players-community-card.phh"))
    assert "16.20" in row.replace("house-16.20", "16.20") and "5d" in row and "P5*" in row
    assert "first-to-act: P3 acted first; the house rules give P5" in text
    assert "high card by suit (RP-10-D)" in text  # the razz tie is explained
    assert "3 hand(s), 1 alert(s), 0 unreadable file(s)" in text


def test_cli_bad_profile_and_no_files(tmp_path, capsys):
    code, out = _run(["analyze", str(EXAMPLES), "--rules", "nonsense"], capsys)
    assert code == 2 and "nonsense" in out.err
    code, out = _run(["analyze", str(tmp_path)], capsys)
    assert code == 2 and "no .phh file" in out.err


def test_json_is_on_single_lines(capsys):
    buf = io.StringIO()
    from argparse import Namespace

    from shoe_ctl.cli.analyze import run

    assert run(Namespace(paths=[str(EXAMPLES)], rules="tda", json=True, detail=None), buf) == 0
    assert all(line.startswith("{") and line.endswith("}") for line in buf.getvalue().splitlines())


def test_a_record_that_cannot_be_dealt_live_is_an_error_naming_the_file(tmp_path, tda):
    nine = tmp_path / "nine.phh"
    nine.write_text('variant = "F7S"\nantes = 1\nstarting_stacks = [100, 100, 100, 100, 100, 100, 100, 100, 100]\n'
                    'actions = ["d dh p1 AcKc8c"]\n')
    r = analyze_file(nine, tda)
    assert r.error is not None and "nine.phh" in r.error and "9" in r.error
    folded = tmp_path / "folded.phh"
    text = (EXAMPLES / "razz-suit-tie.phh").read_text().replace('"d dh p2 6h", "d dh p4 Ad",', '"d dh p2 6h", "d dh p3 Ad",')
    folded.write_text(text)
    r = analyze_file(folded, tda)
    assert r.error is not None and "folded.phh" in r.error and "p3 folded" in r.error


@pytest.mark.parametrize(("variant", "big"), [("F7S", True), ("F7S/8", False)])
def test_house_16_8_open_pair_text_only_in_stud_high(house, variant, big):
    """house 16.8 (small or big bet for an open pair on 4th) is shown for stud only; stud-8 keeps
    the small bet."""
    from shoe_ctl.analyze import analyze_hand
    from shoe_ctl.phh import parse_phh

    text = f"""variant = "{variant}"
antes = 1
bring_in = 1
starting_stacks = [50, 50]
actions = ["d dh p1 AcKc9c", "d dh p2 2s3s4d", "p2 pb", "p1 cc", "d dh p1 9d", "d dh p2 Jh", "p1 cc", "p2 cc"]
"""
    report = analyze_hand(parse_phh(text, "pair.phh"), house)
    why = report.streets[1].why
    assert "open pair P1" in why
    assert ("small or big bet (house 16.8)" in why) is big


def test_rp_10_h_c_house_16_20_unread_community_card(tmp_path, tda, house):
    """RP-10-H-C / house 16.20 with the community card missing from the record (``d db ??``): it
    is still a community card (no alert that the record dealt own cards); under house 16.20 who
    acts first depends on it, so that is null; under RP-10-H-D it does not."""
    text = (EXAMPLES / "eight-players-community-card.phh").read_text().replace('"d db 5d"', '"d db ??"')
    path = tmp_path / "unread.phh"
    path.write_text(text)
    r = analyze_file(path, tda)
    assert r.error is None and r.alerts == []
    assert r.seventh is not None and r.seventh["procedure"] == "C"
    assert r.first_to_act["7th"] == 3 and r.community_card == "??"
    h = analyze_file(path, house)
    assert h.error is None and h.alerts == []
    assert h.first_to_act["7th"] is None


_GOOD = """variant = "F7S"
antes = [1, 1]
bring_in = 2
starting_stacks = [100, 100]
players = ["a", "b"]
actions = ["d dh p1 AsKd7c", "d dh p2 QsQd2c", "p2 pb", "p1 cc"]
"""


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ('"p1 cc"]', '"p1 cc"', "not a PHH hand record (not TOML"),  # truncated
        ("starting_stacks = [100, 100]", 'starting_stacks = "100"', "line 4, starting_stacks"),
        ('variant = "F7S"', 'variant = "NT"', "line 1, variant"),
        ("AsKd7c", "1sKd7c", "line 6, actions[0]: 'd dh p1 1sKd7c'"),
        ("AsKd7c", "XxKd7c", "line 6, actions[0]: 'd dh p1 XxKd7c'"),
        ("QsQd2c", "AsQd2c", "line 6, actions[1]: 'd dh p2 AsQd2c': As was already dealt"),
        ('"p1 cc"', '"p3 cc"', "line 6, actions[3]: 'p3 cc': 'p3' is not a player"),
        ("antes = [1, 1]", 'antes = [1, "x"]', "line 2, antes"),
        ("bring_in = 2", "bring_in = 2.5", "line 3, bring_in"),
        ('players = ["a", "b"]', 'players = ["a", "b", "c"]', "line 5, players"),
    ],
)
def test_malformed_phh_names_file_and_field_and_the_batch_goes_on(tmp_path, capsys, old, new, where):
    assert old in _GOOD
    (tmp_path / "a_bad.phh").write_text(_GOOD.replace(old, new))
    (tmp_path / "b_good.phh").write_text(_GOOD)
    assert main(["analyze", str(tmp_path), "--json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [Path(d["file"]).name for d in lines] == ["a_bad.phh", "b_good.phh"]
    bad, good = lines
    assert bad["error"].startswith(str(tmp_path / "a_bad.phh") + ": ") and where in bad["error"]
    assert good["error"] is None and good["bring_in"] == 2


_DEAL = """variant = "F7S"
antes = [1, 1, 1]
bring_in = 2
starting_stacks = [100, 100, 100]
players = ["a", "b", "c"]
actions = ["d dh p1 AsKd7c", "d dh p2 QsQd2c", "d dh p3 ????9h", "p2 pb", "p3 cc", "p1 cc",
  "d dh p1 3c", "d dh p2 4d", "d dh p3 5h", "p1 cc", "p2 cc", "p3 cc",
  "d dh p1 6c", "d dh p2 8d", "d dh p3 Jh", "p1 cc", "p2 cc", "p3 cc"]
"""


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        # a 4th card while 3rd street is still being dealt
        ('"d dh p1 AsKd7c", ', '"d dh p1 AsKd7c", "d dh p1 Ah", ', "actions[1]: 'd dh p1 Ah': p1"),
        # p2, still in, gets no 4th-street upcard, yet 4th-street betting starts
        ('"d dh p2 4d", ', "", "actions[8]: 'p1 cc': p2"),
        # the record ends with p3, still in, short of its 6th-street card
        ('"p3 cc"]', '"p3 cc", "d dh p1 2s", "d dh p2 2d"]', "actions: p3"),
    ],
)
def test_malformed_deal_is_an_error_naming_file_player_and_street(tmp_path, capsys, old, new, where):
    """A record that deals a player a card of the wrong street, or leaves a player still in
    without a street's card, is an error for that hand; the batch goes on."""
    assert old in _DEAL
    (tmp_path / "a_bad.phh").write_text(_DEAL.replace(old, new))
    (tmp_path / "b_good.phh").write_text(_DEAL)
    assert main(["analyze", str(tmp_path), "--json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [Path(d["file"]).name for d in lines] == ["a_bad.phh", "b_good.phh"]
    bad, good = lines
    assert bad["error"].startswith(str(tmp_path / "a_bad.phh") + ": "), bad["error"]
    assert where in bad["error"] and "street" in bad["error"], bad["error"]
    street = {"p1": "3rd street", "p2": "4th street", "p3": "6th street"}[where[-2:]]
    assert street in bad["error"] and "malformed deal" in bad["error"], bad["error"]
    assert good["error"] is None and good["players"] == 3


def _decisions(report):
    return ([(v.street, v.first, v.recorded, v.betting) for v in report.streets], report.bring_in,
            report.first_to_act, [a for a in report.alerts if a["code"] == "first-to-act"])


def _example_and_real_hands():
    files = sorted(EXAMPLES.glob("*.phh"))
    if HAVE_SHARED:
        files += sorted((SHARED / "data" / "stud" / "phh").rglob("*.phh"))
    return files


def test_firsts_only_decides_as_the_whole_analysis(tda, house):
    """``analyze_hand(..., firsts_only=True)`` (what ``shoe-ctl replay`` asks beside the machine's
    decisions) names the same bring-in, first to act per street, recorded first actor and
    first-to-act alerts as the whole analysis, without the live deal's 7th-street check or texts;
    on the examples, a record acting out of turn, and the real hands where ``../shared`` is."""
    hands = [read_phh(f) for f in _example_and_real_hands()]
    # a record in which P1 acts first on 4th where the rules name P3 (eight-players example)
    record = read_phh(EXAMPLES / "eight-players-community-card.phh")
    actions = list(record.actions)
    k = next(k for k, a in enumerate(actions) if a.street == "4th" and a.kind in ("cbr", "cc", "f"))
    actions[k] = actions[k]._replace(player=(actions[k].player + 1) % record.n)
    hands.append(dataclasses.replace(record, actions=tuple(actions)))
    alerts = 0
    for hand in hands:
        for profile in (tda, house):
            whole = analyze_hand(hand, profile)
            firsts = analyze_hand(hand, profile, firsts_only=True)
            assert _decisions(firsts) == _decisions(whole), hand.path
            assert firsts.seventh is None and all(v.why == "" for v in firsts.streets)
            alerts += len(_decisions(whole)[3])
    assert alerts > 0  # the out-of-turn record is one
