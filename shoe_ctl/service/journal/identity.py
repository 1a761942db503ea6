"""Whose journal a file is: the format, table and rule profile in its ``meta`` table, with their
own CRC. Another table's or profile's file is refused before it is touched; an identity that
fails its CRC is damage (reported, then written again), not another table.

``docs/journal.md`` ("Another table's journal").
"""

from __future__ import annotations

import binascii
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from shoe_ctl.service.journal.records import FORMAT, Damage, JournalError, OpenReport


def identity_crc(fmt: str | None, table: str | None, profile: str | None) -> str:
    """CRC-32 of (format, table, profile) joined by U+001F, as text (meta ``identity_crc``)."""
    return str(binascii.crc32("\x1f".join((fmt or "", table or "", profile or "")).encode("utf-8")))


class Identity:
    """The table and profile this service is, checked against and written into a journal file.

    :param path: the journal file (named in errors).
    :param table: the table's name (``None``: any, for a read-only open).
    :param profile: the rule profile's name (``None``: any).
    :param report: where a damaged identity is reported (once).
    """

    def __init__(self, path: Path, table: str | None, profile: str | None, report: OpenReport) -> None:
        self.path = path
        self.table = table
        self.profile = profile
        self.report = report
        self.damaged = False

    def check(self, meta: Mapping[str, str]) -> None:
        """Refuse another table's or profile's journal. The identity carries its own CRC: an
        identity that fails it is damage (reported, then rewritten), not another table.

        :raises JournalError: another table or profile (naming both), or a newer format.
        """
        fmt = meta.get("format")
        stored = meta.get("identity_crc")
        if stored is not None and stored != identity_crc(fmt, meta.get("table"), meta.get("profile")):
            if not self.damaged:
                self.damaged = True
                self.report.damage.append(Damage("meta", "the journal's identity (format, table, profile) "
                                                         "fails its checksum; it is written again"))
            return
        if fmt is not None and fmt.isdigit() and int(fmt) > FORMAT:
            raise JournalError(f"{self.path}: journal format {fmt} is newer than this program reads ({FORMAT})",
                               path=self.path)
        theirs = (meta.get("table"), meta.get("profile"))
        mine = (self.table, self.profile)
        for name, t, m in (("table", theirs[0], mine[0]), ("profile", theirs[1], mine[1])):
            if t is not None and m is not None and t != m:
                raise JournalError(
                    f"{self.path} is the journal of table {theirs[0]!r} with profile {theirs[1]!r}; "
                    f"this service is table {mine[0]!r} with profile {mine[1]!r} ({name} differs). "
                    "Use that table's journal file or start a new one.",
                    path=self.path,
                )

    def write(self, conn: sqlite3.Connection, now_us: int) -> None:
        """Write the identity into ``meta`` (replacing a damaged one; keeping ``created_us``)."""
        assert self.table is not None and self.profile is not None
        verb = "REPLACE" if self.damaged else "IGNORE"
        conn.execute("BEGIN IMMEDIATE")
        for k, v in (("format", str(FORMAT)), ("table", self.table), ("profile", self.profile)):
            conn.execute(f"INSERT OR {verb} INTO meta (key, value) VALUES (?, ?)", (k, v))
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('created_us', ?)", (str(now_us),))
        # the key of the chain head's display tag (docs/journal.md, "The hash chain"): kept in the file
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('chain_key', ?)", (os.urandom(32).hex(),))
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('identity_crc', ?)",
            (identity_crc(str(FORMAT), self.table, self.profile),),
        )
        conn.execute("COMMIT")
