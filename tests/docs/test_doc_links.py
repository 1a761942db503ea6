"""Every picture and every relative link in README.md and docs/ points at a file that exists
(the pages a technician, a shoe maker and a supervisor read are whole)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _targets(page: Path) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    in_code = False
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        out += [(n, m.group(1)) for m in LINK.finditer(line)]
    return out


def test_every_relative_link_and_picture_resolves() -> None:
    missing = []
    for page in PAGES:
        for n, target in _targets(page):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a web address or an anchor in the same page
            path = target.split("#", 1)[0]
            if path and not (page.parent / path).exists():
                missing.append(f"{page.relative_to(ROOT)}:{n}: {target}")
    assert not missing, "\n".join(missing)


def test_the_pages_have_pictures_to_check() -> None:
    pictures = [t for page in PAGES for _, t in _targets(page) if t.endswith((".png", ".svg"))]
    assert len(pictures) >= 10, pictures
