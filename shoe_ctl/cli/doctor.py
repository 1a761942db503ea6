"""``shoe-ctl doctor``: checks a table's installation (the configuration, the shoe's port and
handshake, GPIO, the journal, the systemd unit, the floor, the release, the users file) and says
what to fix; each check is ``ok``, ``FAIL`` with a fix, ``WARN``, or ``skip`` with the reason.
What each check looks at and the exit status: docs/install-pi.md, "5. Check everything"."""

from __future__ import annotations

import argparse
import errno
import json
import os
import queue
import sqlite3
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from drivers.gpio_env import describe_gpio_failure
from drivers.shoe import port_holders
from shoe_ctl.cli.args import Subparsers, add_table_shoe, printable, seconds
from shoe_ctl.cli.status import use_color
from shoe_ctl.config import TableConfig, load_table_config
from shoe_ctl.floor.config import doctor_floor, load_credentials, load_floor_config
from shoe_ctl.rules.profiles import ProfileError
from shoe_ctl.service import shoes
from shoe_ctl.service.journal import (
    Journal,
    JournalError,
    journal_problem,
    owner_lock,
    refuse_foreign,
    writer_pid,
)
from shoe_ctl.service.shoe_secrets import SecretError, SecretStore
from shoe_ctl.users import UserFileError, UserStore, users_file_setting

if TYPE_CHECKING:
    from gpiozero import Factory  # a gpiozero pin factory (MockFactory in tests)

SERVICE_USER = "shoe-ctl"

Status = Literal["ok", "warn", "fail", "skip"]


@dataclass(frozen=True)
class Check:
    """One check's outcome: ``name``, ``status`` (``ok``/``warn``/``fail``/``skip``), ``detail``
    (what was found) and ``fix`` (what to do; empty for ``ok`` and ``skip``). A warning is no
    failure (exit status 0) but keeps doctor from saying all is well."""

    name: str
    status: Status
    detail: str
    fix: str = ""


Opener = Callable[..., Any]
LinkFactory = Callable[..., Any]


# --------------------------------------------------------------------------- checks


def check_config(path: Path) -> tuple[Check, TableConfig | None]:
    """Read and validate the table configuration and its permissions."""
    try:
        cfg = load_table_config(path)
    except ProfileError as exc:
        return Check("config", "fail", str(exc), f"edit {path}: see config/table.toml for every key"), None
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o002:
        return Check("config", "fail", f"{path} is writable by everyone (mode {mode:04o})",
                     f"chmod o-w {path}"), cfg
    if cfg.display.token and mode & 0o004:
        return Check("config", "fail", f"{path} holds the display token and is readable by everyone "
                     f"(mode {mode:04o})", f"chmod 0640 {path} && chgrp {SERVICE_USER} {path}"), cfg
    return Check("config", "ok", f"{path} (mode {mode:04o}; table {cfg.table}, {cfg.seats} seats, "
                 f"{cfg.rules}, shoe {cfg.shoe.url})"), cfg


def port_problem(url: str, exc: BaseException) -> tuple[str, str]:
    """``(what, fix)`` for a shoe port that did not open: ``"permission denied"``, ``"no such
    device"``, ``"in use by another program"`` (also said by ``shoe-ctl run``), or the error's text."""
    code = getattr(exc, "errno", None)
    text = str(exc)
    if code in (errno.EACCES, errno.EPERM) or isinstance(exc, PermissionError):
        return "permission denied", (f"add the user to the dialout group (usermod -aG dialout "
                                     f"{SERVICE_USER}), log in again; or check the udev rule's GROUP")
    if code == errno.ENOENT or isinstance(exc, FileNotFoundError) or "No such file" in text:
        return "no such device", ("plug the shoe in; install deploy/99-shoe-ctl.rules "
                                  "(udevadm control --reload && udevadm trigger) so /dev/shoe "
                                  "exists, or set [shoe] url to a path under /dev/serial/by-id/")
    if code in (errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK) or "exclusively lock" in text:
        return "in use by another program", ("stop the program holding it (systemctl stop shoe-ctl; "
                                             "ModemManager: see the udev rule's ID_MM_DEVICE_IGNORE)")
    return text, f"check [shoe] url ({url}) and the cable"


