"""The composition root: one table's shoe link, controller, journal, sinks and dealer, built from
the table configuration, started in one order and stopped in the reverse one (docs/service.md).

``shoe-ctl run``, the full replay (:func:`hil.replay.run_full`) and the tests build a table with
:meth:`Table.from_config` and use it as a context manager.
"""

from __future__ import annotations

import gc
import logging
import sqlite3
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO, runtime_checkable

from drivers.shoe import ShoeLink
from shoe_ctl.config import TableConfig
from shoe_ctl.dealer_io import DealerIO, start_dealer_io
from shoe_ctl.display.model import DisplayModel
from shoe_ctl.events import Alert, Command, Event, LinkChanged
from shoe_ctl.export import default_machine_factory
from shoe_ctl.floor.config import FloorConfig
from shoe_ctl.hostaddr import bind_problem, display_urls
from shoe_ctl.machine import Dealing
from shoe_ctl.recall import Recall
from shoe_ctl.rules.games import Game
from shoe_ctl.rules.profiles import RuleProfile
from shoe_ctl.service import shoes
from shoe_ctl.service.controller import Controller, JournalLike, Sink
from shoe_ctl.service.dealer_port import DealerPort
from shoe_ctl.service.deck_check import DeckCheckShown
from shoe_ctl.service.journal import Journal, JournalError, journal_problem
from shoe_ctl.service.notify import Notifier, link_status
from shoe_ctl.service.recovery import HandMarks, recover
from shoe_ctl.service.shoe_commands import ShoeCommandSink
from shoe_ctl.service.shoe_secrets import SecretError, SecretStore, new_secret
from shoe_ctl.service.watchdog import ControllerWatchdog, ServiceOutput
from shoe_ctl.users import Authenticator, UserFileError, UserStore

if TYPE_CHECKING:
    from gpiozero import Factory  # a gpiozero pin factory (MockFactory in tests and the bench)

    from shoe_ctl.display.server import DisplaySink
    from shoe_ctl.release import ReleaseConfig, SoftwareIdentity, Verdict
    from shoe_ctl.service.host import HostLife

log = logging.getLogger(__name__)

__all__ = ["DealerFactory", "Table", "TableError", "freeze_startup_heap"]


@runtime_checkable
class Part(Protocol):
    """A part the table closes when it stops."""

    def close(self) -> None: ...


class SimDealer(Part, Sink, Protocol):
    """The simulated dealer: a sink that pulls the cards the instructions name and posts the
    dealer's inputs once started."""

    done: threading.Event
    """Set when the dealer has dealt every hand it was given (or stalled)."""
    stalled: str | None
    """Why the dealer stopped before the end, or None."""

    def start(self) -> object: ...


class DealerFactory(Protocol):
    """Builds the simulated dealer of a simulated shoe: a sink with ``start()`` and ``close()``
    that pulls cards from ``device`` (the simulated shoe: its type belongs to the simulation) and
    posts dealer inputs with ``post``."""

    def __call__(self, device: Any, post: Callable[[Event], object]) -> SimDealer: ...


