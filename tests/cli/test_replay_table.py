"""``shoe-ctl replay`` prints analyze's table (one shared formatter), and its summary counts
hands read apart from files it could not read."""

from __future__ import annotations

from pathlib import Path

import pytest
from paths import EXAMPLES

from shoe_ctl.cli import main


def _rows(text: str, names: list[str]) -> dict[str, str]:
    return {line.split()[0]: line for line in text.splitlines() if line.split() and line.split()[0] in names}


def test_replay_table_rows_equal_analyzes_and_a_bad_file_is_no_hand(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.phh"
    bad.write_text('variant = "F7S"\n')
    hands = sorted(p.name for p in EXAMPLES.glob("*.phh"))
    assert main(["replay", "--direct", str(EXAMPLES), str(bad)]) == 1
    replayed = capsys.readouterr().out
    assert main(["analyze", "--no-detail", str(EXAMPLES), str(bad)]) == 1
    analysed = capsys.readouterr().out
    rows_r, rows_a = _rows(replayed, hands), _rows(analysed, hands)
    assert sorted(rows_r) == hands
    # same columns, same cells: "stub 28, need 4", bring-in with its card, no "7th -"
    assert rows_r == rows_a
    assert "stub 28, need 4" in rows_r["razz-suit-tie.phh"]
    assert "ERROR:" in next(line for line in replayed.splitlines() if "bad.phh" in line)
    # alerts counted alike: the record's departures (none under TDA); the machine's short-stub
    # procedure is in the 7th-street column, not an alert
    assert f"{len(hands)} hand(s), 0 alert(s), 1 unreadable file(s)" in replayed
    assert f"{len(hands)} hand(s), 0 alert(s), 1 unreadable file(s)" in analysed
    assert "RP-10-H-C (stub 1, need 10)" in rows_r["eight-players-community-card.phh"]
