"""A tilt seen everywhere: ``shoe-ctl run`` from an installed copy whose signed manifest no longer
matches one byte of one file shows a latched STOP naming the file on the dealer display, lights the
STOP signal, publishes a critical ``software-mismatch`` alert to a real Mosquitto, journals it,
and refuses a new hand (also the floor's override) and the alert's acknowledgement."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from floor_help import ROOM, Tap
from paths import EXAMPLES
from release_help import install_copy
from waiting import interrupt, wait_for

from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.service.journal import Journal

CHANGED = "shoe_ctl/rules/stub.py"


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def _post(url: str, body: dict[str, Any]) -> int:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.status


def test_one_changed_byte_tilts_display_leds_floor_and_journal(mosquitto: Mosquitto, tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    inst = install_copy(tmp_path, f'table = "t1"\n[journal]\npath = "{journal}"\n[floor]\nenabled = true\n'
                                  f'broker = "{mosquitto.url}"\nroom = "{ROOM}"\n'
                                  f'credentials = "{mosquitto.credentials_file("t1")}"\n')
    inst.flip_byte(CHANGED)
    mon = mosquitto.users[FLOOR_USER]
    tap = Tap(mosquitto.host, mosquitto.port, mon.username, mon.password, f"{ROOM}/tables/t1/#")
    env = {**os.environ, "PYTHONPATH": str(inst.site)}
    env.pop("SHOE_CTL_RELEASE_VERIFY", None)
    err, out = tmp_path / "stderr.txt", tmp_path / "stdout.txt"
    with err.open("w") as err_fh, out.open("w") as out_fh:
        proc = subprocess.Popen([sys.executable, "-m", "shoe_ctl.cli", "run", "--config", str(inst.config),
                                 "--hands", str(EXAMPLES), "--pace", "0.05", "--display", "127.0.0.1:0"],
                                cwd=tmp_path, env=env, stdout=out_fh, stderr=err_fh)
    try:
        assert wait_for(lambda: "dealer display: http" in err.read_text(), 60), err.read_text()
        base = re.search(r"dealer display: (http://127\.0\.0\.1:\d+)/", err.read_text()).group(1)  # type: ignore[union-attr]

        def tilt_shown() -> bool:
            state = _get(f"{base}/state")
            return any(a["code"] == "software-mismatch" for a in state["alerts"])

        assert wait_for(tilt_shown, 30)
        state = _get(f"{base}/state")
        alert = next(a for a in state["alerts"] if a["code"] == "software-mismatch")
        assert alert["latched"] and CHANGED in alert["message"]
        assert state["instruction"]["signal"] == "stop" and state["instruction"]["led"]["leds"] == ["red"]
        assert state["hand"] is None  # the simulated dealer's new hand was refused
        assert wait_for(lambda: "signal=stop leds=red" in out.read_text(), 10)  # the console LEDs
        assert "TILT: software mismatch" in err.read_text()

        def floor_alert() -> dict[str, Any] | None:
            for topic, _raw, data in tap.snapshot():
                if topic.endswith("/alerts") and isinstance(data, dict) and data.get("code") == "software-mismatch":
                    return data
            return None

        assert wait_for(lambda: floor_alert() is not None, 20)
        pub = floor_alert()
        assert pub is not None and pub["severity"] == "critical" and CHANGED in pub["message"]

        # the floor's override and an acknowledgement of the tilt are refused, and say so
        assert _post(f"{base}/input", {"action": "new-hand", "seats": [1, 2], "args": {"override": True}}) == 202
        assert _post(f"{base}/input", {"action": "ack-alert", "args": {"code": "software-mismatch"}}) == 202

        def refusals() -> list[str]:
            return [a["message"] for a in _get(f"{base}/state")["alerts"] if a["code"] == "tilt-refused"]

        assert wait_for(lambda: any("'ack-alert' refused" in m for m in refusals()), 10), refusals()
        state = _get(f"{base}/state")
        assert state["hand"] is None and any(a["code"] == "software-mismatch" for a in state["alerts"])
    finally:
        try:
            status = interrupt(proc, stderr=err)  # a tilted table stops cleanly, the floor on
        finally:
            tap.close()
    assert status == 0, err.read_text()
    with Journal(journal, table=None, profile=None, readonly=True) as j:
        bodies = [json.loads(r.body) for r in j.records() if r.kind == "Alert" and r.body]
    assert any(b.get("code") == "software-mismatch" and CHANGED in b.get("message", "") for b in bodies)
    assert any(b.get("code") == "tilt-refused" for b in bodies)
