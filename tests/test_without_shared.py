"""The suite in a checkout with no ``../shared`` beside it (a fresh clone): every test that needs the
shared data is skipped with the one reason ``paths.SHARED_MISSING``, and the rest pass. Only
``tests/support/paths.py`` says where the shared folder is; the modules that use it are run again
here with ``SHOE_CTL_SHARED`` naming an empty folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

TESTS = ROOT / "tests"


def _sources() -> dict[Path, str]:
    return {p: p.read_text() for p in sorted(TESTS.rglob("*.py"))}


def test_only_paths_says_where_the_shared_folder_is() -> None:
    own = TESTS / "support" / "paths.py"
    found = [str(p.relative_to(ROOT)) for p, text in _sources().items()
             if p not in (own, Path(__file__)) and re.search(r'SHOE_CTL_SHARED"|/ "shared"|/work/shared', text)]
    assert found == []


@pytest.mark.shared
def test_modules_using_shared_data_pass_or_skip_with_one_reason_without_it(tmp_path: Path) -> None:
    modules = [str(p.relative_to(ROOT)) for p, text in _sources().items()
               if p.name.startswith("test_") and p != Path(__file__) and re.search(r"\bSHARED(_PHH)?\b", text)]
    assert len(modules) >= 10
    nowhere = tmp_path / "no-shared"
    nowhere.mkdir()
    env = {**os.environ, "SHOE_CTL_SHARED": str(nowhere)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *modules],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    tail = done.stdout[-3000:]
    assert done.returncode == 0, tail
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    about_shared = [line for line in skips if "shared" in line.lower() or "phh" in line.lower()]
    assert about_shared, tail
    reason = f"needs the shared data (real PHH hands) at {nowhere}/data/stud/phh"
    assert all(reason in line for line in about_shared), about_shared
