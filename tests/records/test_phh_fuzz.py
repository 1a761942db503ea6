"""Bad PHH files never end in a traceback: the real hands (``../shared/data/stud/phh`` and
``examples/``, read where they are) mutated as bad luck or a hostile writer would
(``tests/support/phh_mutate.py``) give either a hand record or a ``PhhError`` that names the file
and the place (a line, a field or ``actions[i]``); ``analyze`` of a batch reports each bad file and
goes on. ``scripts/fuzz_phh.py`` runs the same mutations by the thousand (``docs/security.md``)."""

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import EXAMPLES, SHARED_PHH
from phh_mutate import mutate, real_records

from shoe_ctl.analyze import analyze_file
from shoe_ctl.cli import main
from shoe_ctl.config import load_profile
from shoe_ctl.phh import PhhError, RecordedHand, read_phh

SOURCES = real_records(SHARED_PHH, EXAMPLES)
RECORDS = [p.read_text() for p in SOURCES]
TDA = load_profile("tda")


def read_or_error(path: Path) -> RecordedHand | PhhError:
    try:
        return read_phh(path)
    except PhhError as exc:  # anything else fails the test with its traceback
        return exc


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(st.randoms(use_true_random=False), st.integers(min_value=0, max_value=10**6))
def test_a_mutated_hand_is_a_record_or_an_error_with_file_and_place(tmp_path: Path, rnd: random.Random,
                                                                     k: int) -> None:
    path = tmp_path / "hand.phh"
    path.write_bytes(mutate(RECORDS[k % len(RECORDS)], rnd))
    got = read_or_error(path)
    if isinstance(got, PhhError):
        assert got.path == str(path) and str(got).startswith(f"{path}: ")
        assert got.where, f"no place in: {got}"
        assert len(str(got)) < 500
    else:
        assert got.n >= 2
    report = analyze_file(path, TDA)
    assert (report.error is None) == isinstance(got, RecordedHand)


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


BASE = """variant = "F7S"
antes = [1, 1]
bring_in = 2
small_bet = 4
big_bet = 8
starting_stacks = [100, 100]
actions = ["d dh p1 AcKc8c", "d dh p2 7sQs2d", "p2 pb", "p1 cbr 4", "p2 f"]
"""


@pytest.mark.parametrize(
    ("old", "new", "place", "says"),
    [
        ("bring_in = 2", "bring_in = " + "9" * 5000, "line 3", "too long"),
        ("antes = [1, 1]", "antes = " + "[" * 2000 + "1" + "]" * 2000, "line 2", "nested too deeply"),
        ("p1 cbr 4", "p1 cbr \u0664", "line 7, actions[3]", "digits 0-9"),
        ("p1 cbr 4", "p1 cbr \u00b2", "line 7, actions[3]", "digits 0-9"),
        ("p1 cbr 4", "p1 cbr " + "4" * 40, "line 7, actions[3]", "too large"),
        ("p2 pb", "p" + "9" * 5000 + " pb", "line 7, actions[2]", "is not a player"),
        ("small_bet = 4", "small_bet = [[[1]]]", "line 4, small_bet", "not a whole number"),
        ("bring_in = 2", "bring_in = 2\nbring_in = 3", "line 4", "not a PHH hand record (not TOML"),
    ],
)
def test_each_kind_of_bad_file_names_the_file_and_place(tmp_path: Path, old: str, new: str, place: str,
                                                         says: str) -> None:
    path = write(tmp_path, "bad.phh", BASE.replace(old, new))
    with pytest.raises(PhhError) as info:
        read_phh(path)
    assert info.value.where.startswith(place), str(info.value)
    assert says in str(info.value) and str(info.value).startswith(f"{path}: {place}")
    assert len(str(info.value)) <= 300 + len(str(path)) + 40


def test_a_batch_goes_on_past_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``shoe-ctl analyze DIR``: every file reported, the bad ones with their error, exit 1."""
    write(tmp_path, "a-huge.phh", BASE.replace("bring_in = 2", "bring_in = " + "9" * 5000))
    write(tmp_path, "b-deep.phh", BASE.replace("antes = [1, 1]", "antes = " + "[" * 3000 + "]" * 3000))
    write(tmp_path, "c-digit.phh", BASE.replace("p1 cbr 4", "p1 cbr \u0664"))
    write(tmp_path, "d-good.phh", BASE)
    assert main(["analyze", "--json", str(tmp_path)]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [Path(r["file"]).name for r in rows] == ["a-huge.phh", "b-deep.phh", "c-digit.phh", "d-good.phh"]
    assert [r["error"] is None for r in rows] == [False, False, False, True]
    assert all(r["error"].startswith(r["file"] + ": line ") for r in rows[:3])
