"""Hostile command lines: every bad argument gets a one-line error naming what is wrong, exit 2,
and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoe_ctl.cli import main
from shoe_ctl.config import ConfigError, load_table_config


@pytest.mark.parametrize(("argv", "named"), [
    (["hil", "soak", "--cards", "5", "--faults", "corrupt=abc"], "corrupt='abc' is not a number"),
    (["hil", "soak", "--cards", "5", "--faults", "bogus=1"], "unknown key 'bogus'"),
    (["hil", "soak", "--cards", "5", "--faults", "corrupt=2"], "out of range"),
    (["hil", "soak", "--cards", "-5"], "--cards -5"),
    (["hil", "soak", "--cards", "0"], "--cards 0"),
    (["hil", "soak", "--cards", "5", "--stall-s", "0"], "--stall-s 0"),
])
def test_hil_soak_bad_arguments_are_named_without_a_traceback(
        argv: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert named in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("text", "key", "problem"), [
    (b"\xff\xfetable = 'x'\n", "", "not UTF-8"),
    (b"[leds]\npins = 3\n", "leds.pins", "is not a table"),
    (b"[buttons]\npins = 3\n", "buttons.pins", "is not a table"),
    (b"[leds.pins]\ngreen = 17\namber = 17\n", "leds.pins.amber", "pin 17 is already leds.pins.green"),
    (b"[leds.pins]\ngreen = 17\n[buttons.pins]\nundo = 17\n", "buttons.pins.undo", "pin 17 is already"),
    (b"table = '  '\n", "table", "is empty"),
])
def test_broken_table_config_names_file_key_and_problem(tmp_path: Path, text: bytes, key: str,
                                                        problem: str) -> None:
    """A table config that cannot be used is a ConfigError naming the file and the key."""
    path = tmp_path / "table.toml"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as info:
        load_table_config(path)
    assert info.value.source == str(path)
    assert info.value.key == key
    assert problem in str(info.value)


def test_run_with_a_non_utf8_config_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(b"\xff\xfe")
    assert main(["run", "--config", str(path), "--display", "off", "--count", "1"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "not UTF-8" in err


def test_export_to_a_path_that_is_a_file_is_a_named_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``export --out`` naming a file (or anything not writable as a folder): exit 2, a one-line
    error naming the option, no traceback."""
    from shoe_ctl.events import DealerAction, DealerInput
    from shoe_ctl.service.journal import Journal

    journal = tmp_path / "j.sqlite3"
    with Journal(journal, table="t", profile="tda") as j:
        j.append(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    target = tmp_path / "a-file"
    target.write_text("x")
    assert main(["export", str(journal), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"--out {target}" in err and "Traceback" not in err
    assert target.read_text() == "x"


@pytest.mark.parametrize(("argv", "named"), [
    (["sim", "--faults", "bogus=1"], "unknown key 'bogus'"),
    (["sim", "--link", "/nonexistent-folder/shoe"], "/nonexistent-folder/shoe"),
])
def test_sim_bad_arguments_are_named_without_a_traceback(
        argv: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err


def test_analyze_reports_a_named_pipe_and_a_huge_file_and_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``.phh`` that is a named pipe (opening it waited for a writer forever) or is far too big
    for a hand record gets that hand an error; the rest of the batch is reported."""
    import json
    import os

    good = Path(__file__).resolve().parents[2] / "examples"
    hands = sorted(good.glob("*.phh"))
    assert hands
    (tmp_path / "b.phh").write_bytes(hands[0].read_bytes())
    os.mkfifo(tmp_path / "a.phh")
    with open(tmp_path / "c.phh", "wb") as fh:
        fh.truncate(2 << 20)
    assert main(["analyze", str(tmp_path), "--json"]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    errors = {Path(r["file"]).name: r["error"] for r in rows}
    assert "not a regular file" in errors["a.phh"]
    assert errors["b.phh"] is None
    assert "too large" in errors["c.phh"]


def test_run_with_a_display_port_in_use_names_the_display(capsys: pytest.CaptureFixture[str]) -> None:
    """``--display HOST:PORT`` on a port already taken: exit 2 naming the display and its
    address (was: a bare '[Errno 98] Address already in use')."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        where = f"127.0.0.1:{taken.getsockname()[1]}"
        assert main(["run", "--display", where, "--count", "1", "--pace", "0", "--exit-when-done"]) == 2
    err = capsys.readouterr().err
    assert f"dealer display on {where}" in err and "Traceback" not in err


def test_hil_crash_with_an_unknown_profile_is_an_argument_error(capsys: pytest.CaptureFixture[str]) -> None:
    """``hil crash --rules foo``: argparse names the allowed profiles (was: a RuntimeError
    traceback after starting the service child)."""
    with pytest.raises(SystemExit) as info:
        main(["hil", "crash", "--hands", "1", "--kills", "0", "--rules", "foo"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--rules" in err and "'tda'" in err and "Traceback" not in err


@pytest.mark.parametrize(("argv", "named"), [
    (["--pace", "inf"], "--pace"),
    (["--pace", "nan"], "--pace"),
    (["--pace", "-5"], "--pace"),
    (["--count", "0"], "--count"),
    (["--count", "-1"], "--count"),
])
def test_run_rejects_a_pace_or_count_that_makes_no_sense(
        argv: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--pace inf`` (was: an OverflowError traceback), ``nan`` or below 0, ``--count`` below 1
    (was: a run of no hands, exit 0): argparse errors naming the option."""
    with pytest.raises(SystemExit) as info:
        main(["run", "--display", "off", "--exit-when-done", *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err


def test_run_with_empty_seats_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """``--seats ''`` names the seats (was: taken as no --seats, endless random hands)."""
    assert main(["run", "--seats", "", "--display", "off", "--count", "1"]) == 2
    assert "--seats" in capsys.readouterr().err


def test_exported_hand_histories_are_private(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exported PHH files hold every hole card: mode 0600 like the journal (was: 0644 under a
    usual umask), also when an older export with a wider mode is overwritten."""
    import os
    import stat

    journal = tmp_path / "j.sqlite3"
    assert main(["run", "--journal", str(journal), "--count", "2", "--pace", "0", "--exit-when-done",
                 "--display", "off"]) == 0
    out = tmp_path / "out"
    out.mkdir()
    old = out / "table-1-hand-1.phh"
    old.write_text("old")
    os.chmod(old, 0o644)
    capsys.readouterr()
    assert main(["export", str(journal), "--out", str(out)]) == 0
    written = sorted(out.glob("*.phh"))
    assert len(written) == 2 and old in written and old.read_text() != "old"
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


@pytest.mark.parametrize(("seats", "named"), [
    ("1-99999999999999999999", "seats are numbered 1..8"),  # was an OverflowError traceback
    ("1-999999999", "seats are numbered 1..8"),  # was a list of a billion seats built first
    ("0-3", "seats are numbered 1..8"),
    ("3-9", "seats are numbered 1..8"),
])
def test_a_seat_range_out_of_the_table_is_named_before_anything_is_built(
        seats: str, named: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--seats", seats, "--display", "off", "--count", "1"]) == 2
    err = capsys.readouterr().err
    assert f"--seats {seats!r}" in err and named in err and "Traceback" not in err


def test_analyze_and_replay_print_no_terminal_escape_from_a_record(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A player's name or a file name holding ESC (TOML writes it ``\\u001b``) could clear the
    reader's screen, recolour it or set its window title; the readable table shows it escaped."""
    src = (Path(__file__).parents[2] / "examples" / "razz-suit-tie.phh").read_text()
    import re

    named = re.sub(r"(?m)^players = \[\"[^\"]*\"", 'players = ["\\\\u001b[2J\\\\u001b]0;pwned\\\\u0007"', src)
    assert named != src
    (tmp_path / "names.phh").write_text(named)
    (tmp_path / "e\x1b[31mvil\u202e.phh").write_text(src)
    (tmp_path / "bad.phh").write_text(src.replace('variant = "FR"', 'variant = "\\u009b31mFR"'))
    for argv in (["analyze", str(tmp_path)], ["replay", "--direct", str(tmp_path)]):
        main(argv)
        out, err = capsys.readouterr()
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]", out + err), argv
        assert "e\\x1b[31mvil\\u202e.phh" in out
    main(["analyze", str(tmp_path)])
    assert "\\x1b[2J\\x1b]0;pwned\\x07" in capsys.readouterr().out


def test_run_names_an_unreadable_hand_file_without_terminal_escapes(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x\x1b[2J.phh").write_text("not a hand")
    assert main(["run", "--hands", str(tmp_path), "--display", "off", "--count", "1"]) == 2
    err = capsys.readouterr().err
    assert "unreadable hand file" in err and "x\\x1b[2J.phh" in err and "\x1b" not in err


def test_run_logs_a_shoe_text_with_its_control_characters_escaped() -> None:
    """A fault detail or serial from the shoe (any UTF-8 of 32 bytes) reaches the WARNING lines of
    ``run``: an ESC there would reach the terminal or the reader of the system journal."""
    import io
    import logging

    from shoe_ctl.cli.args import PrintableFormatter

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    log = logging.getLogger("test.shoe")
    log.addHandler(handler)
    try:
        log.warning("alert shoe-jam: the shoe reports %s", "jam\x1b]0;pwned\x07\u202e")
    finally:
        log.removeHandler(handler)
    assert out.getvalue() == "WARNING test.shoe: alert shoe-jam: the shoe reports jam\\x1b]0;pwned\\x07\\u202e\n"


def test_sim_link_never_replaces_a_file_or_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--link`` naming an existing file (a journal, table.toml) by a slip replaced it with the
    pty's symlink and removed it at the end: the file was gone."""
    precious = tmp_path / "journal.sqlite3"
    precious.write_bytes(b"SQLite format 3\x00 hands")
    for target in (precious, tmp_path):
        assert main(["sim", "--link", str(target)]) == 2
        err = capsys.readouterr().err
        assert f"--link {target}: exists and is not a symlink" in err
    assert precious.read_bytes() == b"SQLite format 3\x00 hands"


def test_journal_check_says_what_is_at_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder, a named pipe or a device was reported as "no such file"."""
    import os

    fifo = tmp_path / "j.fifo"
    os.mkfifo(fifo)
    for path, what in ((tmp_path, "a folder, not a journal file"), (fifo, "not a regular file"),
                       (Path("/dev/zero"), "not a regular file"), (tmp_path / "none", "no such file")):
        assert main(["journal", "check", str(path)]) == 2
        assert f"{path}: {what}" in capsys.readouterr().err


ALL_IN_THEN_FOLDS = """variant = "F7S"
antes = [1, 1, 1]
bring_in = 5
small_bet = 10
big_bet = 20
starting_stacks = [100, 5, 100]
actions = ["d dh p1 AsKsQs", "d dh p2 2c3c4d", "d dh p3 JhTh9h", "p2 pb", "p3 f", "p1 cc", "p2 f"]
players = ["a", "b", "c"]
"""


def test_run_exit_when_done_ends_a_stalled_deal(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A record the simulated dealer cannot follow (a player all-in by the bring-in who then
    folds: the fold is refused, the betting never completes) left ``run --exit-when-done`` waiting
    forever; now a run with no command from the machine for ``STALL_S`` ends with exit status 1
    and names the instruction it stalled at."""
    from shoe_ctl.cli import run as run_mod

    monkeypatch.setattr(run_mod, "STALL_S", 2.0)
    (tmp_path / "h.phh").write_text(ALL_IN_THEN_FOLDS)
    t0 = __import__("time").monotonic()
    assert main(["run", "--hands", str(tmp_path), "--display", "off", "--pace", "0", "--exit-when-done",
                 "--no-status", "--journal", "off"]) == 1
    assert __import__("time").monotonic() - t0 < 30
    err = capsys.readouterr().err
    assert "nothing happened for 2 s; the simulated dealer stalled at: Betting on 3rd" in err


@pytest.mark.parametrize(("argv", "named"), [
    (["doctor", "--timeout", "inf"], "argument --timeout: 'inf'"),  # would wait for a hello forever
    (["doctor", "--timeout", "nan"], "argument --timeout: 'nan'"),
    (["doctor", "--timeout", "-1"], "argument --timeout: '-1'"),
    (["pair", "--timeout", "inf"], "argument --timeout: 'inf'"),
    (["hil", "soak", "--stall-s", "inf"], "argument --stall-s: 'inf'"),
])
def test_waiting_times_must_be_finite(argv: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert named in capsys.readouterr().err


def test_hands_run_on_across_restarts_and_export_writes_every_one(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs of the simulated shoe on one journal: the second run's hands are numbered after
    the first's, and export writes all four with no repeat and status 0."""
    journal = tmp_path / "j.sqlite3"
    for _ in range(2):
        assert main(["run", "--journal", str(journal), "--count", "2", "--pace", "0", "--exit-when-done",
                     "--display", "off", "--no-status"]) == 0
    capsys.readouterr()
    assert main(["export", str(journal), "--out", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    assert sorted(Path(line).name for line in out.split()) == [f"table-1-hand-{n}.phh" for n in (1, 2, 3, 4)]
    assert "repeated" not in err
