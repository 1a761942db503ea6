"""A small filesystem for tests of a full disk: :func:`small_tmpfs` mounts a tmpfs of a given size
(root only; the test is skipped, saying why, where it cannot be mounted)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(where: Path, size_kb: int) -> Iterator[Path]:
    """Mount a tmpfs of ``size_kb`` KiB (mode 0700) at ``where`` (made here), unmounted at the end.

    :raises pytest.skip.Exception: the mount failed (not root, no tmpfs).
    """
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0700", "tmpfs", str(where)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path) -> Path:
    """Take every free byte of ``folder``'s filesystem with one file (``filler``); its path."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f:
        for size in (65536, 4096, 512):
            block = b"\0" * size
            with contextlib.suppress(OSError):
                while f.write(block):
                    pass
    return filler
