"""File safety for the journal: refuse a path that is no journal, refuse an unwritable folder,
create the file private (0600), tighten a looser mode, copy privately, make a folder's changes
durable, hold the journal for the one process that writes it (:func:`take_ownership`), read a
file another ``Journal`` of this process has open without dropping its locks, and say a journal's
problem naming it once (:func:`journal_problem`).

The journal holds hole cards: ``docs/journal.md`` ("Permissions", "Another table's journal",
"One writing process").
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import subprocess
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


_OPEN_HERE: dict[int, Path] = {}
"""The journals a ``Journal`` of this process has open: its ``id`` -> the path it was given."""


def opened_here(key: int, path: Path) -> None:
    """Note that a ``Journal`` of this process (``key``, its ``id``) has ``path`` open: from now
    on :func:`refuse_foreign` reads that file's header in a child process (``docs/journal.md``,
    "One writing process")."""
    _OPEN_HERE[key] = path


def closed_here(key: int) -> None:
    """Forget what :func:`opened_here` noted for ``key`` (nothing noted: nothing done)."""
    _OPEN_HERE.pop(key, None)


def _open_here(st: os.stat_result) -> bool:
    """Whether the file of ``st`` is a journal a ``Journal`` of this process has open (compared by
    device and inode: another name of it, a symlink or a hard link, counts)."""
    for p in list(_OPEN_HERE.values()):
        with contextlib.suppress(OSError):
            held = p.stat()
            if (held.st_dev, held.st_ino) == (st.st_dev, st.st_ino):
                return True
    return False


def _child_read(argv: list[str], path: Path, verb: str, out: int | None = None) -> bytes:
    """Run ``argv`` (``cat``, ``head``: it reads ``path``) in a child process, its output to the
    descriptor ``out`` or returned: a descriptor of the journal opened and closed in this process
    would drop every POSIX lock this process holds on it, those of an SQLite connection to it
    included (sqlite.org, "How To Corrupt An SQLite Database File", 2.2).

    :raises OSError: the child could not read ``path`` (``PATH: cannot be VERB: why``).
    """
    done = subprocess.run(argv, stdout=subprocess.PIPE if out is None else out, stderr=subprocess.PIPE,
                          check=False)
    if done.returncode:
        said = done.stderr.decode(errors="replace").strip()  # "cat: PATH: Permission denied"
        why = said.rsplit(": ", 1)[-1] if said else f"{argv[0]} exited with {done.returncode}"
        raise OSError(f"{path}: cannot be {verb}: {why}")
    return done.stdout or b""


def private_copy(src: Path, dst: Path) -> None:
    """Copy ``src`` to a new file ``dst`` made with mode 0600 and fsynced. ``src`` is read by a
    child process (``cat``): closing any descriptor of a file in this process would drop every
    POSIX lock this process holds on it, those of an SQLite connection to the live journal
    included (sqlite.org, "How To Corrupt An SQLite Database File", 2.2).

    :raises FileExistsError: when ``dst`` exists.
    :raises OSError: ``src`` cannot be read (naming it and why).
    """
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        _child_read(["cat", "--", os.fspath(src)], src, "copied", out.fileno())
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
        raise JournalError(f"{path}: cannot be read: {exc.strerror or exc}", path=path) from None
    if stat.S_ISDIR(st.st_mode):
        raise JournalError(f"{path} is a folder, not a journal file; give a file path inside it", path=path)
    if not stat.S_ISREG(st.st_mode):
        raise JournalError(f"{path} is not a regular file; a journal is an SQLite file", path=path)
    if st.st_size == 0:
        return
    if _open_here(st):  # a Journal of this process has it open: no descriptor of it here
        try:
            head = _child_read(["head", "-c", str(len(_SQLITE_MAGIC)), "--", os.fspath(path)], path, "read")
        except OSError as exc:
            raise JournalError(str(exc), path=path) from None
    else:
        try:
            with path.open("rb") as fh:
                head = fh.read(len(_SQLITE_MAGIC))
        except OSError as exc:
            raise JournalError(f"{path}: cannot be read: {exc.strerror or exc}", path=path) from None
    if not any(head):
        return  # a zeroed header page is damage (a torn or lost write), repaired like any other
    bits = sum(bin(a ^ b).count("1") for a, b in zip(head, _SQLITE_MAGIC, strict=False))
    if bits > 8:
        raise JournalError(f"{path} is not a shoe-ctl journal (not an SQLite file); it was left untouched",
                           path=path)


def refuse_unwritable(path: Path) -> None:
    """Refuse a journal whose folder (or existing file) this user cannot write, before anything is
    tried: otherwise the failed writes would look like a damaged journal.

    :raises JournalError: naming the folder or file.
    """
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise JournalError(f"{path}: its folder {folder} {what}", path=path)
    for p, what in ((folder, f"its folder {folder} cannot"), (path, "cannot")):
        if (p is folder or p.exists()) and not os.access(p, os.W_OK):
            raise JournalError(f"{path}: {what} be written (read-only medium or no permission); the "
                               "journal, its -wal and -shm files need a writable folder", path=path)


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
                    f"{p} is readable by others (mode {mode:04o}) and cannot be made 0600: {exc.strerror or exc}",
                    path=path,
                ) from exc
            fixed.append(f"{p.name}: mode {mode:04o} tightened to 0600")
    return fixed


def owner_lock(path: Path) -> Path:
    """The file beside the journal ``path`` whose lock marks the process writing it: ``<name>.lock``,
    beside the file the path leads to (symlinks resolved, as SQLite resolves them for the
    ``-wal``), so every name of one journal through a symlink has the one lock."""
    return Path(f"{os.path.realpath(path)}.lock")


def take_ownership(path: Path) -> int:
    """Make this process the journal ``path``'s one writer: take an exclusive ``flock`` on
    :func:`owner_lock` (created 0600; a looser mode is tightened) and write this process's id
    into it. The lock lasts while the returned descriptor is open and goes with the process, also
    when it is killed. SQLite's own locks are POSIX locks on the journal and its ``-shm``, which a
    close of any other descriptor of those files in this process would drop, so neither is opened
    here before the lock is held; a path that is no journal is refused without leaving a lock file
    behind (:func:`refuse_foreign`).

    :returns: the descriptor holding the lock; :func:`give_up_ownership` closes it.
    :raises JournalError: another process, or another open ``Journal`` of this one, holds the
        journal for writing (naming the journal and that process, and what to do); a path that is
        no journal or a folder that cannot be written (as :func:`refuse_foreign`,
        :func:`refuse_unwritable`); the lock file cannot be made.
    """
    with contextlib.suppress(OSError):
        if not stat.S_ISREG(path.stat().st_mode):
            refuse_foreign(path)  # a folder, device or pipe: refused on its mode alone
    refuse_unwritable(path)
    lock = owner_lock(path)
    created = not lock.exists()
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise JournalError(f"{path}: its .lock file beside it cannot be opened: {exc.strerror or exc}",
                           path=path) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            raise JournalError(_held_message(path, holder), path=path) from None
        if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
            os.fchmod(fd, 0o600)
        try:
            refuse_foreign(path)
        except JournalError:
            if created:
                lock.unlink(missing_ok=True)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _held_message(path: Path, holder: str) -> str:
    if holder == str(os.getpid()):
        who = f"by this process (pid {holder}): close the other Journal of it first"
    else:
        who = (f"by another process (pid {holder or 'unknown'}, the shoe-ctl service or a tool): stop it first "
               "(systemctl stop shoe-ctl) and try again")
    return (f"journal {path} is open for writing {who}; one process writes a journal, read-only tools "
            "(doctor, report, journal) still work meanwhile")


def writer_pid(path: Path, locks: Path = Path("/proc/locks")) -> int | None:
    """The id of the process holding the journal ``path`` for writing (its :func:`owner_lock`'s
    ``flock``), found without taking the lock: in the kernel's table of locks (``locks``, Linux
    ``/proc/locks``: ``N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF``, the device in hex).
    Asking by taking the lock, even for a moment, could refuse a service starting meanwhile.

    :returns: the holder's process id; ``None`` when nobody holds it, there is no lock file, or
        the table cannot be read (not Linux).
    """
    lock = owner_lock(path)
    try:
        st = lock.stat()
        table = locks.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    written = ""  # the id the holder wrote in the lock file ("": not readable by this user)
    with contextlib.suppress(OSError):
        written = lock.read_text(encoding="ascii", errors="replace").strip()
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        # a waiter's line reads "N: -> FLOCK ...": only the holder's has FLOCK second
        if len(fields) < 6 or fields[1] != "FLOCK" or fields[3] != "WRITE":
            continue
        # the device the kernel names can differ from stat's (btrfs subvolumes, overlays): the
        # inode with the holder's id written in the lock file is then the match
        if fields[5] == where or (fields[5].rsplit(":", 1)[-1] == str(st.st_ino) and fields[4] == written):
            with contextlib.suppress(ValueError):
                return int(fields[4])
    return None


def journal_problem(journal: str | os.PathLike[str], exc: BaseException) -> str:
    """The words of a journal that cannot be opened, written or read, naming the journal once, for
    a tool or the service to say. A :class:`JournalError` about this journal (its ``path``) names
    it already and is said as it is; any other (an argument error, an ``OSError`` of the medium, an
    ``sqlite3`` error, a record that cannot be replayed) gets ``journal PATH:`` before it. An
    ``OSError`` about the journal file itself gives its reason alone after that (``journal PATH: No
    space left on device``), not the file a second time. The words are never searched for the
    path: a journal may be called anything (``is``, ``journal``, ``database``).

    :param journal: the journal's path as the user gave it.
    :returns: one line (``docs/journal.md``, "One writing process").
    """
    if isinstance(exc, JournalError) and exc.path == Path(journal):
        return str(exc)
    text = str(exc)
    if isinstance(exc, OSError) and exc.strerror and exc.filename2 is None and isinstance(exc.filename, str):
        if Path(exc.filename) == Path(journal):
            text = exc.strerror
    return f"journal {os.fspath(journal)}: {text}"


def refuse_owned(path: Path) -> None:
    """Refuse, before anything else is done, a journal another process holds for writing: take
    the ownership (:func:`take_ownership`) and give it up at once. A tool that writes one record
    at its end (``shoe-ctl deck``) asks this first, so nobody passes a deck over the reader only
    to have its record refused; the open for the write itself still refuses on its own.

    :raises JournalError: as :func:`take_ownership`.
    """
    give_up_ownership(take_ownership(path))


def give_up_ownership(fd: int | None) -> None:
    """Close the descriptor :func:`take_ownership` returned (``None``: nothing), releasing the
    journal for another writer. The lock file stays: removing it could let two processes each
    lock a different file of the same name."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
