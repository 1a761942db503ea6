"""``shoe-ctl hil crash``: the service as a child process, SIGKILLed mid-hand and restarted."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from hil.crash import CrashRun, compare
from hil.dealer import random_hands

CLI = [sys.executable, "-c", "import sys; from shoe_ctl.cli import main; sys.exit(main())"]


def run_harness(argv: list[str], workdir: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """``argv`` (a crash run in ``workdir``) with its output captured. When this returns or raises
    (a timeout, this test's own included) nothing of it is left running: the harness is killed,
    and so is every process whose command line names ``workdir`` (the services it started, each
    in a session of its own, which a kill of the harness alone would leave behind)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        proc.kill()
        proc.wait()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                if str(workdir) in cmdline:
                    os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ValueError):
                pass  # ended meanwhile, or not ours
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def test_small_crash_run_loses_nothing(tmp_path: Path) -> None:
    """Three hands, three kills: every finished hand equals the uninterrupted run's."""
    proc = run_harness([*CLI, "hil", "crash", "--hands", "3", "--kills", "3", "--seed", "11", "--json",
                        "--workdir", str(tmp_path)], tmp_path, timeout=240)
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout + proc.stderr
    res = json.loads(lines[0])
    assert proc.returncode == 0, res
    assert (res["hands"], res["kills"], res["restarts"], res["finished"]) == (3, 3, 3, 3)
    assert res["mismatches"] == res["lost_cards"] == res["duplicated_cards"] == 0
    # the killed run really was killed and recovered: restarted services replayed an open hand,
    # and no service logged an error while doing so
    log = (tmp_path / "killed.log").read_text()
    assert log.count("recovery: replayed") >= 2 and "resumed" in log
    assert "Traceback" not in log and "ERROR" not in log, log


def test_the_comparison_catches_a_lost_and_a_moved_card(tmp_path: Path) -> None:
    """A journal that misses one card read is reported as a lost card and a mismatched hand."""
    scripts = list(random_hands(5, seats=range(1, 9), count=2))
    ref = CrashRun(scripts, tmp_path, "reference", 5).run()
    assert ref.error is None
    t0 = time.monotonic()
    assert compare(ref, ref, 2, 0, t0)["ok"]
    bad = tmp_path / "bad.journal"
    shutil.copy(ref.journal, bad)
    with sqlite3.connect(bad) as db:
        seq = db.execute("SELECT seq FROM records WHERE kind = 'CardRead' AND hand = 2 "
                         "ORDER BY seq LIMIT 1 OFFSET 9").fetchone()[0]
        db.execute("DELETE FROM records WHERE seq = ?", (seq,))
    res = compare(ref, dataclasses.replace(ref, journal=bad), 2, 0, t0)
    assert res["lost_cards"] >= 1 and res["mismatches"] >= 1 and not res["ok"]
    assert any(d.startswith("hand 2") for d in res["details"]), res["details"]
