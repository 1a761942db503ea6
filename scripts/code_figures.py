"""The code figures of docs/architecture.md (*Figures*): code lines, annotations ``: Any`` and
imports made inside functions per package, and the largest classes (code lines and attributes),
for ``shoe_ctl``, ``drivers`` and ``hil``. ``python scripts/code_figures.py`` prints them;
``--write docs/architecture.md`` rewrites the page's generated block (between the
``code_figures`` markers), which ``tests/docs/test_code_figures.py`` checks against the code."""

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


def package_of(rel: str) -> str:
    """The package a file is counted under: its folder below the top package (``shoe_ctl/cli``),
    the top package's own modules under the top package."""
    parts = rel.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def module_code_lines(tree: ast.Module, lines: list[str]) -> int:
    """A module's code lines (as :func:`code_lines` counts them), 0 for an empty module."""
    if not tree.body:
        return 0
    first, last = tree.body[0], tree.body[-1]
    whole = ast.Module(body=tree.body, type_ignores=[])
    whole.lineno, whole.end_lineno = 1, last.end_lineno or first.lineno  # type: ignore[attr-defined]
    return code_lines(whole, lines)


def package_figures() -> dict[str, list[int]]:
    """Per package: ``[code lines, ': Any' annotations, in-project imports in functions, other
    imports in functions]``."""
    out: dict[str, list[int]] = {}
    for path in sources():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        own, other = in_function_imports(tree)
        row = out.setdefault(package_of(path.relative_to(ROOT).as_posix()), [0, 0, 0, 0])
        for k, v in enumerate((module_code_lines(tree, text.splitlines()), len(ANY.findall(text)), own, other)):
            row[k] += v
    return dict(sorted(out.items()))


def largest_classes(n: int = 6) -> list[tuple[int, int, str]]:
    """The ``n`` largest classes: ``(code lines, attributes, "path Class")``, largest first."""
    classes: list[tuple[int, int, str]] = []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                classes.append((code_lines(node, lines), attributes(node), f"{rel} {node.name}"))
    classes.sort(reverse=True)
    return classes[:n]


def figures() -> dict[str, object]:
    packages = package_figures()
    return {"any": sum(r[1] for r in packages.values()),
            "imports_in_functions_own": sum(r[2] for r in packages.values()),
            "imports_in_functions_other": sum(r[3] for r in packages.values()),
            "largest": largest_classes()}


BEGIN = "<!-- code_figures: generated by `python scripts/code_figures.py --write docs/architecture.md` -->"
END = "<!-- /code_figures -->"


def markdown() -> str:
    """The generated block of docs/architecture.md, markers included."""
    packages = package_figures()
    out = [BEGIN, "", "| package | code lines | `: Any` | imports inside functions: in-project / other |",
           "|---|---:|---:|---:|"]
    for name, (lines, anys, own, other) in packages.items():
        out.append(f"| `{name}` | {lines} | {anys} | {own} / {other} |")
    tot = [sum(r[k] for r in packages.values()) for k in range(4)]
    out += [f"| **all** | {tot[0]} | {tot[1]} | {tot[2]} / {tot[3]} |", "",
            "| largest classes | code lines | attributes |", "|---|---:|---:|"]
    for lines, attrs, where in largest_classes():
        path, cls = where.split(" ")
        out.append(f"| `{path}` `{cls}` | {lines} | {attrs} |")
    return "\n".join([*out, "", END])


def write(doc: Path) -> None:
    """Replace the generated block of ``doc`` (between :data:`BEGIN` and :data:`END`)."""
    text = doc.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    doc.write_text(text[:start] + markdown() + text[end:], encoding="utf-8")


def main() -> int:
    if sys.argv[1:2] == ["--write"] and len(sys.argv) == 3:
        write(Path(sys.argv[2]))
        return 0
    if sys.argv[1:] == ["--markdown"]:
        print(markdown())
        return 0
    f = figures()
    print(f"': Any' annotations: {f['any']}")
    print(f"imports inside functions: {f['imports_in_functions_own']} in-project, "
          f"{f['imports_in_functions_other']} other")
    for lines, attrs, name in f["largest"]:  # type: ignore[attr-defined]
        print(f"{lines:5d} code lines {attrs:3d} attributes  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
