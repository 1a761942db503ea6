"""The journal: every event of the table appended durably to SQLite before the shoe's card is
acked; checked and repaired at open, bounded by retention, private to the service user.

Units, each with one role, behind the one facade :class:`Journal`:

- :mod:`~shoe_ctl.service.journal.records`: schema, a record and its CRC, the open report;
- :mod:`~shoe_ctl.service.journal.store`: appends, verified reads, hand marks;
- :mod:`~shoe_ctl.service.journal.repair`: the checks at open and the repairs (with
  :mod:`~shoe_ctl.service.journal.wal`, the write-ahead log's frames, and
  :mod:`~shoe_ctl.service.journal.aside`, the copies of damaged files);
- :mod:`~shoe_ctl.service.journal.retention`: pruning old hands;
- :mod:`~shoe_ctl.service.journal.files`: file safety (mode 0600, foreign or unwritable paths);
- :mod:`~shoe_ctl.service.journal.identity`: which table and profile a file belongs to.

The behaviour is described once, in ``docs/journal.md``.
"""

from shoe_ctl.service.journal.aside import KEEP_ASIDE
from shoe_ctl.service.journal.facade import SYNC_LEVELS, Journal
from shoe_ctl.service.journal.files import refuse_foreign
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
    "record_crc",
    "refuse_foreign",
    "scan_wal",
]
