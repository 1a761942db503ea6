"""A module's docstring says its role in a few lines and points into docs/, where its behaviour is
described once (docs/architecture.md, *Figures*): none of ``shoe_ctl``, ``drivers`` and ``hil``
runs over 15 lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("shoe_ctl", "drivers", "hil")
MAX_LINES = 15


def docstring_lines(path: Path) -> int:
    """The lines of ``path``'s module docstring, quotes included (0 without one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if ast.get_docstring(tree, clean=False) is None:
        return 0
    first = tree.body[0]
    return (first.end_lineno or first.lineno) - first.lineno + 1


def test_no_module_docstring_runs_over_the_limit() -> None:
    long = sorted(f"{p.relative_to(ROOT).as_posix()}: {n} lines" for pkg in PACKAGES
                  for p in (ROOT / pkg).rglob("*.py") if (n := docstring_lines(p)) > MAX_LINES)
    assert long == [], (f"module docstrings over {MAX_LINES} lines (say the role and point to the docs/ page that "
                        f"describes the behaviour): {long}")


def test_the_count_sees_a_long_docstring(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""' + "\n" * (MAX_LINES + 1) + '"""\n\nx = 1\n', encoding="utf-8")
    assert docstring_lines(module) == MAX_LINES + 2
    module.write_text("x = 1\n", encoding="utf-8")
    assert docstring_lines(module) == 0
