"""``python bench/pokerkit_replay.py FILE...``: pokerkit replaying PHH files as a whole process,
the other side of ``python -m bench``'s ``replay_process`` figure: each file's
``pokerkit.HandHistory.loads`` and every state of the hand, nothing printed. Only pokerkit and
the standard library are imported (the script is run by path, not as part of ``bench``)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pokerkit


def main(paths: list[str]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in paths:
            for _ in pokerkit.HandHistory.loads(Path(path).read_text()):
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
