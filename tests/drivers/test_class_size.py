"""Every class in ``drivers/`` stays small enough to read as one concern: at most 250 code lines
and 20 attributes (docs/architecture.md, "Packages and layers"). Measured on the source with
``ast``, so it stays true as the code changes."""

from __future__ import annotations

import ast
from pathlib import Path

DRIVERS = Path(__file__).resolve().parents[2] / "drivers"
MAX_CODE_LINES = 250
MAX_ATTRIBUTES = 20


def _docstring_lines(tree: ast.Module) -> set[int]:
    """Lines of string statements: docstrings of modules, classes and functions, and the strings
    that document an attribute or constant."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def class_sizes(path: Path, root: Path = DRIVERS.parent) -> list[tuple[str, int, int]]:
    """``(name, code lines, attributes)`` of each class in ``path``. Code lines: the lines of the
    class that are not blank, a comment or a docstring. Attributes: the names assigned as
    ``self.NAME`` in its methods, and the annotated fields of its body (a dataclass's), without
    ``ClassVar``."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    text = source.splitlines()
    docs = _docstring_lines(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        end = node.end_lineno or node.lineno
        code = sum(1 for i in range(node.lineno, end + 1)
                   if i not in docs and text[i - 1].strip() and not text[i - 1].strip().startswith("#"))
        attrs = {sub.attr for sub in ast.walk(node)
                 if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)
                 and isinstance(sub.value, ast.Name) and sub.value.id == "self"}
        attrs |= {st.target.id for st in node.body
                  if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)
                  and "ClassVar" not in ast.unparse(st.annotation)}
        out.append((f"{path.relative_to(root)}:{node.name}", code, len(attrs)))
    return out


def test_the_measure_counts_code_and_attributes(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('class A:\n    """Doc.\n\n    More."""\n\n    x: int = 0\n    y: "ClassVar[int]" = 1\n'
                     '    # a comment\n    def f(self) -> None:\n        self.a = 1\n        self.b = self.a\n'
                     '        self.a += 1\n', encoding="utf-8")
    sizes = {name.rsplit(":", 1)[1]: (code, attrs) for name, code, attrs in class_sizes(probe, tmp_path)}
    assert sizes == {"A": (7, 3)}  # class, x, y, def, three assignments; x, a, b


def test_no_class_in_drivers_is_over_250_code_lines_or_20_attributes() -> None:
    sizes = [size for path in sorted(DRIVERS.rglob("*.py")) for size in class_sizes(path)]
    assert len(sizes) > 20  # the package was read
    over = [f"{name}: {code} code lines, {attrs} attributes" for name, code, attrs in sizes
            if code > MAX_CODE_LINES or attrs > MAX_ATTRIBUTES]
    assert not over, "split by concern: " + "; ".join(over)
