"""What lies at a shoe's secret path (docs/security.md, "The shoe link"): a named pipe, a folder
or an oversized file is a SecretError naming the path, never a start held waiting for a writer."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from shoe_ctl.service.shoe_secrets import SECRET_SIZE, SecretError, SecretStore


def test_a_named_pipe_at_the_secret_path_is_refused_without_waiting(tmp_path: Path) -> None:
    secrets = SecretStore(tmp_path)
    path = secrets.path("SH-1")
    os.mkfifo(path, 0o600)
    got: list[BaseException | bytes | None] = []

    def load() -> None:
        try:
            got.append(secrets.load("SH-1"))
        except SecretError as exc:
            got.append(exc)

    t = threading.Thread(target=load, daemon=True)
    t.start()
    t.join(5)
    if not got:  # unblock the reader so the thread can end
        with open(path, "w"):
            pass
    assert got and isinstance(got[0], SecretError) and "not a regular file" in str(got[0])


def test_a_folder_or_a_huge_file_is_refused(tmp_path: Path) -> None:
    secrets = SecretStore(tmp_path)
    secrets.path("SH-2").mkdir(mode=0o700)
    with pytest.raises(SecretError, match="not a regular file"):
        secrets.load("SH-2")
    big = secrets.path("SH-3")
    big.write_text("ab" * SECRET_SIZE + "0" * 10_000_000)
    big.chmod(0o600)
    with pytest.raises(SecretError, match="SH-3.key"):
        secrets.load("SH-3")
