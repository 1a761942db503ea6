"""Reading PHH hand records (shoe_ctl.phh): the typed hand, and clear errors for bad files."""

import contextlib
import io
import json
import math

import pytest

from shoe_ctl.analyze import analyze_hand
from shoe_ctl.cli import main
from shoe_ctl.config import load_profile
from shoe_ctl.phh import Action, PhhError, parse_phh, read_phh
from shoe_ctl.rules.cards import Card
from shoe_ctl.rules.games import Game

GOOD = """\
variant = "F7S"
antes = [1, 1, 1]
bring_in = 2
small_bet = 4
big_bet = 8
starting_stacks = [100, 50, 3]
actions = [
  "d dh p1 AcKc8c", "d dh p2 ????Tc", "d dh p3 7sQs2d",
  "p3 pb", "p1 cbr 4", "p2 f", "p3 cc  # all-in",
  "d dh p1 9c", "d dh p3 7h",
  "d dh p1 9d", "d dh p3 3s",
  "d dh p1 Th", "d dh p3 Qh",
  "d db 6h",
  "p1 sm AcKc8c9c9dTh", "p3 sm",
]
players = ["Ann", "Bob", "Cy"]
"""


def test_reads_fields_cards_and_streets():
    hand = parse_phh(GOOD, "good.phh")
    assert hand.game is Game.STUD and hand.n == 3
    assert hand.players == ("Ann", "Bob", "Cy")
    assert hand.antes == (1, 1, 1) and hand.starting_stacks == (100, 50, 3)
    assert hand.bring_in == 2 and hand.small_bet == 4 and hand.big_bet == 8
    assert hand.cards[1] == (None, None, Card.parse("Tc"))
    assert hand.door_cards() == [Card.parse("8c"), Card.parse("Tc"), Card.parse("2d")]
    assert hand.upcards(0, "5th") == [Card.parse("8c"), Card.parse("9c"), Card.parse("9d")]
    assert hand.community == Card.parse("6h") and hand.community_street == "7th"
    assert hand.streets_dealt() == ["3rd", "4th", "5th", "6th", "7th"]
    kinds = [(a.street, a.kind, a.player, a.amount) for a in hand.actions if a.kind not in ("dh", "db")]
    assert kinds[:4] == [("3rd", "pb", 2, None), ("3rd", "cbr", 0, 4), ("3rd", "f", 1, None), ("3rd", "cc", 2, None)]
    shows = [a for a in hand.actions if a.kind == "sm"]
    assert shows[0].street == "7th" and len(shows[0].cards) == 6 and shows[1].cards == ()
    # every action a whole Action (made in C from its six values): the type, its fields by name
    assert [a.index for a in hand.actions] == list(range(len(hand.actions)))
    for a in hand.actions:
        assert type(a) is Action and len(a) == 6 and a == Action(*a) and a._asdict()["kind"] == a.kind


def test_players_default_and_scalar_antes():
    text = GOOD.replace('players = ["Ann", "Bob", "Cy"]\n', "").replace("antes = [1, 1, 1]", "antes = 1")
    hand = parse_phh(text, "x.phh")
    assert hand.players == ("P1", "P2", "P3") and hand.antes == (1, 1, 1)


def _error(text: str) -> str:
    with pytest.raises(PhhError) as info:
        parse_phh(text, "bad.phh")
    return str(info.value)


def test_bad_toml_names_the_file_and_line():
    msg = _error(GOOD + "oops = \n")
    assert msg.startswith("bad.phh:") and "line" in msg


@pytest.mark.parametrize(
    ("old", "new", "expect"),
    [
        ('variant = "F7S"', 'variant = "NT"', "line 1, variant"),
        ("starting_stacks = [100, 50, 3]", "starting_stacks = [100, 50]", "line 16, players: has 3 names for 2 starting stacks"),
        ("bring_in = 2", 'bring_in = "two"', "line 3, bring_in"),
        ('players = ["Ann", "Bob", "Cy"]', 'players = ["Ann"]', "players"),
        ('"p3 pb"', '"p4 pb"', "line 9, actions[3]"),
        ('"p3 pb"', '"p3 xx"', "actions[3]"),
        ('"p1 cbr 4"', '"p1 cbr four"', "actions[4]"),
        ('"d dh p3 7h"', '"d dh p3 7x"', "line 10, actions[8]"),
        ('"d dh p3 7h"', '"d dh p3 9c"', "already dealt"),
        ('"d dh p1 9c"', '"d dh p1 9c5c"', "two streets"),
    ],
)
def test_bad_field_or_action_names_file_line_and_place(old, new, expect):
    assert old in GOOD
    msg = _error(GOOD.replace(old, new))
    assert msg.startswith("bad.phh:")
    assert expect in msg


def test_an_eighth_card_is_refused():
    text = GOOD.replace('"d db 6h",', '"d dh p1 2c", "d dh p1 2h",')
    assert "8th card" in _error(text)


def test_more_than_eight_players_names_the_field():
    text = GOOD.replace("starting_stacks = [100, 50, 3]", "starting_stacks = [100, 50, 3, 9, 9, 9, 9, 9, 9]")
    text = text.replace('players = ["Ann", "Bob", "Cy"]', 'players = ["A", "B", "C", "D", "E", "F", "G", "H", "I"]')
    text = text.replace("antes = [1, 1, 1]", "antes = 1")
    assert "line 6, starting_stacks: 9 players; a stud table deals to 8 at most" in _error(text)


