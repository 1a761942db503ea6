"""The host's own life in the journal (docs/compliance.md, "The host's life"): power-on or a
service start, a clean stop, an unclean stop found at the next start, the clock's
synchronisation.

:class:`HostLife` appends ``host`` records (``{"event", "boot", "clock_synced", "clock"}``) and
returns the warnings a start must show. The seams: ``boot_id_path`` (the kernel's boot id: a new
one is a power-on or reboot) and ``clock`` (a callable saying whether the clock is synchronised;
default :func:`clock_sync`, ``timedatectl``).
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shoe_ctl.service.journal.disk import write_problem
from shoe_ctl.service.journal.facade import CommitPending
from shoe_ctl.service.journal.records import JournalError

if TYPE_CHECKING:
    from shoe_ctl.service.journal import Journal

log = logging.getLogger(__name__)

__all__ = ["BOOT_ID", "HostLife", "clock_sync"]

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
"""The kernel's random id of this boot."""
KIND = "host"
"""The journal record kind of the host's life."""


def clock_sync(run: Callable[..., Any] = subprocess.run) -> tuple[bool | None, str]:
    """Whether the system clock is synchronised: ``timedatectl show -p NTPSynchronized --value``
    (systemd-timesyncd, chrony or ntpd set the kernel's state it reads, the ``adjtimex`` status).
    ``(True|False, detail)``, or ``(None, why)`` when it cannot be told."""
    exe = shutil.which("timedatectl")
    if exe is None:
        return None, "timedatectl not found"
    try:
        out = run([exe, "show", "-p", "NTPSynchronized", "--value"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"timedatectl: {exc}"
    value = (out.stdout or "").strip()
    if out.returncode != 0 or value not in ("yes", "no"):
        return None, f"timedatectl: {(out.stderr or value or 'no answer').strip()[:120]}"
    return value == "yes", f"timedatectl NTPSynchronized={value}"


class HostLife:
    """The host's records in a journal. :meth:`start` at the service's start (before the shoe
    opens), :meth:`stop` at a clean stop."""

    def __init__(self, boot_id_path: Path = BOOT_ID,
                 clock: Callable[[], tuple[bool | None, str]] = clock_sync) -> None:
        self.boot_id_path = boot_id_path
        self.clock = clock
        self.journal: Journal | None = None

    def boot_id(self) -> str:
        try:
            return self.boot_id_path.read_text(encoding="ascii").strip()[:64]
        except OSError:
            return ""

    def start(self, journal: Journal) -> list[tuple[str, str]]:
        """Append the start's ``host`` record (``power-on`` when the boot id is new, else
        ``start``) and return the warnings ``(code, message)`` to show: ``host-unclean-stop`` when
        the journal's last host record is a start with no clean stop after it, ``clock-unsynced``
        when the clock is not synchronised (hands may start; the record says so)."""
        self.journal = journal
        last: dict[str, Any] | None = None
        for rec in journal.newest(KIND):  # the last host record that reads
            try:
                data = rec.data
            except ValueError:
                continue
            last = data if isinstance(data, dict) else None
            break
        boot = self.boot_id()
        event = "power-on" if last is None or last.get("boot") != boot else "start"
        synced, detail = self.clock()
        warnings = []
        if last is not None and last.get("event") in ("power-on", "start"):
            warnings.append(("host-unclean-stop", "the service did not stop cleanly last time (a power cut, a crash "
                             f"or a kill after its {last.get('event')}): the journal kept what it had acknowledged; "
                             "check the table against the record"))
        if synced is False:
            warnings.append(("clock-unsynced", f"the table's clock is not synchronised ({detail}): hands may start, "
                             "and the record's times may be off until it is"))
        journal.append_record(KIND, {"event": event, "boot": boot, "clock_synced": synced, "clock": detail,
                                     "unclean_before": bool(warnings and warnings[0][0] == "host-unclean-stop")})
        return warnings

    STOP_WAIT_S = 1.0
    """Longest the clean stop's record waits for its commit (seconds): on a stalled disk the stop
    goes on without it, and the journal's close says so (docs/journal.md, "Stopping on a stalled
    disk")."""

    def stop(self) -> None:
        """Append the clean stop's ``host`` record (idempotent per start), waiting at most
        :attr:`STOP_WAIT_S` for its commit."""
        journal, self.journal = self.journal, None
        if journal is None:
            return
        try:
            journal.append_record(KIND, {"event": "clean-stop", "boot": self.boot_id()}, wait_s=self.STOP_WAIT_S)
        except CommitPending:  # a stalled disk: the record stays queued; the journal's close says the rest
            log.debug("journal %s: the clean stop's record waits for the disk", journal.path)
        except (sqlite3.Error, OSError, JournalError) as exc:  # the journal failing at the stop (a full disk)
            log.error("%s; the clean stop is not journaled: the next start reports an unclean stop",
                      write_problem(journal.path, exc))
        except Exception:  # noqa: BLE001 - anything else is a fault of the program: its traceback
            log.exception("journal %s: the clean stop could not be journaled", journal.path)

    close = stop
