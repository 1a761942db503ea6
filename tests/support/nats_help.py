"""A real ``nats-server`` with JetStream for the central store's tests: loopback, a free port, a
store folder of its own (Debian's ``nats-server`` package; ``scripts/setup.sh test`` installs it)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from shoe_ctl.floor.broker import free_port


def find_nats_server() -> str | None:
    """The path of ``nats-server`` (also in /usr/sbin), or ``None``."""
    return shutil.which("nats-server") or next((p for p in ("/usr/sbin/nats-server", "/usr/bin/nats-server")
                                                if Path(p).exists()), None)


class NatsServer:
    """``nats-server -js`` on 127.0.0.1 with its store in ``root``; :meth:`stop` / :meth:`start`
    restart it on the same port with the same store."""

    def __init__(self, root: Path) -> None:
        binary = find_nats_server()
        if binary is None:
            raise RuntimeError("nats-server is not installed (apt-get install nats-server)")
        self.binary = binary
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> NatsServer:
        self.proc = subprocess.Popen([self.binary, "-js", "-sd", str(self.root / "store"), "-a", "127.0.0.1",
                                      "-p", str(self.port), "-l", str(self.root / "nats.log")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nats-server exited ({self.proc.returncode}): {self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nats-server did not listen on {self.port}: {self.log_tail()}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join((self.root / "nats.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