def test_missing_field():
    assert "starting_stacks: missing" in _error(GOOD.replace("starting_stacks = [100, 50, 3]\n", ""))


def test_unreadable_and_non_utf8_files(tmp_path):
    with pytest.raises(PhhError, match=r"absent.phh: whole file: cannot read") as got:
        read_phh(tmp_path / "absent.phh")
    assert got.value.where == "whole file"
    p = tmp_path / "latin.phh"
    p.write_bytes(b'variant = "F7S"\n# caf\xe9\n')
    with pytest.raises(PhhError, match=r"latin.phh: line 2: not UTF-8"):
        read_phh(p)


def test_toml_without_variant_or_actions_names_the_top_level(tmp_path):
    p = tmp_path / "other.phh"
    p.write_text('seats = [1, 2]\n')
    with pytest.raises(PhhError, match=r"other.phh: top level: not a PHH hand record") as got:
        read_phh(p)
    assert got.value.where == "top level"


def test_inf_is_an_unknown_stack_that_never_runs_out(tmp_path):
    """phh-std writes an unknown stack as ``inf``: read as ``math.inf``; ``analyze --json`` of
    such a file is strict JSON (no ``Infinity``)."""
    text = GOOD.replace("starting_stacks = [100, 50, 3]", "starting_stacks = [inf, inf, 3]")
    hand = parse_phh(text, "inf.phh")
    assert hand.starting_stacks == (math.inf, math.inf, 3)
    path = tmp_path / "inf.phh"
    path.write_text(text)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["analyze", "--json", str(path)]) == 0

    def refuse(word):
        raise AssertionError(f"not strict JSON: {word}")

    (row,) = [json.loads(line, parse_constant=refuse) for line in buf.getvalue().splitlines()]
    assert row["error"] is None and row["bring_in"] == 3
    # the same decisions as with stacks too deep to run out: P3 all-in with the bring-in, P1 alone
    # with chips, so no betting (and no first to act) after 3rd
    big = analyze_hand(parse_phh(GOOD.replace("[100, 50, 3]", "[10000, 10000, 3]"), "x"), load_profile("tda"))
    assert row["first_to_act"] == big.as_json()["first_to_act"] == {"3rd": 3}
    assert row["seventh"] == big.as_json()["seventh"]


@pytest.mark.parametrize(
    ("stacks", "says"),
    [
        ("[null, 50, 3]", "TOML has no null: write inf for an unknown stack"),
        ("null", "TOML has no null: write inf for an unknown stack"),
        ("[nan, 50, 3]", "not a list of whole numbers >= 0 (or inf for an unknown stack)"),
        ("[-inf, 50, 3]", "not a list of whole numbers >= 0 (or inf for an unknown stack)"),
        ("[1.5, 50, 3]", "not a list of whole numbers >= 0 (or inf for an unknown stack)"),
    ],
)
def test_null_nan_and_negative_stacks_are_refused_with_the_line(stacks, says):
    msg = _error(GOOD.replace("starting_stacks = [100, 50, 3]", f"starting_stacks = {stacks}"))
    assert msg.startswith("bad.phh: line 6") and says in msg


def test_a_file_read_in_short_pieces_is_read_whole(tmp_path, monkeypatch):
    """A read may return fewer bytes than asked before the file's end (a pipe-like file system):
    ``read_phh`` reads on until the size ``fstat`` gave, then stops without asking again."""
    import os

    import shoe_ctl.phh as phh

    p = tmp_path / "pieces.phh"
    p.write_text(GOOD)
    real = os.read
    asked: list[int] = []

    def piece(fd: int, n: int) -> bytes:
        asked.append(n)
        return real(fd, min(n, 7))

    monkeypatch.setattr(phh.os, "read", piece)
    assert read_phh(p) == parse_phh(GOOD, str(p))
    assert len(asked) == -(-len(GOOD.encode()) // 7)  # every piece, and no read after the last


def test_inf_is_refused_where_a_number_is_needed():
    assert "antes" in _error(GOOD.replace("antes = [1, 1, 1]", "antes = [1, inf, 1]"))
    assert "bring_in" in _error(GOOD.replace("bring_in = 2", "bring_in = inf"))


def test_a_file_growing_after_its_size_was_taken_is_read_to_the_end(tmp_path, monkeypatch):
    """``read_phh`` asks for the size ``fstat`` gave (plus one byte) and reads on while more comes,
    up to the limit: a file that grew meanwhile reads whole, as one read of the limit read it."""
    import os
    from types import SimpleNamespace

    import shoe_ctl.phh as phh

    p = tmp_path / "grown.phh"
    p.write_text(GOOD)
    real = os.fstat

    def stale(fd: int) -> object:
        st = real(fd)
        return SimpleNamespace(st_mode=st.st_mode, st_size=10)  # the size before it grew

    monkeypatch.setattr(phh.os, "fstat", stale)
    assert read_phh(p) == parse_phh(GOOD, str(p))
    monkeypatch.setattr(phh, "MAX_PHH_BYTES", 40)  # grew past the limit: cut there, as before
    with pytest.raises(PhhError):
        read_phh(p)
