"""The shoe bridge's systemd unit (deploy/shoe-ctl-bridge.service) passes ``systemd-analyze
verify`` beside the table's unit, starts before it and keeps its state where the bridge's
defaults are."""

from __future__ import annotations

import configparser
import subprocess
from pathlib import Path

from paths import ROOT
from test_unit_verify import DEPLOY, offline_root

from drivers import shoe_bridge


def test_the_bridge_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    root = offline_root(tmp_path, (DEPLOY / "shoe-ctl.service").read_text())
    (root / "etc/systemd/system/shoe-ctl-bridge.service").write_text((DEPLOY / "shoe-ctl-bridge.service").read_text())
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", f"--root={root}",
                        "/etc/systemd/system/shoe-ctl-bridge.service"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr


def test_the_bridge_unit_agrees_with_the_bridges_defaults() -> None:
    parser = configparser.RawConfigParser(strict=False, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DEPLOY / "shoe-ctl-bridge.service")
    unit, service = parser["Unit"], parser["Service"]
    assert "shoe-ctl.service" in unit["Before"].split()
    cmd = service["ExecStart"]
    assert f"--state {shoe_bridge.DEFAULT_STATE}" in cmd and f"--link {shoe_bridge.DEFAULT_LINK}" in cmd
    assert f"--decks {shoe_bridge.DEFAULT_DECKS}" in cmd
    assert "build-a-shoe.md" in unit["Documentation"] and (ROOT / "docs/build-a-shoe.md").exists()
