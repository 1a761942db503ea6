"""Where the tests find the project's files and the shared data: ``ROOT`` (the checkout),
``EXAMPLES`` (its example hands), ``SHARED`` (``../shared`` beside the checkout, or the folder
named by ``SHOE_CTL_SHARED``: the rule texts and the real PHH hands, read at run time and never
copied) and ``SHARED_PHH`` (its hands). A test that needs them carries ``@pytest.mark.shared``
and is skipped, with the one reason ``SHARED_MISSING``, where they are absent (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SHARED = Path(os.environ.get("SHOE_CTL_SHARED") or ROOT.parent / "shared")
SHARED_PHH = SHARED / "data" / "stud" / "phh"
HAVE_SHARED = SHARED_PHH.is_dir()
SHARED_MISSING = (f"needs the shared data (real PHH hands) at {SHARED_PHH}: ../shared beside the checkout, "
                  "or the folder named by SHOE_CTL_SHARED")
