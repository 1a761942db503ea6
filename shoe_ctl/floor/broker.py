"""A Mosquitto broker run by shoe-ctl itself: for the tests and ``shoe-ctl hil floor`` only.

On a floor server Mosquitto runs as the system's service (``docs/floor.md``); this module writes
the same kind of files — the config, the password file (``mosquitto_passwd``) and the ACL file
(:func:`acl_text`: a table publishes only under its own topics, the floor reads them all) — into
a folder and runs ``mosquitto -c`` on loopback. :meth:`Mosquitto.stop` / :meth:`start` restart it
on the same port with the same persistence file.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from shoe_ctl.floor.config import Credentials, write_credentials
from shoe_ctl.floor.topics import check_name

__all__ = ["FLOOR_USER", "MONITOR_USER", "Mosquitto", "acl_text", "find_mosquitto", "free_port"]

FLOOR_USER = "floor"
"""The floor consumer's broker user (reads every table, writes replay requests)."""

MONITOR_USER = "monitor"
"""A read-only user for ``#`` (surveillance, the embargo test)."""


def find_mosquitto() -> tuple[str, str] | None:
    """Paths of ``mosquitto`` and ``mosquitto_passwd`` (also in /usr/sbin), or ``None``."""
    found = []
    for name in ("mosquitto", "mosquitto_passwd"):
        path = shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}")
                                           if os.access(p, os.X_OK)), None)
        if path is None:
            return None
        found.append(path)
    return found[0], found[1]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def acl_text(room: str, floors: Iterable[str] = (FLOOR_USER,)) -> str:
    """The Mosquitto ACL for one room: each table (user name = table name, ``%u``) writes its own
    state, events, alerts, status, verification answers and recall and reads its own replay,
    state (the state read back tells it the broker keeps what it publishes), verify and clock
    topics and the floor's online state (``<room>/hosts/+``, docs/floor.md "Two brokers"); each
    floor user (``floors``) reads the room and writes replay and verification requests, its clock
    and its own online state; the monitor user reads everything."""
    check_name("room", room)
    base = f"{room}/tables"
    return "\n".join([
        *(line for user in floors
          for line in (f"user {check_name('user', user)}", f"topic read {room}/#", f"topic write {base}/+/replay",
                       f"topic write {base}/+/verify", f"topic write {base}/+/clock",
                       f"topic write {room}/hosts/{user}", "")),
        f"user {MONITOR_USER}",
        "topic read #",
        "",
        *(f"pattern write {base}/%u/{leaf}" for leaf in ("state", "display", "events", "alerts", "status",
                                                            "verified", "recall")),
        f"pattern read {base}/%u/replay",
        f"pattern read {base}/%u/state",
        f"pattern read {base}/%u/verify",
        f"pattern read {base}/%u/clock",
        f"pattern read {room}/hosts/+",
        "",
    ])


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Mosquitto:
    """A ``mosquitto`` process on loopback with users and an ACL, in folder ``root``.

    :param root: folder for the config, password, ACL, persistence and log files.
    :param room: the room whose ACL is written.
    :param tables: table names; each gets a user (its name) and a random password.
    :param floors: the floor consumers' users (each its own: a user has one connection, the
        broker takes the user name for the client id).
    :param port: TCP port (0: a free one).
    :param users: the users and passwords to use instead of new random ones (a second broker of
        the same room: every table and the floor log in to both with the same credentials).
    :param tls: serve TLS only, with a server certificate for 127.0.0.1 signed by a CA made here
        (``openssl``); clients verify it with :attr:`ca_file`.
    :raises RuntimeError: no mosquitto installed, or it did not start.
    """

    def __init__(self, root: str | os.PathLike[str], *, room: str, tables: Iterable[str], port: int = 0,
                 tls: bool = False, floors: Iterable[str] = (FLOOR_USER,),
                 users: dict[str, Credentials] | None = None) -> None:
        binaries = find_mosquitto()
        if binaries is None:
            raise RuntimeError("mosquitto is not installed (apt-get install mosquitto mosquitto-clients)")
        self.mosquitto, self.passwd_tool = binaries
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.room = room
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self.users: dict[str, Credentials] = {}
        self.floors = tuple(floors)
        for name in [*self.floors, MONITOR_USER, *tables]:
            check_name("user", name)
            self.users[name] = (users or {}).get(name) or Credentials(name, secrets.token_urlsafe(16))
        self.tls = tls
        self.ca_file: Path | None = self._make_certificates() if tls else None
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.cpu_s = 0.0
        """CPU seconds (user + system) of the broker processes stopped so far (Linux)."""
        self._write_files()

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"

    def _make_certificates(self) -> Path:
        """A CA and a server certificate for 127.0.0.1 (EC P-256, two days) in ``root/tls``."""
        d = self.root / "tls"
        d.mkdir(exist_ok=True)
        (d / "san.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for cmd in (
            ["req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=floor test CA"],
            ["req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.crt", "-days", "2", "-extfile", "san.cnf"],
        ):
            subprocess.run(["openssl", *cmd], cwd=d, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for key in ("ca.key", "server.key"):
            os.chmod(d / key, 0o600)
        return d / "ca.crt"

    def credentials_file(self, user: str) -> Path:
        """A 0600 credentials file for ``user`` (written once, in ``root``)."""
        path = self.root / f"{user}.credentials"
        if not path.exists():
            write_credentials(path, self.users[user])
        return path

    def _write_files(self) -> None:
        pw = self.root / "passwd"
        pw.write_text("")
        os.chmod(pw, 0o600)
        for creds in self.users.values():
            subprocess.run([self.passwd_tool, "-b", str(pw), creds.username, creds.password], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        (self.root / "acl").write_text(acl_text(self.room, self.floors))
        os.chmod(self.root / "acl", 0o600)
        (self.root / "data").mkdir(exist_ok=True)
        lines = [
            f"listener {self.port} {self.host}",
            *([f"certfile {self.root / 'tls' / 'server.crt'}", f"keyfile {self.root / 'tls' / 'server.key'}"]
              if self.tls else []),
            # a client id is its user's name: nobody takes over another user's connection or session
            "use_username_as_clientid true",
            "allow_anonymous false",
            f"password_file {pw}",
            f"acl_file {self.root / 'acl'}",
            "persistence true",
            f"persistence_location {self.root / 'data'}/",
            "autosave_interval 1",
            "max_queued_messages 0",
            "max_inflight_messages 100",
            # small packets sent at once: with Nagle's algorithm a PUBLISH waits for the ACK of the
            # one before, which a client answering nothing (QoS 0) delays by 40 ms
            "set_tcp_nodelay true",
            "log_dest file " + str(self.root / "mosquitto.log"),
            "log_type error",
            "log_type warning",
            "log_type notice",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            lines.append("user root")  # else mosquitto drops to user "mosquitto", who cannot read root's files
        (self.root / "mosquitto.conf").write_text("\n".join(lines) + "\n")

    def start(self, timeout: float = 10.0) -> Mosquitto:
        """Start the broker; returns once it accepts TCP connections.

        :raises RuntimeError: it exited or did not listen within ``timeout`` seconds (with its log).
        """
        if self.proc is not None and self.proc.poll() is None:
            return self
        self.proc = subprocess.Popen([self.mosquitto, "-c", str(self.root / "mosquitto.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited ({self.proc.returncode}): {self.log_tail()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"mosquitto did not listen on {self.port}: {self.log_tail()}")

    def stop(self, *, hard: bool = False, timeout: float = 10.0) -> None:
        """Stop the broker: SIGTERM (it saves its persistence file) or, ``hard``, SIGKILL."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        self.cpu_s += _cpu_s(proc.pid)
        proc.send_signal(signal.SIGKILL if hard else signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr is not None:
            proc.stderr.close()

    def cpu_now(self) -> float:
        """CPU seconds (user + system) of every broker process so far, the running one included
        (Linux)."""
        proc = self.proc
        return self.cpu_s + (_cpu_s(proc.pid) if proc is not None and proc.poll() is None else 0.0)

    def restart(self, *, hard: bool = False, down_s: float = 0.0) -> None:
        """Stop, stay down ``down_s`` seconds, start again on the same port."""
        self.stop(hard=hard)
        time.sleep(down_s)
        self.start()

    def log_tail(self, lines: int = 20) -> str:
        path = self.root / "mosquitto.log"
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
