"""``shoe-ctl run`` journals to the table configuration's ``[journal] path`` when ``--journal`` is
not given; ``--journal PATH`` wins and ``--journal off`` keeps no journal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from journal_owner import Owner
from paths import ROOT

from shoe_ctl.cli.run import journal_path
from shoe_ctl.config import load_table_config


def _config(tmp_path: Path, journal: Path | None) -> Path:
    cfg = tmp_path / "table.toml"
    text = 'table = "table-9"\n[shoe]\nurl = "sim"\n'
    if journal is not None:
        text += f'[journal]\npath = "{journal}"\nretention_days = 7\n'
    cfg.write_text(text)
    return cfg


def _run(cfg: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shoe_ctl.cli", "run", "--config", str(cfg), "--count", "1", "--pace", "0",
         "--exit-when-done", "--display", "off", "--seats", "1-4", *extra],
        capture_output=True, text=True, timeout=90, cwd=ROOT)


def test_journal_path_choice() -> None:
    assert journal_path(None, "/var/lib/shoe-ctl/j.sqlite3") == "/var/lib/shoe-ctl/j.sqlite3"
    assert journal_path("/tmp/x.sqlite3", "/var/lib/shoe-ctl/j.sqlite3") == "/tmp/x.sqlite3"
    assert journal_path("off", "/var/lib/shoe-ctl/j.sqlite3") is None
    assert journal_path(None, None) is None


def test_config_without_journal_path_has_none(tmp_path: Path) -> None:
    assert load_table_config(_config(tmp_path, None)).journal.path is None
    cfg = load_table_config(_config(tmp_path, tmp_path / "j.sqlite3"))
    assert cfg.journal.path == str(tmp_path / "j.sqlite3") and cfg.journal.retention_days == 7


def test_empty_journal_path_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "table.toml"
    cfg.write_text('[journal]\npath = " "\n')
    with pytest.raises(ValueError, match="journal.path"):
        load_table_config(cfg)


def test_run_uses_the_configured_journal_and_the_option_wins(tmp_path: Path) -> None:
    from shoe_ctl.service.journal import Journal

    configured = tmp_path / "configured.sqlite3"
    cfg = _config(tmp_path, configured)
    out = _run(cfg)
    assert out.returncode == 0, out.stderr
    assert configured.exists() and configured.stat().st_mode & 0o777 == 0o600
    j = Journal(configured, table=None, profile=None, readonly=True)
    try:
        assert j.identity() == ("table-9", "tda")
        assert len(j.hands(finished_only=True)) == 1
        assert any(r.kind == "CardRead" for r in j.records())
    finally:
        j.close()

    before = configured.read_bytes()
    other = tmp_path / "other.sqlite3"
    out = _run(cfg, "--journal", str(other))
    assert out.returncode == 0, out.stderr
    assert other.exists() and configured.read_bytes() == before

    configured.unlink()
    for side in ("-wal", "-shm"):
        Path(f"{configured}{side}").unlink(missing_ok=True)
    out = _run(cfg, "--journal", "off")
    assert out.returncode == 0, out.stderr
    assert not configured.exists()


def test_a_journal_that_cannot_be_opened_is_named_once(tmp_path: Path) -> None:
    """docs/journal.md, "One writing process": a journal another process writes, or a file that is
    no journal, stops ``run`` with one line naming the journal once."""
    cfg = _config(tmp_path, None)
    journal = tmp_path / "held.sqlite3"
    owner = Owner(journal)
    try:
        out = _run(cfg, "--journal", str(journal))
    finally:
        owner.stop()
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.startswith("shoe-ctl run:")]
    assert len(lines) == 1, out.stderr
    assert f"journal {journal} is open for writing by another process (pid {owner.proc.pid}" in lines[0]
    assert lines[0].count(str(journal)) == 1, lines[0]

    notes = tmp_path / "notes.txt"
    notes.write_text("not a journal\n")
    out = _run(cfg, "--journal", str(notes))
    assert out.returncode == 2, out.stderr
    assert f"{notes} is not a shoe-ctl journal" in out.stderr
    assert out.stderr.count(str(notes)) == 1, out.stderr


def test_doctor_skips_the_journal_check_when_none_is_configured(tmp_path: Path) -> None:
    from shoe_ctl.cli import doctor as doc

    c = doc.check_journal(load_table_config(_config(tmp_path, None)))
    assert c.status == "skip" and "--journal" in c.detail
    c = doc.check_journal(load_table_config(_config(tmp_path, tmp_path / "j.sqlite3")))
    assert c.status == "ok" and "j.sqlite3" in c.detail
