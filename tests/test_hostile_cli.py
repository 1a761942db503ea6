"""Hostile command lines: every bad argument gets a one-line error naming what is wrong, exit 2,
and no traceback."""

from __future__ import annotations

import pytest

from shoe_ctl.cli import main


@pytest.mark.parametrize(("argv", "named"), [
    (["hil", "soak", "--cards", "5", "--faults", "corrupt=abc"], "corrupt='abc' is not a number"),
    (["hil", "soak", "--cards", "5", "--faults", "bogus=1"], "unknown key 'bogus'"),
    (["hil", "soak", "--cards", "5", "--faults", "corrupt=2"], "out of range"),
    (["hil", "soak", "--cards", "-5"], "--cards -5"),
    (["hil", "soak", "--cards", "0"], "--cards 0"),
])
def test_hil_soak_bad_arguments_are_named_without_a_traceback(
        argv: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert named in err
    assert "Traceback" not in err
