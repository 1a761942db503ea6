"""The dealing machine stays readable (docs/architecture.md, *Figures*): ``Dealing`` under 400
code lines and 20 attributes, and no module of ``shoe_ctl/machine/`` keeps a pointer back to the
machine (handlers take the hand's progress and return what should happen). Measured on the
source with the same count as the drivers' (``tests/drivers/test_class_size.py``)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

MACHINE = Path(__file__).resolve().parents[2] / "shoe_ctl" / "machine"
_SPEC = importlib.util.spec_from_file_location("class_size", Path(__file__).resolve().parents[1] / "drivers"
                                               / "test_class_size.py")
assert _SPEC is not None and _SPEC.loader is not None
class_size = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(class_size)


def test_dealing_is_under_400_code_lines_and_20_attributes() -> None:
    (size,) = [(code, attrs) for name, code, attrs in class_size.class_sizes(MACHINE / "dealing.py", MACHINE.parent)
               if name.endswith(":Dealing")]
    assert size[0] < 400 and size[1] < 20, size


def test_no_module_keeps_a_pointer_back_to_the_machine() -> None:
    for path in sorted(MACHINE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                assert node.attr not in ("m", "machine") or path.name == "dealing.py", f"{path.name}: self.{node.attr}"
            if isinstance(node, ast.ImportFrom) and node.module == "shoe_ctl.machine.dealing" and path.name != "__init__.py":
                raise AssertionError(f"{path.name} imports the machine")
