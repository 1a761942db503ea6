"""Recorded hands keep their table seats: ``run --hands`` deals each player at the seat the record
gives (``seats`` / ``_seats``), and ``analyze`` reports those seats next to the player numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

from shoe_ctl.cli import main
from shoe_ctl.phh import PhhError, parse_phh, read_phh

EXAMPLE = ROOT / "examples" / "razz-suit-tie.phh"
HAND = """variant = "F7S"
antes = 1
bring_in = 1
starting_stacks = [100, 100, 100]
actions = ["d dh p1 2c3d4h", "d dh p2 5c6d7h", "d dh p3 8c9dTh"]
"""


def test_table_seats_counted_from_one_and_merges_zero_moved_up() -> None:
    assert parse_phh(HAND + "_seats = [2, 5, 8]\n").table_seats() == [2, 5, 8]
    assert parse_phh(HAND).table_seats() is None
    # a record counting seats from 0: seat 0 is table seat 1
    assert parse_phh(HAND + "_seats = [0, 3, 7]\n").table_seats() == [1, 4, 8]
    assert parse_phh(HAND + '_seats = [3, 5, 6]\n_source = "Merge/x.xml#1"\n').table_seats() == [4, 6, 7]
    # a 10-seat table's record does not fit an 8-seat machine
    wide = parse_phh(HAND + "_seats = [2, 9, 10]\n")
    assert wide.table_seats() == [2, 9, 10] and wide.table_seats(8) is None
    # PHH's own optional field wins over the user field
    assert parse_phh(HAND + "seats = [1, 2, 3]\n_seats = [4, 5, 6]\n").table_seats() == [1, 2, 3]


@pytest.mark.parametrize("value, words", [("[1, 2]", "2 seats for 3 players"), ("[1, 1, 2]", "twice"),
                                          ('["a", 1, 2]', "not a list of seat numbers")])
def test_a_bad_seats_field_is_an_error_naming_it(value: str, words: str) -> None:
    with pytest.raises(PhhError, match=words) as exc:
        parse_phh(HAND + f"_seats = {value}\n", "h.phh")
    assert "_seats" in str(exc.value) and "h.phh" in str(exc.value)


def test_analyze_reports_the_records_table_seats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--json", str(EXAMPLE)]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["seats"] == [1, 3, 4, 6, 7]
    assert obj["first_to_act"]["4th"] == 4  # the player keys stay 1-based player numbers
    assert main(["analyze", str(EXAMPLE)]) == 0
    assert "table seats: P1 seat 1, P2 seat 3, P3 seat 4, P4 seat 6, P5 seat 7" in capsys.readouterr().out


def test_run_hands_deals_at_the_recorded_seats() -> None:
    """P4 (table seat 6) acts first on 4th: the console says seat 6, as the record and analyze do."""
    assert read_phh(EXAMPLE).table_seats(8) == [1, 3, 4, 6, 7]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run(
        [sys.executable, "-m", "shoe_ctl.cli", "run", "--hands", str(EXAMPLE), "--pace", "0", "--exit-when-done",
         "--display", "off", "--journal", "off"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Betting on 4th: seat 6 acts first" in out
    dealt = {int(w.split("=")[1]) for line in out.splitlines() if line.startswith("signal=deal")
             for w in line.split() if w.startswith("seat=")}
    assert dealt == {1, 3, 4, 6, 7}


def test_run_hands_of_a_ten_seat_table_is_dealt_at_one_to_n_and_says_so(tmp_path: Path) -> None:
    hand = tmp_path / "wide.phh"
    hand.write_text(HAND.replace('"d dh p3 8c9dTh"]', '"d dh p3 8c9dTh", "p1 pb", "p2 f", "p3 f"]')
                    + "_seats = [2, 9, 10]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "shoe_ctl.cli", "run", "--hands", str(hand), "--pace", "0", "--exit-when-done",
         "--display", "off", "--journal", "off"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "recorded seats [2, 9, 10] do not fit" in proc.stderr
    assert "seat=3 " in proc.stdout and "seat=9" not in proc.stdout
