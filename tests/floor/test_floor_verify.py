"""Seeded verification on demand (docs/compliance.md, "Verification on demand"): the floor sends a
random seed over a real Mosquitto, the running table answers HMAC-SHA256 over its manifest, its
configuration, its shoe's serial and firmware, and ``shoe-ctl verify`` computes the same answer
offline; the software identity is in the floor's birth message and on the display; a seed that is
not hex or too long is refused on the answer topic and journaled, nothing else changed. The
table's recall reaches the floor with its downcards hidden."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
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


def test_a_seeded_answer_matches_the_offline_computation(mosquitto: Mosquitto, tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    inst = install_copy(tmp_path, f'table = "t1"\n[journal]\npath = "{journal}"\n[floor]\nenabled = true\n'
                                  f'broker = "{mosquitto.url}"\nroom = "{ROOM}"\n'
                                  f'credentials = "{mosquitto.credentials_file("t1")}"\n')
    floor = mosquitto.users[FLOOR_USER]
    tap = Tap(mosquitto.host, mosquitto.port, floor.username, floor.password, f"{ROOM}/tables/t1/#")
    env = {**os.environ, "PYTHONPATH": str(inst.site)}
    err = tmp_path / "stderr.txt"
    with err.open("w") as err_fh:
        proc = subprocess.Popen([sys.executable, "-m", "shoe_ctl.cli", "run", "--config", str(inst.config),
                                 "--hands", str(EXAMPLES), "--pace", "0.05", "--display", "127.0.0.1:0"],
                                cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=err_fh)
    base = f"{ROOM}/tables/t1"

    def on(leaf: str) -> list[Any]:
        return [d for t, _r, d in tap.snapshot() if t == f"{base}/{leaf}" and isinstance(d, dict)]

    try:
        digest = hashlib.sha256(inst.manifest.read_bytes()).hexdigest()
        assert wait_for(lambda: any((s.get("software") or {}).get("shoe_serial") for s in on("status")), 60), \
            err.read_text()
        born = next(s["software"] for s in on("status") if (s.get("software") or {}).get("shoe_serial"))
        assert born["manifest"] == digest and born["verified"] == "yes" and born["version"] == "0.1.0"
        display = re.search(r"dealer display: (http://127\.0\.0\.1:\d+)/", err.read_text()).group(1)  # type: ignore[union-attr]
        with urllib.request.urlopen(display + "/state", timeout=30) as r:
            assert json.loads(r.read())["software"] == born  # the display's about panel

        seed = secrets.token_hex(32)
        for bad in ("not-hex-" * 5, "ab" * 100):
            tap.client.publish(f"{base}/verify", json.dumps({"seed": bad}), qos=1)
        tap.client.publish(f"{base}/verify", json.dumps({"seed": seed}), qos=1)
        assert wait_for(lambda: len(on("verified")) >= 3, 60), on("verified")
        errors = [a["error"] for a in on("verified") if "error" in a]
        assert any("hex digits" in e for e in errors) and any("at most 128" in e for e in errors)
        answer = next(a for a in on("verified") if a.get("seed") == seed)
        assert answer["shoe_serial"] == born["shoe_serial"] and answer["manifest"] == digest
        # the recall of the last hands reaches the floor too, the downcards hidden
        def cards() -> list[Any]:  # every card in the recalls so far
            return [e for r in on("recall") for h in r.get("hands") or [] for e in h["entries"] if e["kind"] == "card"]

        # a recall may come as a hand starts, its downcards dealt and no upcard yet: wait for one
        # that shows an upcard, not merely for one holding cards
        assert wait_for(lambda: any(e["card"] != "??" for e in cards() if e["role"] == "up"), 60)
        assert all(e["card"] == "??" for e in cards() if e["role"] in ("down", "burn", "stray"))
    finally:
        try:
            status = interrupt(proc, stderr=err)  # a tilted table stops cleanly, the floor on
        finally:
            tap.close()
    assert status == 0, err.read_text()
    offline = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "verify", "--seed", seed, "--manifest",
                              str(inst.manifest), "--config", str(inst.config), "--serial", answer["shoe_serial"],
                              "--firmware", answer["shoe_firmware"]], capture_output=True, text=True, timeout=60)
    assert offline.returncode == 0 and offline.stdout.strip() == answer["answer"]
    # another configuration byte, another answer
    other = tmp_path / "other.toml"
    other.write_bytes(inst.config.read_bytes() + b"\n")
    differs = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "verify", "--seed", seed, "--manifest",
                              str(inst.manifest), "--config", str(other), "--serial", answer["shoe_serial"],
                              "--firmware", answer["shoe_firmware"]], capture_output=True, text=True, timeout=60)
    assert differs.stdout.strip() != answer["answer"]
    bad = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "verify", "--seed", "zz", "--manifest",
                          str(inst.manifest)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "seed" in bad.stderr
    with Journal(journal, table=None, profile=None, readonly=True) as j:
        refused = [json.loads(r.body) for r in j.records() if r.kind == "Alert" and '"verify-refused"' in r.body]
    assert len(refused) == 2
