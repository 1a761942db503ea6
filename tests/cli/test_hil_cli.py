"""``shoe-ctl hil soak`` (a small one) and ``shoe-ctl sim``."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from drivers.link_window import SequenceWindow
from drivers.shoe import ShoeLink
from shoe_ctl.cli import main
from shoe_ctl.events import CardRead, SequenceGap

KEYS = {"cards", "delivered", "lost", "duplicated", "out_of_order", "bad_frames", "reconnects", "seconds"}


@pytest.mark.faults
def test_small_soak_with_the_issue_faults_passes(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["hil", "soak", "--cards", "400", "--faults",
               "corrupt=0.01,drop=0.001,garbage=0.001,unplug-every=150", "--seed", "3", "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    result = json.loads(out[0])
    assert KEYS <= set(result)
    assert rc == 0
    assert result["cards"] == 400 == result["delivered"]
    assert (result["lost"], result["duplicated"], result["out_of_order"], result["mismatched"]) == (0, 0, 0, 0)
    assert result["bad_frames"] > 0 and result["reconnects"] >= 2


@pytest.mark.faults
def test_soak_counts_a_reboot_loss_as_reported_gap_not_as_silent_loss() -> None:
    from hil.soak import passed, run_soak

    result = run_soak(120, "reboot-at=60,unplug-at=59", seed=2, stall_s=3.0)
    assert result["lost"] == 0 and passed(result)
    # what the reboot dropped was either already delivered, or reported as a SequenceGap
    assert result["delivered"] + result["gap_reported"] == result["sent"] == 120
    assert result["lost_on_reboot"] >= result["gap_reported"]
    assert result["gaps"] == (1 if result["gap_reported"] else 0)


def test_soak_fails_with_exit_1_on_a_lost_card(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A link that swallows one card must make the soak fail (the check is real)."""
    orig = SequenceWindow._deliver

    def lossy(self: SequenceWindow, msg: Any) -> None:
        if msg.seq == 7:
            self.acked = msg.seq
            return
        orig(self, msg)

    monkeypatch.setattr(SequenceWindow, "_deliver", lossy)
    rc = main(["hil", "soak", "--cards", "20", "--json", "--stall-s", "1"])
    result = json.loads(capsys.readouterr().out)
    assert rc == 1 and result["lost"] == 1


def test_sim_prints_a_url_a_link_can_use() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "shoe_ctl.cli", "sim", "--transport", "tcp", "--pace", "0.05"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("socket://127.0.0.1:")
        q: queue.Queue[Any] = queue.Queue()
        with ShoeLink(url, q, auto_ack=True) as link:
            link.wait_connected(10)
            end = time.monotonic() + 10
            read = None
            while read is None and time.monotonic() < end:
                ev = q.get(timeout=5)
                read = ev if isinstance(ev, CardRead) else None
                assert not isinstance(ev, SequenceGap)
            assert read is not None and read.dispense >= 1
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
