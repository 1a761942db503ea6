"""``shoe-ctl hil crash``: the service, a real child process on the virtual shoe, killed with
SIGKILL mid-hand and restarted, and each finished hand compared with an uninterrupted reference
run from the journal (cards, burns, stub, decisions, alerts, signals). How the kills are chosen,
what is compared and what counts as lost or duplicated: docs/recovery.md."""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from drivers import protocol as p
from hil.dealer import HandScript, SimulatedDealer, TablePicture, random_hands
from hil.replay import HandRecorder
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.config import load_profile
from shoe_ctl.events import CardRead, Command, DealerInput, Instruction, Signal
from shoe_ctl.machine import Dealing
from shoe_ctl.rules.cards import Card, card_text
from shoe_ctl.service import codec
from shoe_ctl.service.dealer_port import INPUTS_BURST, INPUTS_PER_S
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.shoe_secrets import SecretStore, new_secret

__all__ = ["CrashRun", "main", "run_crash"]

AT_START = 0.15
"""Share of the kills that hit a restarting service (50-350 ms after it was started: opening and
checking the journal, replaying it, appending the hand marks) instead of one dealing."""


# --------------------------------------------------------------------------- the service process


class ServiceProcess:
    """``shoe-ctl run`` as a child process on the given shoe URL, journal and dealer socket.

    ``stderr`` of every start is appended to ``log`` (the recovery report lines are read from it).
    """

    def __init__(self, shoe_url: str, journal: Path, sock: Path, log: Path, *, rules: str, game: str,
                 config: str | None = None) -> None:
        self.argv = [sys.executable, "-c", "import sys; from shoe_ctl.cli import main; sys.exit(main())",
                     "run", "--shoe", shoe_url, "--journal", str(journal), "--dealer-socket", str(sock),
                     "--display", "off", "--rules", rules, "--game", game]
        if config is not None:
            self.argv += ["--config", config]
        self.sock = sock
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        """Start the service (a socket file left by a killed one is replaced by the service)."""
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=err, start_new_session=True)
        self.starts += 1

    def kill(self) -> None:
        """SIGKILL and reap."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM (a clean stop) and wait; SIGKILL after ``timeout``. Returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


# --------------------------------------------------------------------------- the dealer's side


class DealerClient:
    """The harness end of the service's dealer port: commands in, dealer inputs out.

    Inputs are paced to the port's own limit (:data:`~shoe_ctl.service.dealer_port.INPUTS_PER_S`,
    bursts of :data:`~shoe_ctl.service.dealer_port.INPUTS_BURST`): a dealer catching up after a
    restart waits rather than being refused. An input the port refuses all the same (its error
    line) ends the run: :attr:`refused` holds the reason and ``on_refused`` is called with it.

    :param path: the service's dealer socket.
    :param on_command: called (in the reader thread) with every command, in order.
    :param on_refused: called (in the reader thread) with the port's reason when it refuses an input.
    """

    def __init__(self, path: Path, on_command: Callable[[Any], None],
                 on_refused: Callable[[str], None] = lambda _why: None) -> None:
        self.path = path
        self.on_command = on_command
        self.on_refused = on_refused
        self.refused: str | None = None
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.up = False
        self.sent = 0
        self.dropped = 0
        self._reader: threading.Thread | None = None
        self._credit = float(INPUTS_BURST) / 2  # half the port's burst: its bucket is shared with nobody else
        self._credit_at = time.monotonic()

    def connect(self, timeout: float, alive: Callable[[], bool], before_read: Callable[[], None]) -> None:
        """Connect (retrying until the service offers the socket), call ``before_read``, then
        start reading.

        :raises TimeoutError: no connection within ``timeout`` seconds.
        :raises RuntimeError: the service exited meanwhile.
        """
        end = time.monotonic() + timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(str(self.path))
                break
            except OSError:
                s.close()
                if not alive():
                    raise RuntimeError("the service exited before offering its dealer socket") from None
                if time.monotonic() > end:
                    raise TimeoutError(f"no dealer socket at {self.path} within {timeout} s") from None
                time.sleep(0.01)
        with self.lock:
            self.sock = s
            self.up = True
        before_read()
        self._reader = threading.Thread(target=self._read, args=(s,), name="crash-dealer-read", daemon=True)
        self._reader.start()

    def down(self) -> None:
        """From now on inputs are dropped (the service is being killed)."""
        with self.lock:
            self.up = False

    def wait_reader(self, timeout: float = 10.0) -> None:
        """Wait until the reader has read everything the old service sent (its EOF)."""
        if self._reader is not None:
            self._reader.join(timeout)
        with self.lock:
            if self.sock is not None:
                self.sock.close()
                self.sock = None

    def _pace(self) -> None:
        """Wait until the port's rate allows one more input (a token bucket at its rate)."""
        rate = INPUTS_PER_S / 2
        now = time.monotonic()
        self._credit = min(INPUTS_BURST / 2, self._credit + (now - self._credit_at) * rate)
        self._credit_at = now
        if self._credit < 1.0:
            time.sleep((1.0 - self._credit) / rate)
            self._credit, self._credit_at = 1.0, time.monotonic()
        self._credit -= 1.0

    def post(self, event: DealerInput) -> None:
        """Send one dealer input, paced to the port's limit; dropped while the service is down."""
        line = codec.dumps(event).encode() + b"\n"
        self._pace()
        self.send_line(line)

    def send_line(self, line: bytes) -> None:
        """Send one line as it is (unpaced); dropped while the service is down."""
        with self.lock:
            if not self.up or self.sock is None:
                self.dropped += 1
                return
            try:
                self.sock.sendall(line)
                self.sent += 1
            except OSError:
                self.dropped += 1

    def _read(self, s: socket.socket) -> None:
        buf = b""
        while True:
            try:
                chunk = s.recv(65536)
            except OSError:
                return
            if not chunk:
                return  # a partial last line of a killed service is dropped
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                data = json.loads(line)
                if "error" in data and "type" not in data:
                    self.refused = f"the service refused a dealer input: {data['error']}"
                    self.on_refused(self.refused)
                    return
                self.on_command(codec.decode(data, "dealer port"))


