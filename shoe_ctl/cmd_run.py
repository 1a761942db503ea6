"""``shoe-ctl run``: the service.

    shoe-ctl run [--shoe URL|sim] [--rules tda|house] [--game stud|stud8|razz] [--seats 1-8]
                 [--hands PATH] [--pace SECONDS] [--exit-when-done] [--display HOST:PORT|off]
                 [--config PATH] [--seed N] [--count N] [--journal PATH|off] [--dealer-socket PATH]

With no arguments it runs on the built-in virtual shoe (a real pty, the same protocol and
``ShoeLink`` as a real shoe) with the simulated dealer dealing seeded random hands at a watchable
pace, the LED signals shown in the terminal (one plain line per signal when stdout is not a
terminal) and the dealer display on ``127.0.0.1:8080``; it runs until Ctrl-C (or SIGTERM) and
stops cleanly. ``--hands PATH`` (a .phh file or a folder, recursive) makes the simulated dealer
deal those recorded hands with their folds, all-ins and betting rounds, each player at the table
seat the record gives (PHH ``seats`` or ``_seats``; a record counting from 0 moved up by one; a
record with a seat above 8 is dealt at seats 1..n, said on stderr); ``--exit-when-done``
stops after the last one. With ``--shoe URL`` (a real shoe) there is no simulated dealer: the
dealer reports through the display and buttons. ``--journal PATH`` (default: ``[journal] path``
of the table configuration, if set; ``--journal off``: none) appends every event to the
SQLite journal before the shoe's card is acked; at start-up the events since the last finished
hand are replayed into the machine (``shoe_ctl.service.recovery``) and the link resumes after the
last journaled shoe sequence, so an open hand goes on where it stopped (with a real shoe; the
built-in virtual shoe starts afresh, so with ``sim`` an open hand is closed as abandoned); the
resumed machine numbers hands on from the journal. ``--dealer-socket PATH`` offers the command
stream and takes dealer inputs on a local Unix socket (:mod:`shoe_ctl.service.dealer_port`; the
simulated dealer of ``shoe-ctl hil crash`` uses it).

Under systemd (``Type=notify``, :mod:`shoe_ctl.service.notify`) the service sends ``READY=1`` once
the shoe's handshake is done, ``WATCHDOG=1`` every half ``WatchdogSec`` from the controller's own
thread (a wedged controller stops pinging and is restarted), and ``STOPPING=1`` when it stops.

Exit status: 0 after a clean stop, 1 when the simulated dealer stalled (``--exit-when-done``),
2 for a bad option or configuration (or no readable ``--hands`` file), 3 after an otherwise clean
stop when some ``--hands`` files were unreadable (each named on stderr with its reason when the
service starts; the readable ones are dealt).
"""

from __future__ import annotations

import argparse
import logging
import math
import signal
import sys
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "config" / "table.toml"
WATCHABLE_PACE = 0.4
JOURNAL_OFF = "off"


def journal_path(option: str | None, configured: str | None) -> str | None:
    """The journal file ``run`` uses: ``--journal PATH`` wins, ``--journal off`` means none,
    otherwise the configuration's ``[journal] path`` (``None`` when unset: no journal)."""
    if option is not None:
        return None if option == JOURNAL_OFF else option
    return configured


