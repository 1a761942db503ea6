"""What the load scripts (``flood.py``, ``connections.py``) share: the process's resident memory
and the printing of their figures (docs/security.md, "Floods and connections")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def rss_mb() -> float:
    """This process's resident set size in MiB (``VmRSS`` of ``/proc/self/status``; 0.0 where
    there is none)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def print_figures(result: dict[str, Any], as_json: bool, width: int) -> None:
    """``result`` on stdout: one JSON object, or one ``name value`` line a figure, the names
    padded to ``width`` characters."""
    if as_json:
        print(json.dumps(result))
        return
    for k, v in result.items():
        print(f"{k:{width}} {v}")
