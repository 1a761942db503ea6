"""``python scripts/bench_phh_parse.py``: thread CPU time per hand of ``read_phh`` and of the
bench's parse step (``read_phh`` + ``script_from_record``) over the real hands, median of 7 passes
(figures in ``docs/performance.md``, "PHH parsing"). Run it from two checkouts one after the
other (``PYTHONPATH=<checkout>``) to compare them under the same conditions."""

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from bench.__main__ import _scripts, phh_files  # noqa: E402
from shoe_ctl.phh import read_phh  # noqa: E402


def main() -> None:
    files = phh_files()
    _scripts(files)  # warm-up
    read, parse = [], []
    for _ in range(7):
        t0 = time.thread_time()
        for f in files:
            read_phh(f)
        read.append((time.thread_time() - t0) / len(files) * 1e3)
        t0 = time.thread_time()
        _scripts(files)
        parse.append((time.thread_time() - t0) / len(files) * 1e3)
    print(json.dumps({"hands": len(files), "read_phh_ms_per_hand": round(statistics.median(read), 4),
                      "parse_ms_per_hand": round(statistics.median(parse), 4)}))


if __name__ == "__main__":
    main()