def register(subparsers: Any) -> None:
    """Add the ``run`` subcommand."""
    p = subparsers.add_parser(
        "run",
        help="run the service (default: virtual shoe and simulated dealer)",
        description="Run the shoe controller. Without options: the built-in virtual shoe with a simulated "
        "dealer dealing seeded random hands, signals shown in the terminal; Ctrl-C stops it.",
    )
    p.add_argument("--shoe", default=None, metavar="URL|sim",
                   help="shoe port URL (/dev/serial/by-id/..., socket://HOST:PORT) or 'sim' (default: config, sim)")
    p.add_argument("--rules", default=None, metavar="tda|house", help="rule profile (default: config, tda)")
    p.add_argument("--game", default=None, choices=("stud", "stud8", "razz"), help="game (default: config, stud)")
    p.add_argument("--seats", default=None, metavar="LIST",
                   help="seats dealt in for simulated hands, e.g. 1-8 or 1,2,4,5,6,7,8 (default: all table seats)")
    p.add_argument("--hands", default=None, metavar="PATH", help="deal these recorded PHH hands (file or folder)")
    p.add_argument("--pace", type=_pace, default=None, metavar="SECONDS",
                   help=f"pause between the simulated dealer's actions (default {WATCHABLE_PACE}; 0 = none)")
    p.add_argument("--exit-when-done", action="store_true", help="stop after the last hand of --hands")
    p.add_argument("--display", default=None, metavar="HOST:PORT|off",
                   help="serve the dealer display (default: config, 127.0.0.1:8080); 'off' for none")
    p.add_argument("--config", default=str(DEFAULT_CONFIG), metavar="PATH", help="table configuration TOML")
    p.add_argument("--seed", type=int, default=0, help="seed of the random hands, scrambles and cuts")
    p.add_argument("--count", type=_count, default=None, metavar="N", help="deal N random hands (default: no end)")
    p.add_argument("--journal", default=None, metavar="PATH|off",
                   help="journal every event (SQLite) before its ack and resume an open hand from it at "
                   "start-up (with a real shoe); default: [journal] path of the config, if set; "
                   f"'{JOURNAL_OFF}' for none")
    p.add_argument("--dealer-socket", default=None, metavar="PATH",
                   help="offer the command stream and take dealer inputs on a local Unix socket (one JSON "
                   "object per line, shoe_ctl/service/dealer_port.py); used by shoe-ctl hil crash")
    p.set_defaults(func=run)


def _pace(text: str) -> float:
    """``--pace``: seconds, a finite number >= 0 (argparse type)."""
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: need a number of seconds >= 0")
    return value


