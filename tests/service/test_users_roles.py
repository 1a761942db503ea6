"""Named users with roles (shoe_ctl/users.py, docs/compliance.md "People and roles"): the users
file's checks (mode, duplicate names), ``shoe-ctl users``, the roles each input needs, and, on a
running table with a users file, a latched alert that a dealer's credential cannot clear and a
floor supervisor's can; PIN brute force over the display and the dealer port locked out and
journaled, nothing else changed; no PIN or hash in the journal."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from rule_profiles import PROFILES
from waiting import wait_for

from shoe_ctl.config import LedConfig, TableConfig
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.service import codec
from shoe_ctl.service.journal import Journal
from shoe_ctl.table import Table, TableError
from shoe_ctl.users import (
    FLOOR_ROLES,
    MAX_FAILURES,
    TILT_ROLES,
    Authenticator,
    AuthError,
    Role,
    User,
    UserFileError,
    UserStore,
    required_role,
)

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # the tests' users: quick to check
PINS = {"dana": "111111", "sam": "222222", "tess": "333333", "vic": "444444"}
ROLES = {"dana": Role.DEALER, "sam": Role.FLOOR, "tess": Role.TECHNICIAN, "vic": Role.SURVEILLANCE}


def make_users(path: Path) -> UserStore:
    store = UserStore(path, hasher=CHEAP)
    store.save([User(n, ROLES[n], store.hash_pin(p)) for n, p in PINS.items()])
    return store


def test_required_roles() -> None:
    alerts = [{"id": 1, "code": "duplicate-card", "latched": True}, {"id": 2, "code": "x", "latched": False},
              {"id": 3, "code": "software-mismatch", "latched": True}]
    ack = DealerAction.ACK_ALERT
    assert required_role(ack, {"id": 2}, alerts) is None  # information: anyone at the table
    assert required_role(ack, {"id": 1}, alerts) == FLOOR_ROLES
    assert required_role(ack, {"code": "duplicate-card"}, alerts) == FLOOR_ROLES
    assert required_role(ack, {}, alerts[1:2]) is None and required_role(ack, {}, alerts) == FLOOR_ROLES
    assert required_role(ack, {"id": 3}, alerts, tilt_code="software-mismatch") == TILT_ROLES
    assert required_role(DealerAction.NEW_HAND, {"override": True}, []) == FLOOR_ROLES
    assert required_role(DealerAction.NEW_HAND, {}, alerts) is None
    assert required_role(DealerAction.MISDEAL, {}, []) == FLOOR_ROLES
    assert required_role(DealerAction.GAP_CARDS, {"cards": 1, "burned": True}, []) == FLOOR_ROLES
    assert required_role(DealerAction.GAP_CARDS, {"cards": 1}, []) is None
    assert required_role(DealerAction.FOLD, {}, alerts) is None


def test_the_users_file_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "users.toml"
    store = make_users(path)
    assert path.stat().st_mode & 0o777 == 0o600 and [u.name for u in store.load()] == list(PINS)
    text = path.read_text()
    assert all(pin not in text for pin in PINS.values()) and text.count("$argon2id$") == 4
    path.chmod(0o644)
    with pytest.raises(UserFileError, match="mode 0644"):
        store.load()
    path.chmod(0o600)
    path.write_text(text + '\n[[user]]\nname = "sam"\nrole = "dealer"\npin = "$argon2id$x"\n')
    with pytest.raises(UserFileError, match="'sam' is already user 2"):
        store.load()
    path.write_text('[[user]]\nname = "Bob Smith"\nrole = "dealer"\npin = "$argon2id$x"\n')
    with pytest.raises(UserFileError, match="name"):
        store.load()
    path.write_text('[[user]]\nname = "bob"\nrole = "boss"\npin = "$argon2id$x"\n')
    with pytest.raises(UserFileError, match="role 'boss'"):
        store.load()
    path.write_text('[[user]]\nname = "bob"\nrole = "dealer"\npin = "123456"\n')
    with pytest.raises(UserFileError, match="not an Argon2 hash"):
        store.load()


def test_lockout_after_repeated_wrong_pins(tmp_path: Path) -> None:
    reports: list[tuple[str, str]] = []
    now = [0.0]
    auth = Authenticator(make_users(tmp_path / "u.toml"), lambda c, m: reports.append((c, m)), clock=lambda: now[0])
    assert auth.authenticate("sam", PINS["sam"], "display:a").role is Role.FLOOR
    for _ in range(MAX_FAILURES - 1):
        with pytest.raises(AuthError) as err:
            auth.authenticate("sam", "999999", "display:a")
        assert err.value.status == "wrong"
    with pytest.raises(AuthError) as err:
        auth.authenticate("sam", "999999", "display:a")
    assert err.value.status == "locked"
    with pytest.raises(AuthError, match="locked out"):
        auth.authenticate("sam", PINS["sam"], "display:b")  # the right PIN, while locked
    assert auth.authenticate("dana", PINS["dana"], "display:a").name == "dana"  # another user is not locked
    now[0] += 301
    assert auth.authenticate("sam", PINS["sam"], "display:a").name == "sam"
    assert [c for c, _ in reports].count("auth-locked") == 1
    assert all(p not in m for _, m in reports for p in PINS.values()) and all("999999" not in m for _, m in reports)
    # many names from one source: the source is locked
    for i in range(10):
        with pytest.raises(AuthError):
            auth.authenticate(f"guess{i}", "123456", "dealer-port")
    with pytest.raises(AuthError, match="locked out"):
        auth.authenticate("dana", PINS["dana"], "dealer-port")


def test_cli_add_list_remove_passwd(tmp_path: Path) -> None:
    users = tmp_path / "users.toml"
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'[users]\nfile = "{users}"\n')

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "users", "--config", str(cfg), *args],
                              input=stdin, capture_output=True, text=True, timeout=120)

    assert run("add", "ann", "--role", "floor-supervisor", "--pin-stdin", stdin="135790\n").returncode == 0
    assert run("add", "bo", "--role", "dealer", "--pin-stdin", stdin="246802\n").returncode == 0
    dup = run("add", "ann", "--role", "dealer", "--pin-stdin", stdin="111111\n")
    assert dup.returncode == 1 and "exists already" in dup.stderr
    short = run("add", "cy", "--role", "dealer", "--pin-stdin", stdin="12\n")
    assert short.returncode == 1 and "6 to 12 digits" in short.stderr
    listed = run("list")
    assert listed.stdout.split() == ["ann", "floor-supervisor", "bo", "dealer"] and "argon2" not in listed.stdout
    before = users.read_text()
    assert run("passwd", "bo", "--pin-stdin", stdin="975310\n").returncode == 0
    assert users.read_text() != before and users.stat().st_mode & 0o777 == 0o600
    assert UserStore(users).load()[1].pin_hash != before
    assert run("remove", "ann").returncode == 0 and run("list").stdout.split() == ["bo", "dealer"]
    assert run("remove", "ann").returncode == 1
    users.chmod(0o666)
    bad = run("list")
    assert bad.returncode == 1 and "mode 0666" in bad.stderr


# --------------------------------------------------------------------------- a running table


def _req(url: str, body: Any) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return int(r.status), json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _state(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "state", timeout=5) as r:
        return json.loads(r.read())


@pytest.fixture
def table(tmp_path: Path) -> Any:
    make_users(tmp_path / "users.toml")
    t = Table.from_config(TableConfig(leds=LedConfig(backend="mock")), profiles=PROFILES, shoe_url="sim",
                          journal=str(tmp_path / "j.sqlite3"), display=("127.0.0.1", 0),
                          dealer_socket=str(tmp_path / "dealer.sock"), users=str(tmp_path / "users.toml"))
    with t:
        yield t


def _stop(t: Any) -> int:
    c = t.controller
    c.call_soon(lambda: c.raise_alert("duplicate-card", "a card seen twice: stop, call the floor", latched=True))
    assert c.wait_idle(10)  # the call is handled, even with the shoe link's own events queued meanwhile
    ids = [a["id"] for a in c.machine.alerts if a["code"] == "duplicate-card"]
    assert ids, c.machine.alerts
    return ids[0]


def test_a_dealer_cannot_clear_a_latched_alert_and_a_supervisor_can(table: Any, tmp_path: Path) -> None:
    url = table.io.display.url
    aid = _stop(table)
    assert wait_for(lambda: any(a["id"] == aid for a in _state(url)["alerts"]), 10)
    status, body = _req(url + "ack", {"id": aid})
    assert status == 401 and body["need"] == ["floor-supervisor"]  # no credential: asked for one
    status, body = _req(url + "ack", {"id": aid, "credential": {"user": "dana", "pin": PINS["dana"]}})
    assert status == 403 and "dana is a dealer" in body["error"]
    assert table.controller.wait_idle(10)
    assert any(a["id"] == aid for a in table.machine.alerts)  # still up
    assert any(a["id"] == aid for a in _state(url)["alerts"])
    # the display answers at once and hands the input on: the controller's refusal follows
    assert wait_for(lambda: any(a["code"] == "role-refused" for a in table.machine.alerts), 10)
    refused = [a for a in table.machine.alerts if a["code"] == "role-refused"]
    assert refused and "dana (dealer) may not decide this" in refused[0]["message"]
    status, _ = _req(url + "ack", {"id": aid, "credential": {"user": "sam", "pin": PINS["sam"]}})
    assert status == 202
    assert wait_for(lambda: not any(a["id"] == aid for a in table.machine.alerts), 10)
    table.journal.flush(5.0)
    with Journal(tmp_path / "j.sqlite3", table=None, profile=None, readonly=True) as j:
        recs = list(j.records())
    acks = [r for r in recs if r.kind == "DealerInput" and '"ack-alert"' in r.body]
    sources = [json.loads(r.body).get("source") for r in acks]
    assert any(s and s.endswith("user=dana role=dealer") for s in sources)
    assert any(s and s.endswith("user=sam role=floor-supervisor") for s in sources)
    raw = (tmp_path / "j.sqlite3").read_bytes()
    assert all(p.encode() not in raw for p in PINS.values()) and b"$argon2" not in raw


def test_pin_brute_force_over_the_display_and_the_dealer_port(table: Any, tmp_path: Path) -> None:
    url = table.io.display.url
    aid = _stop(table)
    assert wait_for(lambda: any(a["id"] == aid for a in _state(url)["alerts"]), 10)
    codes = []
    for pin in ("000001", "000002", "000003", "000004", "000005", "000006"):
        codes.append(_req(url + "ack", {"id": aid, "credential": {"user": "sam", "pin": pin}})[0])
    assert codes[:MAX_FAILURES - 1] == [401] * (MAX_FAILURES - 1) and codes[MAX_FAILURES - 1:] == [429, 429]
    status, body = _req(url + "ack", {"id": aid, "credential": {"user": "sam", "pin": PINS["sam"]}})
    assert status == 429 and "locked out" in body["error"]  # the right PIN, too late
    # the dealer port: every wrong credential is answered, and the source is locked after 10
    c = socket.socket(socket.AF_UNIX)
    c.connect(str(tmp_path / "dealer.sock"))
    c.settimeout(10)
    reader = c.makefile("rb")
    ack = json.loads(codec.dumps(DealerInput(DealerAction.ACK_ALERT, args={"id": aid})))
    errors = []
    for i in range(11):
        c.sendall(json.dumps({**ack, "credential": {"user": "tess", "pin": f"99999{i % 10}"}}).encode() + b"\n")
        while True:
            line = json.loads(reader.readline())
            if "error" in line:
                errors.append(line["error"])
                break
    c.close()
    assert "wrong user or PIN" in errors[0] and "locked out" in errors[-1]
    assert table.controller.wait_idle(10)
    assert any(a["id"] == aid for a in table.machine.alerts)  # nothing else changed
    assert wait_for(lambda: {"auth-refused", "auth-locked"} <= {a["code"] for a in table.machine.alerts}, 10)
    table.journal.flush(5.0)
    with Journal(tmp_path / "j.sqlite3", table=None, profile=None, readonly=True) as j:
        bodies = [r.body for r in j.records() if r.kind == "Alert"]
    assert sum('"auth-locked"' in b for b in bodies) >= 2
    assert not any("00000" in b or "99999" in b for b in bodies)


def test_a_bad_users_file_stops_the_start_and_is_journaled(tmp_path: Path) -> None:
    make_users(tmp_path / "users.toml")
    text = (tmp_path / "users.toml").read_text()
    (tmp_path / "users.toml").write_text(text + '[[user]]\nname = "sam"\nrole = "dealer"\npin = "$argon2id$x"\n')
    t = Table.from_config(TableConfig(leds=LedConfig(backend="mock")), profiles=PROFILES, shoe_url="sim",
                          display=None, users=str(tmp_path / "users.toml"), journal=str(tmp_path / "j.sqlite3"))
    with pytest.raises(TableError, match="'sam' is already user 2"):
        t.start()
    with Journal(tmp_path / "j.sqlite3", table=None, profile=None, readonly=True) as j:
        bodies = [r.body for r in j.records() if r.kind == "Alert"]
    assert any('"users-file-refused"' in b and "already user 2" in b for b in bodies)


def test_a_users_file_made_unsafe_while_running_is_refused_and_said(tmp_path: Path) -> None:
    said: list[tuple[str, str]] = []
    auth = Authenticator(make_users(tmp_path / "u.toml"), lambda c, m: said.append((c, m)))
    assert auth.authenticate("sam", PINS["sam"], "display:a").name == "sam"
    os.chmod(tmp_path / "u.toml", 0o604)
    with pytest.raises(UserFileError, match="mode 0604"):
        auth.authenticate("sam", PINS["sam"], "display:a")
    assert said and said[-1][0] == "users-file-refused"
