"""``shoe-ctl report decks --day D`` on a simulated day's journal (docs/build-a-shoe.md, "Deck
custody"): decks enrolled, dealt from and retired over the day, and the day before and after,
balance issued = retired + in play with who signed each; a record out of a deck's life is named
and the day does not balance."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from shoe_ctl.cli import main
from shoe_ctl.config import ConfigError
from shoe_ctl.events import StubDeck
from shoe_ctl.floor.config import parse_floor
from shoe_ctl.service.deck_custody import custody
from shoe_ctl.service.gaming_day import GamingDay, GamingDayError, parse_gaming_day
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
    notes = tmp_path / "notes.txt"
    notes.write_text("not a journal\n")
    assert main(["report", "decks", "--day", DAY.isoformat(), str(notes)]) == 2
    err = capsys.readouterr().err
    assert f"{notes} is not a shoe-ctl journal" in err and err.count(str(notes)) == 1, err  # named once


def test_the_gaming_day_starts_at_the_rooms_hour_in_its_zone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """New York, 06:00: the day of 2026-03-14 runs 10:00Z to 10:00Z (daylight time). D01 was
    retired and D02-D04 received before it began; D03's retirement at 02:00Z the next morning is
    still on it."""
    simulated_day(tmp_path / "t.journal").close()
    gaming_day = parse_gaming_day("06:00", "America/New_York")
    with Journal(tmp_path / "t.journal", table=None, profile=None, readonly=True) as j:
        c = custody(j.records(), DAY, gaming_day)
    assert (c.opening, c.received, c.retired, c.in_play) == (["D02", "D03", "D04"], [], ["D02", "D03"], ["D04"])
    assert c.balanced and c.decks["D02"].hands == [3, 4, 5] and "D01" not in c.decks
    config = tmp_path / "table.toml"
    config.write_text('[floor]\ngaming_day_start = "06:00"\ntime_zone = "America/New_York"\n')
    assert main(["report", "decks", "--day", DAY.isoformat(), "--config", str(config), str(tmp_path / "t.journal")]) == 0
    out = capsys.readouterr().out
    assert "gaming day 2026-03-14 (from 06:00 America/New_York: 2026-03-14T10:00Z to 2026-03-15T10:00Z)" in out
    assert "issued 3 (live at the start 3 + received 0) = retired 2 + in play 1: balanced" in out
    config.write_text('[floor]\ntime_zone = "Mars/Olympus"\n')
    assert main(["report", "decks", "--day", DAY.isoformat(), "--config", str(config), str(tmp_path / "t.journal")]) == 2
    assert "floor.time_zone" in capsys.readouterr().err


def test_a_gaming_day_across_a_clock_change_and_the_day_of_an_instant() -> None:
    ny = parse_gaming_day("06:00", "America/New_York")
    begin, end = ny.window(date(2026, 3, 7))  # clocks go forward at 02:00 on the 8th
    assert (begin, end - begin) == (datetime(2026, 3, 7, 11, tzinfo=UTC), timedelta(hours=23))
    begin, end = ny.window(date(2026, 10, 31))  # clocks go back on November 1st
    assert (begin, end - begin) == (datetime(2026, 10, 31, 10, tzinfo=UTC), timedelta(hours=25))
    twice = parse_gaming_day("01:30", "America/New_York").window(date(2026, 11, 1))[0]
    assert twice == datetime(2026, 11, 1, 5, 30, tzinfo=UTC), "a start that happens twice: its first time"
    skipped = parse_gaming_day("02:30", "America/New_York").window(date(2026, 3, 8))[0]
    assert skipped == datetime(2026, 3, 8, 7, 30, tzinfo=UTC), "a skipped start: the offset before the change"
    assert ny.day_of(datetime(2026, 3, 14, 9, 59, tzinfo=UTC)) == date(2026, 3, 13)
    assert ny.day_of(datetime(2026, 3, 14, 10, 0, tzinfo=UTC).timestamp()) == date(2026, 3, 14)
    assert GamingDay().day_of(datetime(2026, 3, 14, 23, 59, tzinfo=UTC)) == date(2026, 3, 14)
    macau = parse_gaming_day("06:00", "Asia/Macau")
    assert macau.window(date(2026, 3, 14))[0] == datetime(2026, 3, 13, 22, tzinfo=UTC)
    for start, zone in (("6:00", "UTC"), ("24:00", "UTC"), ("06:00", "Nowhere/Else"), ("06:00", "")):
        with pytest.raises(GamingDayError):
            parse_gaming_day(start, zone)


def test_a_bad_gaming_day_in_the_floor_config_names_its_key() -> None:
    assert parse_floor("t.toml", {"gaming_day_start": "06:00", "time_zone": "Asia/Macau"}).gaming_day \
        == parse_gaming_day("06:00", "Asia/Macau")
    with pytest.raises(ConfigError, match="floor.gaming_day_start"):
        parse_floor("t.toml", {"gaming_day_start": "6 am"})
    with pytest.raises(ConfigError, match="floor.time_zone"):
        parse_floor("t.toml", {"time_zone": "Asia/Atlantis"})


def test_without_a_table_configuration_the_day_is_the_utc_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    simulated_day(tmp_path / "t.journal").close()
    monkeypatch.setenv("SHOE_CTL_TABLE", str(tmp_path / "no-such-table.toml"))
    assert main(["report", "decks", "--day", DAY.isoformat(), str(tmp_path / "t.journal")]) == 0
    assert "(from 00:00 UTC: 2026-03-14T00:00Z to 2026-03-15T00:00Z)" in capsys.readouterr().out
    assert main(["report", "decks", "--day", DAY.isoformat(), "--config", str(tmp_path / "no-such-table.toml"),
                 str(tmp_path / "t.journal")]) == 2, "a configuration named and missing is an error"
