"""The write-ahead log's structure: walk the frames of a ``-wal`` file (SQLite file format,
section "WAL file format") and tell a torn or uncommitted tail (what a stop in the middle of an
append leaves: normal) from damage a committed transaction depends on.

Reads the file only; what the journal does with the answer is in ``docs/journal.md`` ("Damage").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class WalScan:
    """The structure of a ``-wal`` file (SQLite file format, section "WAL file format").

    ``committed_end``: offset just after the last valid commit frame (what SQLite will use);
    ``size``: the file size; ``problems``: damage, in words — a frame SQLite ignores although a
    committed transaction depends on it (a commit frame, or frames followed by a commit), or a
    damaged log header; ``tail``: what a stop in the middle of an append leaves, in words — frames
    of a transaction that never committed, a partial last frame, a torn header of a log with no
    frame — normal after a kill or a power cut (nothing acked is in it); ``dropped``: how many
    frames of that tail SQLite ignores (a partial frame counts as one).
    """

    size: int
    page_size: int
    frames: int
    committed_frames: int
    committed_end: int
    problems: tuple[str, ...]
    commits: int = 0
    tail: tuple[str, ...] = ()
    dropped: int = 0


def _wal_checksum(data: bytes, s0: int, s1: int, big: bool) -> tuple[int, int]:
    words = struct.unpack((">" if big else "<") + f"{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def scan_wal(path: Path) -> WalScan | None:
    """Walk the frames of the write-ahead log at ``path`` and find a torn or uncommitted tail.

    A frame belongs to the log when its salt matches the header's and its cumulative checksum
    holds; SQLite replays frames up to the last such *commit* frame and ignores the rest. Frames
    with the current salt after that point are an interrupted transaction (an append that never
    returned, so nothing acked); a partial frame at the end is a torn write: both are the
    ``tail``, not damage. A frame that fails (damaged header or checksum) is damage
    (``problems``) when it is a commit frame or a commit frame of this log follows it: then a
    transaction that committed is ignored. Frames with an older salt are left over from before
    a checkpoint reset and are normal.

    :returns: ``None`` when there is no log or it is empty; else a :class:`WalScan`.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if not data:
        return None
    if len(data) < 32:
        return WalScan(len(data), 0, 0, 0, 0, (), 0,
                       (f"WAL header torn: only {len(data)} bytes, no frame (a log being started when "
                        "the service stopped)",))
    magic, _version, page_size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if magic not in (0x377F0682, 0x377F0683):
        return WalScan(len(data), 0, 0, 0, 0, (f"WAL header has a bad magic number {magic:#x}",))
    big = bool(magic & 1)
    s0, s1 = _wal_checksum(data[:24], 0, 0, big)
    if (s0, s1) != (c1, c2):
        return WalScan(len(data), page_size, 0, 0, 0, ("WAL header checksum fails: the whole log is ignored",))
    frame_size = 24 + page_size
    off = 32
    frames = committed = commits = 0
    committed_end = 32
    problems: list[str] = []
    tail: list[str] = []
    dropped = 0


    def later_frames(start: int) -> tuple[int, int]:
        """Frames and commit frames of this log generation after ``start`` (which SQLite drops)."""
        n = c = 0
        for at in range(start + frame_size, len(data) - frame_size + 1, frame_size):
            _p, com, a, b = struct.unpack(">4I", data[at : at + 16])
            if (a, b) == (salt1, salt2):
                n += 1
                c += bool(com)
        return n, c

    def bad_frame(what: str, is_commit: bool) -> None:
        """A frame SQLite stops at: damage when a committed transaction depends on it, else the
        torn tail of an append that never returned."""
        nonlocal dropped
        n, c = later_frames(off)
        if c or is_commit:
            problems.append(
                f"WAL frame at offset {off} {what}"
                + ("; it is a commit frame" if is_commit else "")
                + (f"; {n} later frame(s) with {c} commit(s) are ignored by SQLite (kept in the copy set aside)"
                   if n else "")
            )
        else:
            dropped += 1 + n
            tail.append(f"WAL frame at offset {off} {what} and no commit follows it: {1 + n} frame(s) of an "
                        "append that never returned are dropped (nothing acked is lost)")

    while off + frame_size <= len(data):
        header = data[off : off + 24]
        _pgno, commit, fs1, fs2, fc1, fc2 = struct.unpack(">6I", header)
        if (fs1, fs2) != (salt1, salt2):
            if later_frames(off)[0]:  # frames of this generation follow: this header was damaged
                bad_frame("has a damaged header", bool(commit))
            break  # otherwise left over from an earlier log generation: normal
        s0, s1 = _wal_checksum(header[:8], s0, s1, big)
        s0, s1 = _wal_checksum(data[off + 24 : off + frame_size], s0, s1, big)
        if (s0, s1) != (fc1, fc2):
            bad_frame("fails its checksum (a torn or damaged write)", bool(commit))
            break
        frames += 1
        off += frame_size
        if commit:
            committed = frames
            committed_end = off
            commits += 1
    else:
        if off < len(data):
            dropped += 1
            tail.append(f"WAL ends in a partial frame: {len(data) - off} bytes at offset {off} (torn write of an "
                        "append that never returned)")
    if frames > committed:
        dropped += frames - committed
        tail.append(
            f"WAL has {frames - committed} frame(s) of an uncommitted transaction after offset "
            f"{committed_end}: an append that never returned (nothing acked is lost)"
        )
    return WalScan(len(data), page_size, frames, committed, committed_end, tuple(problems), commits,
                   tuple(tail), dropped)

