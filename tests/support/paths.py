"""Where the tests find the project's files and the shared data: ``ROOT`` (the checkout),
``EXAMPLES`` (its example hands) and ``SHARED`` (``../shared`` beside the checkout, or the folder
named by ``SHOE_CTL_SHARED``), read at run time and never copied."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SHARED = Path(os.environ.get("SHOE_CTL_SHARED") or ROOT.parent / "shared")
