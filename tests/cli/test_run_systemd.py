"""``shoe-ctl run`` under systemd: READY=1 at start with a STATUS saying it waits for the shoe (no
restart loop while the shoe is off), STATUS lines as the link changes, WATCHDOG=1 from the
controller's thread whether or not the shoe answers, STOPPING=1 on shutdown; the journal it
creates is private (0600)."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hil.virtual_shoe import VirtualShoe
from shoe_ctl import events as E
from shoe_ctl.service.controller import Controller

RUN = [sys.executable, "-c", "import sys; from shoe_ctl.cli import main; sys.exit(main())", "run"]


class _Datagrams:
    """A fake systemd notify socket: every datagram received, with the time it came."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.05)
        self.got: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            self.got.append((time.monotonic(), data.decode()))

    def fields(self) -> list[str]:
        return [f for _t, d in list(self.got) for f in d.split("\n")]

    def wait_for(self, field: str, timeout: float) -> float | None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for t, d in list(self.got):
                if field in d.split("\n"):
                    return t
            time.sleep(0.02)
        return None

    def wait_for_prefix(self, prefix: str, timeout: float) -> float | None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for t, d in list(self.got):
                if any(f.startswith(prefix) for f in d.split("\n")):
                    return t
            time.sleep(0.02)
        return None

    def wait_count(self, field: str, count: int, timeout: float) -> bool:
        """True once ``field`` has come ``count`` times (in ``timeout`` seconds)."""
        end = time.monotonic() + timeout
        while self.fields().count(field) < count and time.monotonic() < end:
            time.sleep(0.02)
        return self.fields().count(field) >= count

    def close(self) -> None:
        self._stop.set()
        self._t.join(2)
        self.sock.close()


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_ready_at_start_waits_for_the_shoe_with_status_then_watchdog_and_stopping(tmp_path: Path) -> None:
    from shoe_ctl.service.shoe_secrets import SecretStore, new_secret

    secret = new_secret()  # a real shoe is taken only when paired with the table (docs/security.md)
    SecretStore(tmp_path / "shoes").save("VS-0001", secret)
    config = tmp_path / "table.toml"
    config.write_text(f'[shoe]\nserial = "VS-0001"\nsecrets = "{tmp_path / "shoes"}"\n')
    shoe = VirtualShoe(transport="tcp", secret=secret).start()
    shoe.unplug()  # the port answers but the shoe says nothing: no handshake yet
    notify = _Datagrams(tmp_path / "notify")
    journal = tmp_path / "table.journal"
    env = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_PID", "LISTEN_PID")}
    env.update(NOTIFY_SOCKET=str(tmp_path / "notify"), WATCHDOG_USEC="200000")
    proc = subprocess.Popen([*RUN, "--shoe", shoe.url, "--config", str(config), "--display", "off",
                             "--journal", str(journal)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: os.umask(0o022))
    try:
        # READY at once, saying it waits for the shoe: systemd does not kill a table without its shoe
        ready_at = notify.wait_for("READY=1", 15)
        assert ready_at is not None
        assert f"STATUS=waiting for the shoe at {shoe.url}" in notify.fields()
        # pings come (every WATCHDOG_USEC/2 = 0.1 s) from the controller while the shoe is silent
        assert notify.wait_for("WATCHDOG=1", 15) is not None
        assert notify.wait_count("WATCHDOG=1", 3, 5)
        assert shoe.hellos == 0
        assert notify.wait_for_prefix("STATUS=shoe not connected — check the cable", 10) is not None
        plugged_at = time.monotonic()
        shoe.replug()
        connected_at = notify.wait_for_prefix("STATUS=shoe VS-0001 connected", 15)
        assert connected_at is not None and connected_at > plugged_at
        assert shoe.hellos >= 1  # the shoe's hello came before the status said connected
        # the journal the service created, with its write-ahead log and index, is the user's alone
        for p in (journal, Path(f"{journal}-wal"), Path(f"{journal}-shm")):
            assert p.exists(), p
            assert _mode(p) == 0o600, (p, oct(_mode(p)))
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=15)
        assert proc.returncode == 0, err
        stopping_at = notify.wait_for("STOPPING=1", 5)
        assert stopping_at is not None and stopping_at > ready_at
        assert _mode(journal) == 0o600
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()
        shoe.close()


class _Machine:
    def __init__(self) -> None:
        self.handled: list[Any] = []

    def start(self) -> list[E.Command]:
        return []

    def handle(self, ev: Any) -> list[E.Command]:
        self.handled.append(ev)
        return [E.Instruction(E.Signal.IDLE, "x")]


class _Journal:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def append(self, item: Any) -> int:
        self.items.append(item)
        return len(self.items)


class _BlockingSink:
    def __init__(self) -> None:
        self.release = threading.Event()

    def handle(self, _cmd: Any) -> None:
        self.release.wait(10)

    def close(self) -> None:
        self.release.set()


def test_watchdog_ping_runs_in_the_controller_thread_and_stops_when_it_is_stuck() -> None:
    machine, journal, sink = _Machine(), _Journal(), _BlockingSink()
    ctl = Controller(machine, journal=journal)  # type: ignore[arg-type]
    ctl.add_sink(sink)
    pings: list[str] = []
    with ctl:
        sink.release.set()
        ctl.call_soon(lambda: pings.append(threading.current_thread().name))
        assert ctl.wait_idle(5)
        assert pings == ["shoe-ctl-controller"]
        assert journal.items == [] and machine.handled == []  # not an event: not journaled, not handled
        sink.release.clear()
        ctl.post(E.DealerInput(E.DealerAction.BETTING_COMPLETE))  # the controller is now stuck in a sink
        ctl.call_soon(lambda: pings.append("late"))
        time.sleep(0.3)
        assert pings == ["shoe-ctl-controller"]  # a wedged controller sends no ping
        sink.release.set()
        assert ctl.wait_idle(5)
        assert pings == ["shoe-ctl-controller", "late"]
