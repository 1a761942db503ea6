"""``shoe-ctl run``: the service, a :class:`shoe_ctl.table.Table` built from the options.

    shoe-ctl run [--shoe URL|sim] [--rules tda|house] [--game stud|stud8|razz] [--seats 1-8]
                 [--hands PATH] [--pace SECONDS] [--exit-when-done] [--display HOST:PORT|off]
                 [--config PATH] [--seed N] [--count N] [--journal PATH|off] [--dealer-socket PATH]

Options, systemd notifications, stopping and what each does: docs/service.md. Exit status: 0 after
a clean stop, 1 when the simulated dealer stalled (``--exit-when-done``) or a stop passed its
deadline (:class:`shoe_ctl.lifecycle.StopSignals`), 2 for a bad option or
configuration (every problem of the file named, with its key; a shoe port held by another
program; GPIO pins that cannot be had; no readable ``--hands`` file), 3 after an otherwise clean
stop when some ``--hands`` files were unreadable (each named on stderr; the readable ones are
dealt). The terminal shows the LED signals and a status line (:mod:`shoe_ctl.cli.status`).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

from drivers.gpio_env import GpioSetupError, describe_gpio_failure
from shoe_ctl.analyze import iter_phh_files
from shoe_ctl.cli.args import (
    DEFAULT_CONFIG,
    PrintableFormatter,
    Subparsers,
    count,
    load_profiles,
    pace,
    parse_seats,
    printable,
)
from shoe_ctl.cli.doctor import port_problem
from shoe_ctl.cli.status import StatusLine
from shoe_ctl.config import TableConfig, load_table_config
from shoe_ctl.display.address import parse_display  # not the server: aiohttp loads after READY
from shoe_ctl.events import Command, Instruction
from shoe_ctl.floor.config import load_floor_config
from shoe_ctl.lifecycle import StopSignals
from shoe_ctl.phh import TABLE_SEATS, read_phh
from shoe_ctl.release import load_release_config
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.profiles import ProfileError
from shoe_ctl.service import notify, shoes
from shoe_ctl.service.host import HostLife
from shoe_ctl.table import Table, TableError, freeze_startup_heap
from shoe_ctl.users import users_file_setting

log = logging.getLogger(__name__)

WATCHABLE_PACE = 0.4
JOURNAL_OFF = "off"


def journal_path(option: str | None, configured: str | None) -> str | None:
    """The journal file ``run`` uses: ``--journal PATH`` wins, ``--journal off`` means none,
    otherwise the configuration's ``[journal] path`` (``None`` when unset: no journal)."""
    if option is not None:
        return None if option == JOURNAL_OFF else option
    return configured


