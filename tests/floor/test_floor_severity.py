"""Every alert code the product can raise has a severity on the floor, in the one table of
``shoe_ctl.floor.severity``: the codes are found in the source (the literal code of each call that
raises an alert, each ``(code, message)`` pair handed to one, each clause id of the rules, each
``*_CODE`` constant, and each ``"code": ...`` of an alert the floor makes), so a new code without a
severity fails here. Routine procedures are shown, not queued; what a supervisor decides is."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from shoe_ctl.events import FaultKind
from shoe_ctl.floor.severity import (
    ALERT_SEVERITY,
    FAMILY_SEVERITY,
    SEVERITIES,
    classify,
    needs_floor,
    severity,
)
from shoe_ctl.floor.topics import severity as published_severity

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
PAIR_CODE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")
CLAUSE = re.compile(r"^(RP-\d+(-[A-Z])*|house-16\.\d+)$")
RAISERS = ("alert", "tilt", "report", "Alert", "_refuse")
"""Calls whose first or second argument is an alert code (``self.alert``, ``raise_alert``,
``service_alert``, ``Controller.tilt``, ``report``/``_report``, ``Alert(...)``, ``_refuse(ev, code, ...)``)."""
REFUSERS = ("refuse", "refused")
"""The shoe link's refusals: each becomes the alert ``shoe-<code>``."""


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _sources() -> list[Path]:
    return sorted((ROOT / "shoe_ctl").rglob("*.py")) + sorted((ROOT / "drivers").glob("*.py"))


def found_codes() -> tuple[dict[str, str], dict[str, str]]:
    """``(codes, prefixes)``: each alert code found in the source, and each code prefix of an
    f-string code (``f"shoe-{kind}"``), with the file it was found in."""
    codes: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for path in _sources():
        where = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module constants named *_CODE (the tilt's code)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                    and any(isinstance(t, ast.Name) and t.id.endswith("_CODE") for t in node.targets):
                codes.setdefault(str(node.value.value), where)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _name(node.func)
                if name.endswith(RAISERS):
                    for arg in node.args[:2]:
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and CODE.match(arg.value):
                            codes.setdefault(arg.value, where)
                        elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                            head = str(arg.values[0].value)
                            if head.endswith("-") and CODE.match(head[:-1]):
                                prefixes.setdefault(head, where)
                elif name in REFUSERS and path.parent.name == "drivers" and node.args:
                    arg = node.args[0]
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and CODE.match(arg.value):
                        codes.setdefault(f"shoe-{arg.value}", where)
            elif isinstance(node, ast.Tuple) and len(node.elts) >= 2:  # (code, message) handed on
                first, second = node.elts[:2]
                if isinstance(first, ast.Constant) and isinstance(first.value, str) and PAIR_CODE.match(first.value) \
                        and (isinstance(second, ast.JoinedStr)
                             or isinstance(second, ast.Constant) and isinstance(second.value, str) and " " in second.value):
                    codes.setdefault(first.value, where)
            elif isinstance(node, ast.Dict) and path.parent.name == "floor":  # an alert the floor makes: {"code": "table-lost", ...}
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "code" and isinstance(value, ast.Constant) \
                            and isinstance(value.value, str) and CODE.match(value.value):
                        codes.setdefault(value.value, where)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CLAUSE.match(node.value):
                codes.setdefault(node.value, where)  # a ruling's or a procedure's code is its clause id
    for kind in FaultKind:
        codes.setdefault(f"shoe-{kind.value}", "shoe_ctl/events.py FaultKind")
    return codes, prefixes


CODES, PREFIXES = found_codes()


def test_the_scan_finds_the_codes_of_every_source() -> None:
    """The scan sees each way a code is made (else the test below would pass on nothing)."""
    for code in ("RP-10-H-B", "house-16.20", "misdeal", "duplicate-card", "software-mismatch", "host-unclean-stop",
                 "card-not-in-stub", "auth-refused", "clock-skew", "table-lost", "table-silent", "shoe-forged",
                 "shoe-jam", "role-refused", "tilt-refused"):
        assert code in CODES, code
    assert {"shoe-", "timer-"} <= set(PREFIXES)
    assert len(CODES) > 80


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_alert_code_has_a_severity(code: str) -> None:
    assert severity(code, False) in SEVERITIES, f"{code} (raised in {CODES[code]}) has no severity in " \
        "shoe_ctl/floor/severity.py: add it to the table"


def test_every_code_prefix_has_a_family() -> None:
    families = {prefix for prefix, _ in FAMILY_SEVERITY}
    assert set(PREFIXES) <= families, f"codes made from a value with no family severity: {PREFIXES}"


def test_the_table_names_only_codes_the_product_raises() -> None:
    """No stale or misspelt entry: each code of the table is raised somewhere."""
    stale = sorted(set(ALERT_SEVERITY) - set(CODES))
    assert stale == [], f"severities for codes nothing raises: {stale}"


def test_routine_procedures_are_shown_not_queued() -> None:
    for code in ("RP-10-H-A", "RP-10-H-B", "RP-10-H-C", "RP-10-H-D", "house-16.18", "house-16.19", "house-16.20",
                 "input-wrong-time", "undo-refused"):
        assert severity(code, False) == "info" and not needs_floor("info"), code
        assert published_severity(code, False) == "info"


def test_what_a_supervisor_decides_is_queued() -> None:
    for code in ("misdeal", "house-16.2", "house-16.25", "RP-10-C", "role-refused"):
        assert severity(code, False) == "warning" and needs_floor("warning"), code
    for code in ("software-mismatch", "duplicate-card", "card-not-in-stub", "shoe-jam", "shoe-forged",
                 "table-lost", "machine-fault"):
        assert severity(code, False) == "critical", code


def test_a_latched_alert_is_critical_whatever_its_code() -> None:
    """A STOP that calls the floor: the routine procedure's code, latched, is no longer routine."""
    assert severity("RP-10-H-C", True) == "critical"
    assert severity("a-code-nobody-raises", True) == "critical"


def test_a_code_this_floor_does_not_know() -> None:
    """A table on newer software: the floor takes the severity it sent, else queues it (warning)."""
    assert severity("a-code-nobody-raises", False) is None
    assert classify("a-code-nobody-raises", False, "info") == "info"
    assert classify("a-code-nobody-raises", False, ["critical"]) == "warning"
    assert classify(None, False, None) == "warning"
    assert classify("RP-10-H-C", False, "critical") == "info"  # the floor's table, not the sender's word
