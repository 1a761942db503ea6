"""Bad configuration files: every one is a clear error naming the file and the key, never a
traceback, and every problem of a file is reported at once (docs/service.md, *Configuration
errors*). Property-based: mutated copies of config/*.toml and generated documents."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_ctl.config import CONFIG_DIR, ConfigErrors, load_profile, load_table_config, read_toml
from shoe_ctl.rules.profiles import ProfileError, ProfileErrors

SEEDS = {name: (CONFIG_DIR / f"{name}.toml").read_bytes() for name in ("table", "tda", "house")}
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# --------------------------------------------------------------------------- a small TOML writer


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON's escapes are TOML basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def toml_text(doc: dict[str, Any]) -> str:
    top = [f"{json.dumps(k)} = {_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    tables = [f"[{json.dumps(k)}]\n" + "\n".join(f"{json.dumps(kk)} = {_value(vv)}" for kk, vv in v.items())
              for k, v in doc.items() if isinstance(v, dict)]
    return "\n".join(top) + "\n" + "\n".join(tables) + "\n"


scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(10**25), max_value=10**25),
    st.sampled_from([0, 1, 2, 8, 9, 27, 28, 50, 115200, 65536, 10**20, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "sim", "\x00", "a\x00b", "tda", "house", "gpio", "console", "stud", "undo", "red",
                     "/dev/null", "0.0.0.0", " ", "x" * 5000]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=8), scalars, max_size=3))

TABLE_KEYS = {"table": None, "seats": None, "rules": None, "game": None,
              "shoe": ["url", "baudrate"], "leds": ["backend", "pins", "pwm", "active_high"],
              "display": ["enabled", "host", "port", "token"], "journal": ["path", "retention_days"],
              "buttons": ["pins", "bounce_ms", "pull_up"]}
PROFILE_KEYS = ["name", "tie", "tournament", "short_stub", "skip_burn", "premature", "exposed_downcard",
                "exposed_seventh", "absent_player", "open_pair_bet", "extra"]


@st.composite
def table_docs(draw: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(sorted(TABLE_KEYS) + ["bogus"]), max_size=6, unique=True)):
        subkeys = TABLE_KEYS.get(key)
        if subkeys is None or draw(st.booleans()) and draw(st.booleans()):
            doc[key] = draw(values)
        else:
            doc[key] = {k: draw(values) for k in draw(st.lists(st.sampled_from(subkeys + ["bogus"]), max_size=4,
                                                               unique=True))}
    return doc


@st.composite
def mutated(draw: Any, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        chunk = draw(st.one_of(st.binary(min_size=1, max_size=4),
                               st.sampled_from([b"\x00", b"0", b"9" * 30, b"\"", b"[", b"]", b"=", b"\n", b"\xff",
                                                b"\\u0000", b"-", b"1e999", b"\xd9\xa3"])))
        if op == "replace":
            data[at:at + len(chunk)] = chunk
        elif op == "insert":
            data[at:at] = chunk
        else:
            del data[at:at + draw(st.integers(1, 8))]
    return bytes(data)


def assert_clear(exc: ProfileError, path: Path) -> None:
    """Every problem named: the file first, then (unless the whole file is wrong) the key."""
    lines = str(exc).splitlines()
    assert lines, exc
    for line in lines:
        assert line.startswith(f"{path}: "), line
        assert "; allowed: " in line, line
    if isinstance(exc, ProfileErrors):
        assert len(exc.errors) == len(lines) >= 2


# --------------------------------------------------------------------------- properties


@FUZZ
@given(data=st.data())
def test_mutated_config_files_load_or_name_file_and_key(tmp_path: Path, data: Any) -> None:
    name = data.draw(st.sampled_from(sorted(SEEDS)))
    path = tmp_path / f"{name}.toml"
    path.write_bytes(data.draw(mutated(SEEDS[name])))
    loader = load_table_config if name == "table" else load_profile
    try:
        loader(path)
    except ProfileError as exc:
        assert_clear(exc, path)


@pytest.mark.parametrize("section", ["buttons.pins", "leds.pins"])
@pytest.mark.parametrize("char", ["\n", "\u2028", "\x85", "\x1b"])
def test_a_pin_name_with_a_line_break_or_escape_is_named_on_one_line(tmp_path: Path, section: str, char: str) -> None:
    path = tmp_path / "table.toml"
    escaped = f"\\u{ord(char):04x}"  # as TOML writes it: a raw control character is no TOML
    path.write_text(f'[{section}]\n"a{escaped}b" = false\n', encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        load_table_config(path)
    assert_clear(info.value, path)
    assert f"{section}.a{repr(char)[1:-1]}b: False is not a BCM pin" in str(info.value)


@FUZZ
@given(doc=table_docs())
def test_generated_table_configs_load_or_name_every_bad_key(tmp_path: Path, doc: dict[str, Any]) -> None:
    path = tmp_path / "table.toml"
    path.write_text(toml_text(doc), encoding="utf-8")
    try:
        cfg = load_table_config(path)
    except ProfileError as exc:
        assert_clear(exc, path)
        return
    # what loads is usable: text without control characters, numbers in their ranges
    for text in (cfg.table, cfg.rules, cfg.shoe.url, cfg.display.host, cfg.journal.path or "x"):
        assert text.isprintable() and text.strip()
    assert 50 <= cfg.shoe.baudrate <= 4_000_000 and 0 <= cfg.display.port <= 65535 and 2 <= cfg.seats <= 8


@FUZZ
@given(doc=st.dictionaries(st.sampled_from(PROFILE_KEYS), values, max_size=11))
def test_generated_profiles_load_or_name_every_bad_key(tmp_path: Path, doc: dict[str, Any]) -> None:
    path = tmp_path / "p.toml"
    path.write_text(toml_text(doc), encoding="utf-8")
    try:
        load_profile(path)
    except ProfileError as exc:
        assert_clear(exc, path)


@FUZZ
@given(doc=st.dictionaries(st.sampled_from(PROFILE_KEYS), values, max_size=11))
def test_a_file_reads_as_tomllib_reads_it(tmp_path: Path, doc: dict[str, Any]) -> None:
    """``read_toml`` takes a flat file (a rule profile) by the PHH reader's fast path: the same
    values as ``tomllib`` gives, of the same types, for generated profiles and config/*.toml."""
    texts = [toml_text(doc), *(b.decode() for b in SEEDS.values())]
    for text in texts:
        path = tmp_path / "p.toml"
        path.write_text(text, encoding="utf-8")
        try:
            want = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            with pytest.raises(ProfileError):
                read_toml(path)
            continue
        assert repr(read_toml(path)) == repr(want)


# --------------------------------------------------------------------------- the reported cases


def test_nul_in_journal_path_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[journal]\npath = "a\\u0000b"\n')
    with pytest.raises(ProfileError, match=r"t\.toml: journal\.path: contains the control character U\+0000"):
        load_table_config(path)


@pytest.mark.parametrize("rate", ["100000000000000000000", "10000000000000000", "0", "-9600", "4000001"])
def test_baudrate_out_of_range_is_refused(tmp_path: Path, rate: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f"[shoe]\nbaudrate = {rate}\n")
    with pytest.raises(ProfileError, match=r"shoe\.baudrate: .* is out of range; allowed: 50\.\.4000000"):
        load_table_config(path)


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('seats = 12\ngame = "poker"\n[shoe]\nbaudrate = 0\n[display]\nport = 70000\ncolour = 1\n'
                    '[buttons.pins]\nundo = 99\n')
    with pytest.raises(ConfigErrors) as info:
        load_table_config(path)
    keys = [e.key for e in info.value.errors]
    assert keys == ["seats", "game", "shoe.baudrate", "buttons.pins.undo", "display.colour", "display.port"]
    assert str(info.value).count(f"{path}: ") == 6


def test_every_problem_of_a_profile_is_reported_at_once(tmp_path: Path) -> None:
    text = (CONFIG_DIR / "tda.toml").read_text().replace('tie = "suit"', 'tie = "dice"')
    text = text.replace("tournament = ", "tournament = 3 #")
    path = tmp_path / "p.toml"
    path.write_text(text + "colour = 1\n")
    with pytest.raises(ProfileErrors) as info:
        load_profile(path)
    assert {e.key for e in info.value.errors} == {"colour", "tie", "tournament"}


def test_run_reports_every_config_problem_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('seats = 1\n[journal]\npath = "x\\u0000"\n[shoe]\nbaudrate = 100000000000000000000\n')
    proc = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "run", "--config", str(path), "--display", "off"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for key in ("seats", "journal.path", "shoe.baudrate"):
        assert f"shoe-ctl run: {path}: {key}: " in proc.stderr  # one line each


def test_gpio_buttons_on_a_host_without_gpio_name_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text("[buttons.pins]\nundo = 5\n")
    proc = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "run", "--config", str(path), "--display", "off",
                           "--count", "1", "--pace", "0", "--exit-when-done"],
                          capture_output=True, text=True, timeout=60, env=_no_gpio_env())
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{path}: buttons.pins: " in proc.stderr


def _no_gpio_env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["GPIOZERO_PIN_FACTORY"] = "lgpio"  # no GPIO chip in the test host: the factory cannot load
    return env


def test_an_endless_file_is_refused() -> None:
    with pytest.raises(ProfileError, match=r"/dev/zero: not a regular file \(a device\)"):
        load_profile("/dev/zero")


def test_a_file_over_one_mebibyte_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text("# " + "x" * (1 << 20) + "\n")
    with pytest.raises(ProfileError, match=r"big.toml: larger than 1048576 bytes"):
        load_table_config(path)


@pytest.mark.parametrize(("text", "problem"), [
    ("seats = 2\nx = " + "[" * 5000 + "]" * 5000 + "\n", "line 2: values nested too deeply"),
    ("seats = 2\nx = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", "line 2: values nested too deeply"),
    ("[display]\nport = " + "9" * 5000 + "\n", "line 2: an integer too long to read"),
])
def test_what_tomllib_cannot_convert_names_the_file_and_line(tmp_path: Path, text: str, problem: str) -> None:
    """tomllib raises RecursionError or a bare ValueError for these: each is a ProfileError
    naming the file and the line, for the table configuration and for a profile."""
    path = tmp_path / "t.toml"
    path.write_text(text)
    for load in (load_table_config, load_profile):
        with pytest.raises(ProfileError) as info:
            load(path)  # type: ignore[operator]
        assert info.value.source == str(path)
        assert problem in str(info.value)


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    """Opening a FIFO for reading blocks until a writer comes; the loaders must not."""
    import os

    fifo = tmp_path / "t.toml"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "run", "--config", str(fifo), "--display", "off",
                           "--count", "1"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert f"{fifo}: not a regular file (a named pipe)" in proc.stderr
    with pytest.raises(ProfileError, match="a named pipe"):
        load_profile(fifo)


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_profile_name_is_named_as_given_not_as_the_working_folder(name: str) -> None:
    """``--rules ""`` was read as the path ".": "cannot read: Is a directory", naming "."."""
    with pytest.raises(ProfileError) as info:
        load_profile(name)
    assert "neither a profile name nor a file" in str(info.value)
    assert info.value.source == repr(name)
