"""File safety for the journal: refuse a path that is no journal, refuse an unwritable folder,
create the file private (0600), tighten a looser mode, copy privately, and make a folder's
changes durable.

The journal holds hole cards: ``docs/journal.md`` ("Permissions", "Another table's journal").
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path

from shoe_ctl.service.journal.records import JournalError

_SQLITE_MAGIC = b"SQLite format 3\x00"


def fsync_dir(path: Path) -> None:
    """fsync the folder ``path`` so a file created, renamed or removed in it survives a power cut
    (errors ignored: not every filesystem allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def sidecars(path: Path) -> tuple[Path, Path]:
    """SQLite's write-ahead log and its index beside the journal ``path``: (``-wal``, ``-shm``)."""
    return Path(f"{path}-wal"), Path(f"{path}-shm")


def private_copy(src: Path, dst: Path) -> None:
    """Copy ``src`` to a new file ``dst`` made with mode 0600 and fsynced.

    :raises FileExistsError: when ``dst`` exists.
    """
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
        shutil.copyfileobj(inp, out)
        out.flush()
        os.fsync(out.fileno())


def create_private(path: Path) -> None:
    """Create the empty file ``path`` with mode 0600 whatever the umask.

    :raises FileExistsError: when it exists.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)


def refuse_foreign(path: Path) -> None:
    """Refuse, untouched, a path that is not a journal file: a folder, a device or pipe, or a file
    whose first 16 bytes are not (within a few flipped bits, or zeroed) the SQLite header. A damaged journal
    is repaired; a foreign file (``--journal /etc/passwd``) must never be moved aside, re-created
    or chmod-ed.

    :raises JournalError: naming the path and what it is.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise JournalError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise JournalError(f"{path} is a folder, not a journal file; give a file path inside it")
    if not stat.S_ISREG(st.st_mode):
        raise JournalError(f"{path} is not a regular file; a journal is an SQLite file")
    if st.st_size == 0:
        return
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise JournalError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if not any(head):
        return  # a zeroed header page is damage (a torn or lost write), repaired like any other
    bits = sum(bin(a ^ b).count("1") for a, b in zip(head, _SQLITE_MAGIC, strict=False))
    if bits > 8:
        raise JournalError(f"{path} is not a shoe-ctl journal (not an SQLite file); it was left untouched")


def refuse_unwritable(path: Path) -> None:
    """Refuse a journal whose folder (or existing file) this user cannot write, before anything is
    tried: otherwise the failed writes would look like a damaged journal.

    :raises JournalError: naming the folder or file.
    """
    folder = path.parent
    for p, what in ((folder, "folder"), (path, "file")):
        if (what == "folder" or p.exists()) and not os.access(p, os.W_OK):
            raise JournalError(f"{path}: the journal {what} {p} cannot be written (read-only medium or "
                               "no permission); the journal, its -wal and -shm files need a writable folder")


def tighten_modes(path: Path) -> list[str]:
    """Make the journal ``path`` and its ``-wal``/``-shm`` mode 0600 where they are looser.

    :returns: one line per file tightened (``"j.sqlite3: mode 0644 tightened to 0600"``).
    :raises JournalError: when a looser mode cannot be changed.
    """
    fixed: list[str] = []
    for p in (path, *sidecars(path)):
        try:
            st = p.stat()
        except FileNotFoundError:
            continue
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            try:
                os.chmod(p, 0o600)
            except OSError as exc:
                raise JournalError(
                    f"{p} is readable by others (mode {mode:04o}) and cannot be made 0600: {exc}"
                ) from exc
            fixed.append(f"{p.name}: mode {mode:04o} tightened to 0600")
    return fixed
