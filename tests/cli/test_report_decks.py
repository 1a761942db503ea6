"""``shoe-ctl report decks --day D`` on a simulated day's journal (docs/build-a-shoe.md, "Deck
custody"): decks enrolled, dealt from and retired over the day, and the day before and after,
balance issued = retired + in play with who signed each; a record out of a deck's life is named
and the day does not balance."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from shoe_ctl.cli import main
from shoe_ctl.events import StubDeck
from shoe_ctl.service.deck_custody import custody
from shoe_ctl.service.journal import Journal

DAY = date(2026, 3, 14)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 13, 9, 0, tzinfo=UTC)

    def __call__(self) -> float:
        return self.now.timestamp()

    def at(self, day_offset: int, hour: int) -> str:
        self.now = datetime(DAY.year, DAY.month, DAY.day, hour, tzinfo=UTC) + timedelta(days=day_offset)
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")


def simulated_day(path: Path) -> Journal:
    """D01 enrolled the day before; D02, D03, D04 received on the day; D01 and D02 retired on it,
    D03 the day after; D04 never dealt from. Hands 1-2 from D01, 3-5 from D02, 6-7 from D03."""
    clock = Clock()
    j = Journal(path, table="t1", profile="tda", retention_days=3650, clock=clock)

    def enrol(deck: str, day: int, hour: int, by: str) -> None:
        when = clock.at(day, hour)
        j.append_record("deck-enrol", {"deck": deck, "by": by, "enrolled": when, "cards": 52, "source": "pn532",
                                       "file": f"decks/{deck}.toml"})

    def retire(deck: str, day: int, hour: int, by: str) -> None:
        when = clock.at(day, hour)
        j.append_record("deck-retire", {"deck": deck, "by": by, "retired": when, "file": f"decks/retired/{deck}"})

    def hands(deck: str, day: int, hour: int, count: int) -> None:
        for k in range(count):
            clock.at(day, hour)
            j.begin_hand({"game": "stud", "rules": "tda", "seats": [1, 2, 3]})
            j.append(StubDeck(k + 1, deck))
            j.end_hand({})

    enrol("D01", -1, 10, "ana")
    hands("D01", -1, 11, 1)
    hands("D01", 0, 1, 1)
    enrol("D02", 0, 8, "ben")
    enrol("D03", 0, 8, "ben")
    enrol("D04", 0, 9, "ben")
    retire("D01", 0, 9, "cai")
    hands("D02", 0, 10, 3)
    retire("D02", 0, 15, "cai")
    hands("D03", 0, 16, 2)
    retire("D03", 1, 2, "cai")
    return j


def test_a_simulated_day_balances_issued_equals_retired_plus_in_play(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    simulated_day(tmp_path / "t.journal").close()
    with Journal(tmp_path / "t.journal", table=None, profile=None, readonly=True) as j:
        c = custody(j.records(), DAY)
    assert (c.opening, c.received, c.retired, c.in_play) == (["D01"], ["D02", "D03", "D04"], ["D01", "D02"],
                                                             ["D03", "D04"])
    assert c.issued == 4 == len(c.retired) + len(c.in_play) and c.balanced and not c.problems
    assert c.decks["D01"].hands == [2] and c.decks["D02"].hands == [3, 4, 5] and c.decks["D03"].hands == [6, 7]
    assert (c.decks["D02"].enrolled_by, c.decks["D02"].retired_by) == ("ben", "cai")
    assert c.decks["D03"].retired is None  # retired the day after: in play at the day's end
    assert main(["report", "decks", "--day", DAY.isoformat(), str(tmp_path / "t.journal")]) == 0
    out = capsys.readouterr().out
    assert "D02: enrolled 2026-03-14T08:00:00Z by ben; hands 3-5 (3); retired 2026-03-14T15:00:00Z by cai" in out
    assert "D04: enrolled 2026-03-14T09:00:00Z by ben; no hand; in play" in out
    assert "issued 4 (live at the start 1 + received 3) = retired 2 + in play 2: balanced" in out
    with Journal(tmp_path / "t.journal", table=None, profile=None, readonly=True) as j:
        before = custody(j.records(), DAY - timedelta(days=1))
    assert (before.opening, before.received, before.in_play, before.decks["D01"].hands) == ([], ["D01"], ["D01"], [1])


def test_a_record_out_of_a_decks_life_is_named_and_the_day_does_not_balance(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    j = simulated_day(tmp_path / "t.journal")
    clock_day = datetime(DAY.year, DAY.month, DAY.day, 17, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    seq = j.append_record("deck-retire", {"deck": "D01", "by": "cai", "retired": clock_day, "file": "x"})
    j.close()
    assert main(["report", "decks", "--day", DAY.isoformat(), str(tmp_path / "t.journal")]) == 1
    out = capsys.readouterr().out
    assert f"journal record {seq}: deck D01 retired but not live" in out and "NOT BALANCED" in out


def test_a_bad_day_or_journal_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "decks", "--day", "14/03/2026", str(tmp_path / "none.journal")]) == 2
    assert "is not a date" in capsys.readouterr().err
    assert main(["report", "decks", "--day", DAY.isoformat(), str(tmp_path / "none.journal")]) == 2
    assert "none.journal" in capsys.readouterr().err
