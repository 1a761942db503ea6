"""docs/rules.md stays true: every clause id listed on its own, named by a test, the worked-case
table recomputed from the code."""

from __future__ import annotations

import ast
import re

from paths import ROOT
from stubhelp import CASES, case_row, table

DOC = ROOT / "docs" / "rules.md"

RP10 = [f"RP-10-{c}" for c in "ABCDEFGH"] + [f"RP-10-H-{c}" for c in "ABCD"]
HOUSE = [f"16.{n}" for n in range(1, 28)]
SWITCHES = ("name", "tie", "tournament", "short_stub", "skip_burn", "premature", "exposed_downcard",
            "exposed_seventh", "absent_player", "open_pair_bet")


def _pattern(clause: str) -> re.Pattern[str]:
    """The clause as its own token, in names (``RP_10_H_B``, ``16_22``) or text (``RP-10-H-B``)."""
    if clause.startswith("RP"):
        body = re.escape(clause.lower()).replace("\\-", "[-_]")
        return re.compile(rf"(?<![a-z0-9]){body}(?![-_][a-d](?![a-z0-9]))(?![a-z0-9])", re.I)
    major, minor = clause.split(".")
    return re.compile(rf"(?<![\d.]){major}[._]{minor}(?![\d])")


def _test_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                texts.append(node.name)
                texts.append(ast.get_docstring(node) or "")
    return texts


def test_every_clause_has_its_own_row_in_docs_rules():
    doc = DOC.read_text()
    for clause in RP10:
        assert f"\n| {clause} |" in doc, clause
    for clause in HOUSE:
        assert f"\n| house {clause} |" in doc, clause


def test_every_clause_is_named_by_a_test():
    """Each clause id of RP10 and HOUSE appears in some test name or docstring (this one names none)."""
    texts = _test_texts()
    missing = [c for c in RP10 + HOUSE if not any(_pattern(c).search(t) for t in texts)]
    assert not missing, missing


def test_clause_pattern_is_exact():
    assert _pattern("16.2").search("test_house_16_2_dead") and not _pattern("16.2").search("test_16_20")
    assert not _pattern("RP-10-H").search("test_RP_10_H_C_x") and _pattern("RP-10-H").search("RP-10-H check")
    assert _pattern("RP-10-H-D").search("test_tda_rp_10_h_d_first")


def test_no_clause_ranges_in_docs_rules():
    doc = DOC.read_text()
    assert not re.search(r"16\.\d+\s*(?:–|—|-|to)\s*(?:16\.)?\d+", doc)
    assert not re.search(r"RP-10-[A-H]\s*(?:–|—|to)\s*(?:RP-10-)?[A-H]\b", doc)


def test_every_profile_switch_documented():
    doc = DOC.read_text()
    for key in SWITCHES:
        assert f"| `{key}` |" in doc, key


def test_worked_case_table_is_current():
    doc = DOC.read_text()
    assert table() in doc, "docs/rules.md worked cases are stale: regenerate with tests/stubhelp.table()"


def test_worked_cases_of_the_requirements():
    """RP-10-H-C / house 16.20, RP-10-H-B / house 16.19, RP-10-H-A / house 16.18, RP-10-H-A."""
    assert case_row("8")[1:6] == ["8", "1", "10", "C", "7th: 16.20"]
    assert case_row("8; fold 3rd:1")[1:6] == ["7", "4", "9", "B", "7th: 16.19"]
    row = case_row("8; fold 3rd:2")
    assert row[1:6] == ["6", "7", "8", "A", "7th: 16.18"]
    assert row[6] == ("burn, deal 5, scramble (stub + burn 4th + burn 5th + burn 6th + burn 7th), cut, burn, deal 1")
    assert case_row("7")[1:5] == ["7", "7", "9", "A"]
    assert CASES[:4] == ("8", "8; fold 3rd:1", "8; fold 3rd:2", "7")


def test_showing_sections_present():
    doc = DOC.read_text()
    assert "## Showing hands: bring-in, first to act, ties" in doc
    assert "## Real hands: differences" in doc
