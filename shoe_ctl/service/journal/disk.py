"""A write the journal's disk refuses, said so whoever reads the log can act: a full disk is named
as one (not as damage), with the folder, the filesystem it is on, the space left and what to do.
``docs/journal.md``, "The writer".
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

from shoe_ctl.service.journal.files import journal_problem


def disk_full(exc: BaseException) -> bool:
    """True for the error of a write that found no room: SQLite's ``SQLITE_FULL`` ("database or
    disk is full", extended codes too) or an ``OSError`` ``ENOSPC`` / ``EDQUOT``."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return code is not None and code & 0xFF == sqlite3.SQLITE_FULL
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _mount_of(folder: Path) -> Path:
    while not os.path.ismount(folder) and folder.parent != folder:
        folder = folder.parent
    return folder


def full_disk_words(path: str | os.PathLike[str]) -> str:
    """What a full disk under the journal ``path`` is and what to do, e.g. ``the disk holding
    /var/lib/shoe-ctl (the filesystem at /var) is full: 0 KiB free of 3,072 KiB; free space on it
    (old copies of damaged journals kept aside, logs, other files)``."""
    folder = Path(os.path.abspath(path)).parent
    try:
        mount = _mount_of(folder)
        usage = shutil.disk_usage(folder)
        room = f"{usage.free // 1024:,} KiB free of {usage.total // 1024:,} KiB"
    except OSError as exc:
        mount, room = folder, f"its free space cannot be read: {exc.strerror or exc}"
    where = f"{folder}" if mount == folder else f"{folder} (the filesystem at {mount})"
    return (f"the disk holding {where} is full: {room}; free space on it (old copies of damaged journals "
            "kept aside, logs, other files)")


def write_problem(path: str | os.PathLike[str], exc: BaseException) -> str:
    """One line for a write to the journal ``path`` that failed with ``exc``: naming the journal
    once (:func:`~shoe_ctl.service.journal.files.journal_problem`), and for a full disk
    (:func:`disk_full`) where it is and what to do (:func:`full_disk_words`)."""
    text = journal_problem(path, exc)
    return f"{text}: {full_disk_words(path)}" if disk_full(exc) else text
