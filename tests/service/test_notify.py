"""sd_notify over a real unix datagram socket, and the no-op without systemd."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from shoe_ctl.service.notify import Notifier


def test_no_socket_is_a_noop() -> None:
    n = Notifier({})
    assert not n.enabled and n.ping_interval_s is None
    assert n.ready() is False and n.watchdog() is False


def test_ready_watchdog_status_reach_the_socket(tmp_path: Path) -> None:
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as srv:
        srv.bind(path)
        srv.settimeout(2)
        n = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid())})
        assert n.enabled and n.ping_interval_s == 5.0
        assert n.ready("shoe connected")
        assert srv.recv(4096) == b"READY=1\nSTATUS=shoe connected"
        assert n.watchdog() and srv.recv(4096) == b"WATCHDOG=1"
        assert n.stopping() and srv.recv(4096) == b"STOPPING=1"


def test_abstract_socket_and_foreign_watchdog_pid() -> None:
    name = f"shoe-ctl-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as srv:
        srv.bind("\0" + name)
        srv.settimeout(2)
        n = Notifier({"NOTIFY_SOCKET": "@" + name, "WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "1"})
        assert n.watchdog_s is None  # the watchdog is another process's
        assert n.status("dealing") and srv.recv(4096) == b"STATUS=dealing"


def test_gone_socket_returns_false(tmp_path: Path) -> None:
    assert Notifier({"NOTIFY_SOCKET": str(tmp_path / "missing")}).ready() is False


def test_a_newline_in_a_shoe_text_adds_no_assignment(tmp_path: Path) -> None:
    """A shoe's serial (an unauthenticated bench link takes any) or a link detail holding
    ``\\nWATCHDOG=1`` would feed systemd's watchdog for a hung service (or say READY, MAINPID=...):
    every field goes out on one line, other control characters escaped."""
    from shoe_ctl.events import LinkChanged, LinkStatus, ShoeInfo
    from shoe_ctl.service.notify import link_status

    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as srv:
        srv.bind(path)
        srv.settimeout(2)
        n = Notifier({"NOTIFY_SOCKET": path})
        ev = LinkChanged(LinkStatus.CONNECTED, "x\r\nREADY=1", info=ShoeInfo(1, "fw", "S-1\nWATCHDOG=1\x1b[2J", ()))
        assert n.status(link_status(ev))
        sent = srv.recv(4096).decode()
        assert sent.splitlines() == [sent] and sent.startswith("STATUS=shoe S-1 WATCHDOG=1\\x1b[2J connected")
        assert n.ready("a\nSTOPPING=1") and srv.recv(4096) == b"READY=1\nSTATUS=a STOPPING=1"
