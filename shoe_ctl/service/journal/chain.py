"""The journal's hash chain: each record's link is SHA-256 of the link before it and the record's
fields, kept in table ``chain`` beside the record, written in the same transaction. Editing,
deleting, inserting or reordering records breaks the chain where it happened; rewriting every link
after an edit changes the chain head, which the service shows elsewhere (``doctor``, the display's
status, exports) so a rewritten chain differs from the head seen before. ``docs/journal.md``
("The hash chain").
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from shoe_ctl.service.journal.records import record_text

ZERO = bytes(32)
"""The link before the first record of a journal."""


def link(prev: bytes, seq: int, time_us: int, kind: str, hand: int | None, shoe_seq: int | None, body: str) -> bytes:
    """SHA-256 over the previous link (32 bytes) and the record's fields joined by U+001F (the
    text the record's CRC covers, :func:`~shoe_ctl.service.journal.records.record_text`)."""
    return link_text(prev, record_text(seq, time_us, kind, hand, shoe_seq, body))


def link_text(prev: bytes, text: bytes) -> bytes:
    """:func:`link` of a record whose ``record_text`` is already made (the writer's path)."""
    return hashlib.sha256(prev + text).digest()


def anchor(conn: sqlite3.Connection) -> tuple[int, bytes]:
    """(sequence, link) the chain continues from after pruning (meta ``chain_anchor``); (0, zeros)
    when nothing was pruned."""
    seq, value, _time_us = anchor_entry(conn)
    return seq, value


def anchor_entry(conn: sqlite3.Connection) -> tuple[int, bytes, int | None]:
    """(sequence, link, time) of the pruning anchor: meta ``chain_anchor`` ``SEQ:LINK:TIME_US``,
    the time the last pruned record was written (µs since the epoch), which the retention must
    cover; ``None`` for the time of an anchor written without one. (0, zeros, None) when nothing
    was pruned."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'chain_anchor'").fetchone()
    if not row:
        return 0, ZERO, None
    seq, _, rest = str(row[0]).partition(":")
    hexa, _, time_us = rest.partition(":")
    return int(seq), bytes.fromhex(hexa), int(time_us) if time_us.isdigit() else None


def anchor_value(seq: int, value: bytes, time_us: int) -> str:
    """The meta ``chain_anchor`` text for :func:`anchor_entry`."""
    return f"{seq}:{value.hex()}:{time_us}"


def head(conn: sqlite3.Connection) -> tuple[int, bytes]:
    """The chain head: (sequence, link) of the last chained record, else the anchor."""
    row = conn.execute("SELECT seq, hash FROM chain ORDER BY seq DESC LIMIT 1").fetchone()
    if row:
        return int(row[0]), bytes(row[1])
    return anchor(conn)


def chain_from(conn: sqlite3.Connection) -> int | None:
    """The first journal sequence that must be chained (meta ``chain_from``): records before it
    were written before the chain existed, or salvaged from a damaged file."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'chain_from'").fetchone()
    return int(row[0]) if row else None


@dataclass
class ChainReport:
    """What :func:`verify` found: ``problems`` (each names the record and what is wrong: altered,
    deleted, inserted), ``checked`` records whose link held, ``unchained`` records older than the
    chain (not covered), ``head`` (sequence, hex link), ``compared`` links checked against a copy
    kept outside the file (the floor's)."""

    problems: list[str] = field(default_factory=list)
    checked: int = 0
    unchained: int = 0
    head: tuple[int, str] = (0, ZERO.hex())
    compared: int = 0

    @property
    def ok(self) -> bool:
        """True when the chain holds over every chained record."""
        return not self.problems


