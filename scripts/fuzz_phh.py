"""Mutation campaign for the PHH reader (figures in ``docs/security.md``).

``python scripts/fuzz_phh.py [-n 12000] [--seed 1]``: writes N mutated copies of the real hands
(``$SHOE_CTL_SHARED/data/stud/phh`` or ``../shared/data/stud/phh``, and ``examples/``) to a
temporary folder, reads each with ``read_phh`` and analyses it with ``analyze_file`` (the TDA
profile), and counts: records read, ``PhhError`` with a place (``line N`` / a key), ``PhhError``
without one, and any other exception (a traceback in ``shoe-ctl analyze``). Not part of the test
suite (``tests/records/test_phh_fuzz.py`` runs a few hundred of the same mutations).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from phh_mutate import mutate, real_records  # noqa: E402

from shoe_ctl.analyze import analyze_file  # noqa: E402
from shoe_ctl.config import load_profile  # noqa: E402
from shoe_ctl.phh import PhhError, read_phh  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=12000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=5, help="print this many tracebacks")
    args = ap.parse_args()
    shared = Path(os.environ.get("SHOE_CTL_SHARED") or ROOT.parent / "shared")
    sources = real_records(shared / "data" / "stud" / "phh", ROOT / "examples")
    if not sources:
        print("no PHH files found", file=sys.stderr)
        return 2
    texts = [p.read_text() for p in sources]
    rnd = random.Random(args.seed)
    profile = load_profile("tda")
    counts: collections.Counter[str] = collections.Counter()
    kinds: collections.Counter[str] = collections.Counter()
    shown = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.n):
            path = Path(tmp) / f"m{k:05d}.phh"
            path.write_bytes(mutate(rnd.choice(texts), rnd))
            try:
                read_phh(path)
                counts["record"] += 1
            except PhhError as exc:
                ok = str(path) in str(exc) and bool(exc.where)
                counts["error with file and place" if ok else "error without a place"] += 1
                if not ok and shown < args.show:
                    print(f"no place: {exc}"[:300])
            except BaseException as exc:  # noqa: BLE001 - that is what is counted
                counts["traceback"] += 1
                kinds[f"read_phh {type(exc).__name__}"] += 1
                if shown < args.show:
                    shown += 1
                    print("".join(traceback.format_exception(exc))[-600:])
            try:
                report = analyze_file(path, profile)
                if report.error is None:
                    counts["analysed"] += 1
            except BaseException as exc:  # noqa: BLE001
                counts["analyze traceback"] += 1
                kinds[f"analyze_file {type(exc).__name__}"] += 1
            path.unlink()
    dt = time.perf_counter() - t0
    print(f"{args.n} mutated files from {len(sources)} records, seed {args.seed}, {dt:.1f} s")
    for key, v in sorted(counts.items()):
        print(f"  {key}: {v} ({v / args.n * 100:.1f} %)")
    for key, v in kinds.most_common():
        print(f"    {key}: {v}")
    return 1 if counts["traceback"] or counts["analyze traceback"] else 0


if __name__ == "__main__":
    sys.exit(main())
