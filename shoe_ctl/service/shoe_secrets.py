"""The shoe secret store: one pairing secret per shoe serial, each in its own file, mode 0600.

``shoe-ctl pair`` writes a secret here (a new one at each rotation) and the table reads it to
authenticate its shoe link (protocol version 2: docs/protocol.md, "Authentication (version 2)";
the threat model: docs/security.md). A file is 64 hex digits and a newline; the folder is 0700.
A secret file that others may read or write is refused, not used.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

SECRET_SIZE = 32
"""Bytes of a pairing secret (``drivers.protocol.SECRET_SIZE``)."""
DEFAULT_FOLDER = Path("/var/lib/shoe-ctl/shoes")
"""Where the service keeps its shoes' secrets (``[shoe] secrets`` overrides it)."""

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


class SecretError(Exception):
    """A secret file that cannot be read or written, or is open to others; the message names
    the file and the fix."""


def new_secret() -> bytes:
    """A fresh random pairing secret (``os.urandom``, 32 bytes)."""
    return os.urandom(SECRET_SIZE)


class SecretStore:
    """The pairing secrets in ``folder`` (one file per serial: ``<serial>.key``)."""

    def __init__(self, folder: str | os.PathLike[str] = DEFAULT_FOLDER) -> None:
        self.folder = Path(folder)

    def path(self, serial: str) -> Path:
        """The file of ``serial`` (characters other than letters, digits, ``.``, ``_`` and
        ``-`` become ``_``).

        :raises ValueError: an empty serial.
        """
        if not serial:
            raise ValueError("a shoe's serial number is not empty")
        return self.folder / f"{_SAFE.sub('_', serial)}.key"

    def load(self, serial: str) -> bytes | None:
        """The secret of ``serial``, or None when the shoe was never paired here.

        :raises SecretError: a file others may read or write, one that is not a regular file (a
            named pipe, a folder), or one that is not a secret.
        """
        path = self.path(serial)
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SecretError(f"{path}: cannot read ({exc.strerror or exc})") from None
        if not stat.S_ISREG(st.st_mode):  # a named pipe would hold the start waiting for a writer
            raise SecretError(f"{path}: not a regular file; pair the shoe again (shoe-ctl pair)")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            raise SecretError(f"{path} is mode {mode:04o}: others may read or change the shoe's secret; "
                              f"run chmod 0600 {path} and pair it again (shoe-ctl pair) to rotate it")
        try:
            with path.open("rb") as fh:
                text = fh.read(4 * SECRET_SIZE).decode("ascii").strip()  # a secret is 2 hex digits a byte
            secret = bytes.fromhex(text)
        except (OSError, ValueError) as exc:
            raise SecretError(f"{path}: not a shoe secret ({exc})") from None
        if len(secret) != SECRET_SIZE:
            raise SecretError(f"{path}: a secret is {SECRET_SIZE} bytes, this one {len(secret)}")
        return secret

    def check_writable(self, serial: str) -> Path:
        """Prove that a secret for ``serial`` can be stored, before any shoe is given one: the
        folder is made (0700) if missing and a trial file is written beside the secret's and
        removed. Returns the secret's path.

        :raises SecretError: the folder or a file in it cannot be written (it names the folder,
            the reason and the fix).
        """
        path = self.path(serial)
        trial = path.with_name(path.name + ".trial")
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(trial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.close(fd)
            trial.unlink()
        except OSError as exc:
            raise SecretError(f"{self.folder}: a shoe secret cannot be stored there ({exc.strerror or exc}); "
                              "run shoe-ctl pair as the service user, once the service's state folder "
                              "exists (docs/install-pi.md)") from None
        return path

    def save(self, serial: str, secret: bytes) -> Path:
        """Write ``secret`` for ``serial`` (the folder made 0700 if missing; the file 0600,
        replaced atomically: a reader sees the old secret or the new one, never half).

        :raises SecretError: the folder or the file cannot be written.
        :raises ValueError: a secret of another size.
        """
        if len(secret) != SECRET_SIZE:
            raise ValueError(f"a secret is {SECRET_SIZE} bytes, not {len(secret)}")
        path = self.path(serial)
        tmp = path.with_name(path.name + ".new")
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secret.hex() + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            raise SecretError(f"{path}: cannot write ({exc.strerror or exc})") from None
        return path