class _Marker(threading.Event):
    """Put in the dealer's inbox: set when every instruction before it has been acted on."""


class CrashDealer(SimulatedDealer):
    """The simulated dealer with what a restart needs: :meth:`quiesce` (everything already
    received acted on), and a resync that ends with the first thing the dealer does after the
    reconnect. Instructions the dealer has already carried out and that need no input again (a
    card already pulled, whose read the shoe is resending) leave it pending; the first instruction
    that does need the dealer (a new card, or inputs the service never got) uses it up, so a later
    repeat in the normal course of a hand is not answered twice.

    :param actions: a callable giving the number of pulls and inputs so far.
    """

    def __init__(self, *args: Any, actions: Callable[[], int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._actions = actions

    def act(self, ins: Instruction) -> None:
        if isinstance(ins, _Marker):
            ins.set()
            return
        before = self._actions()
        super().act(ins)
        if self._actions() != before:
            self._resync = False

    def quiesce(self, timeout: float = 10.0) -> bool:
        """Wait until every instruction received so far has been acted on."""
        marker = _Marker()
        self._inbox.put(marker)
        return marker.wait(timeout)


def _virtual_shoe(folder: Path, seed: int, serial: str, secret: bytes) -> VirtualShoe:
    """The default shoe of a run: the virtual shoe on TCP (one port for the whole run)."""
    return VirtualShoe(transport="tcp", seed=seed, serial=serial, secret=secret).start()


class _CountingShoe:
    """The dealer's shoe: pulls and reloads the shoe, counting each pull as an action."""

    def __init__(self, shoe: Any, on_action: Callable[[], None], trace: list[list[Any]]) -> None:
        self.shoe = shoe
        self.on_action = on_action
        self.trace = trace

    def pull(self) -> Card | None:
        card: Card | None = self.shoe.pull()
        self.trace.append([time.monotonic(), "pull", card_text(card)])
        self.on_action()
        return card

    def reload(self, cards: Sequence[Card]) -> None:
        self.shoe.reload(cards)


# --------------------------------------------------------------------------- one run


@dataclass
class RunRecord:
    """What one run (reference or killed) left behind."""

    journal: Path
    log: Path
    actions: int
    kills: int
    restarts: int
    seconds: float
    history: list[TablePicture]
    signals: list[tuple[Any, ...]]
    shoe_cards: dict[int, Card | None]
    dropped_inputs: int
    rewinds: int = 0
    error: str | None = None


@dataclass
class CrashRun:
    """One killed or uninterrupted run of N hands."""

    hands: list[HandScript]
    workdir: Path
    name: str
    seed: int
    rules: str = "tda"
    game: str = "stud"
    kill_points: set[int] = field(default_factory=set)
    kill_plans: list[tuple[float, list[float]]] = field(default_factory=list)
    timeout: float = 600.0
    config: str | None = None
    progress: TextIO | None = None
    shoe_factory: Callable[[Path, int, str, bytes], Any] | None = None
    """Builds and starts the shoe from (folder, seed, serial, secret): it has ``url``, ``pull``,
    ``reload``, ``unacked_count``, ``wait_acked``, ``close``, and ``card_events()`` or ``events``
    (default: the virtual shoe on TCP; ``hil.reader_shoe.ReaderShoe`` is the bridge on a virtual reader)."""

    def run(self) -> RunRecord:
        t0 = time.monotonic()
        journal = self.workdir / f"{self.name}.journal"
        log = self.workdir / f"{self.name}.log"
        sock = self.workdir / f"{self.name}.sock"

        secret = new_secret()  # the service takes a real shoe only when paired with it (docs/security.md)
        SecretStore(self.workdir / "shoes").save("VS-0001", secret)
        make = self.shoe_factory or _virtual_shoe
        shoe = make(self.workdir / f"{self.name}.shoe", self.seed, "VS-0001", secret)
        config = self.config
        if config is None:
            table = self.workdir / f"{self.name}.toml"
            # the harness's own table, like a development checkout's: it proves the journal and
            # the link, and would only tilt on a checkout with no signed release manifest
            table.write_text(f'[shoe]\nserial = "VS-0001"\nsecrets = "{self.workdir / "shoes"}"\n'
                             '[release]\nverify = "off"\n')
            config = str(table)
        proc = ServiceProcess(shoe.url, journal, sock, log, rules=self.rules, game=self.game, config=config)
        signals: list[tuple[Any, ...]] = []
        actions = 0
        kills = 0
        kill_q: queue.Queue[tuple[float, list[float]] | None] = queue.Queue()
        killer_idle = threading.Event()
        killer_idle.set()
        plans = list(self.kill_plans)
        error: list[str] = []
        act_lock = threading.Lock()

        def on_action() -> None:
            nonlocal actions
            with act_lock:
                actions += 1
                due = actions in self.kill_points
            if due:
                killer_idle.clear()
                kill_q.put(plans.pop(0) if plans else (0.0, []))

        rewinds = 0
        catch_up = 3  # how far back a signal shown again after a restart may lie (set at each kill)
        first_after_restart = threading.Event()
        trace: list[list[Any]] = []  # what happened when, kept with --workdir for diagnosis

        def on_command(cmd: Command) -> None:
            nonlocal rewinds
            if isinstance(cmd, Instruction):
                key = (cmd.signal.value, cmd.seat, cmd.face, cmd.street, cmd.card_no)
                trace.append([time.monotonic(), "signal", proc.starts, *key])
                if (cmd.signal is Signal.IDLE and cmd.card_no is not None) or (
                        cmd.signal in (Signal.SHOE_FAULT, Signal.DEGRADED) and cmd.card_no is None):
                    # a new hand waiting for the shoe's counter reset, or no hand while the shoe
                    # is not connected yet (each start): shown or not by timing
                    dealer.handle(cmd)
                    return
                if first_after_restart.is_set():
                    # catching up after a restart: a signal shown before the kill is shown again
                    # (the one before a card read that was not journaled yet; the shoe resends
                    # that card and the signal moves on); the first new one ends the catch-up
                    if key in signals[-catch_up:]:
                        rewinds += signals[-1] != key
                        dealer.handle(cmd)
                        return
                    first_after_restart.clear()
                if not signals or signals[-1] != key:
                    signals.append(key)
            dealer.handle(cmd)

        def on_refused(why: str) -> None:
            error.append(why)  # the run fails with the reason, at once
            dealer.done.set()

        client = DealerClient(sock, on_command, on_refused)

        def post(ev: DealerInput) -> None:
            trace.append([time.monotonic(), "input", ev.action.value, ev.seat, client.up])
            client.post(ev)
            on_action()

        dealer = CrashDealer(_CountingShoe(shoe, on_action, trace), post, self.hands, seed=self.seed, auto_ack=True,
                             actions=lambda: actions)

        def restart(again: list[float]) -> None:
            nonlocal kills, catch_up
            client.down()
            trace.append([time.monotonic(), "kill", actions])
            proc.kill()
            kills += 1
            # every event the shoe still holds was shown (its signal) but never committed: the
            # restarted service may show the signal before each of them again
            catch_up = 3 + shoe.unacked_count()
            client.wait_reader()
            if not dealer.quiesce():
                raise RuntimeError("the dealer did not settle after a kill")
            for delay in again:  # killed again while it starts: opening the journal, recovering
                proc.start()
                time.sleep(delay)
                trace.append([time.monotonic(), "kill-at-start", delay])
                proc.kill()
                kills += 1
            proc.start()
            first_after_restart.set()
            trace.append([time.monotonic(), "restart"])
            client.connect(30.0, proc.alive, dealer.resync)
            trace.append([time.monotonic(), "connected"])
            if self.progress is not None:
                print(f"{self.name}: kill {kills} after action {actions} (signal {len(signals)})",
                      file=self.progress, flush=True)

        def killer() -> None:
            while True:
                plan = kill_q.get()
                if plan is None:
                    return
                try:
                    time.sleep(plan[0])
                    restart(plan[1])
                except Exception as exc:  # noqa: BLE001 - ends the run, visibly
                    error.append(f"restart failed: {type(exc).__name__}: {exc}")
                    dealer.done.set()
                finally:
                    if kill_q.empty():
                        killer_idle.set()

        killer_thread = threading.Thread(target=killer, name="crash-killer", daemon=True)
        try:
            proc.start()
            client.connect(30.0, proc.alive, lambda: None)
            killer_thread.start()
            dealer.start()
            end = time.monotonic() + self.timeout
            while True:
                if client.refused is not None:
                    break
                if dealer.done.wait(0.05) and killer_idle.wait(0):
                    break
                if dealer.stalled:
                    error.append(f"the dealer stalled: {dealer.stalled}")
                    break
                if killer_idle.is_set() and not proc.alive():
                    error.append(f"the service exited with status {proc.proc.returncode if proc.proc else None}")
                    break
                if time.monotonic() > end:
                    error.append(f"not done within {self.timeout} s ({len(dealer.history)} hands finished)")
                    break
            killer_idle.wait(60)
            if not error and not shoe.wait_acked(10):
                error.append(f"the shoe still holds {shoe.unacked_count()} unacked events at the end")
        finally:
            kill_q.put(None)
            killer_thread.join(60) if killer_thread.is_alive() else None
            dealer.close()
            status = proc.stop()
            if status not in (0, None) and not error:
                error.append(f"the service stopped with status {status}")
            client.wait_reader(1)
            shoe.close()
        shoe_cards = (shoe.card_events() if hasattr(shoe, "card_events") else
                      {m.seq: m.card for m in shoe.events if isinstance(m, p.CardMsg)})
        with open(self.workdir / f"{self.name}.signals.jsonl", "w") as f:
            for key in signals:
                f.write(json.dumps(key) + "\n")
        with open(self.workdir / f"{self.name}.trace.jsonl", "w") as f:
            for entry in sorted(trace, key=lambda e: float(e[0])):
                f.write(json.dumps(entry) + "\n")
        return RunRecord(journal, log, actions, kills, max(proc.starts - 1, 0), time.monotonic() - t0,
                         list(dealer.history), signals, shoe_cards, client.dropped, rewinds,
                         "; ".join(error) or None)


# --------------------------------------------------------------------------- reading a journal


@dataclass
class JournalHands:
    """Per finished hand, what the journal says (see :func:`read_journal`)."""

    hands: list[dict[str, Any]]
    card_seqs: Counter[int]
    tables: list[dict[int, dict[str, Any]]]


def read_journal(path: Path, rules: str) -> JournalHands:
    """Replay a journal into a fresh machine and read what the live service journaled.

    :returns: per finished hand ``{"cards", "burns", "stub", "summary", "alerts", "end"}``:
        cards per table seat (down, up, status), burns by street and the stub left (from the
        replay), the live service's journaled alerts (code, street, seat, latched) and its
        ``hand-end`` body; the shoe sequences of all journaled card reads (with their count).
    """
    profiles = {"tda": load_profile("tda"), "house": load_profile("house")}
    machine = Dealing(profiles, default_rules=rules, display=False)
    recorder = HandRecorder(machine)
    for cmd in machine.start():
        recorder.handle(cmd)
    alerts: dict[int, list[tuple[Any, ...]]] = {}
    ends: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    seqs: Counter[int] = Counter()
    with Journal(path, table=None, profile=None, readonly=True) as j:
        for rec in j.records():
            if rec.kind == "hand-start" and rec.hand is not None:
                order.append(rec.hand)
                continue
            if rec.kind == "hand-end" and rec.hand is not None:
                body = dict(rec.data)
                ends[rec.hand] = body
                continue
            if rec.kind not in codec.TYPES:
                continue
            item = rec.item
            if isinstance(item, CardRead):
                seqs[item.seq] += 1
            if type(item).__name__ == "Alert":
                if rec.hand is not None and item.code not in START_ALERTS:  # type: ignore[union-attr]
                    a: Any = item
                    alerts.setdefault(rec.hand, []).append((a.code, a.street, a.seat, a.latched))
                continue
            if type(item).__name__ in ("Instruction", "DisplayUpdate", "ShoeCommand"):
                continue
            for cmd in machine.handle(item):
                recorder.handle(cmd)
    finished = [h for h in order if h in ends]
    out = []
    tables = []
    for k, hand in enumerate(finished):
        rec_h = recorder.hands[k] if k < len(recorder.hands) else None
        out.append({
            "hand": hand,
            "cards": None if rec_h is None else {str(s): v for s, v in sorted(rec_h.cards.items())},
            "burns": None if rec_h is None else rec_h.burns,
            "stub": None if rec_h is None else rec_h.stub,
            "summary": None if rec_h is None else rec_h.summary,
            "alerts": alerts.get(hand, []),
            "end": ends[hand],
        })
        tables.append({} if rec_h is None else rec_h.cards)
    return JournalHands(out, seqs, tables)


def _seat_cards(picture: TablePicture) -> dict[int, Counter[str]]:
    return {seat: Counter(card_text(c) for _face, c in cards) for seat, cards in picture.seats.items()}


def _recovery_mismatches(log: Path) -> list[str]:
    try:
        text = log.read_text(errors="replace")
    except FileNotFoundError:
        return []
    return [line for line in text.splitlines() if line.startswith("recovery: mismatch")]


# --------------------------------------------------------------------------- the comparison


def run_crash(hands: int, kills: int, seed: int, *, workdir: str | Path | None = None, rules: str = "tda",
              game: str = "stud", timeout: float | None = None, progress: TextIO | None = None) -> dict[str, Any]:
    """Deal ``hands`` random hands uninterrupted, then again with ``kills`` SIGKILLs, and compare.

    :returns: the result dict: ``hands``, ``kills`` (done), ``mismatches``, ``lost_cards``,
        ``duplicated_cards``, ``seconds``, ``restarts``, ``finished`` (hands the killed run
        finished), ``recovery_mismatches``, ``signal_mismatch``, ``dropped_inputs``, ``details``
        (the first few differences) and ``error`` (a run that did not finish), ``ok``.
    :raises ValueError: ``kills`` larger than the reference run has actions, or negative numbers;
        a ``workdir`` that cannot be created or written (a missing one is created).
    """
    if hands < 1 or kills < 0:
        raise ValueError("need --hands >= 1 and --kills >= 0")
    t0 = time.monotonic()
    limit = timeout if timeout is not None else 120.0 + 4.0 * hands + 3.0 * kills
    scripts = list(random_hands(seed, seats=range(1, 9), game=game, rules=rules, count=hands))
    own = workdir is None
    tmp = Path(tempfile.mkdtemp(prefix="shoe-ctl-crash-")) if workdir is None else _workdir(workdir)
    try:
        ref = CrashRun(scripts, tmp, "reference", seed, rules, game, timeout=limit, progress=progress).run()
        if ref.error:
            return _result(hands, 0, t0, error=f"reference run: {ref.error}")
        rng = random.Random(seed * 1_000_003 + kills)
        if kills > ref.actions - 1:
            raise ValueError(f"--kills {kills}: the run has only {ref.actions} dealer actions to kill after")
        at_start = sum(1 for _ in range(1, kills) if rng.random() < AT_START)
        points = sorted(rng.sample(range(1, ref.actions), kills - at_start))
        plans: list[tuple[float, list[float]]] = [(rng.uniform(0.0, 0.02), []) for _ in points]
        for _ in range(at_start):
            plans[rng.randrange(len(plans))][1].append(rng.uniform(0.05, 0.35))
        killed = CrashRun(scripts, tmp, "killed", seed, rules, game, kill_points=set(points), kill_plans=plans,
                          timeout=limit, progress=progress).run()
        return compare(ref, killed, hands, kills, t0, rules)
    finally:
        if own:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


def _workdir(path: str | Path) -> Path:
    """The ``--workdir`` folder, created (with its parents) when it does not exist.

    :raises ValueError: it cannot be created, is not a folder, or cannot be written.
    """
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ValueError(f"--workdir {path}: exists and is not a folder") from None
    except OSError as exc:
        raise ValueError(f"--workdir {path}: cannot create the folder: {exc.strerror or exc}") from None
    if not p.is_dir():
        raise ValueError(f"--workdir {path}: exists and is not a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise ValueError(f"--workdir {path}: cannot write there")
    return p


START_ALERTS = frozenset({"host-unclean-stop", "clock-unsynced"})
"""Alerts a service start raises about the host (docs/compliance.md): a killed run starts more
often than the reference, so they are no part of a hand's comparison."""


def compare(ref: RunRecord, killed: RunRecord, hands: int, kills: int, t0: float, rules: str = "tda") -> dict[str, Any]:
    """Compare a killed run with the reference (see the module docstring)."""
    details: list[str] = []
    want = read_journal(ref.journal, rules)
    got = read_journal(killed.journal, rules)
    mismatches = 0
    for k in range(max(len(want.hands), len(got.hands))):
        a = want.hands[k] if k < len(want.hands) else None
        b = got.hands[k] if k < len(got.hands) else None
        if a != b:
            mismatches += 1
            if len(details) < 8:
                details.append(_diff(k + 1, a, b))
    if len(want.hands) != hands:
        details.append(f"the reference run finished {len(want.hands)} of {hands} hands")
    rec_mm = _recovery_mismatches(killed.log)
    mismatches += len(rec_mm)
    details.extend(rec_mm[:4])
    signal_mismatch = ref.signals != killed.signals
    if signal_mismatch:
        mismatches += 1
        i = next((i for i, (x, y) in enumerate(zip(ref.signals, killed.signals, strict=False)) if x != y),
                 min(len(ref.signals), len(killed.signals)))
        details.append(f"signal {i}: reference {ref.signals[i] if i < len(ref.signals) else None}, "
                       f"killed run {killed.signals[i] if i < len(killed.signals) else None}")
    lost = sum(1 for seq in killed.shoe_cards if seq not in got.card_seqs)
    dup = sum(n - 1 for n in got.card_seqs.values() if n > 1)
    for k, picture in enumerate(killed.history):
        service = got.tables[k] if k < len(got.tables) else {}
        phys = _seat_cards(picture)
        for seat, cards in phys.items():
            entry = service.get(seat, {})
            have = Counter([*entry.get("down", []), *entry.get("up", [])])
            missing = cards - have
            extra = have - cards
            lost += sum(missing.values())
            dup += sum(extra.values())
            if (missing or extra) and len(details) < 12:
                details.append(f"hand {k + 1} seat {seat}: dealt {sorted(cards.elements())}, "
                               f"the service has {sorted(have.elements())}")
    if len(killed.history) != len(ref.history):
        details.append(f"the killed run's dealer finished {len(killed.history)} hands, the reference "
                       f"{len(ref.history)}")
    res = _result(hands, killed.kills, t0, mismatches=mismatches, lost=lost, dup=dup,
                  error=killed.error)
    res.update(restarts=killed.restarts, finished=len(got.hands), recovery_mismatches=len(rec_mm),
               signal_mismatch=signal_mismatch, signal_rewinds=killed.rewinds,
               dropped_inputs=killed.dropped_inputs,
               seconds_reference=round(ref.seconds, 2), seconds_killed=round(killed.seconds, 2))
    if killed.kills != kills and not res.get("error"):
        res["error"] = f"only {killed.kills} of {kills} kills were done"
    res["details"] = details
    res["ok"] = (res["mismatches"] == 0 and res["lost_cards"] == 0 and res["duplicated_cards"] == 0
                 and not res.get("error") and len(got.hands) == hands)
    return res


def _diff(n: int, a: dict[str, Any] | None, b: dict[str, Any] | None) -> str:
    if a is None or b is None:
        return f"hand {n}: {'missing from the killed run' if b is None else 'not in the reference'}"
    keys = [k for k in a if a.get(k) != b.get(k)]
    k = keys[0]
    return f"hand {n} ({', '.join(keys)}): reference {k}={a[k]!r}, killed run {k}={b[k]!r}"[:600]


def _result(hands: int, kills: int, t0: float, *, mismatches: int = 0, lost: int = 0, dup: int = 0,
            error: str | None = None) -> dict[str, Any]:
    res: dict[str, Any] = {"hands": hands, "kills": kills, "mismatches": mismatches, "lost_cards": lost,
                           "duplicated_cards": dup, "seconds": round(time.monotonic() - t0, 2)}
    if error:
        res["error"] = error
    return res


def main(args: argparse.Namespace) -> int:
    """``shoe-ctl hil crash``: print the result (one JSON line with ``--json``); exit 0 only when
    nothing mismatched, was lost or duplicated (and both runs finished)."""
    progress = sys.stderr if getattr(args, "progress", False) else None
    try:
        res = run_crash(args.hands, args.kills, args.seed, rules=getattr(args, "rules", "tda"),
                        game=getattr(args, "game", "stud"), progress=progress,
                        workdir=getattr(args, "workdir", None))
    except ValueError as exc:
        print(f"shoe-ctl hil crash: {exc}", file=sys.stderr)
        return 2
    ok = bool(res.get("ok")) and res["mismatches"] == 0 and res["lost_cards"] == 0 and res["duplicated_cards"] == 0
    if args.json:
        print(json.dumps(res, separators=(",", ":")))
    else:
        print(f"hands {res['hands']}  kills {res['kills']}  mismatches {res['mismatches']}  lost cards "
              f"{res['lost_cards']}  duplicated cards {res['duplicated_cards']}  ({res['seconds']} s)")
        for line in res.get("details", []):
            print(f"  {line}")
        if res.get("error"):
            print(f"  error: {res['error']}")
    return 0 if ok else 1
