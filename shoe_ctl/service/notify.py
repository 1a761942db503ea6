"""systemd notifications (``sd_notify``) with the standard library only.

Under ``Type=notify`` systemd sets ``NOTIFY_SOCKET`` (a path, or ``@name`` for the abstract
namespace) and, with ``WatchdogSec=``, ``WATCHDOG_USEC`` (and ``WATCHDOG_PID``). The service sends
``READY=1`` at start-up with ``STATUS=waiting for the shoe ...`` (it waits for the shoe as a
running service rather than failing to start), ``WATCHDOG=1`` at least every half watchdog interval
from the controller's own thread (so a stuck controller is restarted, shoe or no shoe), a
``STATUS=...`` line for ``systemctl status`` on every change of the shoe link
(:func:`link_status`) and ``STOPPING=1`` on shutdown. Without ``NOTIFY_SOCKET`` (a terminal, tests)
every call is a no-op that returns False.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

from shoe_ctl.events import LinkChanged, LinkStatus


class Notifier:
    """Sends ``sd_notify`` datagrams.

    :param env: the environment to read (default ``os.environ``).
    """

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.address: str | None = env.get("NOTIFY_SOCKET") or None
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        mine = not pid or (pid.isdigit() and int(pid) == os.getpid())
        self.watchdog_s: float | None = int(usec) / 1e6 if usec.isdigit() and int(usec) > 0 and mine else None

    @property
    def enabled(self) -> bool:
        """True when running under systemd with a notify socket."""
        return self.address is not None

    @property
    def ping_interval_s(self) -> float | None:
        """How often to send ``WATCHDOG=1`` (half the watchdog time), None without a watchdog."""
        return None if self.watchdog_s is None else self.watchdog_s / 2

    def notify(self, *fields: str) -> bool:
        """Send ``fields`` (e.g. ``"READY=1"``, ``"STATUS=dealing"``) as one datagram.

        :returns: True when sent; False when there is no notify socket or sending failed (a lost
            notification must never stop the service).
        """
        if self.address is None:
            return False
        # one assignment per line: a newline in a text (a shoe's serial, a link's detail) would add
        # assignments of its own (WATCHDOG=1, READY=1, MAINPID=...); other controls shown escaped
        fields = tuple(f.translate(_ONE_LINE) for f in fields)
        addr = self.address
        if addr.startswith("@"):
            addr = "\0" + addr[1:]
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(addr)
                sock.sendall("\n".join(fields).encode())
            return True
        except OSError:
            return False

    def ready(self, status: str = "") -> bool:
        """``READY=1`` (the service runs), with an optional status line."""
        return self.notify("READY=1", *([f"STATUS={status}"] if status else []))

    def watchdog(self) -> bool:
        """``WATCHDOG=1``: the service is alive."""
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """``STATUS=text`` for ``systemctl status``."""
        return self.notify(f"STATUS={text}")

    def stopping(self) -> bool:
        """``STOPPING=1`` at the start of a clean shutdown."""
        return self.notify("STOPPING=1")


_ONE_LINE = {c: " " if c in (0x0A, 0x0D) else f"\\x{c:02x}" for c in (*range(0x20), 0x7F)}


def link_status(ev: LinkChanged) -> str:
    """The ``STATUS=`` text for a change of the shoe link, e.g. ``shoe S-1 connected``, ``shoe not
    connected — check the cable (cannot open /dev/shoe: ...)``, ``shoe not heard (link degraded:
    ...)``; at most 200 characters."""
    if ev.status is LinkStatus.CONNECTED:
        serial = ev.info.serial if ev.info is not None else "?"
        text = f"shoe {serial} connected" + (f" ({ev.detail})" if ev.detail else "")
    elif ev.status is LinkStatus.DEGRADED:
        text = f"shoe not heard (link degraded: {ev.detail}); the dealer is told to pull no card"
    else:
        text = f"shoe not connected — check the cable ({ev.detail}); waiting for it, no new hand"
    return text[:200]


_default: Notifier | None = None


def default() -> Notifier:
    """The process's notifier, reading ``os.environ`` once."""
    global _default
    if _default is None:
        _default = Notifier()
    return _default


def ready(status: str = "") -> bool:
    """``READY=1`` through :func:`default`."""
    return default().ready(status)


def watchdog() -> bool:
    """``WATCHDOG=1`` through :func:`default`."""
    return default().watchdog()
