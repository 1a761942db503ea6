"""The composition root: one start order, the reverse stop order, the journal's hand marks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rule_profiles import PROFILES

from hil.urlhandler import protocol_vshoe
from shoe_ctl.config import LedConfig, TableConfig
from shoe_ctl.events import DealerAction, DealerInput, Instruction
from shoe_ctl.table import Table, TableError


class Probe:
    """A sink (and, with ``start``, a dealer) writing what happens to it in a shared log."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def handle(self, command: Any) -> None:
        if isinstance(command, Instruction) and f"{self.name} saw" not in self.log:
            self.log.append(f"{self.name} saw")

    def start(self) -> None:
        self.log.append(f"{self.name} start")

    def close(self) -> None:
        self.log.append(f"{self.name} close")


def test_a_table_starts_in_one_order_and_stops_in_the_reverse_one() -> None:
    log: list[str] = []
    devices: list[Any] = []

    def dealer(device: Any, post: Any) -> Probe:
        devices.append(device)
        return Probe("dealer", log)

    cfg = TableConfig(leds=LedConfig(backend="mock"))
    table = Table.from_config(cfg, profiles=PROFILES, shoe_url="sim", display=None,
                              sinks=[Probe("extra", log)], dealer=dealer, wait_connected=10.0)
    key = protocol_vshoe._key(table.url)
    with table:
        assert table.device is devices[0] and protocol_vshoe._shoes[key] is table.device
        assert table.link.info is not None  # the shoe's hello came before the controller started
        sinks = [type(s).__name__ for s in table.controller.sinks]
        assert sinks == ["ShoeLedSink", "MockLedSink", "Probe", "ShoeCommandSink", "Probe"]
        assert table.io.sinks[1].signals()  # the first instruction reached the LEDs
    # the controller delivered the first instruction before the dealer's thread started; the dealer
    # is closed first, then the controller closes its sinks
    assert log[:3] == ["extra saw", "dealer saw", "dealer start"]
    assert log[3] == "dealer close" and "extra close" in log[4:]
    assert key not in protocol_vshoe._shoes  # the simulated shoe is released
    table.close()  # idempotent
    assert log.count("extra close") == 1


def test_a_journal_path_gets_the_hand_marks_and_a_foreign_file_is_a_table_error(tmp_path: Path) -> None:
    table = Table.from_config(TableConfig(), profiles=PROFILES, shoe_url="sim", journal=str(tmp_path / "t.journal"))
    try:
        assert table.journal.current_hand is None
        table.controller.step(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
        assert table.journal.current_hand is not None  # the hook marked the hand's start
    finally:
        table.close()
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a journal\n")
    with pytest.raises(TableError, match="notes.txt") as refused:
        Table.from_config(TableConfig(), profiles=PROFILES, shoe_url="sim", journal=str(foreign))
    assert str(refused.value).count(str(foreign)) == 1  # the journal's own error names it; said once


def test_an_sqlite_error_at_the_journals_open_is_a_table_error_naming_it(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """(was: a traceback, the error being neither a JournalError nor an OSError.)"""
    import sqlite3

    from shoe_ctl import table as table_module

    def disk_error(*_args: object, **_kw: object) -> object:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(table_module, "Journal", disk_error)
    with pytest.raises(TableError) as refused:
        Table.from_config(TableConfig(), profiles=PROFILES, shoe_url="sim", journal=str(tmp_path / "t.journal"))
    assert str(refused.value) == f"journal {tmp_path / 't.journal'}: disk I/O error"


def test_the_simulated_shoe_is_paired_by_the_table_and_a_bench_link_says_auth_off() -> None:
    """docs/security.md, "The shoe link": `shoe-ctl run` with no options still deals (its own
    virtual shoe is paired at start); `[shoe] auth = "off"` is an unauthenticated link the state
    shows."""
    import time

    from shoe_ctl.config import ShoeConfig

    for auth, version in (("hmac", 2), ("off", 1)):
        cfg = TableConfig(leds=LedConfig(backend="mock"), shoe=ShoeConfig(auth=auth))
        with Table.from_config(cfg, profiles=PROFILES, shoe_url="sim", display=None, wait_connected=10.0) as table:
            assert table.link.auth == auth and table.link.info.protocol == version
            assert (table.device.secret is not None) is (auth == "hmac")
            end = time.monotonic() + 5
            while table.machine.link.auth != auth and time.monotonic() < end:
                time.sleep(0.01)
            assert table.machine.public_state()["shoe"]["auth"] == auth


def test_a_real_shoe_without_serial_or_secret_is_a_table_error(tmp_path: Path) -> None:
    from shoe_ctl.config import ShoeConfig

    for shoe, words in ((ShoeConfig(url="socket://127.0.0.1:9"), "[shoe] serial is not set"),
                        (ShoeConfig(url="socket://127.0.0.1:9", serial="SH-1", secrets=str(tmp_path)), "not paired")):
        table = Table.from_config(TableConfig(shoe=shoe, leds=LedConfig(backend="mock")), profiles=PROFILES,
                                  display=None)
        with pytest.raises(TableError, match=words.replace("[", r"\[").replace("]", r"\]")):
            table.start()