def register(subparsers: Subparsers) -> None:
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
    p.add_argument("--pace", type=pace, default=None, metavar="SECONDS",
                   help=f"pause between the simulated dealer's actions (default {WATCHABLE_PACE}; 0 = none)")
    p.add_argument("--exit-when-done", action="store_true", help="stop after the last hand of --hands")
    p.add_argument("--display", default=None, metavar="HOST:PORT|off",
                   help="serve the dealer display (default: config, 127.0.0.1:8080); 'off' for none")
    p.add_argument("--config", default=str(DEFAULT_CONFIG), metavar="PATH", help="table configuration TOML (default: the program's config/table.toml; "
                   "run does not read $SHOE_CTL_TABLE or /etc/shoe-ctl/table.toml: the unit passes --config)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random hands, scrambles and cuts")
    p.add_argument("--count", type=count, default=None, metavar="N", help="deal N random hands (default: no end)")
    p.add_argument("--journal", default=None, metavar="PATH|off",
                   help="journal every event (SQLite) before its ack and resume an open hand from it at "
                   "start-up (with a real shoe); default: [journal] path of the config, if set; "
                   f"'{JOURNAL_OFF}' for none")
    p.add_argument("--no-status", action="store_true",
                   help="no status line (hand, street, stub, shoe, last read) in the terminal")
    p.add_argument("--dealer-socket", default=None, metavar="PATH",
                   help="offer the command stream and take dealer inputs on a local Unix socket (one JSON "
                   "object per line, shoe_ctl/service/dealer_port.py); used by shoe-ctl hil crash")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the service until Ctrl-C / SIGTERM (or the last hand with ``--exit-when-done``). The
    signals' handler is installed first: a signal while the table is built or started stops it
    once it is up (docs/service.md, *Stopping*)."""
    with StopSignals(whole_process=bool(getattr(args, "whole_process", False))) as signals:
        return _run(args, signals)


def _run(args: argparse.Namespace, signals: StopSignals) -> int:
    status_line = None if args.no_status else StatusLine()
    progress = Progress()
    log_out = logging.StreamHandler(status_line.errors if status_line is not None else None)
    log_out.setFormatter(PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[log_out])
    logging.getLogger("drivers.shoe").addFilter(_name_busy_port)
    say = status_line.say if status_line is not None else _say
    try:
        cfg = load_table_config(args.config)
        profiles, rules = load_profiles(args.rules or cfg.rules)
        game = Game(args.game or cfg.game)
        seats = parse_seats(args.seats) if args.seats is not None else list(range(1, cfg.seats + 1))
        shoe_url = args.shoe or cfg.shoe.url
        display: Any = "config"
        if args.display is not None:
            display = parse_display(args.display)
        simulated = shoes.is_simulated(shoe_url)
        if not simulated:
            _check_port_free(shoe_url, cfg.shoe.baudrate)
        scripts, unreadable = _scripts(args, seats, game.value, rules) if simulated else (None, 0)
        journal_file = journal_path(args.journal, cfg.journal.path)
        table = Table.from_config(cfg, profiles=profiles, rules=rules, game=game.value, shoe_url=shoe_url,
                                  seed=args.seed, journal=journal_file, display=display,
                                  display_required=args.display, console=True, dealer_socket=args.dealer_socket,
                                  dealer=_dealer(args, scripts), notifier=notify.default(), say=say,
                                  sinks=[*([status_line] if status_line is not None else []), progress],
                                  led_stream=status_line.console if status_line is not None else None,
                                  floor=load_floor_config(args.config), release=load_release_config(args.config),
                                  users=users_file_setting(args.config), host=HostLife())
    except (TableError, ProfileError, ValueError, OSError) as exc:
        for line in str(exc).splitlines() or [""]:  # several configuration problems: one line each
            print(f"shoe-ctl run: {line}", file=sys.stderr)
        return 2

    if status_line is not None:
        status_line.note_from("display", lambda: table.display_problem and f"NOT SERVED: {table.display_problem}")
    stop = signals.stop
    status = 0
    try:
        with table:
            try:
                freeze_startup_heap()
                dealer = table.dealer
                quiet_s = STALL_S + 10 * (WATCHABLE_PACE if args.pace is None else args.pace)
                while not stop.is_set():
                    if dealer is not None and (dealer.done.is_set() or dealer.stalled) and args.exit_when_done:
                        table.controller.wait_idle(5)
                        status = 1 if dealer.stalled else 0
                        break
                    if dealer is not None and args.exit_when_done and progress.quiet_for() > quiet_s:
                        # the dealer waits for a signal the machine will not give (a record it cannot
                        # follow: a fold refused for a player all-in, ...): a stall, not a run forever
                        print(printable(f"shoe-ctl run: nothing happened for {quiet_s:g} s; the simulated "
                                        f"dealer stalled at: {progress.last_text or 'no instruction'}"),
                              file=sys.stderr)
                        status = 1
                        break
                    stop.wait(0.1)
            finally:
                signals.stopping()  # the table's close below is bounded (a whole process)
    except KeyboardInterrupt:  # a call inside a program: its own SIGINT handler is back after the first
        pass
    except Exception as exc:  # noqa: BLE001 - GPIO failures, OSError and ValueError named; the rest propagate
        message = _gpio_problem(exc, args.config, cfg)
        if message is None and isinstance(exc, (OSError, ValueError, TableError)):
            message = str(exc)
        if message is None:
            raise
        print(f"shoe-ctl run: {message}", file=sys.stderr)
        status = 2
    finally:
        stop.set()
    if status == 0 and unreadable:
        print(f"shoe-ctl run: {unreadable} --hands file{'' if unreadable == 1 else 's'} could not be read "
              "(named above)", file=sys.stderr)
        status = 3
    return status


STALL_S = 20.0
"""With ``--exit-when-done`` and the simulated dealer: seconds (plus ten paces) without any command
from the machine after which the run ends as stalled (exit status 1)."""


class Progress:
    """A sink keeping when the machine last gave a command and its last instruction's words."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.last_text = ""

    def handle(self, command: Command) -> None:
        self.last = time.monotonic()
        if isinstance(command, Instruction):
            self.last_text = command.text

    def quiet_for(self) -> float:
        return time.monotonic() - self.last

    def close(self) -> None:
        return None


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