def verify(conn: sqlite3.Connection, *, chained: bool = False, retention_days: float | None = None,
           now_us: int | None = None, known: dict[int, str] | None = None,
           tag: Callable[[str], str | None] | None = None) -> ChainReport:
    """Walk the chain from its anchor and check every link against its record.

    A record whose link does not match was altered (or moved: the sequence is in the link); a link
    without its record was deleted (or quarantined as damaged, said so); a missing run of links
    and records was deleted (the next link is then not checked: its predecessor is gone); a record
    without a link at or after the chain's first link (whatever meta ``chain_from`` says) was
    inserted. ``chained``: the file was written by a version that chains (it has the chain's
    display key), so a file without a single link had its chain stripped. A pruning anchor must
    name the pruned record's time, older than ``retention_days`` (when given) before ``now_us``.
    ``known``: the head's display tags kept outside the file (``{seq: tag}``, the floor's copy),
    each compared with ``tag`` of the file's link at that sequence. After a problem the walk goes on from the stored link, so each edit
    is reported once.
    """
    rep = ChainReport()
    start_seq, prev, anchor_us = anchor_entry(conn)
    meta_first = chain_from(conn)
    first_link = conn.execute("SELECT min(seq) FROM chain WHERE seq > ?", (start_seq,)).fetchone()[0]
    last_record = conn.execute("SELECT max(seq) FROM records").fetchone()[0]
    if start_seq:
        if anchor_us is None:
            rep.problems.append(f"chain anchor {start_seq}: names no time, so no retention can have pruned up "
                                "to it (written by hand?)")
        elif retention_days is not None:
            now = time.time_ns() // 1000 if now_us is None else now_us
            if retention_days <= 0 or anchor_us > now - retention_days * 86_400_000_000:
                rep.problems.append(f"chain anchor {start_seq}: records up to it are gone, but a retention of "
                                    f"{retention_days:g} days would keep a record of that time: deleted, not pruned")
    # the chain covers every record from its first link on, and from chain_from when that comes
    # earlier; a chain_from past the first link (or past the end) is not believed
    candidates = [s for s in (meta_first, first_link) if s is not None]
    first = min(candidates) if candidates else None
    if first_link is None and chained and last_record is not None and last_record > start_seq and (
            meta_first is None or meta_first <= last_record):
        rep.problems.append(f"records {start_seq + 1}..{last_record}: no link at all (the chain was stripped)")
        first = None
        rep.unchained = 0
    damaged = {int(r[0]) for r in conn.execute("SELECT seq FROM damaged WHERE seq IS NOT NULL")}
    if first is not None:
        rep.unchained = int(conn.execute("SELECT count(*) FROM records WHERE seq > ? AND seq < ?",
                                         (start_seq, first)).fetchone()[0])
        expected: int | None = max(first, start_seq + 1)
    elif not rep.problems:
        rep.unchained = int(conn.execute("SELECT count(*) FROM records WHERE seq > ?", (start_seq,)).fetchone()[0])
        expected = None
    else:
        expected = None
    last = start_seq
    while True:
        rows = conn.execute(
            "SELECT c.seq, c.hash, r.seq, r.time_us, r.kind, r.hand, r.shoe_seq, r.body FROM chain c "
            "LEFT JOIN records r ON r.seq = c.seq WHERE c.seq > ? ORDER BY c.seq LIMIT 5000", (last,)).fetchall()
        if not rows:
            break
        for cseq, stored, rseq, time_us, kind, hand, shoe_seq, body in rows:
            stored = bytes(stored)
            gap = expected is not None and cseq > expected
            if gap:
                rep.problems.append(f"records {expected}..{cseq - 1}: deleted with their links")
            if rseq is None:
                why = "quarantined as damaged" if cseq in damaged else "deleted (its link remains)"
                rep.problems.append(f"record {cseq}: {why}")
            elif gap:
                pass  # its predecessor's link is gone: this one cannot be checked, and is not blamed
            elif link(prev, rseq, time_us, kind, hand, shoe_seq, body) != stored:
                rep.problems.append(f"record {cseq}: altered or moved (its link does not match)")
            else:
                rep.checked += 1
            prev = stored
            expected = cseq + 1
            last = cseq
    if first is not None:
        for (seq,) in conn.execute("SELECT seq FROM records WHERE seq >= ? AND seq NOT IN (SELECT seq FROM chain) "
                                   "ORDER BY seq LIMIT 100", (max(first, start_seq + 1),)):
            rep.problems.append(f"record {seq}: has no link (inserted)")
    if known and tag is not None:
        _compare(conn, known, tag, start_seq, rep)
    rep.head = (last, prev.hex()) if last != start_seq else (start_seq, prev.hex())
    return rep


def _compare(conn: sqlite3.Connection, known: dict[int, str], tag: Callable[[str], str | None], start_seq: int,
             rep: ChainReport) -> None:
    """Each tag kept outside the file against the tag of the file's link at its sequence: a
    pruned one is not compared; one the file lacks or holds otherwise is a problem (the file was
    cut or rewritten since)."""
    top = conn.execute("SELECT max(seq) FROM chain").fetchone()[0] or start_seq
    for seq in sorted(known):
        if seq < start_seq:
            continue
        if seq == start_seq:
            stored: bytes | None = anchor(conn)[1]
        else:
            row = conn.execute("SELECT hash FROM chain WHERE seq = ?", (seq,)).fetchone()
            stored = bytes(row[0]) if row else None
        rep.compared += 1
        if stored is None:
            where = "past the file's last link" if seq > top else "missing from the file"
            rep.problems.append(f"record {seq}: the floor noted the head there, {where} (cut or rewritten)")
        elif tag(stored.hex()) != known[seq].lower():
            rep.problems.append(f"record {seq}: the head the floor noted there differs (the chain was rewritten)")
