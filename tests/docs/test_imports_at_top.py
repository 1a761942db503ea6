"""In-project imports sit at the top of their module, where the reader and ``lint-imports`` see
them (docs/architecture.md, *Imports*). The few made inside a function are listed here, each with
its reason: a heavy optional library behind it (aiohttp, paho, cryptography), the simulation tools
that only a simulated shoe needs, an import guarded by ``ImportError``, or the shoe's firmware
(the board's RAM). A new one fails until it moves to the top or is listed with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("shoe_ctl", "drivers", "hil")

CRYPTOGRAPHY = "shoe_ctl.release brings cryptography, loaded only on this path"
SIMULATION = "the simulation tools (hil), loaded only for a simulated shoe"
FIRMWARE = "the shoe's firmware: the board's RAM holds only what it uses"

ALLOWED: dict[tuple[str, str], str] = {
    ("shoe_ctl/cli/bridge.py", "drivers.reader_port"): "guarded by ImportError: a missing reader module is said",
    ("shoe_ctl/cli/doctor.py", "drivers.shoe"): "guarded by ImportError: without the link the check is skipped",
    ("shoe_ctl/cli/doctor.py", "drivers.buttons"): "inside the GPIO check's try: a GPIO library that fails to "
                                                   "load is the check's finding",
    ("shoe_ctl/cli/doctor.py", "drivers.leds"): "inside the GPIO check's try, as drivers.buttons",
    ("shoe_ctl/cli/doctor.py", "shoe_ctl.release"): CRYPTOGRAPHY,
    ("shoe_ctl/cli/doctor.py", "shoe_ctl.floor.publisher"): "paho, loaded only with [floor] enabled",
    ("shoe_ctl/cli/export.py", "shoe_ctl.release"): CRYPTOGRAPHY,
    ("shoe_ctl/cli/hil.py", "hil.floor"): "paho and the broker rig, loaded only for shoe-ctl hil floor",
    ("shoe_ctl/cli/run.py", "hil.dealer"): SIMULATION,
    ("shoe_ctl/cli/run.py", "hil.replay"): SIMULATION,
    ("shoe_ctl/dealer_io.py", "shoe_ctl.display.server"): "aiohttp, loaded only when a display is served",
    ("shoe_ctl/floor/publisher.py", "shoe_ctl.release"): CRYPTOGRAPHY,
    ("shoe_ctl/table.py", "shoe_ctl.release"): CRYPTOGRAPHY,
    ("shoe_ctl/table.py", "shoe_ctl.floor.publisher"): "paho, loaded only with [floor] enabled",
    ("drivers/shoe_fw/rp2040.py", ".readers.pn532"): FIRMWARE,
    ("drivers/shoe_fw/rp2040.py", ".deckmap"): FIRMWARE,
    ("hil/replay.py", "shoe_ctl.config"): "the whole table, which the direct replay (shoe-ctl replay --direct) "
                                          "leaves out",
    ("hil/replay.py", "shoe_ctl.service"): "the whole table, as shoe_ctl.config",
    ("hil/replay.py", "shoe_ctl.table"): "the whole table, as shoe_ctl.config",
}
"""(file, imported module) -> why it is imported inside a function."""


def in_function_imports() -> list[tuple[str, str, int]]:
    """(file, module, line) of every in-project import made inside a function."""
    found = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for fn in ast.walk(tree):
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, ast.ImportFrom):
                        modules = ["." * node.level + (node.module or "")]
                    elif isinstance(node, ast.Import):
                        modules = [a.name for a in node.names]
                    else:
                        continue
                    found += [(rel, m, node.lineno) for m in modules
                              if m.startswith(".") or m.split(".")[0] in PACKAGES]
    return found


def test_in_project_imports_inside_functions_are_the_listed_ones() -> None:
    unlisted = sorted(f"{f}:{line}: {m}" for f, m, line in in_function_imports() if (f, m) not in ALLOWED)
    assert unlisted == [], ("in-project imports inside functions: move them to the top of the module, or "
                            f"list them in ALLOWED with the reason: {unlisted}")


def test_every_listed_import_is_still_inside_a_function() -> None:
    found = {(f, m) for f, m, _ in in_function_imports()}
    stale = sorted(f"{f}: {m}" for f, m in ALLOWED if (f, m) not in found)
    assert stale == [], f"listed but no longer imported inside a function (drop them from ALLOWED): {stale}"
