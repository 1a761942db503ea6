"""Small filesystems for tests of a full or stalled disk: :func:`small_tmpfs` mounts a tmpfs of a
given size, :func:`loop_ext4` a loop-mounted ext4 that can be frozen (both root only; the test is
skipped, saying why, where they cannot be mounted)."""

from __future__ import annotations

import contextlib
import shutil
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


class Freezable:
    """A small ext4 filesystem on a loop device (:func:`loop_ext4`) that :meth:`freeze` stops as a
    stalled disk does (``fsfreeze``: every write, and every fsync, waits until :meth:`thaw`)."""

    def __init__(self, mount: Path) -> None:
        self.mount = mount
        self.frozen = False

    def freeze(self) -> None:
        subprocess.run(["fsfreeze", "-f", str(self.mount)], check=True, capture_output=True)
        self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            subprocess.run(["fsfreeze", "-u", str(self.mount)], check=True, capture_output=True)
            self.frozen = False


@contextlib.contextmanager
def loop_ext4(where: Path, size_mb: int = 32) -> Iterator[Freezable]:
    """Make an ext4 image of ``size_mb`` MiB beside ``where``, mount it at ``where`` through a loop
    device (root only) and yield it as :class:`Freezable`; thawed and unmounted at the end.

    :raises pytest.skip.Exception: no ``mkfs.ext4``/``fsfreeze``, not root, or no loop device.
    """
    for tool in ("mkfs.ext4", "fsfreeze", "mount"):
        if shutil.which(tool) is None:
            pytest.skip(f"cannot make a freezable filesystem here: no {tool}")
    image = where.with_suffix(".img")
    with open(image, "wb") as f:
        f.truncate(size_mb * 1024 * 1024)
    for argv in (["mkfs.ext4", "-q", "-F", str(image)], ["mkdir", "-p", str(where)],
                 ["mount", "-o", "loop", str(image), str(where)]):
        try:
            done = subprocess.run(argv, capture_output=True, check=False)
        except OSError as exc:
            pytest.skip(f"cannot make a loop-mounted ext4 here: {argv[0]}: {exc}")
        if done.returncode != 0:
            pytest.skip(f"cannot make a loop-mounted ext4 here (needs root and a loop device): {argv[0]}: "
                        f"{done.stderr.decode().strip()}")
    fs = Freezable(where)
    try:
        yield fs
    finally:
        fs.thaw()
        subprocess.run(["umount", "-l", str(where)], check=False)