def check_port(cfg: TableConfig, opener: Opener | None = None) -> Check:
    """Open the shoe's port exclusively, then close it."""
    url = cfg.shoe.url
    if shoes.is_simulated(url):
        return Check("port", "skip", f"[shoe] url = \"{url}\": the built-in virtual shoe")

    holders = port_holders(url)
    if holders:
        who = ", ".join(f"pid {pid} ({cmd[:60]})" for pid, cmd in holders)
        return Check("port", "fail", f"{url} is held open by another program: {who}; it can read every card "
                     "and write frames into the line", "stop that program (systemctl stop shoe-ctl, or "
                     "kill it); keep ModemManager and getty away with deploy/99-shoe-ctl.rules")
    if opener is None:
        import serial

        opener = serial.serial_for_url
    try:
        port = opener(url, baudrate=cfg.shoe.baudrate, exclusive=True, timeout=0.1)
    except (OSError, ValueError) as exc:  # serial.SerialException is an OSError
        what, fix = port_problem(url, exc)
        return Check("port", "fail", f"{url}: {what}", fix)
    try:
        port.close()
    except OSError:
        pass
    return Check("port", "ok", f"{url} opens ({cfg.shoe.baudrate} baud)")


SEALED_SHOE = "the shoe answers sealed frames: it is paired with a secret this host does not have"
"""What doctor says of a shoe that speaks only version 2 to a host without its secret."""


def _sealed_fix(cfg: TableConfig) -> str:
    """What to do about :data:`SEALED_SHOE`, naming the key file this table reads."""
    key = Path(cfg.shoe.secrets) / f"{cfg.shoe.serial or '<serial>'}.key"
    return f"pair it again (docs/install-pi.md, 4b) or restore the key file {key}"


def _sealed_frames(link: Any) -> int:
    """Sealed frames a link without a secret received and could not check (0 for a link that
    does not count them)."""
    return int(getattr(getattr(link, "stats", None), "sealed_unchecked", 0) or 0)


def _unpaired_probe(cfg: TableConfig, timeout: float, link_factory: LinkFactory) -> tuple[str | None, int]:
    """``(serial, sealed)``: the serial number an unpaired shoe on ``[shoe] url`` gives in its
    version-1 hello (nothing acknowledged; None when no hello comes), and the sealed frames seen
    meanwhile (a paired shoe speaks version 2 only: its frames cannot be checked without the
    secret, and nothing in them is acted on)."""
    link = link_factory(cfg.shoe.url, queue.Queue(), baudrate=cfg.shoe.baudrate, auto_ack=False, secret=None,
                        serial=None)
    try:
        link.start()
        info = link.wait_connected(timeout)
    except (TimeoutError, OSError, ValueError):
        return None, _sealed_frames(link)
    finally:
        link.close()
    return (printable(info.serial) if info.serial else None), 0


