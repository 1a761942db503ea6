"""The read-only tools (``report decks``, ``export``, ``journal verify``) on a missing or damaged
journal: exit 2 with one line naming the journal once, never a traceback, whatever the journal is
called (docs/journal.md, "One writing process" and "Damage: found, reported, nothing intact thrown
away")."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoe_ctl.cli import main
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
