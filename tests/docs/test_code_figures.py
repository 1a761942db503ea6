"""The generated figures of docs/architecture.md (*Figures*: code lines, ``: Any`` and imports
inside functions per package, the largest classes) match the code within the tolerance the page
states: each figure within 10 % or 10 of what ``scripts/code_figures.py`` measures now (a larger
class within 25 lines). Beyond that, ``python scripts/code_figures.py --write docs/architecture.md``
regenerates them."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("code_figures", ROOT / "scripts" / "code_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIGURES = _script()


def _block() -> str:
    text = DOC.read_text(encoding="utf-8")
    assert FIGURES.BEGIN in text and FIGURES.END in text, "docs/architecture.md has no generated figures block"
    return text[text.index(FIGURES.BEGIN):text.index(FIGURES.END)]


def _close(written: int, measured: int, slack: int = 10) -> bool:
    return abs(written - measured) <= max(slack, measured // 10)


def test_the_page_names_the_command_and_the_tolerance() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "python scripts/code_figures.py --write docs/architecture.md" in text
    assert "within 10 % or 10" in text


def test_each_packages_figures_match_the_code() -> None:
    rows = {m.group(1): [int(m.group(k)) for k in range(2, 6)] for m in re.finditer(
        r"^\| `([\w/]+)` \| (\d+) \| (\d+) \| (\d+) / (\d+) \|$", _block(), re.MULTILINE)}
    measured = FIGURES.package_figures()
    assert set(rows) == set(measured), "the packages of the page are not the code's: regenerate the figures"
    off = {name: (rows[name], now) for name, now in measured.items()
           if not all(_close(w, m) for w, m in zip(rows[name], now, strict=True))}
    assert off == {}, f"figures off by more than the tolerance (page, code): {off}; regenerate them"
    total = re.search(r"^\| \*\*all\*\* \| (\d+) \| (\d+) \| (\d+) / (\d+) \|$", _block(), re.MULTILINE)
    assert total is not None
    sums = [sum(r[k] for r in measured.values()) for k in range(4)]
    assert all(_close(int(total.group(k + 1)), sums[k], slack=20) for k in range(4)), (total.groups(), sums)


def test_the_largest_classes_match_the_code() -> None:
    rows = re.findall(r"^\| `([\w/.]+)` `(\w+)` \| (\d+) \| (\d+) \|$", _block(), re.MULTILINE)
    assert len(rows) >= 4
    now = {where: (lines, attrs) for lines, attrs, where in FIGURES.largest_classes(12)}
    for path, cls, lines, attrs in rows:
        assert f"{path} {cls}" in now, f"{path} {cls} is no longer among the largest classes; regenerate"
        got = now[f"{path} {cls}"]
        assert abs(int(lines) - got[0]) <= 25 and abs(int(attrs) - got[1]) <= 5, (path, cls, lines, attrs, got)
