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
    row = conn.execute("SELECT value FROM meta WHERE key = 'chain_anchor'").fetchone()
    if not row:
        return 0, ZERO
    seq, _, hexa = str(row[0]).partition(":")
    return int(seq), bytes.fromhex(hexa)


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
    chain (not covered), ``head`` (sequence, hex link)."""

    problems: list[str] = field(default_factory=list)
    checked: int = 0
    unchained: int = 0
    head: tuple[int, str] = (0, ZERO.hex())

    @property
    def ok(self) -> bool:
        """True when the chain holds over every chained record."""
        return not self.problems


def verify(conn: sqlite3.Connection) -> ChainReport:
    """Walk the chain from its anchor and check every link against its record.

    A record whose link does not match was altered (or moved: the sequence is in the link); a link
    without its record was deleted (or quarantined as damaged, said so); a missing run of links
    and records was deleted; a chained-era record without a link was inserted. After a problem
    the walk goes on from the stored link, so each edit is reported once.
    """
    rep = ChainReport()
    start_seq, prev = anchor(conn)
    first = chain_from(conn)
    damaged = {int(r[0]) for r in conn.execute("SELECT seq FROM damaged WHERE seq IS NOT NULL")}
    if first is not None:
        rep.unchained = int(conn.execute("SELECT count(*) FROM records WHERE seq > ? AND seq < ?",
                                         (start_seq, first)).fetchone()[0])
        expected = max(first, start_seq + 1)
    else:
        rep.unchained = int(conn.execute("SELECT count(*) FROM records WHERE seq > ?", (start_seq,)).fetchone()[0])
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
            if expected is not None and cseq > expected:
                rep.problems.append(f"records {expected}..{cseq - 1}: deleted with their links")
            if rseq is None:
                why = "quarantined as damaged" if cseq in damaged else "deleted (its link remains)"
                rep.problems.append(f"record {cseq}: {why}")
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
    rep.head = (last, prev.hex()) if last != start_seq else (start_seq, prev.hex())
    return rep
