"""A table's service killed (SIGKILL, as a power cut or a crash) in the middle of dealing and
started again on the same journal: the broker sends its Will, the restarted service's publisher
starts from its outbox file, and the floor ends with every journal record once, in order."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from floor_help import ROOM
from waiting import wait_for

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer
from shoe_ctl.service.journal import Journal


def test_service_killed_and_restarted(mosquitto: Mosquitto, tmp_path: Path) -> None:
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'table = "t1"\n[floor]\nenabled = true\nbroker = "{mosquitto.url}"\nroom = "{ROOM}"\n'
                   f'credentials = "{mosquitto.credentials_file("t1")}"\n'
                   f'[journal]\npath = "{tmp_path / "journal.sqlite3"}"\n')
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    run = [sys.executable, "-m", "shoe_ctl.cli", "run", "--config", str(cfg), "--pace", "0.005", "--display", "off"]
    try:
        assert floor.connected.wait(10)
        first = subprocess.Popen(run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_for(lambda: len(floor.seqs("t1")) > 60, 30), "the table publishes"
            session = floor.tables["t1"].session
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        assert wait_for(lambda: not floor.tables["t1"].online, 10), "the Will marks the table offline"
        assert floor.tables["t1"].session == session
        second = subprocess.run([*run, "--count", "1", "--exit-when-done", "--seed", "7"], capture_output=True,
                                text=True, timeout=120)
        assert second.returncode == 0, second.stderr[-2000:]
        with Journal(tmp_path / "journal.sqlite3", table=None, profile=None, readonly=True) as j:
            seqs = [r.seq for r in j.records()]
        assert wait_for(lambda: floor.seqs("t1") == seqs, 30), (len(floor.seqs("t1")), len(seqs))
        assert floor.tables["t1"].session > session
    finally:
        floor.close()
