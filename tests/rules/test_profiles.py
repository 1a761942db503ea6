"""Rule profiles and table configuration: every switch, every error names file, key and values."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from shoe_ctl.config import CONFIG_DIR, load_profile, load_table_config
from shoe_ctl.rules.games import TieRule
from shoe_ctl.rules.profiles import (
    AbsentRule,
    ExposedDowncardRule,
    ExposedSeventhRule,
    PrematureRule,
    ProfileError,
    ShortStubRule,
    parse_profile,
)

SWITCHES = ("name", "tie", "tournament", "short_stub", "skip_burn", "premature", "exposed_downcard",
            "exposed_seventh", "absent_player", "open_pair_bet")


def _data(name: str) -> dict:
    with (CONFIG_DIR / f"{name}.toml").open("rb") as fh:
        return tomllib.load(fh)


def test_tda_profile_selects_the_tda_clauses():
    p = load_profile("tda")
    assert (p.name, p.tie, p.tournament) == ("tda", TieRule.SUIT, True)
    assert p.short_stub is ShortStubRule.TDA and not p.house
    assert p.premature is PrematureRule.TDA
    assert p.exposed_downcard is ExposedDowncardRule.TDA
    assert p.exposed_seventh is ExposedSeventhRule.TDA
    assert p.absent_player is AbsentRule.TDA
    assert p.open_pair_bet is False  # RP-10-F


def test_house_profile_selects_the_house_clauses():
    p = load_profile("house")
    assert p.name == "house" and p.house and p.skip_burn
    assert p.tournament is False
    assert p.premature is PrematureRule.HOUSE
    assert p.open_pair_bet is True  # house 16.8


@pytest.mark.parametrize("name", ["tda", "house"])
def test_every_switch_is_documented_in_the_toml(name):
    text = (CONFIG_DIR / f"{name}.toml").read_text()
    lines = text.splitlines()
    for key in SWITCHES:
        idx = next(i for i, line in enumerate(lines) if line.startswith(f"{key} ="))
        assert lines[idx - 1].startswith("#"), f"{key} has no comment above it"
        assert "Allowed" in "\n".join(lines[max(0, idx - 4):idx]), key


def test_load_by_path(tmp_path: Path):
    f = tmp_path / "mine.toml"
    f.write_text((CONFIG_DIR / "house.toml").read_text().replace("tournament = false", "tournament = true"))
    assert load_profile(f).tournament is True


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("name", "roberts", '"tda", "house"'),
        ("tie", "random", '"suit", "position"'),
        ("tournament", "yes", "true, false"),
        ("short_stub", "tda", '"rp-10-h", "house-16.18"'),
        ("skip_burn", 1, "true, false"),
        ("premature", "muck", '"rp-5-d", "house-16.16"'),
        ("exposed_downcard", 3, '"rp-10-a", "house-16.1"'),
        ("exposed_seventh", "x", '"rp-10-b", "house-16.22"'),
        ("absent_player", "", '"rule-30", "house-16.9"'),
        ("open_pair_bet", "false", "true, false"),
    ],
)
def test_bad_value_names_file_key_and_allowed_values(key, value, allowed):
    data = _data("tda")
    data[key] = value
    with pytest.raises(ProfileError) as exc:
        parse_profile(data, "config/x.toml")
    msg = str(exc.value)
    assert msg.startswith(f"config/x.toml: {key}: ")
    assert allowed in msg
    assert exc.value.key == key and exc.value.source == "config/x.toml"


@pytest.mark.parametrize("key", SWITCHES)
def test_missing_key_names_it(key):
    data = _data("house")
    del data[key]
    with pytest.raises(ProfileError, match=f"h.toml: {key}: missing key; allowed: "):
        parse_profile(data, "h.toml")


def test_unknown_key_names_it_and_the_known_keys():
    data = _data("house")
    data["tie_rule"] = "suit"
    with pytest.raises(ProfileError, match="h.toml: tie_rule: unknown key; allowed: keys .*\"tie\""):
        parse_profile(data, "h.toml")


def test_bad_files(tmp_path: Path):
    with pytest.raises(ProfileError, match="file not found"):
        load_profile(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [unclosed\n")
    with pytest.raises(ProfileError, match=r"bad.toml: not valid TOML"):
        load_profile(bad)
    with pytest.raises(ProfileError, match="neither a profile name nor a file; allowed: tda, house"):
        load_profile("roberts")
    assert isinstance(ProfileError("a", "b", "c", "d"), ValueError)


def test_table_config_defaults_and_shipped_file(tmp_path: Path):
    cfg = load_table_config(CONFIG_DIR / "table.toml")
    assert cfg.seats == 8 and cfg.shoe.url == "sim" and cfg.journal.retention_days == 30
    empty = tmp_path / "t.toml"
    empty.write_text("")
    assert load_table_config(empty) == cfg


@pytest.mark.parametrize(
    ("text", "key", "allowed"),
    [
        ("seats = 9", "seats", "2..8"),
        ("game = 'holdem'", "game", "stud, stud8, razz"),
        ("colour = 1", "colour", "keys table"),
        ("[shoe]\nbaudrate = 'fast'", "shoe.baudrate", "50..4000000"),
        ("[shoe]\nport = 1", "shoe.port", "keys url, baudrate"),
        ("[leds]\nbackend = 'lamp'", "leds.backend", "console, gpio, shoe"),
        ("[leds.pins]\ndeal = 40", "leds.pins.deal", "0..27"),
        ("[display]\nport = 70000", "display.port", "0..65535"),
        ("[journal]\nretention_days = 0", "journal.retention_days", "1..36500"),
        ("display = 3", "display", "a [display] table"),
    ],
)
def test_table_config_errors_name_file_key_allowed(tmp_path: Path, text, key, allowed):
    f = tmp_path / "t.toml"
    f.write_text(text + "\n")
    with pytest.raises(ProfileError) as exc:
        load_table_config(f)
    assert str(exc.value).startswith(f"{f}: {key}: ")
    assert allowed in str(exc.value)
