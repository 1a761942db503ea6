"""Where a benchmark ran: CPU, memory, OS, Python, SQLite and the versions of the libraries that
matter, the commit and the load average at the start (``docs/performance.md``, "What is
measured", key ``machine``). Shared by ``python -m bench`` and ``bench/bench_scale.py``.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sqlite3
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def machine_info() -> dict[str, Any]:
    """Where the run happened: CPU, memory, OS, Python and library versions."""
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "sqlite": sqlite3.sqlite_version,
        "load_avg_start": [round(x, 2) for x in os.getloadavg()],
    }
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Model")):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["mem_mb"] = round(int(line.split()[1]) / 1024)
    versions = {}
    for dist in ("shoe-ctl", "pyserial", "transitions", "aiohttp", "cobs", "pokerkit"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    info["versions"] = versions
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=5)
        if out.returncode == 0:
            info["commit"] = out.stdout.strip()
    return info