def check_handshake(cfg: TableConfig, port_ok: bool, timeout: float = 3.0,
                    link_factory: LinkFactory | None = None) -> Check:
    """Start a shoe link, wait for the shoe's hello, close the link."""
    if shoes.is_simulated(cfg.shoe.url):
        return Check("handshake", "skip", "virtual shoe")
    if not port_ok:
        return Check("handshake", "skip", "the port did not open")
    if link_factory is None:
        # guarded: without the link the check is skipped, not failed
        try:
            from drivers.shoe import ShoeLink
        except ImportError as exc:
            return Check("handshake", "skip", f"no shoe link in this installation ({exc})")
        link_factory = ShoeLink
    secret: bytes | None = None
    bench = cfg.shoe.auth != "hmac"
    if cfg.shoe.auth == "hmac":
        if not cfg.shoe.serial:
            said, sealed = _unpaired_probe(cfg, timeout, link_factory)
            return Check("handshake", "fail", "[shoe] serial is not set: a real shoe is only taken when it is the "
                         "table's own" + (f"; the shoe on {cfg.shoe.url} says it is {said}" if said else "")
                         + (f"; {SEALED_SHOE} ({sealed} sealed frames)" if sealed else ""),
                         (f"set [shoe] serial = \"{said}\"" if said else "set [shoe] serial to the shoe's serial "
                          "number") + ", then run shoe-ctl pair (or [shoe] auth = \"off\" for an unauthenticated "
                         "bench)")
        try:
            secret = SecretStore(cfg.shoe.secrets).load(cfg.shoe.serial)
        except SecretError as exc:
            return Check("handshake", "fail", str(exc), f"run shoe-ctl pair as the user {SERVICE_USER}")
        if secret is None:
            _, sealed = _unpaired_probe(cfg, timeout, link_factory)
            if sealed:  # a wiped or lost key file, a new host: the shoe keeps the secret it was given
                return Check("handshake", "fail", f"shoe {cfg.shoe.serial}: no secret in {cfg.shoe.secrets}, and "
                             f"{SEALED_SHOE} ({sealed} sealed frames on {cfg.shoe.url})", _sealed_fix(cfg))
            return Check("handshake", "fail", f"shoe {cfg.shoe.serial} is not paired with this table (no secret in "
                         f"{cfg.shoe.secrets})", f"put the shoe in pairing mode and run shoe-ctl pair as the user "
                         f"{SERVICE_USER}")
    link = link_factory(cfg.shoe.url, queue.Queue(), baudrate=cfg.shoe.baudrate, auto_ack=False, secret=secret,
                        serial=cfg.shoe.serial)
    try:
        link.start()
        info = link.wait_connected(timeout)
    except (TimeoutError, OSError, ValueError) as exc:
        sealed = _sealed_frames(link) if secret is None else 0
        if sealed:  # a bench's unauthenticated link before a paired shoe
            return Check("handshake", "fail", f"{cfg.shoe.url}: no hello from the shoe: {SEALED_SHOE} ({sealed} "
                         "sealed frames; [shoe] auth = \"off\")", _sealed_fix(cfg) + ", with [shoe] auth = \"hmac\"")
        return Check("handshake", "fail", f"{cfg.shoe.url}: no hello from the shoe ({exc})",
                     "check it is a shoe speaking protocol v1 (v2 when paired) at [shoe] baudrate, and that "
                     "its serial is [shoe] serial; power-cycle the shoe; see docs/protocol.md")
    finally:
        link.close()
    found = (f"protocol {info.protocol}, firmware {info.firmware}, serial {info.serial}, "
             f"readers {', '.join(info.readers) or '-'}")
    if bench:
        return Check("handshake", "warn", f"{found}; [shoe] auth = \"off\": every frame unauthenticated, a bench "
                     "only (the display says UNAUTHENTICATED LINK)", "at a table: shoe-ctl pair, then [shoe] auth = "
                     "\"hmac\" (docs/install-pi.md, step 4b)")
    return Check("handshake", "ok", found)


def check_gpio(cfg: TableConfig, pin_factory: Factory | None = None) -> Check:
    """Claim the configured LED pins and buttons, switch the LEDs off, release them."""
    led_pins = dict(cfg.leds.pins) if cfg.leds.backend == "gpio" else {}
    button_pins = dict(cfg.buttons.pins)
    if not led_pins and not button_pins:
        return Check("gpio", "skip", "no GPIO LEDs or buttons configured")
    parts: list[Any] = []

    # in the check's try: a GPIO library that fails to load is the check's finding
    try:
        from drivers.buttons import DealerButtons
        from drivers.leds import GpioLedSink

        if led_pins:
            parts.append(GpioLedSink(led_pins, pwm=cfg.leds.pwm, active_high=cfg.leds.active_high,
                                     pin_factory=pin_factory))
        if button_pins:
            parts.append(DealerButtons(button_pins, lambda _e: None, pull_up=cfg.buttons.pull_up,
                                       pin_factory=pin_factory))
    except Exception as exc:  # ImportError, PermissionError, gpiozero's own errors, lgpio's FIFO
        return Check("gpio", "fail", *describe_gpio_failure(exc, SERVICE_USER))
    finally:
        for part in parts:
            part.close()
    pins = sorted(led_pins.values()) + sorted(button_pins.values())
    return Check("gpio", "ok", f"pins {', '.join(map(str, pins))} claimed and released")


