"""``shoe-ctl conform``: the kit's command (docs/conformance.md): a bad argument is exit 2, a run
against a shoe writes the JSON and JUnit reports, and a shoe that answers nothing fails."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from shoe_ctl.cli import main


def test_a_time_scale_below_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "--shoe", "virtual", "--time-scale", "0.5"]) == 2
    assert "--time-scale 0.5" in capsys.readouterr().err


def test_a_port_where_no_shoe_answers_fails_every_test(tmp_path: Path) -> None:
    """``loop://`` echoes the kit's own frames: no HELLO ever comes, so nothing passes."""
    out, xml = tmp_path / "r.json", tmp_path / "r.xml"
    assert main(["conform", "--shoe", "loop://", "--json", str(out), "--junit", str(xml)]) == 1
    report = json.loads(out.read_text())
    assert report["shoe"] is None and report["summary"]["passed"] == 0
    assert report["summary"]["failed"] == len(report["results"]) > 10
    assert all("HELLO" in r["message"] for r in report["results"])
    assert ET.fromstring(xml.read_text()).get("failures") == str(report["summary"]["failed"])


def test_the_bridge_shoe_without_the_reader_packages_names_them(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A checkout set up for running only (no ``pi`` extra): exit 2 and the packages named, no
    traceback."""
    monkeypatch.setitem(sys.modules, "gpiozero", None)
    assert main(["conform", "--shoe", "bridge-virtual"]) == 2
    err = capsys.readouterr().err
    assert "--shoe bridge-virtual" in err and "gpiozero is not installed" in err
    assert "bash scripts/setup.sh pi" in err
