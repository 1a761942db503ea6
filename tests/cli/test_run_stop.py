"""Stopping ``shoe-ctl run``: SIGINT ends it whatever the process inherited and whatever state the
shoe's link and the floor are in; a second signal ends a stop that hangs; a stop that does not end
by itself is ended with every thread's stack on stderr (docs/service.md, *Stopping*).

Each service here starts with SIGINT ignored, as a background job of a non-interactive shell
starts (``cmd &`` in a script): Python then raises no ``KeyboardInterrupt``, and a service that
relied on it ran on after the signal. The signal is sent at several moments: as soon as the
process has a handler for SIGINT (``SigCgt`` in ``/proc/PID/status``: the command line is still
being read, the status is then 130), once ``run`` has its own for SIGTERM too (the table is being
built and started: a clean stop, status 0), while the link connects, once the shoe's pty has
vanished and the link retries it, and with the floor on and its broker unreachable."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from floor_help import closed_port
from paths import EXAMPLES, ROOT
from waiting import interrupt, wait_for

CLI = [sys.executable, "-m", "shoe_ctl.cli"]
EXIT_BOUND_S = 60.0
"""A generous bound for a process to end after a signal on a loaded machine (not a timing)."""


def ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def catches(pid: int, sig: int) -> bool:
    """The process has a handler of its own for ``sig`` (``SigCgt`` of ``/proc/PID/status``)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    line = next(ln for ln in status.splitlines() if ln.startswith("SigCgt:"))
    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)


def spawn(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(args, cwd=cwd, preexec_fn=ignoring_sigint, text=True, **kwargs)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("moment", [("start", 0.0), ("up", 0.0), ("up", 0.4), ("vanished", 0.0),
                                    ("vanished", 0.3), ("vanished", 2.5)], ids=lambda m: f"{m[0]}+{m[1]}s")
def test_sigint_stops_run_whose_shoe_pty_vanishes(tmp_path: Path, moment: tuple[str, float]) -> None:
    """The shoe is a simulator on a pty (``shoe-ctl sim --link``); it quits and the link retries
    the vanished pty. SIGINT before or after that ends the service with status 0."""
    when, delay = moment
    link = tmp_path / "shoe"
    (tmp_path / "bench.toml").write_text(f'[shoe]\nurl = "{link}"\nauth = "off"\n')
    sim = spawn([*CLI, "sim", "--link", str(link)], tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    err = tmp_path / "stderr.txt"
    run = None
    try:
        assert sim.stdout is not None and sim.stdout.readline().strip()
        with err.open("w") as err_fh:
            run = spawn([*CLI, "run", "--config", "bench.toml", "--display", "off", "--no-status"], tmp_path,
                        stdout=subprocess.DEVNULL, stderr=err_fh)
        marker = signal.SIGINT if when == "start" else signal.SIGTERM
        assert wait_for(lambda: catches(run.pid, marker), EXIT_BOUND_S), err.read_text()
        if when == "vanished":
            sim.send_signal(signal.SIGTERM)  # the simulator quits: its pty and the link's symlink go
            assert sim.wait(EXIT_BOUND_S) == 0
            assert not link.exists()
        time.sleep(delay)
        status = interrupt(run, EXIT_BOUND_S, stderr=err)
        assert status in ((0, 130) if when == "start" else (0,)), err.read_text()
    finally:
        for proc in (run, sim):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("delay", [0.0, 0.5, 3.0])
def test_sigint_stops_run_whose_floor_broker_is_unreachable(tmp_path: Path, delay: float) -> None:
    """The floor on, its broker a loopback port nobody listens on (the publisher retries), the
    simulated dealer dealing: SIGINT ends the service with status 0."""
    journal = tmp_path / "journal.sqlite3"
    (tmp_path / "table.toml").write_text(
        f'table = "t1"\n[journal]\npath = "{journal}"\n'
        f'[floor]\nenabled = true\nbroker = "mqtt://127.0.0.1:{closed_port()}"\nroom = "room-1"\n')
    err = tmp_path / "stderr.txt"
    with err.open("w") as err_fh:
        run = spawn([*CLI, "run", "--config", str(tmp_path / "table.toml"), "--hands", str(EXAMPLES), "--pace",
                     "0.05", "--display", "off", "--no-status"], tmp_path, stdout=subprocess.DEVNULL, stderr=err_fh)
    try:
        assert wait_for(lambda: catches(run.pid, signal.SIGTERM), EXIT_BOUND_S), err.read_text()
        time.sleep(delay)
        assert interrupt(run, EXIT_BOUND_S, stderr=err) == 0, err.read_text()
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


STUCK = textwrap.dedent("""\
    import sys, time
    from shoe_ctl.lifecycle import StopSignals

    def a_close_that_never_ends():
        time.sleep(600)

    with StopSignals(whole_process=True, deadline_s=float(sys.argv[1])) as signals:
        print("ready", flush=True)
        # a wait with a timeout, as run's loop: a signal that comes just before a lock's wait
        # begins is only handled when the wait ends
        while not signals.stop.wait(0.1):
            pass
        print("stopping", flush=True)
        a_close_that_never_ends()
    """)


def stuck_process(tmp_path: Path, deadline_s: float) -> subprocess.Popen[str]:
    script = tmp_path / "stuck.py"
    script.write_text(STUCK)
    proc = subprocess.Popen([sys.executable, str(script), str(deadline_s)], cwd=ROOT, preexec_fn=ignoring_sigint,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def test_a_second_sigint_ends_a_stop_that_hangs(tmp_path: Path) -> None:
    proc = stuck_process(tmp_path, 300.0)
    try:
        proc.send_signal(signal.SIGINT)
        assert proc.stdout is not None and proc.stdout.readline() == "stopping\n"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(EXIT_BOUND_S) == -signal.SIGINT  # the default action: ended by the signal
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_stop_past_its_deadline_ends_with_every_threads_stack(tmp_path: Path) -> None:
    proc = stuck_process(tmp_path, 1.0)
    try:
        proc.send_signal(signal.SIGUSR1)  # the stacks on demand; the process goes on
        proc.send_signal(signal.SIGTERM)
        assert proc.stdout is not None and proc.stdout.readline() == "stopping\n"
        status = proc.wait(EXIT_BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read() if proc.stderr is not None else ""
    assert status == 1, err
    before, after = err.split("Timeout (", 1)
    assert "stuck.py" in before  # SIGUSR1's stacks, while it waited for a stop
    assert "in a_close_that_never_ends" in after and "stuck.py" in after