def check_journal(cfg: TableConfig, path: Path | None = None, uid: int | None = None) -> Check:
    """The journal folder is writable; the journal path is a journal (not a folder, device or
    foreign file); the journal files are 0600 and owned by this user."""
    if path is None and cfg.journal.path is None:
        return Check("journal", "skip", "no [journal] path configured: the service keeps no journal and "
                     "cannot resume a hand after a restart (unless started with --journal PATH)")
    journal = Path(path or cfg.journal.path or "")
    uid = os.getuid() if uid is None else uid
    folder = journal.parent if str(journal.parent) else Path(".")
    if not folder.is_dir():
        return Check("journal", "fail", f"folder {folder} does not exist",
                     f"install -d -m 0700 -o {SERVICE_USER} -g {SERVICE_USER} {folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        return Check("journal", "fail", f"folder {folder} is not writable by this user (uid {uid})",
                     f"chown {SERVICE_USER}: {folder} && chmod 0700 {folder}")

    try:
        refuse_foreign(journal)
    except JournalError as exc:
        if journal.is_file() and not os.access(journal, os.R_OK):  # a journal this user may not read
            fix = f"chown {SERVICE_USER}: {journal}* && chmod 0600 {journal}*"
        else:
            fix = f"set [journal] path to a file of its own, e.g. {folder / 'journal.sqlite3'}"
        return Check("journal", "fail", journal_problem(journal, exc), fix)
    problems: list[str] = []
    for f in (journal, Path(f"{journal}-wal"), Path(f"{journal}-shm"), owner_lock(journal)):
        if not f.exists():
            continue
        st = f.stat()
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            problems.append(f"{f} is mode {mode:04o}, not 0600")
        if st.st_uid != uid:
            problems.append(f"{f} is owned by uid {st.st_uid}, not {uid}")
    if problems:
        return Check("journal", "fail", "; ".join(problems),
                     f"chown {SERVICE_USER}: {journal}* && chmod 0600 {journal}*")
    state = "present" if journal.exists() else "not created yet"
    try:
        head, broken = _chain_head(journal, cfg.journal.retention_days)
    except (OSError, JournalError, sqlite3.Error) as exc:  # damaged, a newer format, ...
        return Check("journal", "fail", journal_problem(journal, exc),
                     f"shoe-ctl journal check {journal} lists what is wrong in the file; the service's next "
                     "start keeps a damaged file aside and repairs it")
    if broken:
        return Check("journal", "fail", f"{journal}: the hash chain does not hold: {'; '.join(broken[:3])}"
                     + (f" (and {len(broken) - 3} more)" if len(broken) > 3 else "") + head,
                     f"shoe-ctl journal verify {journal} lists every problem; keep the file for the floor")
    return Check("journal", "ok", f"{journal} ({state}; folder writable{head})")


def _chain_head(journal: Path, retention_days: float) -> tuple[str, list[str]]:
    """``; chain head SEQ:HASH`` of an existing journal and the problems of its hash chain, walked
    read-only against the table's retention (docs/journal.md, "The hash chain"); nothing when there
    is no file yet or it is empty (the service writes the journal's tables into it).

    :raises JournalError: the file cannot be read as a journal (damaged, a newer format, ...).
    :raises OSError, sqlite3.Error: reading it failed.
    """
    if not journal.exists() or journal.stat().st_size == 0:
        return "", []
    with Journal(journal, table=None, profile=None, readonly=True) as j:
        rep = j.verify_chain(retention_days=retention_days)
    seq, value = rep.head
    return f"; chain head {seq}:{value}", rep.problems


UNIT = Path("/etc/systemd/system/shoe-ctl.service")


def check_unit(unit: Path = UNIT) -> Check:
    """The user and groups the installed unit names exist (``pwd``/``grp``)."""
    import configparser
    import grp
    import pwd

    if not unit.is_file():
        return Check("unit", "skip", f"no unit installed at {unit} (docs/install-pi.md, step 6)")
    parser = configparser.RawConfigParser(strict=False, delimiters=("=",))
    try:
        parser.read(unit)
        service = parser["Service"]
    except (configparser.Error, KeyError, OSError, UnicodeDecodeError) as exc:
        return Check("unit", "fail", f"{unit}: not a readable unit ({exc})",
                     "cp /opt/shoe-ctl/deploy/shoe-ctl.service /etc/systemd/system/ && systemctl daemon-reload")
    problems, fixes = [], []
    user = service.get("User", "").strip()
    if user:
        try:
            pwd.getpwnam(user)
        except KeyError:
            problems.append(f"user {user} does not exist")
            fixes.append(f"useradd (docs/install-pi.md, step 1.3) for {user}")
    groups = service.get("Group", "").split() + service.get("SupplementaryGroups", "").split()
    for group in groups:
        try:
            grp.getgrnam(group)
        except KeyError:
            problems.append(f"group {group} does not exist")
            fixes.append(f"groupadd --system -f {group}")
    if problems:
        return Check("unit", "fail", f"{unit} names {', '.join(problems)}: systemd would not start it "
                     "(status 216/GROUP or 217/USER)", " && ".join(fixes))
    return Check("unit", "ok", f"{unit}: user {user or '-'}, groups {' '.join(groups) or '-'} exist")


