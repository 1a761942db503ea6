"""GPIO from any working folder: lgpio's notification FIFO goes to a folder of its own, the
working folder stays, and when lgpio cannot load the cause is named (by the LED board, the
buttons and ``doctor``). Runs the real lgpio module in child processes started in ``/proc``, a
folder nobody (not even root) can create a FIFO in."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

pytest.importorskip("lgpio")


UNWRITABLE = "/proc"


def child(code: str, env_extra: dict[str, str] | None = None, drop_lg_wd: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if drop_lg_wd:
        env.pop("LG_WD", None)
    env.update(env_extra or {})
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-W", "ignore", "-c", code], cwd=UNWRITABLE, env=env,
                          capture_output=True, text=True, timeout=60)


def test_plain_lgpio_import_fails_in_an_unwritable_folder() -> None:
    # the upstream behaviour the module works around (gpiozero #1106, lg #22)
    r = child("import lgpio")
    assert r.returncode != 0 and ".lgd-nfy" in r.stderr


def test_prepare_gpio_puts_the_fifo_in_a_private_folder_and_keeps_the_working_folder() -> None:
    r = child("import json, os\n"
              "from drivers.gpio_env import prepare_gpio\n"
              "folder = prepare_gpio()\n"
              "st = os.stat(folder)\n"
              "print(json.dumps({'folder': folder, 'cwd': os.getcwd(), 'mode': st.st_mode & 0o777,\n"
              "  'files': {n: os.stat(os.path.join(folder, n)).st_mode for n in os.listdir(folder)},\n"
              "  'again': prepare_gpio()}))")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["cwd"] == UNWRITABLE  # lg's chdir into LG_WD was undone
    assert out["mode"] == 0o700 and out["again"] == out["folder"]
    fifos = [n for n, mode in out["files"].items() if stat.S_ISFIFO(mode)]
    assert fifos and all(n.startswith(".lgd-nfy") for n in fifos)
    assert not Path(out["folder"]).exists()  # removed at exit


def test_a_given_lg_wd_is_kept() -> None:
    r = child("from drivers.gpio_env import prepare_gpio; print(prepare_gpio())", {"LG_WD": "/tmp"})
    assert r.returncode == 0 and r.stdout.strip() == "/tmp"


def test_led_board_and_buttons_name_the_fifo_cause() -> None:
    code = ("from drivers.{mod} import {cls}\n"
            "try:\n    {cls}({args})\n"
            "except Exception as e:\n    print(type(e).__name__, '|', e.detail, '|', e.fix)\n")
    for mod, cls, args in (("leds", "GpioLedSink", "{'green': 17}"),
                           ("buttons", "DealerButtons", "{'undo': 5}, print")):
        r = child(code.format(mod=mod, cls=cls, args=args), {"LG_WD": UNWRITABLE})
        name, detail, fix = (p.strip() for p in r.stdout.split("|"))
        assert name == "GpioSetupError", r.stdout + r.stderr
        assert "notification pipe" in detail and UNWRITABLE in detail and ".lgd-nfy" in detail
        assert "LG_WD" in fix and "shoe-ctl" in fix


def test_doctor_names_the_fifo_cause_and_not_a_missing_gpiozero(tmp_path: Path) -> None:
    cfg = tmp_path / "table.toml"
    cfg.write_text('[leds]\nbackend = "gpio"\n[leds.pins]\ngreen = 17\n')
    cfg.chmod(0o640)
    run = [sys.executable, "-W", "ignore", "-m", "shoe_ctl.cli", "doctor", "--config", str(cfg), "--json"]
    env = {k: v for k, v in os.environ.items() if k != "LG_WD"}
    env["PYTHONPATH"] = str(ROOT)
    broken = subprocess.run(run, cwd=UNWRITABLE, env={**env, "LG_WD": UNWRITABLE}, capture_output=True,
                            text=True, timeout=60)
    gpio = {c["name"]: c for c in json.loads(broken.stdout)["checks"]}["gpio"]
    assert gpio["status"] == "fail" and "notification pipe" in gpio["detail"]
    assert "missing" not in gpio["detail"]
    # the same folder, LG_WD left to shoe-ctl: lgpio loads; only the absent GPIO chip remains
    plain = subprocess.run(run, cwd=UNWRITABLE, env=env, capture_output=True, text=True, timeout=60)
    gpio = {c["name"]: c for c in json.loads(plain.stdout)["checks"]}["gpio"]
    assert "notification pipe" not in gpio["detail"] and "missing" not in gpio["detail"]
