"""The journal: every event of the table appended durably to SQLite before the shoe's card is
acked; checked and repaired at open, bounded by retention, private to the service user. One
facade, :class:`Journal`, over its units (records, store, repair, wal, aside, retention, files,
identity); docs/journal.md describes them and the behaviour.
"""

from shoe_ctl.service.journal.aside import KEEP_ASIDE
from shoe_ctl.service.journal.facade import SYNC_LEVELS, Journal
from shoe_ctl.service.journal.files import (
    journal_problem,
    owner_lock,
    refuse_foreign,
    refuse_owned,
    writer_pid,
)
from shoe_ctl.service.journal.records import (
    EXPECTED_SCHEMA,
    FORMAT,
    SHOE_SEQ_TYPES,
    Damage,
    HandSummary,
    JournalError,
    OpenReport,
    Record,
    record_crc,
)
from shoe_ctl.service.journal.retention import PRUNE_EVERY_S
from shoe_ctl.service.journal.store import refuse_other_table
from shoe_ctl.service.journal.wal import WalScan, scan_wal

__all__ = [
    "EXPECTED_SCHEMA",
    "FORMAT",
    "KEEP_ASIDE",
    "PRUNE_EVERY_S",
    "SHOE_SEQ_TYPES",
    "SYNC_LEVELS",
    "Damage",
    "HandSummary",
    "Journal",
    "JournalError",
    "OpenReport",
    "Record",
    "WalScan",
    "journal_problem",
    "owner_lock",
    "record_crc",
    "refuse_foreign",
    "refuse_other_table",
    "refuse_owned",
    "writer_pid",
    "scan_wal",
]
