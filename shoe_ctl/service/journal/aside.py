"""Copies of damaged journal files set aside before any repair, and their bound.

A set is ``<name>.damaged-<UTC time>`` (``.2``, ``.3``, ... for a later copy in the same second)
and its ``-wal``, mode 0600. Only the newest :data:`KEEP_ASIDE` sets stay, and none older than the
retention; the copies made by the open in progress are never removed (``docs/journal.md``,
"Damage").
"""

from __future__ import annotations

import calendar
import contextlib
import logging
import os
import re
import time
from pathlib import Path

from shoe_ctl.service.journal.files import fsync_dir, private_copy, sidecars
from shoe_ctl.service.journal.records import OpenReport

log = logging.getLogger("shoe_ctl.service.journal")

KEEP_ASIDE = 3
"""Copies of damaged files kept beside the journal (``<name>.damaged-<UTC time>`` and its
``-wal``): the newest this many sets; older ones, and any older than ``retention_days``, are
removed at open and by ``Journal.prune``."""

_ASIDE_RE = re.compile(r"\.damaged-(\d{8}T\d{6}Z)(?:\.(\d+))?(-wal)?$")


def _utc_stamp(now: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))


def keep_aside(path: Path, now: float, report: OpenReport) -> Path:
    """Copy the journal ``path`` (and its ``-wal``) aside as a new set stamped with ``now``
    (seconds since the epoch), add the copies to ``report.kept_aside``, then bound the sets
    (:func:`prune_aside`).

    :returns: the set's base path (the copy of the main file, when there was one).
    """
    stamp = _utc_stamp(now)
    # a later copy within the same second takes a higher number (never a freed lower one, so
    # the numbers order the copies)
    taken = [int(m.group(2) or 1) for m in (_ASIDE_RE.fullmatch(n[len(path.name):])
                                            for n in os.listdir(path.parent)
                                            if n.startswith(f"{path.name}.damaged-{stamp}"))
             if m is not None]
    n = max(taken, default=0) + 1
    base = Path(f"{path}.damaged-{stamp}" + (f".{n}" if n > 1 else ""))
    while base.exists() or Path(f"{base}-wal").exists():
        n += 1
        base = Path(f"{path}.damaged-{stamp}.{n}")
    for src, suffix in ((path, ""), (sidecars(path)[0], "-wal")):
        if src.exists():
            dst = Path(f"{base}{suffix}")
            private_copy(src, dst)
            report.kept_aside.append(dst)
    fsync_dir(path.parent)
    prune_aside(path, report)
    return base


def prune_aside(path: Path, report: OpenReport, older_than: float | None = None) -> list[Path]:
    """Delete copies of damaged files beyond the newest :data:`KEEP_ASIDE` sets, and sets made
    before ``older_than`` (seconds since the epoch, by the UTC time in their name); the copies
    in ``report.kept_aside`` (made by this open) are always kept. Reported in
    ``report.removed_aside``.

    :returns: the files deleted.
    """
    folder = path.parent
    prefix = path.name
    sets: dict[tuple[float, int], list[Path]] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        if not name.startswith(prefix):
            continue
        m = _ASIDE_RE.fullmatch(name[len(prefix):])
        if m is None:
            continue
        try:
            when = float(calendar.timegm(time.strptime(m.group(1), "%Y%m%dT%H%M%SZ")))
        except ValueError:
            continue
        sets.setdefault((when, int(m.group(2) or 1)), []).append(folder / name)
    mine = {Path(p) for p in report.kept_aside}
    removed: list[Path] = []
    for i, key in enumerate(sorted(sets, reverse=True)):
        files = sets[key]
        if any(f in mine for f in files):
            continue
        if i >= KEEP_ASIDE or (older_than is not None and key[0] < older_than):
            for f in files:
                with contextlib.suppress(FileNotFoundError):
                    f.unlink()
                    removed.append(f)
    if removed:
        fsync_dir(folder)
        report.removed_aside.extend(removed)
        log.info("journal %s: removed %d old copies of damaged files", path, len(removed))
    return removed
