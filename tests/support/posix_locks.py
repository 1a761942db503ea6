"""This process's POSIX locks on a file, read from the kernel's table (Linux ``/proc/locks``): the
SQLite connections' locks on the journal that a stray close in the process would drop
(docs/journal.md, "One writing process")."""

from __future__ import annotations

import os
from pathlib import Path

LOCKS = Path("/proc/locks")


def held_by_me(path: Path) -> list[str]:
    """This process's POSIX locks on ``path``, as /proc/locks lists them (less the line number)."""
    inode = f":{path.stat().st_ino} "
    mine = f" {os.getpid()} "
    return [line.split(":", 1)[1].strip() for line in LOCKS.read_text().splitlines()
            if "POSIX" in line and inode in line and mine in line]
