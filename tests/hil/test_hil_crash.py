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

import pytest

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


def test_a_crash_run_deals_on_a_checkout_with_no_release_manifest(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's own table does not tilt for want of a signed release manifest (a checkout, a
    test lab's bench): its hands are dealt, not waited for until the run's limit."""
    monkeypatch.delenv("SHOE_CTL_RELEASE_VERIFY", raising=False)
    proc = run_harness([*CLI, "hil", "crash", "--hands", "1", "--kills", "0", "--seed", "5", "--json",
                        "--workdir", str(tmp_path)], tmp_path, timeout=240)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0 and res["finished"] == 1, res


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


@pytest.mark.timeout(180)
def test_a_refused_input_fails_the_run_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dealer port answers an input with an error line (here a line it cannot read, as it
    answers one over its rate): the run ends at once with the port's reason, not a wait for ever
    (the pytest timeout bounds it)."""
    from hil import crash

    original = crash.DealerClient.post
    posts = [0]

    def post(self: crash.DealerClient, event: object) -> None:
        posts[0] += 1
        if posts[0] == 3:
            self.send_line(b'{"type": "DealerInput", "action": "no-such-input"}\n')
            return
        original(self, event)  # type: ignore[arg-type]

    monkeypatch.setattr(crash.DealerClient, "post", post)
    t0 = time.monotonic()
    run = CrashRun(random_hands(3, count=3), tmp_path, "refused", 3, timeout=600.0).run()
    assert run.error is not None and "the service refused a dealer input: " in run.error, run.error
    assert time.monotonic() - t0 < 600.0  # ended by the refusal, not by the run's own limit


def test_the_harness_paces_inputs_to_the_ports_limit() -> None:
    """A burst of inputs from the harness never exceeds the dealer port's bucket: the client waits."""
    from hil.crash import DealerClient
    from shoe_ctl.service.dealer_port import INPUTS_BURST, INPUTS_PER_S
    from shoe_ctl.service.ratelimit import RateLimiter

    client = DealerClient(Path("/nonexistent"), lambda _c: None)
    port = RateLimiter(INPUTS_PER_S, INPUTS_BURST, "dealer port inputs")
    refused = 0
    for _ in range(3 * INPUTS_BURST):
        client._pace()
        refused += not port.allow("client")
    assert refused == 0