class TableError(Exception):
    """The table cannot be built (a journal that cannot be opened or replayed); the message is
    ready for the user."""


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Device:
    """Closes the device behind a simulated shoe's URL (:func:`shoes.release`)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def close(self) -> None:
        shoes.release(self.url)


class Table:
    """A built table; :meth:`start` (``__enter__``) brings it up, :meth:`close` (``__exit__``)
    takes it down, each part in the reverse order of its start.

    ``device``: a simulated shoe the caller started and closes itself, at ``url`` (for the
    simulated dealer; e.g. the benchmark's shoe that stamps each card it sends). ``pin_factory``:
    the gpiozero pin factory of the ``gpio`` LEDs and the buttons (default gpiozero's own; the
    mock pins of gpiozero in tests and the bench).

    Start order: the simulated shoe's device (a ``vshoe://`` URL), the shoe link (not yet
    reading), (under systemd) ``READY=1``, the dealer's LEDs, display and buttons (:func:`shoe_ctl.dealer_io.start_dealer_io`),
    the sinks in delivery order (LEDs, extra sinks, display; then :class:`ShoeCommandSink`, the
    dealer port, the simulated dealer), then the link-status hook, the link's reader, the controller thread (the first instruction goes out), the
    controller watchdog (:mod:`shoe_ctl.service.watchdog`), the systemd watchdog pings, the dealer
    port's listener, the simulated dealer. Build it with :meth:`from_config`.
    """

    def __init__(self, cfg: TableConfig, controller: Controller, url: str, *, resume_seq: int | None = None,
                 journal: JournalLike | None = None, dealer_io: bool = True,
                 display: tuple[str, int] | None | Literal["config"] = "config", display_required: str | None = None,
                 console: bool = False, led_stream: TextIO | None = None, dealer_socket: str | None = None,
                 dealer: DealerFactory | None = None, sinks: Sequence[Sink] = (), notifier: Notifier | None = None,
                 wait_connected: float | None = None, device: Any = None, floor: FloorConfig | None = None,
                 release: ReleaseConfig | None = None, users: str | None = None, host: HostLife | None = None,
                 pin_factory: Factory | None = None, say: Callable[[str], None] = _say,
                 display_model: DisplayModel | None = None) -> None:
        self.cfg = cfg
        self.controller = controller
        self.url = url
        self.resume_seq = resume_seq
        self.journal = journal
        self.device: Any = device
        self.link: ShoeLink | None = None
        self.io: DealerIO | None = None
        self.port: DealerPort | None = None
        self.dealer: SimDealer | None = None
        self.display_problem: str | None = None
        """Why the configured display is not served (its port busy), or None."""
        self.watchdog: ControllerWatchdog | None = None
        self.stopped = threading.Event()
        self._dealer_io = dealer_io
        self._display = display
        self._display_required = display_required
        self._console = console
        self._led_stream = led_stream
        self._pin_factory = pin_factory
        self._display_model = display_model  # a recovery's: what the stopped service's display showed
        self._dealer_socket = dealer_socket
        self._dealer_factory = dealer
        self._sinks = list(sinks)
        self._notifier = notifier
        self._wait_connected = wait_connected
        self._floor = floor
        self._release = release
        self._users = users
        self._host = host
        """With a journal: the :class:`shoe_ctl.service.host.HostLife` whose records the start and a
        clean stop append (docs/compliance.md, "The host's life")."""
        self.authenticator: Authenticator | None = None
        """With ``users`` (a users file): the :class:`shoe_ctl.users.Authenticator` the display
        and the dealer port check credentials with; the controller then enforces the roles."""
        self.verdict: Verdict | None = None
        self.identity: SoftwareIdentity | None = None
        """With ``release``: the :class:`shoe_ctl.release.SoftwareIdentity` (the display's about
        panel, the floor's birth message, the seeded verification)."""
        """The start's release check (:class:`shoe_ctl.release.Verdict`), or None when ``release``
        (a :class:`shoe_ctl.release.ReleaseConfig`) was not given: no check."""
        self._say = say
        self._parts: list[Part] = [journal] if isinstance(journal, Part) else []
        self._started = False
        self._closed = False

    @property
    def machine(self) -> Dealing:
        """The dealing machine (owned by the controller thread once started)."""
        return self.controller.machine

    # ------------------------------------------------------------------ building

    @classmethod
    def from_config(cls, cfg: TableConfig, *, profiles: Mapping[str, RuleProfile], rules: str | None = None,
                    game: str | None = None, shoe_url: str | None = None, seed: int = 0, faults: str | None = None,
                    journal: str | JournalLike | None = None, machine: Dealing | None = None,
                    **options: Any) -> Table:
        """Build a table (nothing started yet but the journal).

        :param cfg: the table configuration (``shoe_ctl.config.load_table_config``).
        :param profiles: the rule profiles the machine may switch to; ``rules``: the default one
            (default ``cfg.rules``); ``game``: the default game (default ``cfg.game``).
        :param shoe_url: the shoe's URL or ``sim`` (default ``cfg.shoe.url``); ``seed`` and
            ``faults`` configure a ``sim`` shoe (:func:`shoe_ctl.service.shoes.resolve`).
        :param journal: a journal file to open (its damage report said through ``say``; with a
            real shoe the events since the last finished hand are replayed and the link resumes
            after the last journaled sequence; the journal's hand marks follow the machine), or a
            journal object to append to as it is, or None for none.
        :param machine: the machine to drive (default: a new one for ``profiles``, ``rules`` and
            ``game`` that awaits the shoe's counter reset, numbering hands on from the journal).
        :param options: the keyword arguments of :class:`Table` (``display``, ``console``,
            ``dealer_socket``, ``dealer``, ``sinks``, ``notifier``, ...).
        :raises TableError: the journal cannot be opened or replayed.
        :raises ValueError: an unknown game.
        """
        rules = rules or cfg.rules
        default_game = Game(game or cfg.game)
        url = shoes.resolve(shoe_url or cfg.shoe.url, seed=seed, faults=faults)
        say = options.get("say", _say)
        hands_before = 0

        def make_machine() -> Dealing:
            m = Dealing(profiles, default_rules=rules, default_game=default_game, await_counter_reset=True)
            m.hand_no = hands_before  # a resumed service numbers hands on from the journal
            return m

        if machine is None:
            machine = make_machine()
        if not isinstance(journal, str):
            return cls(cfg, Controller(machine, journal=journal), url, **options)

        opened: Journal | None = None
        resume_seq = None
        try:
            opened = Journal(journal, table=cfg.table, profile=rules, retention_days=cfg.journal.retention_days,
                             deferred=True, deferred_delay_s=20.0)
            jr = opened.report
            if not jr.ok or jr.tail or jr.wal_dropped or jr.removed_aside or jr.kept_aside:
                # damage, an interrupted append's frames dropped, copies made or removed
                for line in jr.lines()[1:]:
                    say(f"journal: {line}")
            if not shoes.is_simulated(url):
                hands_before = _hands_before(opened)
                # the display's model folds the replay in, as the stopped service's display did
                shown = (DisplayModel(table_seats=cfg.seats)
                         if options.get("dealer_io", True) and options.get("display", "config") is not None else None)
                machine, resume_seq, report = recover(opened, make_machine,
                                                      shown=shown.apply_all if shown is not None else None)
                if shown is not None:
                    shown.restarted()
                    options = {**options, "display_model": shown}
                for line in report.lines():
                    say(line)
            else:  # a simulated shoe starts afresh (nothing replayed), its hands numbered on
                machine.hand_no = _hands_before(opened) + (opened.current_hand is not None)
        except (JournalError, OSError, sqlite3.Error) as exc:  # sqlite3: e.g. a disk I/O error at the open
            if opened is not None:
                opened.close()
            raise TableError(journal_problem(journal, exc)) from exc
        controller = Controller(machine, journal=opened)
        marks = HandMarks(opened, machine, wait=False)
        marks.after(machine)
        controller.add_hook(marks.after_event)
        return cls(cfg, controller, url, resume_seq=resume_seq, journal=opened, **options)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Table:
        """Bring every part up in the start order (see the class); on an error the parts already
        up are closed and the error raised.

        :raises OSError: a port, pty or display address that cannot be had.
        :raises ValueError: a bad shoe URL or fault spec, an LED backend that cannot be built.
        :raises TimeoutError: ``wait_connected`` seconds passed without the shoe's hello.
        """
        if self._started:
            return self
        self._started = True
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        controller = self.controller
        if self.url == shoes.DIRECT:
            self._start_direct()
            return
        if self.device is None and shoes.is_simulated(self.url):
            self._parts.append(_Device(self.url))
            self.device = shoes.device(self.url)
        self._host_start()
        self._check_release()  # before the shoe is opened
        self._load_users()
        secret, serial = self._link_auth()
        journal = self.journal
        boot = journal.last_shoe_boot() if isinstance(journal, Journal) and self.resume_seq is not None else None
        key_file = str(SecretStore(self.cfg.shoe.secrets).path(serial)) if serial and secret is None else None
        self.link = link = ShoeLink(self.url, controller.queue, baudrate=self.cfg.shoe.baudrate,
                                    resume_seq=self.resume_seq, secret=secret, serial=serial, resume_boot=boot,
                                    key_file=key_file)
        controller.link = link
        if self._notifier is not None and self._notifier.enabled:
            # READY=1 at once: without its shoe the table is a running service that says so; and
            # before the dealer display and the floor client, which load aiohttp and paho
            # (docs/performance.md, "Ready")
            self._notifier.ready(f"waiting for the shoe at {self.url}")
        display: DisplaySink | None = None
        if self._dealer_io:
            self.io = self._start_dealer_io(link)
            self._parts.append(self.io)
            display = self.io.display
            for sink in self.io.sinks:
                if sink is display:
                    for extra in self._sinks:
                        controller.add_sink(extra)
                controller.add_sink(sink)
            if display is None:
                for extra in self._sinks:
                    controller.add_sink(extra)
            if self.io.display is not None and self.io.display_url:
                for url in display_urls(self.io.display.host, self.io.display.port):
                    self._say(f"dealer display: {url}")
            if display is not None:
                display.authenticator = self.authenticator
                if self.identity is not None:
                    display.software = self.identity.public
                display.report = self._report
                if isinstance(self.journal, Journal):
                    display.recall = self._recall
            if display is not None and isinstance(self.journal, Journal):
                display.journal_chain = self.journal.chain_public  # the chain head on the status line
                display.deck_check = DeckCheckShown(self.journal)  # a deck check's findings before a hand
        else:
            for extra in self._sinks:
                controller.add_sink(extra)
        controller.add_sink(ShoeCommandSink(link))
        if self._floor is not None and self._floor.enabled:
            # imported here: the floor client (paho) is loaded when a floor is configured
            from shoe_ctl.floor.publisher import attach_floor

            # the recall hears each commit before the publisher, whose step (another thread) may
            # ask it for the last hands as soon as the publisher hears of the commit
            self._kept_recall()

            # closed with the controller's sinks; it commits the journal's queue first and sends it
            publisher = attach_floor(controller, self.journal, self._floor, table=self.cfg.table,
                                     journal_path=self.journal.path if isinstance(self.journal, Journal) else None,
                                     identity=self.identity, report=self._report,
                                     recall=self._recall if isinstance(self.journal, Journal) else None)
            if publisher is not None:
                self._parts.append(publisher)
                if display is not None:
                    display.floor_problem = lambda: publisher.problem  # the broker drops what it sends
        if self._dealer_socket:
            self.port = DealerPort(self._dealer_socket, controller.post)
            self.port.authenticator = self.authenticator
            self._parts.append(self.port)
            controller.add_sink(self.port)
        if self.device is not None and self._dealer_factory is not None:
            self.dealer = self._dealer_factory(self.device, controller.post)
            controller.add_sink(self.dealer)
        if self._notifier is not None and self._notifier.enabled:
            controller.add_hook(_status_hook(self._notifier))  # before the link's first event
        link.start()
        self._parts.append(link)
        if self._wait_connected is not None:
            self._await_link(self._wait_connected)
        controller.start()
        self._parts.append(controller)
        if self._host is not None and self._host.journal is not None:
            self._parts.append(self._host)  # closed before the controller: the floor still gets the clean stop
        outputs = [sink for sink in controller.sinks if isinstance(sink, ServiceOutput)]
        self.watchdog = ControllerWatchdog(controller.call_soon, outputs).start()
        self._parts.append(self.watchdog)  # closed before the controller
        if self._notifier is not None:
            _start_notifications(self._notifier, controller, self.stopped)
        if self.port is not None:
            self.port.start()  # after the controller published the state: a client sees it first
        if self.dealer is not None:
            self.dealer.start()
            self._parts.append(self.dealer)

    def _check_release(self) -> None:
        """Check the installed code against the signed release manifest (``release`` given):
        a failure tilts the table (:meth:`Controller.tilt`, queued ahead of every shoe event);
        verification switched off is said on the terminal and, from the software identity, on the
        display's band (docs/compliance.md, "Software identity and the tilt")."""
        if self._release is None:
            return
        # lazy: cryptography, loaded only with [release] configured
        from shoe_ctl.release import TILT_CODE, SoftwareIdentity, check

        self.verdict = verdict = check(self._release)
        controller = self.controller
        release = self._release
        self.identity = SoftwareIdentity(verdict, release, self._shoe_identity)

        def recheck() -> str:
            again = check(release)
            return "" if again.ok else again.problem

        controller.tilt_recheck = recheck
        if verdict.off:  # the display's band says it too, from the software identity (docs/display.md)
            self._say(f"warning: {verdict.problem}: the installed code is not checked (a development checkout)")
        elif not verdict.ok:
            self._say(f"TILT: software mismatch: {verdict.problem}")
            controller.call_soon(lambda: controller.tilt(TILT_CODE, f"software mismatch: {verdict.problem}. TILT: no "
                                                         "hand starts until the signed release is installed again"))

    def _host_start(self) -> None:
        """The host's start record and its warnings (an unclean stop before, a clock not
        synchronised), shown once the controller runs; the clean stop's record at close."""
        if self._host is None or not isinstance(self.journal, Journal):  # a test's list keeps no host records
            return
        for code, message in self._host.start(self.journal):
            self._say(f"warning: {message}")
            self._report(code, message)

    def _report(self, code: str, message: str) -> None:
        """Raise an information alert ``code`` from any thread: shown and journaled (a refused
        PIN, a refused seed, a view of the hole cards)."""
        controller = self.controller
        controller.call_soon(lambda: controller.raise_alert(code, message))

    _recaller: tuple[Journal, Recall] | None = None

    def _recall(self) -> list[dict[str, Any]]:
        """The last hands from the journal, full (:func:`shoe_ctl.recall.recall_hands`), kept up
        to date from one call to the next (:class:`shoe_ctl.recall.Recall`); any thread."""
        recall = self._kept_recall()
        return recall() if recall is not None else []

    def _kept_recall(self) -> Recall | None:
        """The journal's kept recall, made and listening to the journal's commits at the first
        call (None without a journal file)."""
        journal = self.journal
        if not isinstance(journal, Journal):
            return None
        kept = self._recaller
        if kept is None or kept[0] is not journal:
            recall = Recall(journal.records, default_machine_factory, lambda: journal.identity()[1] or "tda")
            journal.add_commit_listener(recall.committed)  # each commit's records, not read back
            kept = self._recaller = (journal, recall)
        return kept[1]

    def _shoe_identity(self) -> tuple[str, str]:
        """The shoe's serial number and firmware from its hello (``("", "")`` before one)."""
        info = getattr(self.link, "info", None)
        if info is None:
            return "", ""
        return str(info.serial), str(info.firmware)

    def _load_users(self) -> None:
        """The users file (``users``): read and checked now (a bad one stops the start); the
        controller then enforces the roles (docs/compliance.md, "People and roles").

        :raises TableError: the users file cannot be used (absent, bad mode, duplicate name, ...).
        """
        if self._users is None:
            return

        store = UserStore(self._users)
        try:
            store.load()
        except UserFileError as exc:
            append = getattr(self.journal, "append", None)
            if append is not None:  # the refusal is in the record, though the table does not start
                try:
                    append(Alert("users-file-refused", f"{exc}: the table does not start", latched=True,
                                 service=True))
                except Exception:  # noqa: BLE001 - a failing journal: the message still goes to the user
                    log.exception("the users file's refusal could not be journaled")
            raise TableError(str(exc)) from None
        self.authenticator = Authenticator(store, self._report)
        self.controller.roles_enforced = True

    def _start_direct(self) -> None:
        """A shoe without a wire (:data:`shoes.DIRECT`): no link, no dealer's I/O; the extra sinks,
        the simulated dealer (its factory makes the shoe from the controller's ``post``), the
        controller thread, then the dealer."""
        controller = self.controller
        for extra in self._sinks:
            controller.add_sink(extra)
        if self._dealer_factory is not None:
            self.dealer = self._dealer_factory(None, controller.post)
            controller.add_sink(self.dealer)
        controller.start()
        self._parts.append(controller)
        if self.dealer is not None:
            self.dealer.start()
            self._parts.append(self.dealer)

    def _link_auth(self) -> tuple[bytes | None, str | None]:
        """The shoe link's pairing secret and pinned serial (docs/security.md, "The shoe link").

        ``[shoe] auth = "off"``: no secret (an unauthenticated bench link; the display says so).
        A simulated shoe is ours: one that is not paired yet is paired now with a fresh secret
        kept in memory. A real shoe needs ``[shoe] serial`` and the secret ``shoe-ctl pair``
        stored for it.

        :raises TableError: a real shoe without a serial or a stored secret, or an unusable
            secret file.
        """
        shoe = self.cfg.shoe
        if shoe.auth == "off":
            return None, shoe.serial
        device = self.device
        if device is not None and hasattr(device, "pair"):
            if device.secret is None:
                device.pair(new_secret())
            return bytes(device.secret), str(device.serial)
        if not shoe.serial:
            raise TableError(f"shoe {self.url}: [shoe] serial is not set; a real shoe is only taken when it is "
                             "the table's own: set [shoe] serial (shoe-ctl doctor names the serial an unpaired shoe "
                             "gives), then run shoe-ctl pair (or [shoe] auth = \"off\" for an unauthenticated bench)")
        try:
            secret = SecretStore(shoe.secrets).load(shoe.serial)
        except SecretError as exc:
            raise TableError(f"shoe {shoe.serial}: {exc}") from None
        if secret is None:
            raise TableError(f"shoe {shoe.serial} is not paired with this table (no secret in {shoe.secrets}): "
                             "put the shoe in pairing mode and run shoe-ctl pair (or [shoe] auth = \"off\" for an "
                             "unauthenticated bench); a shoe paired before (a new SD card, a wiped key file) keeps "
                             f"its secret: restore {SecretStore(shoe.secrets).path(shoe.serial)} (shoe-ctl doctor "
                             "says whether the shoe answers sealed frames)")
        return secret, shoe.serial

    def _start_dealer_io(self, link: ShoeLink) -> DealerIO:
        """The dealer's LEDs, display and buttons; a display that cannot bind its address is an
        error when it was asked for (``display_required``), else said and left out."""
        try:
            return start_dealer_io(self.cfg, self.controller.post, display=self._display, send_leds=link.send_leds,
                                   try_send_leds=link.try_send_leds,
                                   console=self._console, stream=self._led_stream,
                                   pin_factory=self._pin_factory, display_model=self._display_model)
        except OSError as exc:
            problem = bind_problem(exc)
            if self._display_required is not None:
                raise OSError(f"dealer display on {self._display_required}: {problem}; choose another "
                              "--display HOST:PORT, or --display off") from exc
            self.display_problem = f"{self.cfg.display.host}:{self.cfg.display.port} {problem}"
            self._say(f"shoe-ctl run: THE DEALER DISPLAY IS NOT SERVED: {self.display_problem}; set [display] "
                      "port (or pass --display HOST:PORT) and restart; continuing without it")
            return start_dealer_io(self.cfg, self.controller.post, display=None, send_leds=link.send_leds,
                                   try_send_leds=link.try_send_leds,
                                   console=self._console, stream=self._led_stream,
                                   pin_factory=self._pin_factory)

    def _await_link(self, timeout: float) -> None:
        """Wait for the link's first ``connected`` (left on the queue for the machine)."""
        waited = 0.0
        while waited < timeout:
            if self.link is not None and self.link.info is not None:
                return
            self.stopped.wait(0.01)
            waited += 0.01
        raise TimeoutError("the shoe link did not connect")

    def close(self) -> None:
        """Say ``STOPPING=1`` to systemd, then close every part in the reverse order of its start
        (the simulated dealer, the controller and its sinks, the link, the dealer port, the LEDs,
        display and buttons, the simulated shoe, the journal). A part that raises is logged; the
        others are closed all the same. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._notifier is not None:
            self._notifier.stopping()
        self.stopped.set()
        for part in reversed(self._parts):
            try:
                part.close()
            except Exception:  # noqa: BLE001 - shut everything down whatever one part does
                log.exception("closing %r", part)
        self._parts = []

    def __enter__(self) -> Table:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def freeze_startup_heap() -> None:
    """Once the service has started (``shoe-ctl run`` calls it as the table starts dealing): a
    full collection, then every object still alive — modules, configuration, the machine's
    structures, the servers — moves to the collector's permanent generation (``gc.freeze``), so a
    later full collection walks only what the deal made since. Without it a full collection in
    the middle of a deal took 30–40 ms on the development machine (docs/performance.md). Objects
    frozen are never collected by the cycle collector; at start-up they live as long as the
    process anyway."""
    gc.collect()
    gc.freeze()


def _hands_before(journal: Journal) -> int:
    """The journal's number of the last hand before the one a recovery replays: a resumed
    service goes on numbering hands where it stopped (the display shows the same hand). No scan
    of every hand: the start path stays short on a big journal."""
    if journal.current_hand is not None:
        return int(journal.current_hand) - 1
    return int(journal.last_hand())


def _status_hook(notifier: Notifier) -> Callable[[Event, list[Command]], None]:
    """A controller after-event hook sending a ``STATUS=`` line to systemd on every change of the
    shoe link (:func:`shoe_ctl.service.notify.link_status`)."""

    def on_link(ev: Event, _cmds: list[Command]) -> None:
        if isinstance(ev, LinkChanged):
            notifier.status(link_status(ev))

    return on_link


def _start_notifications(notifier: Notifier, controller: Controller, stop: threading.Event) -> None:
    """systemd (``Type=notify``, ``shoe_ctl.service.notify``): ``READY=1`` was sent before the
    link started, with a ``STATUS=`` saying the service waits for the shoe (a table without its
    shoe is a running service that shows "shoe not connected", not a start-up failure to
    restart), and a ``STATUS=`` line goes out on every change of the shoe link
    (:func:`_status_hook`); here: ``WATCHDOG=1`` every ``ping_interval_s`` sent from the controller's own thread
    (``Controller.call_soon``), independent of the shoe, so a wedged controller stops the pings
    and systemd restarts the service; ``STATUS=`` when the journal cannot be written and when it
    writes again (``docs/journal.md``, "The writer"). Nothing runs without ``NOTIFY_SOCKET``."""
    if not notifier.enabled:
        return

    def pings(interval: float) -> None:
        while not stop.wait(interval):
            controller.call_soon(notifier.watchdog)

    def journal_state(exc: BaseException | None) -> None:  # the journal's writer thread
        notifier.status("journal cannot be written, card reads kept by the shoe: "
                        f"{exc}" if exc is not None else "journal writes again")

    if controller.writer is not None:
        controller.writer.add_state_listener(journal_state)
    if notifier.ping_interval_s is not None:
        threading.Thread(target=pings, args=(notifier.ping_interval_s,), name="sd-notify-watchdog",
                         daemon=True).start()
