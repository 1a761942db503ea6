"""The shipped systemd unit, udev rule and kiosk script say what the install guide promises."""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path

from shoe_ctl.cli import build_parser

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def unit() -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DEPLOY / "shoe-ctl.service")
    return parser


def test_unit_is_notify_with_watchdog_restart_journald_and_own_user() -> None:
    svc = unit()["Service"]
    assert svc["Type"] == "notify"
    assert svc["WatchdogSec"].rstrip("s").isdigit() and int(svc["WatchdogSec"].rstrip("s")) >= 2
    assert svc["Restart"] == "on-failure"
    assert svc["StandardOutput"] == "journal" and svc["StandardError"] == "journal"
    assert svc["User"] == "shoe-ctl" and svc["User"] != "root"
    assert svc["UMask"] == "0077"  # the journal is created 0600
    assert svc["StateDirectory"] == "shoe-ctl" and svc["StateDirectoryMode"] == "0700"
    assert "dialout" in svc["SupplementaryGroups"].split() and "gpio" in svc["SupplementaryGroups"].split()
    assert unit()["Install"]["WantedBy"] == "multi-user.target"


def test_unit_runs_a_command_the_cli_knows() -> None:
    argv = shlex.split(unit()["Service"]["ExecStart"])
    assert argv[0].endswith("/shoe-ctl") and argv[1] == "run"
    args = build_parser().parse_args(argv[1:])
    assert args.command == "run" and Path(args.config) == Path("/etc/shoe-ctl/table.toml")
    # the journal is on (recovery after a crash needs it), in the state folder systemd creates 0700
    assert Path(args.journal).parent == Path("/var/lib/shoe-ctl")


def test_udev_rule_stable_name_and_modemmanager_ignore() -> None:
    lines = [ln for ln in (DEPLOY / "99-shoe-ctl.rules").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert len(lines) == 1
    rule = lines[0]
    assert 'SUBSYSTEM=="tty"' in rule and 'SYMLINK+="shoe"' in rule
    assert 'ENV{ID_MM_DEVICE_IGNORE}="1"' in rule and 'GROUP="dialout"' in rule
    assert 'TAG+="systemd"' in rule  # dev-shoe.device exists for the unit's Wants=
    # ModemManager's port probing and a getty unit kept away (docs/security.md)
    assert 'ENV{ID_MM_PORT_IGNORE}="1"' in rule and 'ENV{SYSTEMD_WANTS}=""' in rule


def test_kiosk_script_uses_the_service_page() -> None:
    text = (DEPLOY / "shoe-ctl-kiosk.sh").read_text()
    assert text.startswith("#!/bin/sh") and "--kiosk" in text and "http://127.0.0.1:8080/" in text
    assert (DEPLOY / "shoe-ctl-kiosk.sh").stat().st_mode & 0o111


def test_both_units_raise_the_descriptor_limit_and_the_floor_unit_runs_the_floor() -> None:
    """The pages cap their connections far below it (docs/floor.md, docs/security.md)."""
    assert int(unit()["Service"]["LimitNOFILE"]) >= 4096
    floor = configparser.RawConfigParser(strict=False, delimiters=("=",))
    floor.optionxform = str  # type: ignore[assignment,method-assign]
    floor.read(DEPLOY / "shoe-ctl-floor.service")
    svc = floor["Service"]
    assert int(svc["LimitNOFILE"]) >= 4096 and svc["User"] == "shoe-ctl"
    argv = shlex.split(svc["ExecStart"])
    args = build_parser().parse_args(argv[1:])
    assert argv[1] == "floor" and args.credentials and args.journal


def test_the_unit_switches_the_gpio_leds_off_after_any_end_of_the_service() -> None:
    unit = (DEPLOY / "shoe-ctl.service").read_text()
    (line,) = [x for x in unit.splitlines() if x.startswith("ExecStopPost=")]
    assert line == "ExecStopPost=/opt/shoe-ctl/.venv/bin/shoe-ctl leds off --config /etc/shoe-ctl/table.toml"
