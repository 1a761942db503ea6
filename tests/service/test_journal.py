"""The journal: durable appends, replay, damage found and reported, private file, retention."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_codec import anything

from shoe_ctl import events
from shoe_ctl.rules.cards import Card
from shoe_ctl.service import codec
from shoe_ctl.service.journal import Journal, JournalError, scan_wal


class Clock:
    def __init__(self, t: float = 1_790_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        self.t += 0.001
        return self.t


def card(seq: int) -> events.CardRead:
    return events.CardRead(seq=seq, card=Card(seq % 52), reader="rfid", dispense=seq)


def fill(j: Journal, hands: int, cards: int, first_seq: int = 1) -> int:
    seq = first_seq
    for _ in range(hands):
        j.begin_hand({"game": "stud", "seats": [1, 2, 3]})
        for _ in range(cards):
            j.append(card(seq))
            seq += 1
        j.append(events.DealerInput(events.DealerAction.HAND_COMPLETE))
        j.end_hand()
    return seq


def snapshot(j: Journal) -> list[tuple[int, str, str]]:
    return [(r.seq, r.kind, r.body) for r in j.records()]


def crash_copy(src: Path, dst: Path) -> None:
    """What a power cut leaves: the main file and its write-ahead log, as they are on disk now."""
    shutil.copy(src, dst)
    wal = Path(f"{src}-wal")
    if wal.exists():
        shutil.copy(wal, f"{dst}-wal")


def test_append_replay_and_shoe_seq(tmp_path: Path) -> None:
    with Journal(tmp_path / "t.journal", table="t1", profile="tda") as j:
        assert j.report.created and j.report.ok
        assert j.last_shoe_seq() is None
        hand = j.begin_hand({"game": "stud"})
        assert hand == 1 and j.current_hand == 1
        s1 = j.append(card(41))
        s2, s3 = j.append_many([events.Instruction(events.Signal.DEAL, "Seat 1 down", 1, "down", "3rd"),
                                events.Alert("duplicate-card", "As twice")], sync=False)
        j.append(events.LinkChanged(events.LinkStatus.DISCONNECTED))
        assert s1 < s2 < s3
        assert j.last_shoe_seq() == 41
        recs = list(j.records())
        assert [r.kind for r in recs] == ["hand-start", "CardRead", "Instruction", "Alert", "LinkChanged"]
        assert all(r.hand == 1 for r in recs)
        assert recs[1].item == card(41)
        assert [r.seq for r in j.records(since=s2)] == [s3, s3 + 1]
    # reopened: same records, the open hand is still open, numbering continues
    with Journal(tmp_path / "t.journal", table="t1", profile="tda") as j:
        assert j.current_hand == 1
        assert j.last_shoe_seq() == 41
        j.end_hand({"winner": "P2"})
        assert j.begin_hand() == 2
        assert [h.hand for h in j.hands(finished_only=True)] == [1]


_counter = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(anything, min_size=1, max_size=8))
def test_journal_round_trip_any_items(tmp_path: Path, items: list[codec.Encodable]) -> None:
    path = tmp_path / f"rt-{next(_counter)}.journal"
    with Journal(path, table="t", profile="house", synchronous="NORMAL") as j:
        j.append_many(items)
    with Journal(path, table="t", profile="house") as j:
        assert [r.item for r in j.records()] == items


def test_other_table_or_profile_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    with Journal(path, table="table-4", profile="tda") as j:
        fill(j, 1, 3)
    before = path.read_bytes()
    with pytest.raises(JournalError) as err:
        Journal(path, table="table-7", profile="tda")
    assert "'table-4'" in str(err.value) and "'table-7'" in str(err.value)
    with pytest.raises(JournalError) as err:
        Journal(path, table="table-4", profile="house")
    assert "'tda'" in str(err.value) and "'house'" in str(err.value)
    assert path.read_bytes() == before  # refused before anything was touched


def test_private_file_modes(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    old = os.umask(0o022)
    try:
        with Journal(path, table="t", profile="tda") as j:
            fill(j, 1, 2)
            for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
        os.chmod(path, 0o644)
        with Journal(path, table="t", profile="tda") as j:
            assert any("0644 tightened to 0600" in p for p in j.report.permissions)
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_bit_flip_in_a_record_body_is_reported_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        fill(j, 2, 10)
        target = next(r for r in j.records() if r.kind == "CardRead" and r.shoe_seq == 7)
        before = snapshot(j)
    data = bytearray(path.read_bytes())
    at = data.find(target.body.encode())
    assert at > 0 and data.find(target.body.encode(), at + 1) < 0
    data[at + target.body.index("rfid")] ^= 0x04  # "rfid" -> "vfid"
    path.write_bytes(bytes(data))
    with Journal(path, table="t", profile="tda") as j:
        assert [d.seq for d in j.report.damage] == [target.seq]
        assert "checksum" in j.report.damage[0].reason
        assert j.report.lost == 1
        assert snapshot(j) == [b for b in before if b[0] != target.seq]
        aside = j.report.kept_aside[0]
        assert aside.read_bytes() == bytes(data)  # the damaged file itself is kept
        assert stat.S_IMODE(aside.stat().st_mode) == 0o600
        j.append(card(999))  # still writable, sequence never reused
        assert max(r.seq for r in j.records()) > target.seq
    with sqlite3.connect(path) as db:
        (reason, raw), = db.execute("SELECT reason, raw FROM damaged").fetchall()
    assert "checksum" in reason and "vfid" in raw
    with Journal(path, table="t", profile="tda") as j:  # repaired: the next open is clean
        assert j.report.ok


def test_wal_cut_at_random_offsets_keeps_every_committed_record(tmp_path: Path) -> None:
    live = tmp_path / "live.journal"
    j = Journal(live, table="t", profile="tda")
    base = scan_wal(Path(f"{live}-wal"))
    base_commits = base.commits if base else 0
    fill(j, 4, 12)
    expected = snapshot(j)
    crash_copy(live, tmp_path / "crash.journal")
    j.close()
    wal_bytes = Path(f"{tmp_path / 'crash.journal'}-wal").read_bytes()
    rng = random.Random(5)
    cuts = sorted(rng.randrange(0, len(wal_bytes)) for _ in range(8)) + [len(wal_bytes)]
    for i, cut in enumerate(cuts):
        path = tmp_path / f"cut{i}.journal"
        shutil.copy(tmp_path / "crash.journal", path)
        Path(f"{path}-wal").write_bytes(wal_bytes[:cut])
        scan = scan_wal(Path(f"{path}-wal"))
        commits = scan.commits if scan else 0
        keep = max(0, commits - base_commits)
        with Journal(path, table="t", profile="tda") as jj:
            got = snapshot(jj)
            # records of every fully written transaction are kept, in order, unchanged
            assert got == expected[: len(got)]
            assert len(got) == (keep if commits >= base_commits else 0), cut
            # a cut log is what a stop mid-append leaves: reported as its tail, not damage,
            # and nothing is copied aside
            assert scan is None or not scan.problems, scan
            assert not jj.report.damage and not jj.report.kept_aside, (cut, jj.report.lines())
            torn = scan is not None and bool(scan.tail)
            assert bool(jj.report.tail) == torn and jj.report.wal_dropped == (scan.dropped if scan else 0)
            jj.append(card(5000))  # open still works for writing


def _leaf_layout(path: Path) -> tuple[int, list[tuple[int, str, int]], list[tuple[int, int]]]:
    """The journal file's page size, its ``records`` b-tree pages (pageno, pagetype, ncell) from
    SQLite's ``dbstat``, and for each records leaf page the byte range its cells occupy in the file
    (from the page header's cell-content-area offset to the page's end), after a full checkpoint so
    the main file holds every committed page."""
    db = sqlite3.connect(path)
    try:
        busy, _log, _done = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0
        size = int(db.execute("PRAGMA page_size").fetchone()[0])
        pages = db.execute("SELECT pageno, pagetype, ncell FROM dbstat WHERE name = 'records' ORDER BY pageno").fetchall()
    finally:
        db.close()
    wal = Path(f"{path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # everything committed is in the main file
    data = path.read_bytes()
    cells = []
    for pageno, kind, ncell in pages:
        if kind != "leaf":
            continue
        start = (pageno - 1) * size
        assert data[start] == 0x0D and int.from_bytes(data[start + 3:start + 5], "big") == ncell > 0
        content = int.from_bytes(data[start + 5:start + 7], "big") or 65536
        cells.append((start + content, start + size))
    return size, pages, cells


def test_main_file_cut_salvages_intact_pages(tmp_path: Path) -> None:
    live = tmp_path / "live.journal"
    with Journal(live, table="t", profile="tda") as j:
        fill(j, 6, 15)
        expected = {s: (k, b) for s, k, b in snapshot(j)}
    size, pages, cells = _leaf_layout(live)
    full = live.read_bytes()
    assert len(cells) >= 3 and cells[-1][1] <= len(full)
    # Every cut below removes bytes of committed records cells, chosen from the file's real layout
    # (record sizes vary with their checksums, so fixed offsets would sometimes cut free space or a
    # zero byte only):
    (first_cells, first_end), (last_cells, last_end) = cells[0], cells[-1]
    last_nonzero = max(i for i in range(last_cells, last_end) if full[i])
    rng = random.Random(11)
    cuts = [
        first_end - size + 100,  # inside the first leaf page's header: all its cells and every later page
        last_end - size,  # the whole last leaf page
        last_nonzero,  # from the last non-zero byte of the last leaf's cells: one record's tail at least
        rng.randrange(first_cells, last_end - size),  # somewhere before the last leaf page, which is lost
    ]
    for i, cut in enumerate(cuts):
        path = tmp_path / f"m{i}.journal"
        path.write_bytes(full[:cut])
        lost_leaf_cells = sum(n for p, t, n in pages if t == "leaf" and p * size > cut)
        interior_lost = any(t == "internal" and p * size > cut for p, t, n in pages)
        with Journal(path, table="t", profile="tda") as jj:
            got = snapshot(jj)
            for s, k, b in got:  # nothing altered
                assert expected[s] == (k, b)
            if not interior_lost:
                assert len(got) >= len(expected) - lost_leaf_cells, (cut, jj.report.lines())
            assert len(got) < len(expected), cut
            assert jj.report.damage, cut
            assert Path(jj.report.kept_aside[0]).read_bytes() == full[:cut]
            jj.append(card(7000))


def test_retention_prunes_old_finished_hands_only(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda", clock=clock, retention_days=30) as j:
        seq = fill(j, 3, 4)  # hands 1..3, finished
        clock.t += 20 * 86400
        seq = fill(j, 1, 4, seq)  # hand 4, finished, 20 days younger
        j.begin_hand({"game": "razz"})  # hand 5, unfinished
        j.append(card(seq))
        last = j.last_shoe_seq()
        clock.t += 15 * 86400  # hands 1..3 are now 35 days old, hand 4 is 15
        pruned = j.prune()
        assert pruned == 3 * (1 + 4 + 1 + 1)
        assert [h.hand for h in j.hands()] == [4, 5]
        assert j.last_shoe_seq() == last
        clock.t += 100 * 86400  # everything finished is old now; the open hand stays
        j.prune()
        assert [h.hand for h in j.hands()] == [5]
        assert j.last_shoe_seq() == last
        j.end_hand()
        assert j.begin_hand() == 6  # hand numbers are never reused
    with Journal(path, table="t", profile="tda", clock=clock, retention_days=30) as j:
        assert j.report.pruned == 0 or [h.hand for h in j.hands()] == [6]


def test_last_shoe_seq_survives_pruning_every_card(tmp_path: Path) -> None:
    clock = Clock()
    with Journal(tmp_path / "t.journal", table="t", profile="tda", clock=clock) as j:
        fill(j, 2, 3, first_seq=100)
        clock.t += 31 * 86400
        j.prune()
        assert not list(j.records(hand=1))
        assert j.last_shoe_seq() == 105


def test_readonly_open_for_export(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        fill(j, 2, 3)
        with Journal(path, table=None, profile=None, readonly=True) as r:  # while the service runs
            assert [h.hand for h in r.hands(finished_only=True)] == [1, 2]
            assert len(r.hand_records(2)) == 3 + 3
            with pytest.raises(JournalError, match="read-only"):
                r.append(card(1))
    with pytest.raises(FileNotFoundError):
        Journal(tmp_path / "none", table=None, profile=None, readonly=True)


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="synchronous"):
        Journal(tmp_path / "a", table="t", profile="p", synchronous="EXTRA")
    with Journal(tmp_path / "b", table="t", profile="p") as j:
        with pytest.raises(JournalError, match="no hand is open"):
            j.end_hand()
        with pytest.raises(JournalError, match="reserved"):
            j.append_record("CardRead", {})
        j.append_record("decision", {"street": "7th", "procedure": "C"})
        assert next(j.records()).data == {"procedure": "C", "street": "7th"}
    j.close()
    with pytest.raises(JournalError, match="closed"):
        j.append(card(1))


@pytest.fixture(scope="module")
def clean_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, dict[int, tuple[str, str]]]:
    path = tmp_path_factory.mktemp("flip") / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        fill(j, 4, 12)
        records = {s: (k, b) for s, k, b in snapshot(j)}
    return path.read_bytes(), records


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 7)), min_size=1, max_size=3))
@example(flips=[(67108863, 4)])  # an index page the open's tail check does not read; the start's reads do
@example(flips=[(4111, 0)])  # the meta key's index: read at open only for where the chain starts
def test_random_bit_flips_never_break_open_or_alter_records(
    tmp_path: Path, clean_journal: tuple[bytes, dict[int, tuple[str, str]]], flips: list[tuple[int, int]]
) -> None:
    """Flip bits anywhere in the file: open never fails, what it keeps is exactly what was written,
    and when something is missing the damage is reported and the damaged file kept aside."""
    data, records = clean_journal
    bad = bytearray(data)
    for pos, bit in flips:
        bad[pos % len(bad)] ^= 1 << bit
    path = tmp_path / f"f{next(_counter)}.journal"
    path.write_bytes(bytes(bad))
    try:
        j = Journal(path, table="t", profile="tda")
    except JournalError as exc:  # a flip in the identity itself: refused, and said so
        assert "table" in str(exc)
        return
    with j:
        got = snapshot(j)
        for s, k, b in got:
            assert records.get(s) == (k, b)
        if len(got) < len(records):
            assert j.report.damage and j.report.kept_aside
        if j.report.kept_aside:  # copied before any repair
            assert j.report.kept_aside[0].read_bytes() == bytes(bad)
        j.append(card(1))


def test_a_long_running_journal_prunes_at_hand_end(tmp_path: Path) -> None:
    clock = Clock()
    with Journal(tmp_path / "t.journal", table="t", profile="tda", clock=clock, retention_days=1) as j:
        fill(j, 2, 3)
        clock.t += 2 * 86400  # two days later, still running: the next hand's end prunes hands 1 and 2
        fill(j, 1, 3, first_seq=50)
        assert [h.hand for h in j.hands()] == [3]


def test_recent_verification_and_damage_found_on_read(tmp_path: Path) -> None:
    """verify="recent" checks at open what was written since the last open (and the replay window);
    an older record damaged later is found when read: skipped, reported, file kept aside."""
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        fill(j, 3, 6)
        target = next(r for r in j.records(hand=1) if r.kind == "CardRead")
        before = snapshot(j)
    with Journal(path, table="t", profile="tda"):
        pass  # everything so far is verified now
    data = bytearray(path.read_bytes())
    at = data.find(target.body.encode())
    data[at + target.body.index("rfid")] ^= 0x04
    path.write_bytes(bytes(data))
    full_copy = tmp_path / "full.journal"
    shutil.copy(path, full_copy)
    with Journal(path, table="t", profile="tda") as j:
        assert j.report.ok  # not looked at during open
        got = snapshot(j)
        assert got == [b for b in before if b[0] != target.seq]
        assert [d.seq for d in j.report.damage] == [target.seq]
        assert j.report.kept_aside[0].read_bytes() == bytes(data)
    with Journal(path, table="t", profile="tda", verify="full") as j:
        assert j.report.ok  # moved to the damaged table on read
    with Journal(full_copy, table="t", profile="tda", verify="full") as j:
        assert [d.seq for d in j.report.damage] == [target.seq]  # found at open
    with pytest.raises(JournalError, match="verify"):
        Journal(tmp_path / "x", table="t", profile="tda", verify="some")


@pytest.fixture(scope="module")
def crashed_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes, dict[int, tuple[str, str]]]:
    """A journal as a power cut leaves it: main file plus an unchecked-pointed write-ahead log."""
    folder = tmp_path_factory.mktemp("walflip")
    live = folder / "live.journal"
    j = Journal(live, table="t", profile="tda", synchronous="NORMAL")
    fill(j, 3, 8)
    records = {s: (k, b) for s, k, b in snapshot(j)}
    main, wal = live.read_bytes(), Path(f"{live}-wal").read_bytes()
    j.close()
    return main, wal, records


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 10**9), st.integers(0, 7)), min_size=1, max_size=3))
def test_random_bit_flips_in_file_and_log_after_a_crash(
    tmp_path: Path,
    crashed_journal: tuple[bytes, bytes, dict[int, tuple[str, str]]],
    flips: list[tuple[bool, int, int]],
) -> None:
    main, wal, records = (bytearray(crashed_journal[0]), bytearray(crashed_journal[1]), crashed_journal[2])
    for in_wal, pos, bit in flips:
        buf = wal if in_wal else main
        buf[pos % len(buf)] ^= 1 << bit
    path = tmp_path / f"w{next(_counter)}.journal"
    path.write_bytes(bytes(main))
    Path(f"{path}-wal").write_bytes(bytes(wal))
    try:
        j = Journal(path, table="t", profile="tda")
    except JournalError as exc:
        assert "table" in str(exc)
        return
    with j:
        got = snapshot(j)
        for s, k, b in got:
            assert records.get(s) == (k, b)
        if len(got) < len(records):  # lost from the live file: reported, and the damaged files kept
            assert j.report.damage and j.report.kept_aside, j.report.lines()
        j.append(card(1))
