"""``shoe-ctl run --shoe vshoe://...``: the virtual shoe chosen by its URL alone deals like ``sim``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from paths import ROOT


def test_a_vshoe_url_gets_the_simulated_dealer_and_the_doctor_skips_its_port(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "shoe_ctl.cli", "run", "--shoe", "vshoe://table-x?seed=3", "--count", "1",
         "--pace", "0", "--exit-when-done", "--display", "off", "--journal", "off", "--seats", "1-3"],
        capture_output=True, text=True, timeout=90, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "signal=deal" in out.stdout and "signal=idle" in out.stdout  # a hand dealt and finished

    from shoe_ctl.cli import doctor
    from shoe_ctl.config import ShoeConfig, TableConfig

    check = doctor.check_port(TableConfig(shoe=ShoeConfig(url="vshoe://table-x?seed=3")))
    assert check.status == "skip" and "virtual shoe" in check.detail
