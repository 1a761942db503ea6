"""``shoe-ctl deck enrol|list|retire``: the table's enrolled decks (which tag is which card).

- ``enrol DECK --reader SPEC [--order FILE] [--uids FILE] [--by USER]``: pass a new deck's cards
  over the reader in factory order (or ``--order``); each card read at least twice; the map
  sealed under the table key (the shoe's pairing secret) into the live-deck folder and the
  enrolment journaled. ``--uids FILE`` takes the 52 UIDs from a file instead of the reader
  (a list shipped with tagged cards).
- ``list``: the live decks, and every file there that cannot be used, by name.
- ``retire DECK``: move a deck's map to ``retired/`` (its tags become foreign), journaled.
- ``check DECK --reader SPEC [--uids FILE]``: a live deck passed over the reader; every card
  missing, twice, of another deck or of none named (:mod:`shoe_ctl.service.deck_check`), journaled.

Run with the bridge stopped (it owns the reader) and the service stopped (it owns the journal; else refused
at once: docs/journal.md, "One writing process"). Procedure: docs/build-a-shoe.md, "Enrolment".
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from drivers.reader_port import ReaderSpecError, open_reader, parse_spec
from drivers.shoe_fw.deckmap import (
    DECK_SIZE,
    UID_MAX,
    UID_MIN,
    DeckBook,
    card_name,
    load_retired,
    valid_deck_id,
)
from drivers.shoe_fw.reader import ReaderError
from shoe_ctl.cli.args import Subparsers, default_config_path, finite, help_only, printable
from shoe_ctl.config import TableConfig, load_table_config
from shoe_ctl.rules.profiles import ProfileError
from shoe_ctl.service import decks
from shoe_ctl.service.deck_check import check_deck, read_passes
from shoe_ctl.service.decks import DeckFolder, EnrolError, is_random_id, utc_now
from shoe_ctl.service.journal import Journal, JournalError, journal_problem, refuse_other_table, refuse_owned
from shoe_ctl.service.shoe_secrets import SecretError, SecretStore

ENROL_TIMEOUT_S = 0.5
"""Seconds the reader module waits for each answer during an enrolment (nothing else waits on it)."""


def register(subparsers: Subparsers) -> None:
    """Add ``deck`` with ``enrol``, ``list``, ``retire``, ``check`` and ``scan``."""
    deck = subparsers.add_parser("deck", help="enrol, list, retire and check the table's tagged decks",
                                 description="Enrol a tagged deck through the shoe's reader (which tag UID is "
                                 "which card), list the live decks, retire one, check one before its first hand, "
                                 "scan the reader on the bench.")
    sub = deck.add_subparsers(dest="deck_command", metavar="DECK_COMMAND")
    deck.set_defaults(func=help_only(deck))

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", default=str(default_config_path()),
                       help="table configuration (default: $SHOE_CTL_TABLE, /etc/shoe-ctl/table.toml or "
                       "config/table.toml)")
        p.add_argument("--serial", default=None, help="the shoe's serial instead of [shoe] serial (its pairing "
                       "secret is the table key)")
        p.add_argument("--decks", default=None, metavar="DIR",
                       help="the live-deck folder (default: decks/ beside [shoe] secrets, /var/lib/shoe-ctl/decks)")

    def journaled(p: argparse.ArgumentParser, who: str) -> None:
        p.add_argument("--by", default=None, metavar="USER", help=f"who {who} (default: the login name)")
        p.add_argument("--journal", default=None, metavar="PATH", help="the journal instead of [journal] path")

    enrol = sub.add_parser("enrol", help="map a new deck's tags to its cards through the reader",
                           description="Pass the deck's 52 cards over the reader, one at a time, in factory "
                           "order (A-K spades, A-K diamonds, K-A clubs, K-A hearts) or --order; the map is "
                           "sealed, stored as a live deck and journaled.")
    enrol.add_argument("deck", metavar="DECK", help="the deck's id: 1..32 of A-Z a-z 0-9 . _ -")
    common(enrol)
    enrol.add_argument("--reader", default=None, metavar="SPEC",
                       help="the reader: pn532:PORT[?reset=GPIO] or pepper:PORT (e.g. pn532:/dev/serial0?reset=25)")
    enrol.add_argument("--uids", default=None, metavar="FILE",
                       help="take the 52 UIDs from FILE (hex, one per line, in the deck order) instead of a reader")
    enrol.add_argument("--order", default=None, metavar="FILE",
                       help="the deck's order: 52 card names (As Td 2c ...), if not the factory order")
    journaled(enrol, "enrols")
    enrol.add_argument("--idle", type=finite, default=30.0, metavar="SECONDS",
                       help="seconds without a card before the enrolment gives up (default 30)")
    enrol.set_defaults(func=run_enrol)

    lst = sub.add_parser("list", help="the live decks", description="List the live decks and every deck file "
                         "that cannot be used.")
    common(lst)
    lst.set_defaults(func=run_list)

    retire = sub.add_parser("retire", help="retire a live deck (its tags become foreign)",
                            description="Move a live deck's map to retired/; its cards are foreign from then on.")
    retire.add_argument("deck", metavar="DECK")
    common(retire)
    journaled(retire, "retires it")
    retire.set_defaults(func=run_retire)

    check = sub.add_parser("check", help="pass a live deck over the reader: every card missing, twice or foreign",
                           description="Before a deck's first hand: pass all its cards over the reader, in any "
                           "order; every card missing, read twice, of another deck or of no deck is named by "
                           "card and tag, and the check journaled. Exit 0 only when the deck is whole.")
    check.add_argument("deck", metavar="DECK", help="the live deck")
    common(check)
    check.add_argument("--reader", default=None, metavar="SPEC", help="the reader (as for enrol)")
    check.add_argument("--uids", default=None, metavar="FILE",
                       help="the tags read, from FILE (hex, one per line) instead of a reader")
    journaled(check, "checks")
    check.add_argument("--idle", type=finite, default=5.0, metavar="SECONDS",
                       help="seconds the field stays empty after the last card before the check ends (default 5)")
    check.set_defaults(func=run_check)

    scan = sub.add_parser("scan", help="print the tags the reader sees, scan by scan (the bench measurements)",
                          description="Start the reader and scan it N times, printing each scan's tags (none, one "
                          "or two) or its error, then how many scans saw each tag: a shoe's read range, one card "
                          "isolated at the mouth, a stack on the antenna (docs/build-a-shoe.md, 'What to measure "
                          "on the bench'). No configuration, key or journal is used.")
    scan.add_argument("--reader", required=True, metavar="SPEC", help="the reader (as for enrol)")
    scan.add_argument("--scans", type=int, default=100, metavar="N", help="scans to make, 1..100000 (default 100)")
    scan.add_argument("--interval", type=finite, default=0.05, metavar="SECONDS",
                      help="pause between scans, 0..60 (default 0.05)")
    scan.set_defaults(func=run_scan)


def _say(text: str) -> None:
    print(f"shoe-ctl deck: {printable(text)}", file=sys.stderr, flush=True)


class _Setup:
    """The configuration, the table key and the live-deck folder of one ``deck`` command."""

    def __init__(self, cfg: TableConfig, folder: DeckFolder, journal: Path | None) -> None:
        self.cfg = cfg
        self.folder = folder
        self.journal = journal


def _setup(args: argparse.Namespace, *, need_journal: bool) -> _Setup | None:
    try:
        cfg = load_table_config(Path(args.config))
    except ProfileError as exc:
        _say(str(exc))
        return None
    serial = args.serial or cfg.shoe.serial
    if not serial:
        _say(f"{args.config}: no serial number: set [shoe] serial there (or give --serial, or --config another "
             "table configuration); the shoe's pairing secret seals the deck maps")
        return None
    try:
        secret = SecretStore(cfg.shoe.secrets).load(serial)
    except SecretError as exc:
        _say(str(exc))
        return None
    if secret is None:
        _say(f"shoe {serial} is not paired here (no secret in {cfg.shoe.secrets}, [shoe] secrets of {args.config}): "
             "run shoe-ctl pair first; its secret is the key the deck maps are sealed under")
        return None
    folder = Path(args.decks) if args.decks else Path(cfg.shoe.secrets).parent / "decks"
    journal = None
    if need_journal:
        text = getattr(args, "journal", None) or cfg.journal.path
        if not text:
            _say(f"{args.config}: no journal: set [journal] path there (or give --journal); every enrolment and "
                 "retirement is journaled")
            return None
        journal = Path(text)
        try:  # refused before any card is read: the running service writes it, or it is another table's
            refuse_owned(journal)
            refuse_other_table(journal, cfg.table, cfg.rules)
        except (OSError, JournalError) as exc:
            _say(f"{journal_problem(journal, exc)}; nothing was done")
            return None
    return _Setup(cfg, DeckFolder(folder, secret), journal)


def _journal(setup: _Setup, kind: str, body: dict[str, Any]) -> str | None:
    """Append one record; None when kept, else why not."""
    import sqlite3

    assert setup.journal is not None
    try:
        with Journal(setup.journal, table=setup.cfg.table, profile=setup.cfg.rules,
                     retention_days=setup.cfg.journal.retention_days) as journal:
            journal.append_record(kind, body)
    except (OSError, JournalError, sqlite3.Error) as exc:
        return journal_problem(setup.journal, exc)
    return None


@contextlib.contextmanager
def _started_reader(spec: Any) -> Iterator[Any]:
    """The reader module of ``spec`` opened and started (closed afterwards).

    :raises EnrolError: the port cannot be opened or the reader does not answer (names it).
    """
    try:
        opened = open_reader(spec, timeout=ENROL_TIMEOUT_S)
    except OSError as exc:
        raise decks.EnrolError(str(exc)) from None
    with opened:
        decks.start_reader(opened.reader, str(spec))
        yield opened.reader


def _read_uids(path: Path) -> list[bytes]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EnrolError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > 1 << 16:
        raise EnrolError(f"{path}: {len(data)} bytes; a list of 52 UIDs is a few kilobytes")
    try:
        text = data.decode("utf-8")
    except UnicodeError:
        raise EnrolError(f"{path}: not UTF-8 text (a list of tag UIDs in hex, one per line)") from None
    uids = []
    for n, line in enumerate(text.splitlines(), start=1):
        word = line.split("#", 1)[0].strip().lower().replace(":", "")
        if not word:
            continue
        try:
            uid = bytes.fromhex(word)
        except ValueError:
            raise EnrolError(f"{path}: line {n}: {word[:40]!r} is not a tag UID in hex") from None
        if not UID_MIN <= len(uid) <= UID_MAX:
            raise EnrolError(f"{path}: line {n}: a UID of {len(uid)} bytes; tags have {UID_MIN}..{UID_MAX}")
        uids.append(uid)
    return uids


def _check_listed(uids: list[bytes], order: tuple[str, ...], book: DeckBook, where: Path) -> None:
    if len(uids) != DECK_SIZE:
        raise EnrolError(f"{where}: {len(uids)} tags, a deck is {DECK_SIZE}")
    first: dict[bytes, int] = {}
    for n, uid in enumerate(uids, start=1):
        if uid in first:
            raise EnrolError(f"{where}: card {n} ({order[n - 1]}): tag {uid.hex()} is also card {first[uid]} "
                             f"({order[first[uid] - 1]}): a duplicate UID")
        first[uid] = n
        if is_random_id(uid):
            raise EnrolError(f"{where}: card {n}: tag {uid.hex()} is a random ID (first byte 08): it cannot be enrolled")
        other = book.lookup(uid)
        if other is not None:
            raise EnrolError(f"{where}: card {n} ({order[n - 1]}): tag {uid.hex()} is enrolled in live deck "
                             f"{other[0]} as {card_name(other[1])}")


def run_enrol(args: argparse.Namespace) -> int:
    """Enrol one deck: 0 when its map is stored and journaled, 1 when the reading or the file
    failed (nothing is stored), 2 for a configuration error."""
    if not valid_deck_id(args.deck):
        _say(f"deck id {args.deck!r}: 1..32 characters of A-Z a-z 0-9 . _ -")
        return 2
    if (args.reader is None) == (args.uids is None):
        _say("give --reader SPEC (read the cards) or --uids FILE (a list of their UIDs), one of them")
        return 2
    spec = None
    if args.reader is not None:
        try:
            spec = parse_spec(args.reader)
        except ReaderSpecError as exc:
            _say(str(exc))
            return 2
    setup = _setup(args, need_journal=True)
    if setup is None:
        return 2
    by = args.by or getpass.getuser()
    try:
        order = decks.NEW_DECK_ORDER
        if args.order:
            path = Path(args.order)
            try:
                order = decks.parse_order(path.read_text(encoding="utf-8"), str(path))
            except (OSError, UnicodeError) as exc:
                raise decks.EnrolError(f"{path}: cannot read the deck order ({exc})") from None
        book, problems = setup.folder.load()
        if problems:
            raise decks.EnrolError("a live deck file cannot be read, so a UID of it could be enrolled twice: "
                                   + "; ".join(problems) + " (repair it or move it away)")
        if setup.folder.path(args.deck).exists():
            raise decks.EnrolError(f"deck {args.deck} is already live ({setup.folder.path(args.deck)}): retire it "
                                   "first or choose another id")
        if spec is None:
            source = f"file {args.uids}"
            uids = _read_uids(Path(args.uids))
            _check_listed(uids, order, book, Path(args.uids))
        else:
            source = f"reader {spec}"
            with _started_reader(spec) as reader:
                print(f"reader {spec} ready ({reader.name}): pass the {len(order)} cards one at a time, "
                      f"{order[0]} first", flush=True)

                def shown(n: int, card: str, uid: bytes) -> None:
                    print(f"{n:3d} {card}  {uid.hex()}", flush=True)

                reading = decks.read_deck(reader, order, known=book, idle_s=args.idle, on_card=shown,
                                          where=str(spec))
                uids = reading.uids
        path, dm = setup.folder.write(args.deck, by, order, uids)
    except decks.EnrolError as exc:
        _say(f"deck {args.deck} not enrolled: {exc}")
        return 1
    problem = _journal(setup, "deck-enrol", {"deck": dm.deck, "by": dm.by, "enrolled": dm.enrolled,
                                             "cards": len(dm.cards), "source": source, "file": str(path)})
    if problem is not None:
        path.unlink(missing_ok=True)
        _say(f"deck {args.deck} not enrolled: the journal did not keep the enrolment ({problem}); the map was removed")
        return 1
    print(f"deck {dm.deck} enrolled by {dm.by} at {dm.enrolled}: 52 cards, sealed in {path}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    """Print the live decks; 1 when a file there cannot be used (each named), 2 for a
    configuration error."""
    setup = _setup(args, need_journal=False)
    if setup is None:
        return 2
    book, problems = setup.folder.load()
    for deck in sorted(book.decks):
        dm = book.decks[deck]
        print(f"{dm.deck}  enrolled {dm.enrolled} by {dm.by}  {len(dm.cards)} cards  {dm.where}")
    if not book.decks and not problems:
        print(f"no live decks in {setup.folder.folder}")
    for problem in problems:
        _say(problem)
    return 1 if problems else 0


def run_retire(args: argparse.Namespace) -> int:
    """Retire one deck: 0 when moved and journaled, 1 when it cannot be, 2 for a configuration error."""
    import os

    setup = _setup(args, need_journal=True)
    if setup is None:
        return 2
    try:
        target = setup.folder.retire(args.deck)
    except EnrolError as exc:
        _say(str(exc))
        return 1
    by = args.by or getpass.getuser()
    problem = _journal(setup, "deck-retire", {"deck": args.deck, "by": by, "retired": utc_now(), "file": str(target)})
    if problem is not None:
        os.replace(target, setup.folder.path(args.deck))
        _say(f"deck {args.deck} not retired: the journal did not keep it ({problem}); the deck is live again")
        return 1
    print(f"deck {args.deck} retired by {by}: {target}; its cards are foreign from now on")
    return 0


def run_check(args: argparse.Namespace) -> int:
    """Check one live deck: 0 when every card was read once and nothing else, 1 when something is
    missing, twice or foreign (each named) or the reading failed, 2 for a configuration error."""
    if (args.reader is None) == (args.uids is None):
        _say("give --reader SPEC (read the cards) or --uids FILE (the tags read), one of them")
        return 2
    try:
        spec = parse_spec(args.reader) if args.reader is not None else None
    except ReaderSpecError as exc:
        _say(str(exc))
        return 2
    setup = _setup(args, need_journal=True)
    if setup is None:
        return 2
    book, problems = setup.folder.load()
    dm = book.decks.get(args.deck)
    if dm is None:
        _say(f"deck {args.deck} is not live in {setup.folder.folder}" + (f" ({'; '.join(problems)})" if problems else ""))
        return 2
    retired, _ = load_retired(str(setup.folder.folder / "retired"), setup.folder.key, os.listdir,
                              lambda path: Path(path).read_bytes())
    try:
        if spec is None:
            uids = _read_uids(Path(args.uids))
            source = f"file {args.uids}"
        else:
            source = f"reader {spec}"
            with _started_reader(spec) as reader:
                print(f"reader {spec} ready ({reader.name}): pass deck {args.deck}'s cards, any order", flush=True)
                uids = read_passes(reader, idle_s=args.idle, where=str(spec),
                                   on_tag=lambda n, uid: print(f"{n:3d} {uid.hex()}", flush=True))
    except decks.EnrolError as exc:
        _say(f"deck {args.deck} not checked: {exc}")
        return 1
    result = check_deck(dm, uids, book, retired)
    for line in result.lines():
        print(line)
    body = {"deck": args.deck, "by": args.by or getpass.getuser(), "checked": utc_now(), "source": source,
            "read": result.read, "whole": result.ok, "missing": [t for _c, t in result.missing],
            "twice": [t for _c, t, _n in result.twice], "other": [t for _d, _c, t in result.other],
            "foreign": result.foreign, "lines": result.lines()}
    why = _journal(setup, "deck-check", body)
    if why is not None:
        _say(f"the check of deck {args.deck} was not journaled: {why}")
        return 1
    return 0 if result.ok else 1


def run_scan(args: argparse.Namespace) -> int:
    """Scan the reader ``--scans`` times and print each scan and the counts: 0 when every scan
    answered, 1 when one failed (each failure is followed by a reset, as the firmware does) or the
    reader cannot be started, 2 for a bad option.

    Output: ``    7  04a1b2c3d4e5f6`` per scan (``-`` for an empty field, two UIDs for two tags,
    ``error: ...`` for a :class:`ReaderError`), then ``N scans: no tag A, one tag B, two tags C,
    errors E`` and one ``  UID: in K of N scans`` line per tag seen.
    """
    if not 1 <= args.scans <= 100_000:
        _say(f"--scans {args.scans}: need 1..100000")
        return 2
    if not 0 <= args.interval <= 60:
        _say(f"--interval {args.interval}: need 0..60 seconds")
        return 2
    try:
        spec = parse_spec(args.reader)
    except ReaderSpecError as exc:
        _say(str(exc))
        return 2
    by_size = [0, 0, 0]
    errors = 0
    seen: dict[str, int] = {}
    done = 0
    try:
        with _started_reader(spec) as reader:
            print(f"reader {spec} ready ({reader.name}): {args.scans} scans", flush=True)
            for n in range(1, args.scans + 1):
                try:
                    tags = list(reader.scan())
                except ReaderError as exc:
                    errors += 1
                    print(f"{n:5d}  error: {exc}", flush=True)
                    reader.reset()  # a ReaderError here ends the run: the chip does not come back
                else:
                    by_size[min(len(tags), 2)] += 1
                    for tag in tags:
                        seen[tag.hex()] = seen.get(tag.hex(), 0) + 1
                    print(f"{n:5d}  {' '.join(t.hex() for t in tags) or '-'}", flush=True)
                done = n
                if args.interval and n < args.scans:
                    time.sleep(args.interval)
    except decks.EnrolError as exc:
        _say(str(exc))
        return 1
    except ReaderError as exc:
        _say(f"reader {spec}: after a failed scan the reset failed too ({exc}); {done} scans made")
        return 1
    except KeyboardInterrupt:
        print("stopped", flush=True)
    print(f"{done} scans: no tag {by_size[0]}, one tag {by_size[1]}, two tags {by_size[2]}, errors {errors}")
    for uid, count in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {uid}: in {count} of {done} scans")
    return 1 if errors else 0