def _count(text: str) -> int:
    """``--count``: hands, an integer >= 1 (argparse type)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 or more hands")
    return value


def parse_seats(text: str) -> list[int]:
    """``"1-8"``, ``"1,2,4-6"`` -> seat numbers (1..8, distinct, at least 2).

    :raises ValueError: naming the bad part.
    """
    seats: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            rng = range(int(lo), int(hi) + 1) if sep else range(int(lo), int(lo) + 1)
        except ValueError:
            raise ValueError(f"--seats {text!r}: {part!r} is not a seat number or range") from None
        seats.extend(rng)
    if len(seats) < 2 or len(set(seats)) != len(seats) or not all(1 <= s <= 8 for s in seats):
        raise ValueError(f"--seats {text!r}: need 2..8 distinct seats numbered 1..8")
    return seats


def run(args: argparse.Namespace) -> int:
    """Run the service until Ctrl-C / SIGTERM (or the last hand with ``--exit-when-done``)."""
    from hil.dealer import SimulatedDealer
    from shoe_ctl.config import load_profile, load_table_config
    from shoe_ctl.machine import Dealing
    from shoe_ctl.rules.games import Game
    from shoe_ctl.rules.profiles import ProfileError
    from shoe_ctl.service.controller import Controller

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        cfg = load_table_config(args.config)
        rules = args.rules or cfg.rules
        profiles = {"tda": load_profile("tda"), "house": load_profile("house")}
        if rules not in profiles:
            prof = load_profile(rules)
            profiles[prof.name] = prof
            rules = prof.name
        game = Game(args.game or cfg.game)
        seats = parse_seats(args.seats) if args.seats is not None else list(range(1, cfg.seats + 1))
        shoe_url = args.shoe or cfg.shoe.url
        display: Any = "config"
        if args.display is not None:
            from shoe_ctl.display.server import parse_display

            display = parse_display(args.display)
        scripts, unreadable = _scripts(args, seats, game.value, rules) if shoe_url == "sim" else (None, 0)
        journal_file = journal_path(args.journal, cfg.journal.path)
    except (ProfileError, ValueError, OSError) as exc:
        print(f"shoe-ctl run: {exc}", file=sys.stderr)
        return 2

    from shoe_ctl.service import notify

    notifier = notify.default()
    stop = threading.Event()
    parts: list[Any] = []
    status = 0
    resume_seq: int | None = None

    hands_before = 0

    def make_machine() -> Dealing:
        m = Dealing(profiles, default_rules=rules, default_game=game, await_counter_reset=True)
        m.hand_no = hands_before  # a resumed service numbers hands on from the journal
        return m

    machine = make_machine()
    journal: Any = None
    if journal_file:
        from shoe_ctl.service.journal import Journal, JournalError
        from shoe_ctl.service.recovery import HandMarks, recover

        try:
            journal = Journal(journal_file, table=cfg.table, profile=rules,
                              retention_days=cfg.journal.retention_days)
            jr = journal.report
            if not jr.ok or jr.tail or jr.wal_dropped or jr.removed_aside or jr.kept_aside:
                # damage, an interrupted append's frames dropped, copies made or removed
                for line in jr.lines()[1:]:
                    print(f"journal: {line}", file=sys.stderr)
            if shoe_url != "sim":
                hands_before = _hands_before(journal)
                machine, resume_seq, report = recover(journal, make_machine)
                for line in report.lines():
                    print(line, file=sys.stderr)
        except (JournalError, OSError) as exc:
            if journal is not None:
                journal.close()
            print(f"shoe-ctl run: journal {journal_file}: {exc}", file=sys.stderr)
            return 2
        parts.append(journal)
    controller = Controller(machine, journal=journal)
    if journal is not None:
        marks = HandMarks(journal, machine)
        marks.after(machine)
        controller.on_handled = lambda _ev, _cmds: marks.after(controller.machine)

    def _signal(_signum: int, _frame: Any) -> None:
        stop.set()

    old = signal.signal(signal.SIGTERM, _signal)
    try:
        shoe = None
        if shoe_url == "sim":
            from hil.virtual_shoe import VirtualShoe

            shoe = VirtualShoe(transport="pty", seed=args.seed).start()
            parts.append(shoe)
            url = shoe.url
        else:
            url = shoe_url
        from drivers.shoe import ShoeLink
        from shoe_ctl.dealer_io import start_dealer_io
        from shoe_ctl.replay import ShoeCommandSink

        link = ShoeLink(url, controller.queue, baudrate=cfg.shoe.baudrate, resume_seq=resume_seq)
        controller.link = link
        try:
            io = start_dealer_io(cfg, controller.post, display=display, send_leds=link.send_leds,
                                 console=True)
        except OSError as exc:
            if args.display is not None:
                raise OSError(f"dealer display on {args.display}: {exc.strerror or exc}") from exc
            print(f"shoe-ctl run: dealer display not started ({exc}); continuing without it", file=sys.stderr)
            io = start_dealer_io(cfg, controller.post, display=None, send_leds=link.send_leds, console=True)
        parts.append(io)
        for sink in io.sinks:
            controller.add_sink(sink)
        if io.display_url:
            print(f"dealer display: {io.display_url}", file=sys.stderr, flush=True)
        controller.add_sink(ShoeCommandSink(link))
        # floor: [floor] of the table config (off by default); the composition root calls the same function
        from shoe_ctl.floor.config import load_floor_config

        floor_cfg = load_floor_config(args.config)
        if floor_cfg.enabled:  # paho-mqtt is imported only then
            from shoe_ctl.floor.publisher import attach_floor

            parts.append(attach_floor(controller, journal, floor_cfg, table=cfg.table, journal_path=journal_file))
        # end floor
        port = None
        if args.dealer_socket:
            from shoe_ctl.service.dealer_port import DealerPort

            port = DealerPort(args.dealer_socket, controller.post)
            parts.append(port)
            controller.add_sink(port)
        dealer = None
        if shoe is not None and scripts is not None:
            pace = WATCHABLE_PACE if args.pace is None else max(args.pace, 0.0)
            dealer = SimulatedDealer(shoe, controller.post, scripts, pace=pace, seed=args.seed, auto_ack=True)
            controller.add_sink(dealer)
        link.start()
        parts.append(link)
        controller.start()
        parts.append(controller)
        _start_notifications(notifier, link, controller, stop)
        if port is not None:
            port.start()  # after the controller published the state: a client sees it first
        if dealer is not None:
            dealer.start()
            parts.append(dealer)
        while not stop.is_set():
            if dealer is not None and (dealer.done.is_set() or dealer.stalled) and args.exit_when_done:
                controller.wait_idle(5)
                status = 1 if dealer.stalled else 0
                break
            stop.wait(0.1)
    except KeyboardInterrupt:
        pass
    except (OSError, ValueError) as exc:
        print(f"shoe-ctl run: {exc}", file=sys.stderr)
        status = 2
    finally:
        notifier.stopping()
        stop.set()
        signal.signal(signal.SIGTERM, old)
        for part in reversed(parts):
            try:
                part.close()
            except Exception:  # noqa: BLE001 - shut everything down whatever one part does
                log.exception("closing %r", part)
    if status == 0 and unreadable:
        print(f"shoe-ctl run: {unreadable} --hands file{'' if unreadable == 1 else 's'} could not be read "
              "(named above)", file=sys.stderr)
        status = 3
    return status


def _hands_before(journal: Any) -> int:
    """The journal's number of the last hand before the one a recovery replays: a resumed
    service goes on numbering hands where it stopped (the display shows the same hand)."""
    if journal.current_hand is not None:
        return int(journal.current_hand) - 1
    hands = journal.hands()
    return int(hands[-1].hand) if hands else 0


def _start_notifications(notifier: Any, link: Any, controller: Any, stop: threading.Event) -> None:
    """systemd (``Type=notify``, ``shoe_ctl.service.notify``): ``READY=1`` once the shoe's
    handshake is done (its hello arrived), and ``WATCHDOG=1`` every ``ping_interval_s`` sent from
    the controller's own thread (``Controller.call_soon``), so a wedged controller stops the pings
    and systemd restarts the service. Nothing runs without ``NOTIFY_SOCKET``."""
    if not notifier.enabled:
        return
    from drivers.exc import ShoeTimeoutError

    def ready() -> None:
        while not stop.is_set():
            try:
                info = link.wait_connected(0.5)
            except ShoeTimeoutError:
                continue
            notifier.ready(f"shoe {info.serial} connected")
            return

    def pings(interval: float) -> None:
        while not stop.wait(interval):
            controller.call_soon(notifier.watchdog)

    threading.Thread(target=ready, name="sd-notify-ready", daemon=True).start()
    if notifier.ping_interval_s is not None:
        threading.Thread(target=pings, args=(notifier.ping_interval_s,), name="sd-notify-watchdog",
                         daemon=True).start()


def _scripts(args: argparse.Namespace, seats: list[int], game: str, rules: str) -> tuple[Any, int]:
    """The simulated dealer's scripts and how many ``--hands`` files were unreadable (each named on
    stderr with its reason; the readable ones are dealt).

    :raises ValueError: no .phh file found, or none of them readable.
    """
    from hil.dealer import random_hands

    if args.hands is None:
        return random_hands(args.seed, seats=seats, game=game, rules=rules, count=args.count), 0
    from shoe_ctl.analyze import iter_phh_files
    from shoe_ctl.phh import TABLE_SEATS, read_phh
    from shoe_ctl.replay import script_from_record

    files = list(iter_phh_files([args.hands]))
    if not files:
        raise ValueError(f"--hands {args.hands}: no .phh file found")
    scripts = []
    unreadable = 0
    for k, f in enumerate(files):
        try:
            rec = read_phh(f)
            script = script_from_record(rec, seed=args.seed + k, rules=rules, path=f, table_seats=True)
        except (ValueError, OSError) as exc:  # PhhError, DeckError, unreadable file: named, the rest dealt
            unreadable += 1
            reason = str(exc).removeprefix(f"{f}: ")
            print(f"shoe-ctl run: unreadable hand file {f}: {reason}", file=sys.stderr)
            continue
        if rec.seats is not None and rec.table_seats(TABLE_SEATS) is None:
            print(f"shoe-ctl run: {f}: recorded seats {list(rec.seats)} do not fit this table's seats "
                  f"1..{TABLE_SEATS}: dealt at seats 1..{rec.n} in player order", file=sys.stderr)
        scripts.append(script)
    if not scripts:
        raise ValueError(f"--hands {args.hands}: no readable hand ({unreadable} unreadable file"
                         f"{'' if unreadable == 1 else 's'})")
    return scripts, unreadable
