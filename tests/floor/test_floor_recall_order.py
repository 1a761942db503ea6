"""The floor's recall is never a commit behind: the table's kept recall hears each journal commit
before the floor publisher does, since the publisher's step (in the network loop's thread) may ask
the recall for the last hands as soon as it hears of a commit (docs/floor.md, "recall")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from floor_help import closed_port
from rule_profiles import PROFILES

from shoe_ctl.config import LedConfig, TableConfig
from shoe_ctl.floor.config import FloorConfig
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.recall import Recall
from shoe_ctl.service.journal import Journal
from shoe_ctl.table import Table


def test_the_recall_hears_a_commit_before_the_floor_publisher(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    heard: list[str] = []
    real = Journal.add_commit_listener

    def listen(journal: Journal, fn: Callable[[Sequence[Any]], None]) -> bool:
        heard.append(type(getattr(fn, "__self__", None)).__name__)
        return real(journal, fn)

    monkeypatch.setattr(Journal, "add_commit_listener", listen)
    # a broker nobody listens on: the publisher retries in the background, its listener is set at start
    cfg = FloorConfig(enabled=True, broker=f"mqtt://127.0.0.1:{closed_port()}", room="room-1")
    table = Table.from_config(TableConfig(table="t1", leds=LedConfig(backend="mock")), profiles=PROFILES,
                              shoe_url="sim", journal=str(tmp_path / "t1.journal"), display=None, floor=cfg)
    with table:
        assert Recall.__name__ in heard and FloorPublisher.__name__ in heard, heard
        assert heard.index(Recall.__name__) < heard.index(FloorPublisher.__name__), heard
