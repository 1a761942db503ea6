"""The code figures of docs/architecture.md (*Figures*): the largest classes (code lines and
attributes), the annotations ``: Any`` and the imports made inside functions, for the packages
``shoe_ctl``, ``drivers`` and ``hil``. ``python scripts/code_figures.py`` prints them."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shoe_ctl", "drivers", "hil")
ANY = re.compile(r":\s*Any\b")


def sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def code_lines(node: ast.AST, lines: list[str]) -> int:
    """Lines of ``node`` that hold code: not blank, not a comment, not a docstring."""
    doc: set[int] = set()
    for n in ast.walk(node):
        body = getattr(n, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            doc.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    return sum(1 for k in range(node.lineno, end + 1)  # type: ignore[attr-defined]
               if k not in doc and lines[k - 1].strip() and not lines[k - 1].strip().startswith("#"))


def attributes(cls: ast.ClassDef) -> int:
    """Names assigned as ``self.NAME`` in the class's methods, plus class-level annotated fields."""
    names = {t.attr for n in ast.walk(cls) for t in (n.targets if isinstance(n, ast.Assign) else
             [n.target] if isinstance(n, ast.AnnAssign | ast.AugAssign) else [])
             if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
    names |= {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return len(names)


def in_function_imports(tree: ast.AST) -> tuple[int, int]:
    """(in-project, other) imports inside a function body."""
    own = other = 0
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Import):
                mods = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                mods = [("." if n.level else "") + (n.module or "")]
            else:
                continue
            if any(m.startswith(".") or m.split(".")[0] in PACKAGES for m in mods):
                own += 1
            else:
                other += 1
    return own, other


def figures() -> dict[str, object]:
    classes: list[tuple[int, int, str]] = []
    any_count = own = other = 0
    for path in sources():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)
        any_count += len(ANY.findall(text))
        o, x = in_function_imports(tree)
        own, other = own + o, other + x
        rel = path.relative_to(ROOT).as_posix()
        for n in ast.walk(tree):
            if isinstance(n, ast.ClassDef):
                classes.append((code_lines(n, lines), attributes(n), f"{rel} {n.name}"))
    classes.sort(reverse=True)
    return {"any": any_count, "imports_in_functions_own": own, "imports_in_functions_other": other,
            "largest": classes[:6]}


def main() -> int:
    f = figures()
    print(f"': Any' annotations: {f['any']}")
    print(f"imports inside functions: {f['imports_in_functions_own']} in-project, "
          f"{f['imports_in_functions_other']} other")
    for lines, attrs, name in f["largest"]:  # type: ignore[attr-defined]
        print(f"{lines:5d} code lines {attrs:3d} attributes  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
