"""The read-only tools (``report decks``, ``export``, ``journal verify``, ``doctor``) on a missing
or damaged journal: exit 2 (doctor: a failed check) with one line naming the journal once, never a
traceback, whatever the journal is called (docs/journal.md, "One writing process" and "Damage: found, reported, nothing intact thrown
away")."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from paths import ROOT

from shoe_ctl.cli import main
from shoe_ctl.cli.doctor import check_journal
from shoe_ctl.config import TableConfig
from shoe_ctl.service.journal import Journal

TOOLS = {
    "report decks": ["report", "decks", "--day", "2026-03-14"],
    "export": ["export", "--out", "out"],
    "journal verify": ["journal", "verify"],
}


def _damaged(path: Path) -> None:
    with Journal(path, table="T1", profile="tda") as j:
        for n in range(300):
            j.append_record("note", {"n": n, "pad": "x" * 200})
    with path.open("r+b") as fh:  # b-tree pages past the header: the open's first query fails
        fh.seek(3 * 4096)
        fh.write(b"\xa5" * (4 * 4096))


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("name", ["database", "j.sqlite3"])
def test_a_damaged_journal_is_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], tool: str, name: str) -> None:
    """(was: ``sqlite3.DatabaseError: database disk image is malformed`` and a traceback.)"""
    monkeypatch.chdir(tmp_path)
    _damaged(Path(name))
    assert main([*TOOLS[tool], name]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"shoe-ctl {tool}: {name}: cannot be read: "), err
    assert err.count("\n") == 1 and "the file is damaged" in err and "Traceback" not in err
    assert err.count(name) == 1 + (name == "database"), err  # SQLite's own words hold "database"


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("name", ["file", "no"])
def test_a_missing_journal_is_named_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], tool: str, name: str) -> None:
    """(was, for ``report decks``: ``journal j.db: no journal at j.db``.)"""
    monkeypatch.chdir(tmp_path)
    assert main([*TOOLS[tool], name]) == 2
    assert capsys.readouterr().err == f"shoe-ctl {tool}: journal {name}: no such file\n"


@pytest.mark.parametrize("name", ["database", "j.sqlite3"])
def test_doctor_fails_a_damaged_journal_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """(was: ``ok journal j.sqlite3 (present; folder writable)``: the read that failed was taken as
    no chain head to show.)"""
    monkeypatch.chdir(tmp_path)
    _damaged(Path(name))
    c = check_journal(TableConfig(), Path(name))
    assert c.status == "fail", c
    assert c.detail.startswith(f"{name}: cannot be read: ") and "the file is damaged" in c.detail, c.detail
    assert c.fix.startswith(f"shoe-ctl journal check {name} lists")


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_an_empty_file_is_said_to_be_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], tool: str) -> None:
    """A file made and nothing written in it yet (a stop right after the journal was created) is
    no damage: said as empty (was: a traceback, ``no such table: records``); doctor passes it."""
    monkeypatch.chdir(tmp_path)
    Path("j.sqlite3").write_bytes(b"")
    Path("j.sqlite3").chmod(0o600)
    assert main([*TOOLS[tool], "j.sqlite3"]) == 2
    assert capsys.readouterr().err == f"shoe-ctl {tool}: j.sqlite3: an empty file: no journal has been written in it yet\n"
    assert check_journal(TableConfig(), Path("j.sqlite3")).status == "ok"


NO_READ = """
import sys
from pathlib import Path
from shoe_ctl.cli.doctor import check_journal
from shoe_ctl.config import TableConfig
c = check_journal(TableConfig(), Path(sys.argv[1]))
print(c.status, c.detail, "|", c.fix, sep="\\n")
"""


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux) to read as a user who may not")
def test_doctor_on_a_journal_this_user_cannot_read_says_whose_it_should_be(tmp_path: Path) -> None:
    """(was: the fix 'set [journal] path to a file of its own', for the service's own journal with
    the wrong owner or mode.)"""
    path = tmp_path / "j.sqlite3"
    _damaged(path)
    path.chmod(0o000)
    # without the capabilities that let root read any file: the file is refused as for any user
    drop = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
    argv = [*(drop if os.geteuid() == 0 else []), sys.executable, "-c", NO_READ, str(path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    status, detail, _bar, fix = done.stdout.splitlines()
    assert status == "fail" and detail == f"{path}: cannot be read: Permission denied", done.stdout
    assert fix == f"chown shoe-ctl: {path}* && chmod 0600 {path}*"


def _fails(exc: BaseException) -> Callable[..., object]:
    def fail(*_args: object, **_kw: object) -> object:
        raise exc
    return fail


def test_an_sqlite_error_meanwhile_names_the_journal_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """An SQLite error past the open (a page found damaged while reading, a disk I/O error) is one
    line with the journal before it, also for a journal called like SQLite's first word (was: a
    traceback in ``report decks`` and ``shoe-ctl floor``)."""
    from shoe_ctl.cli import report
    from shoe_ctl.floor import cli as floor_cli

    monkeypatch.chdir(tmp_path)
    with Journal("database", table="T1", profile="tda") as j:
        j.append_record("note", {})
    monkeypatch.setattr(report, "custody", _fails(sqlite3.DatabaseError("database disk image is malformed")))
    assert main(["report", "decks", "--day", "2026-03-14", "database"]) == 2
    assert capsys.readouterr().err == "shoe-ctl report decks: journal database: database disk image is malformed\n"
    monkeypatch.setattr(floor_cli, "open_floor_journal", _fails(sqlite3.OperationalError("disk I/O error")))
    assert main(["floor", "--broker", "mqtt://127.0.0.1:1", "--room", "r1", "--journal", "database",
                 "--listen", "127.0.0.1:0"]) == 2
    assert capsys.readouterr().err == "shoe-ctl floor: journal database: disk I/O error\n"