BUSY = "in use by another program"


def _check_port_free(url: str, baudrate: int) -> None:
    """Open a local shoe device exclusively and close it again, so that a port another program
    holds is named at once in ``doctor``'s words (the service would otherwise retry it for ever
    with the serial library's text). A missing device is left to the link, which waits for it.

    :raises OSError: the port is held by another program (the message names it and the fix).
    """
    if "://" in url:
        return
    import serial

    try:
        port = serial.serial_for_url(url, baudrate=baudrate, exclusive=True, timeout=0.1)
    except (OSError, ValueError) as exc:  # serial.SerialException is an OSError
        what, fix = port_problem(url, exc)
        if what == BUSY:
            raise OSError(f"shoe port {url}: {what}; fix: {fix}") from None
        return
    try:
        port.close()
    except OSError:
        pass


def _name_busy_port(record: logging.LogRecord) -> bool:
    """Logging filter of the shoe link: a port held by another program is said in ``doctor``'s
    words instead of the serial library's text."""
    text = record.getMessage()
    if "exclusively lock" in text or "Device or resource busy" in text:
        url = text.split("cannot open ", 1)[-1].split(":", 1)[0] if "cannot open " in text else "the shoe port"
        record.msg, record.args = "shoe port %s: %s (retrying)", (url, BUSY)
    return True


def _gpio_problem(exc: BaseException, config: str, cfg: TableConfig) -> str | None:
    """A GPIO failure at start named with the configuration file and key (``leds.backend`` for
    GPIO LEDs, else ``buttons.pins``), what was found and the fix; None for any other error."""
    module = type(exc).__module__ or ""
    if not (isinstance(exc, GpioSetupError) or module.startswith("gpiozero") or module.startswith("lgpio")):
        return None
    key = "leds.backend" if cfg.leds.backend == "gpio" else "buttons.pins"
    detail, fix = describe_gpio_failure(exc)
    return f"{config}: {key}: the GPIO pins cannot be had on this host: {detail}; fix: {fix}"


def _dealer(args: argparse.Namespace, scripts: Any) -> Any:
    """The simulated dealer's factory for the table (None without scripts: a real shoe)."""
    if scripts is None:
        return None
    # lazy: the simulation tools, loaded only for a simulated shoe
    from hil.dealer import SimulatedDealer

    dealer_pace = WATCHABLE_PACE if args.pace is None else max(args.pace, 0.0)

    def build(device: Any, post: Any) -> Any:
        return SimulatedDealer(device, post, scripts, pace=dealer_pace, seed=args.seed, auto_ack=True)

    return build


def _scripts(args: argparse.Namespace, seats: list[int], game: str, rules: str) -> tuple[Any, int]:
    """The simulated dealer's scripts and how many ``--hands`` files were unreadable (each named on
    stderr with its reason; the readable ones are dealt).

    :raises ValueError: no .phh file found, or none of them readable.
    """
    # lazy: the simulation tools, loaded only for a simulated shoe
    from hil.dealer import random_hands

    if args.hands is None:
        return random_hands(args.seed, seats=seats, game=game, rules=rules, count=args.count), 0
    from hil.replay import script_from_record

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
            print(printable(f"shoe-ctl run: unreadable hand file {f}: {reason}"), file=sys.stderr)
            continue
        if rec.seats is not None and rec.table_seats(TABLE_SEATS) is None:
            print(printable(f"shoe-ctl run: {f}: recorded seats {list(rec.seats)} do not fit this table's seats "
                  f"1..{TABLE_SEATS}: dealt at seats 1..{rec.n} in player order"), file=sys.stderr)
        scripts.append(script)
    if not scripts:
        raise ValueError(f"--hands {args.hands}: no readable hand ({unreadable} unreadable file"
                         f"{'' if unreadable == 1 else 's'})")
    return scripts, unreadable