CHECKS = ("config", "port", "handshake", "gpio", "journal", "unit", "floor", "release", "users")
"""The checks, in the order they run (docs/install-pi.md, step 5)."""


def run_checks(config: Path, *, port: str | None = None, journal: Path | None = None, timeout: float = 3.0,
               opener: Opener | None = None, link_factory: LinkFactory | None = None,
               pin_factory: Factory | None = None, uid: int | None = None, unit: Path = UNIT) -> Iterator[Check]:
    """Run every check in order, yielding each outcome as it is known: each check of
    :data:`CHECKS` once (a check whose outcome came already is not said again, so its line is
    printed and counted once)."""
    said: set[str] = set()
    for c in _checks(config, port=port, journal=journal, timeout=timeout, opener=opener, link_factory=link_factory,
                     pin_factory=pin_factory, uid=uid, unit=unit):
        if c.name not in said:
            said.add(c.name)
            yield c


def _checks(config: Path, *, port: str | None, journal: Path | None, timeout: float, opener: Opener | None,
            link_factory: LinkFactory | None, pin_factory: Factory | None, uid: int | None,
            unit: Path) -> Iterator[Check]:
    cfg_check, cfg = check_config(config)
    yield cfg_check
    if cfg is None:
        for name in CHECKS[1:]:
            yield Check(name, "skip", "no usable configuration")
        return
    if port is not None:
        from dataclasses import replace

        cfg = replace(cfg, shoe=replace(cfg.shoe, url=port))
    port_check = check_port(cfg, opener)
    yield port_check
    yield check_handshake(cfg, port_check.status == "ok", timeout, link_factory)
    yield check_gpio(cfg, pin_factory)
    yield check_journal(cfg, journal, uid)
    yield check_unit(unit)
    yield check_floor(config, timeout, journal=journal or cfg.journal.path)
    yield check_release(config)
    yield check_users(config)


def check_users(config: Path) -> Check:
    """The users file (``[users] file``): readable, mode, unique names (docs/compliance.md,
    "People and roles"); ``skip`` without one (no role is enforced: said in the detail)."""
    from collections import Counter

    try:
        path = users_file_setting(config)
        if path is None:
            return Check("users", "skip", "no [users] file: no role is enforced, anyone at the display decides")
        users = UserStore(path).load()
    except (ProfileError, UserFileError) as exc:
        return Check("users", "fail", str(exc), "fix the users file (shoe-ctl users) or [users] file")
    roles = Counter(u.role.value for u in users)
    return Check("users", "ok", f"{path}: " + (", ".join(f"{n} {r}" for r, n in sorted(roles.items())) or "no users"))


def check_release(config: Path) -> Check:
    """The installed code against the signed release manifest, as the service checks it at start
    (docs/compliance.md, "Software identity and the tilt"); ``warn`` when ``[release] verify = "off"``."""
    # lazy: cryptography, loaded only by this check
    from shoe_ctl.release import check, load_release_config

    try:
        verdict = check(load_release_config(config))
    except ProfileError as exc:
        return Check("release", "fail", str(exc), "fix [release] in the table configuration")
    if verdict.off:
        return Check("release", "warn", f"{verdict.problem}: the installed code is not checked",
                     "a development checkout only: at a table set verify = \"on\" and pin public_key")
    if not verdict.ok:
        return Check("release", "fail", f"software mismatch: {verdict.problem} (the service tilts at start)",
                     "install the signed release again (scripts/setup.sh pi) or pin its key in [release] public_key")
    return Check("release", "ok", f"shoe-ctl {verdict.version}, manifest {verdict.digest[:16]}, key {verdict.key}")


