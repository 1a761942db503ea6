"""Journal paths that are no journal: refused untouched, never moved aside, re-created or chmod-ed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from shoe_ctl.cli import main
from shoe_ctl.service.journal import Journal, JournalError

TEXT = b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


@pytest.mark.parametrize("readonly", [False, True])
def test_a_foreign_file_is_refused_and_left_untouched(tmp_path: Path, readonly: bool) -> None:
    path = tmp_path / "passwd"
    path.write_bytes(TEXT)
    os.chmod(path, 0o644)
    with pytest.raises(JournalError, match="not a shoe-ctl journal"):
        Journal(path, table=None if readonly else "t", profile=None if readonly else "tda", readonly=readonly)
    assert path.read_bytes() == TEXT
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["passwd"]


def test_a_folder_is_refused_and_its_mode_kept(tmp_path: Path) -> None:
    folder = tmp_path / "var"
    folder.mkdir(mode=0o755)
    with pytest.raises(JournalError, match="is a folder"):
        Journal(folder, table="t", profile="tda")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_a_device_is_refused() -> None:
    with pytest.raises(JournalError, match="not a regular file"):
        Journal("/dev/null", table="t", profile="tda")


def test_run_and_export_name_a_foreign_journal_without_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(TEXT)
    assert main(["run", "--journal", str(path), "--display", "off", "--count", "1", "--pace", "0",
                 "--exit-when-done"]) == 2
    assert main(["export", str(path), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("not a shoe-ctl journal") == 2 and "Traceback" not in err
    assert path.read_bytes() == TEXT


def test_a_journal_with_a_flipped_bit_in_its_header_is_still_opened(tmp_path: Path) -> None:
    """Damage is repaired, not refused: one flipped bit in the SQLite magic is still a journal."""
    path = tmp_path / "j.sqlite3"
    Journal(path, table="t", profile="tda").close()
    data = bytearray(path.read_bytes())
    data[3] ^= 0x04
    path.write_bytes(bytes(data))
    with Journal(path, table="t", profile="tda") as j:
        assert j.report.damage


def test_doctor_fails_a_foreign_journal_file_instead_of_advising_chmod(tmp_path: Path) -> None:
    from shoe_ctl import cmd_doctor as doc
    from shoe_ctl.config import load_table_config

    (tmp_path / "table.toml").write_text("")
    cfg = load_table_config(tmp_path / "table.toml")
    path = tmp_path / "notes.txt"
    path.write_bytes(TEXT)
    os.chmod(path, 0o600)
    c = doc.check_journal(cfg, path)
    assert c.status == "fail"
    assert "not a shoe-ctl journal" in c.detail
    assert "chmod" not in c.fix
