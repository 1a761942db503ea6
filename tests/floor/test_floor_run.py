"""``shoe-ctl run`` with ``[floor]`` enabled: the service (virtual shoe over a pty, journal)
publishes its table to a real Mosquitto and the floor ends with every journal record once, in
order; with the floor enabled and no journal, ``run`` refuses to start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from floor_help import ROOM
from paths import EXAMPLES
from waiting import wait_for

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.service.journal import Journal


def config(tmp_path: Path, mosquitto: Mosquitto, journal: bool = True) -> Path:
    cfg = tmp_path / "table.toml"
    text = f'table = "t1"\n[floor]\nenabled = true\nbroker = "{mosquitto.url}"\nroom = "{ROOM}"\n' \
           f'credentials = "{mosquitto.credentials_file("t1")}"\n'
    if journal:
        text += f'[journal]\npath = "{tmp_path / "journal.sqlite3"}"\n'
    cfg.write_text(text)
    return cfg


def test_run_publishes_the_table_to_the_floor(mosquitto: Mosquitto, tmp_path: Path) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    try:
        assert floor.connected.wait(10)
        out = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "run", "--config", str(config(tmp_path, mosquitto)),
                              "--hands", str(EXAMPLES), "--exit-when-done", "--pace", "0", "--display", "off"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        with Journal(tmp_path / "journal.sqlite3", table=None, profile=None, readonly=True) as j:
            seqs = [r.seq for r in j.records()]
        assert len(seqs) > 100
        assert wait_for(lambda: floor.seqs("t1") == seqs, 20), (len(floor.seqs("t1")), len(seqs))
        view = floor.tables["t1"]
        assert view.state.get("state") == "idle" and not view.online  # a clean stop: offline
        assert (tmp_path / "journal.sqlite3.floor").exists()
    finally:
        floor.close()


def test_run_refuses_a_floor_without_journal(mosquitto: Mosquitto, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "run", "--config",
                          str(config(tmp_path, mosquitto, journal=False)), "--hands", str(EXAMPLES),
                          "--exit-when-done", "--pace", "0", "--display", "off"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "the journal is the floor's outbox" in out.stderr
