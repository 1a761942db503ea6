"""``shoe-ctl floor`` serves the page for a room on a real broker and stops on SIGTERM;
``shoe-ctl hil floor --json`` runs virtual tables through a broker restart, a publisher kill and
a network cut and reports nothing lost, duplicated or out of order."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from floor_help import ROOM

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto, find_mosquitto


def test_floor_command_serves_the_page(mosquitto: Mosquitto, tmp_path: Path) -> None:
    creds = mosquitto.credentials_file(FLOOR_USER)
    proc = subprocess.Popen([sys.executable, "-m", "shoe_ctl.cli", "floor", "--broker", mosquitto.url, "--room", ROOM,
                             "--credentials", str(creds), "--listen", "127.0.0.1:0",
                             "--journal", str(tmp_path / "floor.sqlite3")],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        match = re.search(r"floor page: (http://127\.0\.0\.1:\d+/)", line)
        assert match, line
        deadline = time.monotonic() + 10
        state: dict[str, object] = {}
        while time.monotonic() < deadline:
            state = json.loads(urllib.request.urlopen(match.group(1) + "state", timeout=5).read())
            if state["connected"]:
                break
            time.sleep(0.1)
        assert state["room"] == ROOM and state["connected"] is True and state["tables"] == []
        assert "<title>Floor</title>" in urllib.request.urlopen(match.group(1), timeout=5).read().decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def test_floor_command_serves_the_pits_of_its_config(mosquitto: Mosquitto, tmp_path: Path) -> None:
    config = tmp_path / "floor.toml"
    config.write_text(f'[floor]\nroom = "{ROOM}"\n\n[[floor.pits]]\nname = "Pit 1"\nrows = [["t1", "", "t2"]]\n')
    proc = subprocess.Popen([sys.executable, "-m", "shoe_ctl.cli", "floor", "--config", str(config), "--broker",
                             mosquitto.url, "--credentials", str(mosquitto.credentials_file(FLOOR_USER)),
                             "--listen", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        match = re.search(r"floor page: (http://127\.0\.0\.1:\d+/)", proc.stderr.readline())
        assert match
        layout = json.loads(urllib.request.urlopen(match.group(1) + "layout", timeout=5).read())
        assert layout["pits"] == [{"name": "Pit 1", "rows": 1, "columns": 3, "places": {"t1": [1, 1], "t2": [1, 3]}}]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def test_floor_command_refuses_a_broken_layout(tmp_path: Path) -> None:
    config = tmp_path / "floor.toml"
    config.write_text('[floor]\n[[floor.pits]]\nname = "A"\nrows = [["t1"]]\n[[floor.pits]]\nname = "B"\n'
                      'rows = [["t2", "t1"]]\n')
    out = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "floor", "--config", str(config)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2, out.stderr
    assert str(config) in out.stderr and "floor.pits[1].rows[0][1]" in out.stderr and "placed twice" in out.stderr
    assert "Traceback" not in out.stderr


def test_floor_command_refuses_an_open_credentials_file(tmp_path: Path, mosquitto: Mosquitto) -> None:
    creds = mosquitto.credentials_file(FLOOR_USER)
    os.chmod(creds, 0o644)
    out = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "floor", "--broker", mosquitto.url,
                          "--credentials", str(creds)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "0644" in out.stderr


def test_hil_floor_json() -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed")
    # three tables in two worker processes, through a broker restart, a publisher kill and a network cut
    out = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "hil", "floor", "--tables", "3", "--per-process", "2",
                          "--seconds", "6", "--pace", "0.02", "--json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["ok"] is True and report["lost"] == report["duplicated"] == report["out_of_order"] == 0
    assert report["tables"] == 3 and report["processes"] == 2
    assert report["faults"] == ["broker-restart", "publisher-kill", "network-cut"]
    assert report["broker_starts"] == 2 and report["network_cuts"] == 1 and report["publishers_started"] == 4
    assert report["events"] > 100
    assert report["latency_ms"]["p50"] is not None and report["latency_ms"]["p99"] >= report["latency_ms"]["p50"]
    # the latency in two parts, over every event the floor applied and a table noted handing to paho
    whole = report["latency_ms_split"]["whole_run"]
    assert 100 < whole["events"] <= report["events"]
    assert whole["table"]["p99"] >= whole["table"]["p50"] >= 0
    assert whole["publish_to_floor"]["p99"] >= whole["publish_to_floor"]["p50"]
    assert set(report["cpu_us_per_event"]) == {"tables", "publishers", "broker", "floor_consumer"}
    assert all(v is not None and v >= 0 for v in report["cpu_us_per_event"].values())
