"""A journal dealt whole and then read as it stood at each step: the example hands played into a
real journal (``hil.replay.run_full``), and a ``records(since)`` reader that sees only the records
up to a sequence the test moves (a recall called while the journal grows)."""

from __future__ import annotations

from typing import Any

from paths import EXAMPLES
from rule_profiles import PROFILES

from hil.replay import run_full, script_from_record
from shoe_ctl.phh import read_phh
from shoe_ctl.service.journal import Journal


class JournalSoFar:
    """``self(since)``: the records of ``every`` after ``since`` (all when ``None``) up to ``upto``."""

    def __init__(self, every: list[Any]) -> None:
        self.every = every
        self.upto = 0

    def __call__(self, since: int | None) -> list[Any]:
        return [r for r in self.every if (since is None or r.seq > since) and r.seq <= self.upto]


def deal_examples(journal: Journal, copies: int) -> tuple[Any, JournalSoFar]:
    """Play the example hands ``copies`` times into ``journal``: the recorder and a reader of it."""
    files = sorted(EXAMPLES.glob("*.phh")) * copies
    recorder, _dealer = run_full([script_from_record(read_phh(f), seed=i) for i, f in enumerate(files)],
                                 PROFILES, journal=journal)
    return recorder, JournalSoFar(list(journal.records(None)))
