"""Which shoe-ctl code a virtual environment runs, compared with a source folder.

Run with the environment's interpreter: ``.venv/bin/python scripts/installed_code.py SOURCE``.
Prints one line, ``shoe-ctl VERSION, code FINGERPRINT, imported from PATH``, where the fingerprint
is a SHA-256 (first 12 hex digits) over the relative path and bytes of every packaged file (the
``*.py`` files, ``py.typed`` and the display's static files) of the packages ``shoe_ctl``,
``drivers`` and ``hil``. Exit status 0 when the installed files are exactly those of SOURCE,
1 (naming the first differences) when not: the environment runs other code than the folder holds.
Used by ``scripts/setup.sh`` after every install (docs/install-pi.md, "Updating").
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from pathlib import Path

PACKAGES = ("shoe_ctl", "drivers", "hil")


def packaged(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every packaged file of :data:`PACKAGES` under ``root``."""
    files: dict[str, bytes] = {}
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*")):
            if not f.is_file() or "__pycache__" in f.parts:
                continue
            rel = f.relative_to(root).as_posix()
            if f.suffix == ".py" or f.name == "py.typed" or "/static/" in rel:
                files[rel] = f.read_bytes()
    return files


def fingerprint(files: dict[str, bytes]) -> str:
    """The first 12 hex digits of SHA-256 over the sorted paths and contents."""
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    return h.hexdigest()[:12]


def main(argv: list[str]) -> int:
    source = Path(argv[1] if len(argv) > 1 else ".").resolve()
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != source]  # never the folder itself
    mod = importlib.import_module("shoe_ctl")
    installed_root = Path(mod.__file__ or "").resolve().parent.parent
    want, have = packaged(source), packaged(installed_root)
    print(f"shoe-ctl {getattr(mod, '__version__', '?')}, code {fingerprint(have)}, imported from "
          f"{installed_root / 'shoe_ctl'}")
    if want == have:
        return 0
    differ = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
    print(f"the environment does not run the code in {source} (code {fingerprint(want)}): "
          f"{len(differ)} file(s) differ, e.g. {', '.join(differ[:5])}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
