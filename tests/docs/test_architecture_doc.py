"""docs/architecture.md against the code: every path and ``Class.method`` it names exists, every
thread the code starts by name is in its threads table, every sink is in the card's path, and its
figures section names the script that measures them."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGES = ("shoe_ctl", "drivers", "hil")
SOURCES = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))
TREES = {p: ast.parse(p.read_text(encoding="utf-8")) for p in SOURCES}


def section(title: str) -> str:
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start:end if end >= 0 else None]


def class_members() -> dict[str, set[str]]:
    """Every class of the code by name: its methods, class attributes and ``self.X`` names."""
    out: dict[str, set[str]] = {}
    for tree in TREES.values():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            names = out.setdefault(cls.name, set())
            for n in cls.body:
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(n.name)
                elif isinstance(n, ast.Assign):
                    names.update(t.id for t in n.targets if isinstance(t, ast.Name))
                elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                    names.add(n.target.id)
            for n in ast.walk(cls):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
                    n, ast.AnnAssign) else []
                names.update(t.attr for t in targets if isinstance(t, ast.Attribute)
                             and isinstance(t.value, ast.Name) and t.value.id == "self")
            for base in cls.bases:  # a name inherited from a base of the project counts
                if isinstance(base, ast.Name):
                    names.add(f"<base {base.id}>")
    return out


def test_every_path_the_page_names_exists() -> None:
    named = set(re.findall(r"`((?:[\w-]+/)*[\w-]+\.(?:py|md|toml|json))`", DOC))
    named |= {m for m in re.findall(r"`((?:shoe_ctl|drivers|hil|bench|scripts|tests|docs)/[\w/.-]*)`", DOC)}
    assert named
    missing = []
    for name in sorted(named):
        if "/" in name:
            found = (ROOT / name.rstrip("/")).exists()
        else:  # a module named by its file alone, beside the package the text is about
            found = any(ROOT.glob(f"*/**/{name}")) or (ROOT / name).exists() or (ROOT / "docs" / name).exists()
        if not found:
            missing.append(name)
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def test_every_class_method_the_page_names_exists() -> None:
    members = class_members()
    named = set(re.findall(r"(?<![\w.])([A-Z]\w+)\.([a-z_]\w*)", DOC))
    assert named
    missing = []
    for cls, attr in sorted(named):
        names = members.get(cls)
        if names is None:
            missing.append(f"{cls} (no such class)")
            continue
        inherited = {b[6:-1] for b in names if b.startswith("<base ")}
        if attr not in names and not any(attr in members.get(b, ()) for b in inherited):
            missing.append(f"{cls}.{attr}")
    assert missing == [], f"docs/architecture.md names what the code does not have: {missing}"


def thread_names() -> set[str]:
    """The names the code gives the threads it starts (``threading.Thread(name=...)``, a
    :class:`~shoe_ctl.lifecycle.BatchWorker`'s ``name``), placeholders as ``*``."""
    out = set()
    for tree in TREES.values():
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            func = call.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called == "BatchWorker" and call.args and isinstance(call.args[0], ast.Constant):
                out.add(str(call.args[0].value))
            if called not in ("Thread", "__init__"):
                continue
            for kw in call.keywords:
                if kw.arg != "name":
                    continue
                if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    out.add(kw.value.value)
                elif isinstance(kw.value, ast.JoinedStr):
                    out.add("".join(v.value if isinstance(v, ast.Constant) else "*" for v in kw.value.values))
    return out


def test_every_thread_the_code_starts_is_in_the_threads_table() -> None:
    cells = re.findall(r"^\| (`[^|]+) \|", section("Threads and the one queue"), re.M)
    table = {re.sub(r"\b[A-Z]{2,}\b|\*", "*", name) for cell in cells for name in re.findall(r"`([^`]+)`", cell)}
    names = thread_names()
    assert len(names) >= 10, names
    missing = [n for n in sorted(names) if not any(fnmatch.fnmatchcase(n, t) or n == t for t in table)]
    assert missing == [], f"threads not in docs/architecture.md's table: {missing} (table: {sorted(table)})"


def sinks() -> set[str]:
    """Every class with ``handle(self, command)``: a sink of the controller's commands."""
    out = set()
    for tree in TREES.values():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            if any(isinstance(b, ast.Name) and b.id == "Protocol" for b in cls.bases):
                continue
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "handle" and len(fn.args.args) == 2 \
                        and fn.args.args[1].arg in ("command", "cmd"):
                    out.add(cls.name)
    return out


def test_every_sink_is_in_the_cards_path() -> None:
    path = section("The path of one card")
    found = sinks()
    assert {"DisplaySink", "DealerPort", "ShoeCommandSink"} <= found
    missing = sorted(s for s in found if f"`{s}`" not in path and f"{s}`" not in path and f" {s}" not in path)
    assert missing == [], f"sinks not in the card's path of docs/architecture.md: {missing}"


def test_the_figures_say_how_they_are_measured() -> None:
    figures = section("Figures")
    assert "scripts/code_figures.py" in figures and (ROOT / "scripts" / "code_figures.py").exists()
