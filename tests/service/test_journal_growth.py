"""The journal does not grow without limit across restarts: an uncommitted write-ahead-log tail
left by a kill is reported, not copied aside; copies of real damage are bounded; the ``damaged``
table is pruned by retention (docs/journal.md, "Damage")."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

from test_journal import Clock, card, fill, snapshot

from shoe_ctl.service.journal import KEEP_ASIDE, Journal, scan_wal


def killed_mid_append(live: Path, dst: Path) -> None:
    """What a SIGKILL in the middle of an append leaves: frames of a transaction that never
    committed at the end of the write-ahead log. A second connection writes a transaction big
    enough to spill its pages into the log before its commit; the files are copied meanwhile."""
    other = sqlite3.connect(live, isolation_level=None)
    try:
        other.execute("PRAGMA cache_size = 2")
        other.execute("BEGIN IMMEDIATE")
        big = "x" * 3000
        for i in range(200):
            other.execute("INSERT INTO records (seq, time_us, kind, hand, shoe_seq, body, crc) "
                          "VALUES (?, 0, 'decision', NULL, NULL, ?, 0)", (10_000 + i, f'"{big}"'))
        shutil.copy(live, dst)
        shutil.copy(f"{live}-wal", f"{dst}-wal")
        other.execute("ROLLBACK")
    finally:
        other.close()


def test_uncommitted_tail_after_a_kill_is_reported_not_copied_aside(tmp_path: Path) -> None:
    live = tmp_path / "live.journal"
    j = Journal(live, table="t", profile="tda")
    fill(j, 3, 5)
    expected = snapshot(j)
    crashed = tmp_path / "crashed.journal"
    killed_mid_append(live, crashed)
    j.close()
    scan = scan_wal(Path(f"{crashed}-wal"))
    assert scan is not None and scan.frames > scan.committed_frames  # a real uncommitted tail
    assert scan.problems == () and scan.dropped == scan.frames - scan.committed_frames
    for _ in range(3):  # restarted again and again: nothing piles up beside the journal
        with Journal(crashed, table="t", profile="tda") as jj:
            assert snapshot(jj) == expected
            assert jj.report.ok and not jj.report.damage and not jj.report.kept_aside
            if jj.report.wal_dropped:
                assert any("uncommitted" in t for t in jj.report.tail)
                assert any("frame(s) of an interrupted append dropped" in ln for ln in jj.report.lines())
            jj.append(card(999))
            expected = snapshot(jj)
        # the next restart happens after another kill mid-append
        shutil.copy(crashed, tmp_path / "again.journal")
        killed_mid_append(tmp_path / "again.journal", crashed)
    assert sorted(p.name for p in tmp_path.iterdir() if ".damaged-" in p.name) == []


def test_first_open_after_the_kill_counts_the_dropped_frames(tmp_path: Path) -> None:
    live = tmp_path / "live.journal"
    j = Journal(live, table="t", profile="tda")
    fill(j, 1, 4)
    crashed = tmp_path / "crashed.journal"
    killed_mid_append(live, crashed)
    j.close()
    dropped = scan_wal(Path(f"{crashed}-wal")).dropped  # type: ignore[union-attr]
    with Journal(crashed, table="t", profile="tda") as jj:
        assert dropped > 0 and jj.report.wal_dropped == dropped
        assert f"{dropped} frame(s)" in "\n".join(jj.report.lines())


def _damage_one_record(path: Path, seq: int) -> None:
    with Journal(path, table="t", profile="tda", retention_days=0) as j:
        target = next(r for r in j.records() if r.shoe_seq == seq)
    data = bytearray(path.read_bytes())
    at = data.find(target.body.encode())
    assert at > 0
    data[at + target.body.index("rfid")] ^= 0x04  # "rfid" -> "vfid": the record's checksum fails
    path.write_bytes(bytes(data))


def test_copies_of_real_damage_are_bounded_and_pruned_by_retention(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda", clock=clock, retention_days=30) as j:
        fill(j, 8, 3)
    made: list[list[Path]] = []
    for k in range(KEEP_ASIDE + 3):  # one real damage per restart, a day apart
        clock.t += 86400
        _damage_one_record(path, 1 + 3 * k)
        with Journal(path, table="t", profile="tda", clock=clock, retention_days=30, verify="full") as j:
            assert j.report.damage and j.report.kept_aside  # real damage is still copied aside
            made.append([Path(p) for p in j.report.kept_aside])
            assert all(p.exists() for p in j.report.kept_aside)
    left = sorted(p for p in tmp_path.iterdir() if ".damaged-" in p.name)
    assert left == sorted(p for ps in made[-KEEP_ASIDE:] for p in ps)  # the newest few sets, no older
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM damaged").fetchone()[0] == KEEP_ASIDE + 3

    clock.t += 40 * 86400  # older than the retention: the copies and the damaged rows go
    with Journal(path, table="t", profile="tda", clock=clock, retention_days=30) as j:
        assert j.report.ok
        assert sorted(j.report.removed_aside) == left
    assert not [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM damaged").fetchone()[0] == 0


def test_copies_are_bounded_also_without_retention(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda", retention_days=0) as j:
        fill(j, 6, 3)
    for k in range(KEEP_ASIDE + 2):
        _damage_one_record(path, 1 + 3 * k)
        with Journal(path, table="t", profile="tda", retention_days=0, verify="full") as j:
            assert j.report.kept_aside
        time.sleep(0.001)
    sets = {p.name.removesuffix("-wal") for p in tmp_path.iterdir() if ".damaged-" in p.name}
    assert len(sets) == KEEP_ASIDE
