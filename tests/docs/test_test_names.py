"""Every test file's name is unique across tests/: pytest imports them by their base name (the
folders are no packages), so a second file of the same name stops the whole run at collection."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        where[path.name].append(str(path.relative_to(TESTS)))
    assert len(where) > 100, "the tests were found"
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
