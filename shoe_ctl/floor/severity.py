"""How much an alert needs the floor: one table from alert code to severity (``docs/floor.md``,
"Alerts by severity").

``critical`` -- the floor must come now (a STOP that calls the floor, a tilt, a foreign or
duplicate card, the shoe or the journal failing, a shoe fault that stops the deal, a table lost or
silent); ``warning`` -- a ruling or an event a supervisor decides or signs for (a misdeal, a dead
or killed hand, an exposed card, a wrong bring-in, a refused credential, a shoe fault that does not
stop the deal or has cleared); ``info`` -- routine: a procedure the rules prescribe and the dealer
carries out (the short-stub procedures RP-10-H-A/B/C and house 16.18-16.20, the community card's
order, an input refused as wrong at this moment, a misread the shoe retried at once). The floor queues ``critical``
and ``warning`` alerts for a signed-in supervisor's acknowledgement; ``info`` ones are shown on the
table's tile and never queued. A latched alert (the dealer is stopped until someone acknowledges)
is ``critical`` whatever its code.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["ALERT_SEVERITY", "CRITICAL", "FAMILY_SEVERITY", "INFO", "QUEUED", "SEVERITIES", "WARNING", "classify", "needs_floor",
           "severity"]

CRITICAL, WARNING, INFO = "critical", "warning", "info"

SEVERITIES = (CRITICAL, WARNING, INFO)
"""Alert severities, most urgent first."""

QUEUED = frozenset({CRITICAL, WARNING})
"""The severities queued for a floor supervisor's acknowledgement; ``info`` is shown only."""

_CRITICAL = (
    # the table cannot go on as it is: a person must come
    "machine-fault", "journal-write-failed", "software-mismatch", "users-file-refused",
    "duplicate-card", "card-not-in-stub", "dispense-gap", "card-beyond-stub", "card-not-expected",
    "sequence-gap", "shoe-sequence-reset", "shoe-disconnected",
    # a shoe fault that stops the deal until the shoe clears it (a warning to sign for once cleared)
    "shoe-jam", "shoe-cover-open", "shoe-reader-error",
    "card-count-over", "card-count-street", "card-placement", "RP-4",
    # the floor's own: a table gone without a clean stop, or silent
    "table-lost", "table-silent",
)
_WARNING = (
    # rulings a supervisor decides or signs for (dead or killed hands, exposed cards, misdeals)
    "misdeal", "RP-10-A", "RP-10-B", "RP-10-C", "RP-5-D", "RP-10-G",
    "house-16.1", "house-16.2", "house-16.6", "house-16.9", "house-16.10", "house-16.11", "house-16.13",
    "house-16.15", "house-16.16", "house-16.17", "house-16.21", "house-16.22", "house-16.23", "house-16.24",
    "house-16.25", "house-16.26",
    "card-count-mismatch", "card-in-doubt", "extra-card", "street-rederived", "street-placed",
    "unreadable-card",
    # the shoe and the host, when they do not stop the deal (a misread that left its card unknown,
    # two cards out together: both counted)
    "shoe-link-degraded", "shoe-restarted", "host-unclean-stop", "clock-unsynced", "clock-skew",
    "shoe-misread", "shoe-double-pull",
    "unknown-event",
    # a deck dealt in runs of one suit, or in an earlier deck's order: the floor decides on the deck
    "deck-order-runs-floor", "deck-order-ranks-floor", "deck-order-repeated-floor",
    # a card whose tag needs a retry too often: the floor has it replaced
    "card-retries-floor",
    # one tag read at two tables in one gaming day: surveillance looks into it
    "tag-two-tables-floor",
    # people: a credential or a role refused, a tilt's clearing, a look at the downcards
    "role-refused", "auth-locked", "tilt-refused", "tilt-cleared", "recall-hole-cards", "verify-refused",
    # the floor's entry for one table's alerts beyond its list (raised to the most severe it holds)
    "more-alerts",
)
_INFO = (
    # the short-stub procedures and their house equivalents, the community card's order
    "RP-10-H", "RP-10-H-A", "RP-10-H-B", "RP-10-H-C", "RP-10-H-D",
    "house-16.18", "house-16.19", "house-16.20",
    # betting notices the display already tells the table
    "RP-10-F", "house-16.8", "house-16.3", "house-16.5", "house-16.7", "house-16.12", "house-16.14",
    "house-16.27",
    # the dealer's own inputs: refused as wrong at this moment, undone, confirmed, absent reported
    "input-wrong-time", "input-invalid", "undo", "undo-refused", "street-confirmed", "absent-player",
    "floor-override", "sequence-gap-closed", "clock-agrees", "auth-refused",
    # a misread the shoe retried at once: the card kept the identity the shoe trusted (a tag that
    # retries too often is card-retries-floor)
    "shoe-misread-retry",
)


def _table() -> Mapping[str, str]:
    table: dict[str, str] = {}
    for level, codes in ((CRITICAL, _CRITICAL), (WARNING, _WARNING), (INFO, _INFO)):
        for code in codes:
            if code in table:
                raise AssertionError(f"alert code {code} has two severities")
            table[code] = level
    return MappingProxyType(table)


ALERT_SEVERITY: Mapping[str, str] = _table()
"""Alert code -> severity, for every code the table and the floor raise (tested against the
codes found in the source: ``tests/floor/test_floor_severity.py``)."""

FAMILY_SEVERITY: tuple[tuple[str, str], ...] = (
    ("shoe-", CRITICAL),  # shoe-<refusal> (forged, unpaired ...), a fault kind this table does not name
    ("timer-", WARNING),  # no progress in a state for a timer's time
)
"""Code prefix -> severity, for codes made from a value (a fault kind, a link refusal, a timer)."""


def severity(code: str, latched: bool) -> str | None:
    """The severity of alert ``code`` (:data:`ALERT_SEVERITY`, then :data:`FAMILY_SEVERITY`);
    ``critical`` when ``latched`` (the dealer is stopped until someone acknowledges). ``None`` for a
    code neither names."""
    if latched:
        return CRITICAL
    level = ALERT_SEVERITY.get(code)
    if level is not None:
        return level
    for prefix, level in FAMILY_SEVERITY:
        if code.startswith(prefix):
            return level
    return None


def classify(code: str | None, latched: bool, sent: object = None) -> str:
    """The floor's severity of an alert: :func:`severity` of its code; for a code the table knows
    and this floor does not (a table on newer software), the severity the table ``sent`` when it is
    one of :data:`SEVERITIES`, else ``warning`` (queued: a person sees it)."""
    level = severity(code or "", latched)
    if level is not None:
        return level
    return sent if isinstance(sent, str) and sent in SEVERITIES else WARNING


def needs_floor(level: str) -> bool:
    """Whether an alert of severity ``level`` is queued for a supervisor's acknowledgement."""
    return level in QUEUED