def check_floor(config: Path, timeout: float = 3.0, probe: Callable[..., str | None] | None = None,
                journal: Path | str | None = None) -> Check:
    """``[floor]``'s configuration and credentials file (``doctor_floor``), then the broker itself:
    it must answer and accept the table's user (``shoe_ctl.floor.publisher.probe_broker``). While
    a process holds the table's ``journal`` for writing (the running service) the broker is not
    asked: a client id is its user's name there (docs/floor.md), so connecting as the table's user
    would close the service's connection and the floor would raise ``table-lost``; ``skip`` then."""
    status, detail, fix = doctor_floor(config)
    if status != "ok":
        return Check("floor", status, detail, fix)  # type: ignore[arg-type]
    cfg = load_floor_config(config)
    creds = load_credentials(cfg.credentials) if cfg.credentials is not None else None
    table = load_table_config(config).table
    if creds is not None and creds.username != table:
        # the ACL's patterns name the user: the broker acknowledges this table's publications
        # under another name and drops them, and nothing at the table would tell
        return Check("floor", "fail", f"the broker user {creds.username!r} is not the table's name {table!r}: "
                     "the broker acknowledges and drops every publication of this table (docs/floor.md)",
                     f"name the table {creds.username!r}, or give it a broker user {table!r}")
    holder = writer_pid(Path(journal)) if journal is not None else None
    if holder is not None:
        return Check("floor", "skip", f"{detail}; the broker not asked: the journal is open for writing by "
                     f"process {holder} (the service), and a connection as the table's user would close the "
                     "service's own, so the floor would raise table-lost",
                     "to ask the broker, run doctor with the service stopped (systemctl stop shoe-ctl)")
    if probe is None:
        # lazy: paho, loaded only with [floor] enabled
        from shoe_ctl.floor.publisher import probe_broker

        probe = probe_broker
    from shoe_ctl.floor.publisher import ProbeWarning

    # every broker of the list must take the table; its state need be kept on one only (the one it is on)
    found = [probe(replace(cfg, broker=url, brokers=()), creds, timeout, table=table) for url in cfg.broker_urls]
    failed = [p for p in found if p is not None and not isinstance(p, ProbeWarning)]
    problem = failed[0] if failed else (found[0] if all(isinstance(p, ProbeWarning) for p in found) else None)
    if isinstance(problem, ProbeWarning):
        return Check("floor", "warn", problem, "if the table has published (it has dealt since the broker was "
                     "set up), give the broker the ACL of docs/floor.md and restart it")
    if problem is not None:
        return Check("floor", "fail", problem, "start the broker or check [floor] broker, the network and the "
                     "table's broker user (docs/floor.md); the table queues its events meanwhile")
    return Check("floor", "ok", f"{detail}; the broker accepted the table's user" if len(found) == 1
                 else f"{detail}; all {len(found)} brokers accepted the table's user")


# --------------------------------------------------------------------------- CLI


def format_check(c: Check, color: bool = False) -> str:
    """One line (two with a fix) for a terminal; a detail of several lines (every problem of a
    configuration file) is indented under the first."""
    label = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "skip": "skip"}[c.status]
    if color:
        label = {"ok": "\x1b[32mok\x1b[0m  ", "warn": "\x1b[1;33mWARN\x1b[0m", "fail": "\x1b[1;31mFAIL\x1b[0m",
                 "skip": "\x1b[2mskip\x1b[0m"}[c.status]
    else:
        label = f"{label:<4}"
    line = f"{label}  {c.name:<10} " + f"\n{'':17}".join(c.detail.splitlines() or [""])
    if c.fix:
        line += f"\n      {'fix:':<10} {c.fix}"
    return line


def doctor(args: argparse.Namespace) -> int:
    """Run the checks, print them; 0 when none failed, 1 otherwise."""
    results = []
    color = use_color(sys.stdout) and not args.json  # NO_COLOR honoured
    for c in run_checks(Path(args.config), port=args.port, journal=Path(args.journal) if args.journal else None,
                        timeout=args.timeout):
        results.append(c)
        if not args.json:
            print(format_check(c, color), flush=True)
    failed = [c.name for c in results if c.status == "fail"]
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [asdict(c) for c in results]}))
    elif failed:
        print(f"{len(failed)} check(s) need fixing: {', '.join(failed)}")
    elif warned := [c.name for c in results if c.status == "warn"]:
        print(f"no failure, but {len(warned)} warning(s): {', '.join(warned)}")
    else:
        print("all well")
    return 1 if failed else 0


def register(subparsers: Subparsers) -> None:
    """Add ``doctor`` to the CLI."""
    p = subparsers.add_parser("doctor", help="check the port, shoe handshake, GPIO, config and journal",
                              description="Check a table's installation and say what to fix: the "
                              "configuration, the shoe's port and handshake, the GPIO pins and the journal. "
                              "Run it as the service user with the service stopped.")
    add_table_shoe(p)
    p.add_argument("--journal", default=None, help="journal file instead of [journal] path")
    p.add_argument("--timeout", type=seconds, default=3.0, help="seconds to wait for the shoe's hello (default 3)")
    p.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    p.set_defaults(func=doctor)
