"""``python -m bench [--json] [--quick]``: latency, throughput and footprint of shoe-ctl in one run.

Measured side by side (``docs/performance.md`` explains each figure and records the results):

- ``latency_us``: from the moment the virtual shoe writes a card frame to the pty to the moment
  the controller has handed the LED command (the ``Instruction``) for that card to the LED sinks;
  the production stack in this process: virtual shoe on a real pty, ``ShoeLink``, the controller
  with the SQLite journal (``synchronous=FULL``, as ``shoe-ctl run --journal``) appending and
  acking every card, the dealing machine, the dealer display server, the console and shoe LED
  sinks, and the simulated dealer pulling the next card ``--pace-ms`` after each instruction.
  ``latency_parts_us`` splits it: link (shoe write to the controller taking the event), journal
  (the durable append), machine (ack and ``Dealing.handle``), sinks (until the LED sinks have it).
- ``wire_us``: the card frame out and the LED frame back on a 115200-baud line (10 bits per byte),
  both sizes counted from the frames the link wrote in the run (:class:`FrameSizes`);
  ``latency_led_us`` from a card frame's write until the virtual shoe shows the LED pattern its
  instruction brought (:class:`LedShows`), the figure held against ``wire_us`` + 1 ms.
- ``replay_direct_hands_per_s`` (PHH text -> rules core + state machine, no wire),
  ``replay_full_hands_per_s`` (through the pty, ``ShoeLink`` and the controller thread) and
  ``pokerkit_hands_per_s`` (``pokerkit.HandHistory.loads`` and every state of the hand) on the real
  hands of ``../shared/data/stud/phh``; ``ratio_direct_vs_pokerkit`` on the hands pokerkit accepts
  (runs interleaved; the median over the rounds of each round's ratio, :func:`paired_ratio`);
  beside it ``ratio_engine_vs_pokerkit`` (the machine handed recorded events against pokerkit's
  states of parsed histories) and ``ratio_analyze_vs_pokerkit`` (``shoe-ctl analyze``'s work per
  file against pokerkit's replay), one run each.
- ``ratio_replay_process_vs_pokerkit``: ``shoe-ctl replay --direct --json`` against pokerkit
  (``bench/pokerkit_replay.py``) on the hands pokerkit accepts, each a whole process from start to
  exit, run alternately (:data:`PROCESS_PAIRS` pairs after a warm-up, the bytecode compiled as the
  install compiles it): the median over the pairs of pokerkit's time over ours, wall and CPU.
- ``calibration``: the fixed Python loop of :mod:`bench.calibration`, timed at the start and the
  end of the run, with the Pi 4's estimated time; ``load_avg_by_part`` the load average after each
  part.
- ``soak_cards_per_s``: random 8-seat hands dealt by the simulated dealer through the virtual shoe,
  the pty, ``ShoeLink``, the controller and the machine.
- ``rss_mb`` and ``ready_s``: a real ``shoe-ctl run`` child process (built-in virtual shoe, display
  on, journal on); ``ready_s`` from the process start to the shoe handshake (the ``READY=1``
  notification, or the display's state first showing the shoe connected); ``rss_mb`` (MiB) from
  ``/proc/PID/status`` after it has dealt some hands.
- ``ready_large_journal_s``: ``ready_s`` again, started on a journal that already holds 15,000
  finished hands over 29 days (``bench/journal_large.py``: built with ``executemany`` from the
  records of real dealt hands, not through the machine); its size in ``ready_large_journal_file``.
- ``latency_loaded_cards_per_s``: the latency run's stack with the simulated dealer pulling each
  card as soon as the instruction for it is shown (closed loop, no wait for the ack): cards per
  second through shoe, pty, link, controller, machine, sinks and the journal's group commit,
  timed from the table's start (its start-up included) to the last card counted; the median of
  :data:`LOADED_RUNS` runs (each run's in ``latency_loaded_runs_cards_per_s``).
  ``latency_loaded_dealing_cards_per_s``: the median run's card reads over the time from the first
  card's write to the end (the start-up left out: it is ``ready_s``'s part).

Nothing here is asserted: the targets are printed with met/missed.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import http.client
import inspect
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.calibration import calibrate, describe
from bench.machine import machine_info

ROOT = Path(__file__).resolve().parents[1]
BAUD = 115200
BITS_PER_BYTE = 10  # start bit, 8 data bits, stop bit

TARGETS = {
    "latency": "card -> shoe LEDs p99 <= wire (card frame + LED frame) + 1 ms",
    "direct": "direct replay >= 3x pokerkit (in one process)",
    "process": "shoe-ctl replay --direct >= 2.5x pokerkit (whole processes)",
    "cpu": "CPU per card of the full stack (every service thread), and the share of a Pi 4 core at 2 cards/s",
    "rss": "RSS <= 60 MB",
    "ready": "ready <= 0.5 s on one core, <= 1 s with a 15,000-hand journal (compiled bytecode)",
}


def shared_dir() -> Path:
    """``$SHOE_CTL_SHARED`` or ``../shared`` beside the repository."""
    env = os.environ.get("SHOE_CTL_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


def phh_files(limit: int | None = None) -> list[Path]:
    from shoe_ctl.analyze import iter_phh_files

    files = list(iter_phh_files([shared_dir() / "data" / "stud" / "phh"]))
    return files[:limit] if limit else files


def profiles() -> dict[str, Any]:
    from shoe_ctl.config import load_profile

    return {"tda": load_profile("tda"), "house": load_profile("house")}


def pct(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))
    return s[k]


def summary_us(ns: Sequence[int]) -> dict[str, float]:
    us = [x / 1000 for x in ns]
    return {"p50": round(pct(us, 0.50), 1), "p99": round(pct(us, 0.99), 1), "max": round(max(us), 1) if us else 0.0}


# ---------------------------------------------------------------------------------- latency


class _Stamp:
    """A sink placed right after the LED sinks: notes when each Instruction was handed over."""

    def __init__(self) -> None:
        self.last_ns = 0
        self.last: Any = None

    def handle(self, command: Any) -> None:
        from shoe_ctl.events import Instruction

        if isinstance(command, Instruction):
            self.last_ns = time.perf_counter_ns()
            self.last = command

    def close(self) -> None:
        return None


class _TimedJournal:
    """The journal, with the start and end of the last append noted (for the latency split)."""

    def __init__(self, journal: Any) -> None:
        self.journal = journal
        self.start_ns = 0
        self.end_ns = 0

    def append(self, item: Any) -> int:
        self.start_ns = time.perf_counter_ns()
        try:
            return int(self.journal.append(item))
        finally:
            self.end_ns = time.perf_counter_ns()

    def append_many(self, items: Any) -> list[int]:
        self.start_ns = time.perf_counter_ns()
        try:
            return list(self.journal.append_many(items))
        finally:
            self.end_ns = time.perf_counter_ns()

    def submit(self, items: Any, **kw: Any) -> Any:
        """The controller's path: queue for the writer (the time noted is the queueing; the
        commit and the ack follow in the writer thread)."""
        self.start_ns = time.perf_counter_ns()
        try:
            return self.journal.submit(items, **kw)
        finally:
            self.end_ns = time.perf_counter_ns()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.journal, name)


class _Kiosk:
    """The dealer display's browser: one ``/events`` stream read to its end on its own thread
    (``kiosk``), so the display serialises and pushes every snapshot as it does on a table."""

    def __init__(self, port: int) -> None:
        self.received = 0
        self._resp: Any = None
        self._thread = threading.Thread(target=self._read, args=(port,), name="kiosk", daemon=True)
        self._thread.start()

    def _read(self, port: int) -> None:
        try:
            self._resp = urllib.request.urlopen(f"http://127.0.0.1:{port}/events", timeout=60)
            while chunk := self._resp.read1(65536):
                self.received += len(chunk)
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            return  # closed by close() or the server's end

    def close(self) -> None:
        resp = self._resp
        if resp is not None:
            with contextlib.suppress(OSError, AttributeError):
                resp.fp.raw._sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(5)


class _IdleShoe:
    """The virtual shoe as the simulated dealer sees it: each pull first waits until the service is
    idle — every earlier card acked (journaled) and every dealer input handled — and then
    ``settle_s`` more, as a dealer pulling a card every half second finds it; ``settle_s`` < 0 pulls
    at once (the service loaded). While :attr:`hold` is set a pull waits (the table idle)."""

    ACK_POLL_S = 0.002
    """Seconds between two looks at the shoe's unacked events while a pull waits for its ack (an
    ack comes some 20 ms after its card: the protocol spaces them). Looking every 0.1 ms, as this
    did, woke the dealer's thread ~120 times a card, each time taking the interpreter's lock from
    the service's threads in the middle of their work: it cost them CPU the bench then counted."""

    def __init__(self, shoe: Any, settle_s: float, controller: Any = None) -> None:
        self.shoe = shoe
        self.settle_s = settle_s
        self.controller = controller
        self.hold = threading.Event()

    def pull(self) -> Any:
        while self.hold.is_set():
            time.sleep(0.05)
        if self.settle_s >= 0:
            if self.controller is not None:
                self.controller.wait_idle(5.0)
            end = time.monotonic() + 5.0
            while self.shoe.unacked_count() and time.monotonic() < end:
                time.sleep(self.ACK_POLL_S)
            if self.settle_s:
                time.sleep(self.settle_s)
        return self.shoe.pull()

    def reload(self, cards: Any) -> None:
        self.shoe.reload(cards)


def wire_us(frame_bytes: int) -> float:
    """Time (µs) of ``frame_bytes`` on the shoe's line: 115200 baud, 10 bits a byte."""
    return round(frame_bytes * BITS_PER_BYTE / BAUD * 1e6, 1)


class FrameSizes:
    """The size of every frame a side of the link writes, by message type, as written (the
    encoder's bytes: delimiters, COBS, the header, the payload, version 2's counter and MAC, the
    CRC): :meth:`watch` wraps the method that writes one frame."""

    def __init__(self) -> None:
        self.sizes: dict[int, collections.Counter[int]] = {}

    def watch(self, obj: Any, method: str) -> None:
        write = getattr(obj, method)

        def counted(frame: bytes, *args: Any, **kw: Any) -> Any:
            self.note(frame)
            return write(frame, *args, **kw)

        setattr(obj, method, counted)

    def note(self, frame: bytes) -> None:
        import cobs.cobs

        try:
            mtype = cobs.cobs.decode(frame.strip(b"\x00"))[0]
        except (cobs.cobs.DecodeError, IndexError):
            return
        self.sizes.setdefault(mtype, collections.Counter())[len(frame)] += 1

    def typical(self, mtype: int) -> tuple[int, list[int]]:
        """The most frequent size of the frames of ``mtype`` and the [smallest, largest]; (0, [])
        when none was written."""
        sizes = self.sizes.get(mtype)
        if not sizes:
            return 0, []
        return sizes.most_common(1)[0][0], [min(sizes), max(sizes)]


class LedShows:
    """A card's way to the shoe's own LEDs: when the shoe's LED sink hands each pattern to the
    link (:meth:`watch_sink`) and when the virtual shoe shows it (its firmware's ``Lights.show``,
    called as it takes the LED frame). The link gives every pattern handed to it a new token and
    the shoe shows them in order; a frame sent again (same token) counts once."""

    def __init__(self, lights: Any) -> None:
        from drivers import protocol as p

        self.sent: list[tuple[int, str, bool]] = []  # (ns, signal, in the controller's thread) handed to the link
        self.shown: list[tuple[int, int, str]] = []  # (ns, token, signal) the shoe showed
        show = lights.show

        def timed(led: Any) -> None:
            show(led)
            if not self.shown or self.shown[-1][1] != led[0]:
                self.shown.append((time.perf_counter_ns(), led[0], p.LED_SIGNALS[led[1]]))

        lights.show = timed

    def watch_sink(self, sink: Any) -> None:
        """Note each pattern the shoe's LED sink (:class:`drivers.leds.ShoeLedSink`) hands over:
        from its worker (``send_leds``) or in the controller's thread (``try_send``, when it
        handed the pattern over)."""
        send, try_send = sink._send, getattr(sink, "_try", None)

        def timed(pattern: Any) -> Any:
            self.sent.append((time.perf_counter_ns(), str(pattern.get("name") or pattern.get("signal")), False))
            return send(pattern)

        def tried(pattern: Any) -> bool:
            t = time.perf_counter_ns()
            handed = bool(try_send(pattern))
            if handed:
                self.sent.append((t, str(pattern.get("name") or pattern.get("signal")), True))
            return handed

        sink._send = timed
        if try_send is not None:
            sink._try = tried

    def after(self, changes: Sequence[tuple[int, int, str, int | None]]) -> list[int]:
        """``changes``: every instruction that changed the signal, in order: (ns it reached the
        sinks, ns it ends: the next change's, signal, ns its card frame was written or None for a
        dealer input's). For each card's change, ns from the card frame's write until the shoe
        showed the pattern the sink handed over for it (the first handed over while it was the
        newest signal); a change superseded before the sink sent it is left out. A pattern handed
        over in the controller's thread was handed just before the change reached the stamp sink
        (after the previous change's), one from the sink's worker after it."""
        # the patterns shown before the first one watched being handed over were handed earlier
        skip = sum(1 for t, _, _ in self.shown if self.sent and t < self.sent[0][0])
        shown = self.shown[skip:]
        n = min(len(self.sent), len(shown))
        out: list[int] = []
        k = 0
        before = 0  # the previous change's t_in
        for t_in, t_end, signal, t0 in changes:
            while k < n and self.sent[k][0] < (before if self.sent[k][2] else t_in):
                k += 1
            before = t_in
            if t0 is None or k >= n or self.sent[k][0] >= t_end or self.sent[k][1] != signal \
                    or shown[k][2] != signal:
                continue
            out.append(shown[k][0] - t0)
        return out


def bench_latency(cards: int, *, pace_s: float, seed: int = 7, sync: str = "FULL",
                  timeout: float = 150.0, floor: Any = None, idle_s: float = 0.0,
                  console: bool = True) -> dict[str, Any]:
    """Shoe write -> LED command, over ``cards`` card reads through the production stack.

    :param floor: a :class:`shoe_ctl.floor.config.FloorConfig` to publish to (the floor on), or None.
    :param console: the console LED sink too (``shoe-ctl run`` in a terminal; a service has none).
    :param idle_s: > 0: instead of the latencies, the CPU of every thread
        (:class:`bench.bench_scale.ThreadCpu`) while dealing and then for ``idle_s`` seconds with
        the dealer holding the next card (``cpu_moments``; :func:`bench_cpu` reads them). The
        latency's instruments, which would run in the service's threads (the stamps around the
        machine and the journal, the stamp sink, the frame counter of the host's writes, the LED
        sink's stamp), are then left out, and the LEDs are a Pi's (``gpio``, on gpiozero's mock
        pins) instead of the configuration's ``console``; only the card reads are counted.
    """
    from drivers import protocol as p
    from drivers.leds import ShoeLedSink
    from hil.dealer import SimulatedDealer, random_hands
    from hil.deck import Deck
    from hil.virtual_shoe import VirtualShoe
    from shoe_ctl.config import load_table_config
    from shoe_ctl.events import CardRead
    from shoe_ctl.machine import Dealing
    from shoe_ctl.service.journal import Journal
    from shoe_ctl.service.recovery import HandMarks
    from shoe_ctl.table import Table, freeze_startup_heap

    sent: dict[int, int] = {}

    def on_event(msg: Any) -> None:  # called by the shoe just before it writes the frame
        if isinstance(msg, p.CardMsg):
            sent[msg.seq] = time.perf_counter_ns()
            if not first_card:
                first_card.append(time.perf_counter())

    first_card: list[float] = []
    changed: list[tuple[int, int, str, int | None]] = []  # the signal changes (LedShows.after)
    cpu: list[Any] = [None, None, None]  # (threads' CPU, process CPU, wall, card reads) at 3 moments
    cpu_extra: dict[str, Any] = {}
    reads = [0]
    lat: list[int] = []
    parts: dict[str, list[int]] = {"link": [], "journal": [], "machine": [], "sinks": []}
    done = threading.Event()
    instruments = idle_s <= 0  # the CPU run leaves the latency's instruments out of the service's threads
    with tempfile.TemporaryDirectory(prefix="shoe-bench-") as tmp:
        journal = Journal(Path(tmp) / "bench.journal", table="bench", profile="tda", synchronous=sync)
        timed = _TimedJournal(journal)
        machine = Dealing(profiles(), default_rules="tda")
        marks = HandMarks(journal, machine, wait=False)  # as shoe_ctl.table wires it
        marks.after(machine)
        stamp = _Stamp()
        shoe = VirtualShoe(Deck.seeded(seed), transport="pty", seed=seed, record=False, on_event=on_event)
        frames = FrameSizes()
        frames.watch(shoe.line, "tx")  # every frame the shoe writes, as written
        shows = LedShows(shoe.device.lights)
        shoe.start()
        devnull = open(os.devnull, "w")  # noqa: SIM115 - closed below
        machine_at = [0, 0]
        orig_handle = machine.handle

        def handle(ev: Any) -> Any:
            machine_at[0] = time.perf_counter_ns()
            out = orig_handle(ev)
            machine_at[1] = time.perf_counter_ns()
            return out

        if instruments:
            machine.handle = handle  # type: ignore[method-assign]
        in_path = [0, 0]

        def counted(ev: Any, cmds: Any) -> None:  # the CPU run's only hook besides the table's wiring
            marks.after(machine)
            if type(ev) is CardRead:
                reads[0] += 1
                if reads[0] >= cards:
                    done.set()

        def on_handled(ev: Any, cmds: Any) -> None:
            marks.after(machine)
            if stamp.last is not None and any(c is stamp.last for c in cmds) and \
                    str(stamp.last.signal) != (changed[-1][2] if changed else ""):  # a new LED pattern
                card_t0 = sent.get(ev.seq) if isinstance(ev, CardRead) else None
                changed.append((stamp.last_ns, 0, str(stamp.last.signal), card_t0))
            if isinstance(ev, CardRead):
                reads[0] += 1
                t0 = sent.pop(ev.seq, None)
                if t0 is None or stamp.last is None or not any(c is stamp.last for c in cmds):
                    return
                ms, me = machine_at
                js, je = timed.start_ns, timed.end_ns
                journal_first = js < ms
                in_path[journal_first] += 1
                lat.append(stamp.last_ns - t0)
                parts["link"].append(min(ms, js) - t0 if journal_first else ms - t0)
                parts["journal"].append(je - js)
                parts["machine"].append(me - max(ms, je) if journal_first else me - ms)
                parts["sinks"].append(stamp.last_ns - me)
                if len(lat) >= cards:
                    done.set()

        idle_shoe: list[_IdleShoe] = []

        def dealer(device: Any, post: Any) -> Any:
            idle_shoe.append(_IdleShoe(device, pace_s, table.controller))
            return SimulatedDealer(idle_shoe[0], post, random_hands(seed), seed=seed, auto_ack=True)

        cfg = load_table_config(ROOT / "config" / "table.toml")
        extra: dict[str, Any] = {} if floor is None else {"floor": floor}
        if not instruments:  # a Pi's LEDs: gpiozero on its mock pins, in the controller's thread
            from gpiozero.pins.mock import MockFactory

            cfg = dataclasses.replace(cfg, leds=dataclasses.replace(cfg.leds, backend="gpio", pins=PI_LED_PINS))
            if "pin_factory" in inspect.signature(Table).parameters:
                extra["pin_factory"] = MockFactory()
            else:  # an older tree's table (``python -m bench.trees``): gpiozero's default factory
                from gpiozero import Device

                Device.pin_factory = MockFactory()
        # the stamp sink sits right after the LED sinks, before the display
        table = Table.from_config(cfg, profiles=profiles(),
                                  rules="tda", shoe_url=shoe.url, journal=timed if instruments else journal,
                                  machine=machine, device=shoe,
                                  display=("127.0.0.1", 0), display_required="127.0.0.1:0", console=console,
                                  led_stream=devnull, sinks=[stamp] if instruments else [],
                                  dealer=dealer, wait_connected=10.0, say=lambda _line: None, **extra)
        if floor is not None:
            table.journal = journal  # as Table.from_config keeps the journal it opens: the floor's outbox
        table.controller.add_hook(on_handled if instruments else counted)
        t_start = time.perf_counter()
        try:
            with table:
                assert table.link is not None
                assert table.io is not None
                if instruments:
                    frames.watch(table.link, "_write")  # every frame the host writes (the LED frames)
                    shows.watch_sink(next(k for k in table.io.sinks if isinstance(k, ShoeLedSink)))
                link_auth = table.link.auth
                freeze_startup_heap()  # as shoe-ctl run does once the table has started
                if idle_s > 0:
                    from bench.bench_scale import ThreadCpu, thread_switches

                    assert table.io is not None and table.io.display is not None
                    kiosk = _Kiosk(table.io.display.port)  # the dealer display's browser, as on a table

                    threads = ThreadCpu(period_s=CPU_SAMPLE_S)
                    threads.before = set()  # every thread, the ones started with the table included
                    switched = thread_switches()
                    cpu[0] = threads.snapshot(), time.process_time(), time.perf_counter(), reads[0]
                ok = done.wait(timeout)
                t_end = time.perf_counter()
                seconds = t_end - t_start
                dealing = t_end - first_card[0] if first_card else seconds
                dealt = reads[0]
                if idle_s > 0:
                    idle_shoe[0].hold.set()  # the dealer holds the next card: the table idles
                    table.controller.wait_idle(5.0)
                    cpu[1] = threads.snapshot(), time.process_time(), time.perf_counter(), reads[0]
                    after = thread_switches()
                    cpu_extra["switches"] = {k: n - switched.get(k, 0) for k, n in after.items()}
                    time.sleep(idle_s)
                    cpu[2] = threads.snapshot(), time.process_time(), time.perf_counter(), reads[0]
                    threads.stop()
                    kiosk.close()
                    cpu_extra["kiosk_bytes"] = kiosk.received
                    idle_shoe[0].hold.clear()
        finally:
            shoe.close()
            journal.close()
            devnull.close()
    card_bytes, card_range = frames.typical(p.T_CARD)
    led_bytes, led_range = frames.typical(p.T_LED)
    cpu_out = {} if cpu[2] is None else {"cpu_moments": cpu, **{f"cpu_{k}": v for k, v in cpu_extra.items()}}
    ends = [c[0] for c in changed[1:]] + [time.perf_counter_ns()][:len(changed)]
    led_lat = shows.after([(t, end, signal, t0) for (t, _, signal, t0), end in zip(changed, ends, strict=True)])
    return {
        "latency_us": summary_us(lat),
        "latency_parts_us": {k: summary_us(v) for k, v in parts.items()},
        "latency_cards": len(lat),
        "latency_complete": ok,
        "latency_pace_ms": pace_s * 1000,
        "latency_seconds": round(seconds, 2),
        "latency_dealing_seconds": round(dealing, 3),
        "latency_reads": dealt,
        "journal_sync": sync,
        "journal_before_led": in_path[1] > in_path[0],
        "link_auth": link_auth,
        "card_frame_bytes": card_bytes,
        "card_frame_bytes_range": card_range,
        "led_frame_bytes": led_bytes,
        "led_frame_bytes_range": led_range,
        "wire_us": wire_us(card_bytes + led_bytes),
        "line_cards_per_s": round(BAUD / BITS_PER_BYTE / card_bytes, 1) if card_bytes else None,
        "latency_led_us": summary_us(led_lat),
        "latency_led_cards": len(led_lat),
        "latency_led_signal_changes": len(changed),
        **cpu_out,
    }


CPU_CARDS = 1000
"""Card reads of the CPU-per-card run (a dealer's pace: each card pulled once the service is idle)."""

CPU_PACE_S = 0.025
"""Seconds the CPU-per-card run's dealer waits, once the service is idle (the last card acked), before
the next card. A dealer deals some 2 cards a second; the run compresses that, but not below the
link's ACK spacing (20 ms, ``drivers.link_timers.ACK_MIN_GAP``): a card pulled sooner has its ack
held behind the last card's ACK, which no table sees, and the figure is then the link's pacing,
not a dealer's pace. (It was 0.5 ms, when each card's ACK of its ``want`` went out before its ack.)"""

CPU_SAMPLE_S = 0.5
"""Seconds between the CPU run's samples of every thread's CPU (only the threads that end before
the last sample, gpiozero's blink threads, need them): sampling every 20 ms, the sampler's own
thread took ~0.8 ms of CPU a card and the interpreter's lock from the service's threads."""

PI_LED_PINS = {"green": 17, "amber": 27, "blue": 22, "white": 23, "red": 24}
"""The CPU run's LED board (``[leds] backend = "gpio"``): the BCM pins ``config/table.toml`` suggests."""

CPU_IDLE_S = 4.0
"""Seconds the CPU-per-card run's table idles after dealing (its CPU per second with no card)."""

DEALER_CARDS_PER_S = 2.0
"""A dealer's pace for the Pi figure: two cards a second."""


def bench_cpu(cards: int = CPU_CARDS, idle_s: float = CPU_IDLE_S, calibration_s: float | None = None,
              floor_on: bool = True) -> dict[str, Any]:
    """CPU of the full stack as ``shoe-ctl run --journal`` wires it with the display, the shoe's
    LEDs and the floor publisher on (a Mosquitto on loopback; without one installed, or with
    ``floor_on`` false, the floor is off and ``cpu_floor`` says so): every thread's CPU while ``cards`` are dealt at a dealer's
    pace (:func:`bench_latency`, ``pace_s`` :data:`CPU_PACE_S`) and then while the table idles ``idle_s``.

    The service's threads are every thread but the simulated dealer's and the virtual shoe's
    (:data:`bench.bench_scale.SIMULATION_THREADS`), the bench's own sampler and the main thread
    (which waits). ``cpu_us_per_card``: the service threads' CPU over the dealing, less what they
    use idle in as much time, per card read; ``cpu_idle_ms_per_s``: their CPU per second idle;
    ``cpu_pi4_percent_at_2_cards_s``: (2 x the per-card CPU + the idle CPU of one second) scaled to
    a Pi 4 core by the calibration (:func:`bench.calibration.pi4_percent`)."""
    from bench.bench_scale import SIMULATION_THREADS
    from bench.calibration import PI4_CALIBRATION_S
    from shoe_ctl.floor.broker import Mosquitto, find_mosquitto
    from shoe_ctl.floor.config import FloorConfig

    with tempfile.TemporaryDirectory(prefix="shoe-bench-cpu-") as tmp:
        broker = None
        floor = None
        floor_state = "off: mosquitto not installed" if floor_on else "off: asked (--floor off)"
        if floor_on and find_mosquitto() is not None:
            from shoe_ctl.config import load_table_config

            name = load_table_config(ROOT / "config" / "table.toml").table
            broker = Mosquitto(Path(tmp) / "broker", room="bench", tables=[name]).start()
            floor = FloorConfig(enabled=True, broker=f"mqtt://{broker.host}:{broker.port}", room="bench",
                                credentials=str(broker.credentials_file(name)),
                                outbox=str(Path(tmp) / "bench.floor"))
            floor_state = f"on: mosquitto at {broker.host}:{broker.port}"
        try:
            r = bench_latency(cards, pace_s=CPU_PACE_S, seed=9, floor=floor, idle_s=idle_s, console=False)
        finally:
            if broker is not None:
                broker.stop()
    moments = r["cpu_moments"]
    skip = (*SIMULATION_THREADS, "thread-cpu-sampler", "MainThread", "kiosk")

    def by_thread(values: dict[str, float]) -> dict[str, float]:
        """The service's threads only; gpiozero's blink threads (``Thread-N (_blink_device)``) as one."""
        per: dict[str, float] = {}
        for k, v in values.items():
            if not k.startswith(skip):
                name = "gpio-blink" if k.endswith("(_blink_device)") else k
                per[name] = per.get(name, 0.0) + v
        return per

    def service(a: dict[str, float], b: dict[str, float]) -> tuple[float, dict[str, float]]:
        per = {k: round(v, 3) for k, v in by_thread({k: b[k] - a.get(k, 0.0) for k in b}).items()}
        return sum(per.values()), per

    (t0, p0, w0, n0), (t1, p1, w1, n1), (t2, _p2, w2, _n2) = moments
    switched = by_thread({k: float(v) for k, v in r["cpu_switches"].items()})
    dealt, dealt_by = service(t0, t1)
    idle, idle_by = service(t1, t2)
    n = max(n1 - n0, 1)
    idle_rate = idle / (w2 - w1)
    per_card = max(dealt - idle_rate * (w1 - w0), 0.0) / n
    out: dict[str, Any] = {
        "cpu_floor": floor_state,
        "cpu_cards": n,
        "cpu_dealing_s": round(w1 - w0, 2),
        "cpu_us_per_card": round(per_card * 1e6, 1),
        "cpu_gross_us_per_card": round(dealt / n * 1e6, 1),
        "cpu_process_us_per_card": round((p1 - p0) / n * 1e6, 1),
        "cpu_idle_ms_per_s": round(idle_rate * 1000, 2),
        "cpu_threads_dealing_s": dict(sorted(dealt_by.items(), key=lambda kv: -kv[1])),
        "cpu_threads_idle_s": dict(sorted(idle_by.items(), key=lambda kv: -kv[1])),
        "cpu_cards_per_s": round(n / (w1 - w0), 1),
        "cpu_kiosk_bytes": r.get("cpu_kiosk_bytes"),
        "cpu_switches_per_card": {k: round(v / n, 2) for k, v in sorted(switched.items(), key=lambda kv: -kv[1])},
        "cpu_leds": "gpio (gpiozero's mock pins) and the shoe's",
    }
    if calibration_s:
        here_s = DEALER_CARDS_PER_S * per_card + idle_rate  # CPU seconds per second of play, here
        out["cpu_pi4_percent_at_2_cards_s"] = round(here_s * (PI4_CALIBRATION_S / calibration_s) * 100, 2)
        out["cpu_pi4_percent_of_it_idle"] = round(idle_rate * (PI4_CALIBRATION_S / calibration_s) * 100, 2)
    return out


LOADED_RUNS = 3
"""Runs of the loaded closed loop; its figures are the median run's (by cards/s)."""


def bench_loaded(cards: int, *, runs: int = LOADED_RUNS) -> dict[str, Any]:
    """The dealer pulling at once (:func:`bench_latency` with ``pace_s=-1``), ``runs`` times one
    after the other on the same seed: a closed loop's rate moves with the machine from one run to
    the next, so the figures are the median run's, and every run's rate is listed.

    :returns: ``latency_loaded_cards_per_s`` (cards / seconds from the table's start),
        ``latency_loaded_dealing_cards_per_s`` (card reads from the first card's write),
        ``latency_loaded_us`` and ``latency_loaded_parts_us`` of the median run, and
        ``latency_loaded_runs_cards_per_s`` (each run's, in order).
    """
    done = []
    for _ in range(runs):
        loaded = bench_latency(cards, pace_s=-1.0, seed=8)
        rate = round(loaded["latency_cards"] / loaded["latency_seconds"], 1)
        done.append((rate, loaded))
    rate, loaded = sorted(done, key=lambda r: r[0])[len(done) // 2]
    return {
        "latency_loaded_us": loaded["latency_us"],
        "latency_loaded_parts_us": loaded["latency_parts_us"],
        "latency_loaded_cards_per_s": rate,
        "latency_loaded_dealing_cards_per_s": round(loaded["latency_reads"] / loaded["latency_dealing_seconds"], 1),
        "latency_loaded_runs_cards_per_s": [r for r, _ in done],
    }


# ---------------------------------------------------------------------------------- replays


def _scripts(files: Sequence[Path], seed: int = 0) -> list[Any]:
    from hil.replay import script_from_record
    from shoe_ctl.phh import read_phh

    return [script_from_record(read_phh(f), seed=seed + k, path=f) for k, f in enumerate(files)]


def _interleaved(fns: dict[str, Callable[[], Any]], reps: int) -> dict[str, list[tuple[float, float]]]:
    """Wall and CPU (this thread) seconds of every run of each function, ``reps`` runs interleaved
    so that a change in the machine's load hits every one alike, after one warm-up run each
    (:func:`bench.bench_scale.interleaved_runs`); the k-th runs of all functions share a round."""
    from bench.bench_scale import interleaved_runs

    return {k: [(wall, cpu) for cpu, wall in r] for k, r in interleaved_runs(fns, reps).items()}


def _medians(runs: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The median wall and the median CPU seconds of ``runs`` ((wall, CPU) pairs)."""
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def paired_ratio(num: Sequence[tuple[float, float]], den: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The median over the pairs (``num[k]``, ``den[k]``), runs of the same round, of
    ``num[k] / den[k]``: (wall ratio, CPU ratio), each run a (wall, CPU) pair of seconds.

    A burst of load that slows one round slows both runs of its pair and leaves its ratio near the
    others, where a ratio of two medians can pair a fast run of one side with a slow of the other.

    :raises ValueError: no runs, or not as many runs on each side.
    """
    if not num or len(num) != len(den):
        raise ValueError(f"paired ratio needs as many runs on each side, at least one: {len(num)} and {len(den)}")
    return (statistics.median(n[0] / d[0] for n, d in zip(num, den, strict=True)),
            statistics.median(n[1] / d[1] for n, d in zip(num, den, strict=True)))


def pokerkit_accepts(files: Sequence[Path]) -> tuple[list[Path], list[str]]:
    """The files pokerkit replays to the end, and why it rejects the others."""
    import pokerkit

    ok, why = [], []
    for f in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for _ in pokerkit.HandHistory.loads(f.read_text()):
                    pass
            ok.append(f)
        except Exception as exc:  # noqa: BLE001 - any refusal: skipped and counted
            why.append(f"{type(exc).__name__}: {str(exc)[:60]}")
    return ok, why


def pokerkit_replay(files: Sequence[Path]) -> None:
    import pokerkit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in files:
            for _ in pokerkit.HandHistory.loads(f.read_text()):
                pass


def direct_replay(files: Sequence[Path], profs: dict[str, Any]) -> int:
    from hil.replay import run_direct

    recorder, dealer = run_direct(_scripts(files), profs, display=False)
    if dealer.stalled or len(recorder.hands) != len(files):
        raise RuntimeError(f"direct replay stopped after {len(recorder.hands)} hands: {dealer.stalled}")
    return len(recorder.hands)


POKERKIT_MISSING = "pokerkit not installed: replay comparison skipped"
"""Said (``pokerkit_skipped``, the table's row) when the replay comparison cannot run."""


def recorded_events(scripts: Sequence[Any], profs: dict[str, Any]) -> tuple[list[Any], int]:
    """Every event the direct replay hands the machine (card reads and dealer inputs), in order,
    and the number of commands the machine answered them with: one direct replay with
    :meth:`Dealing.handle` wrapped for its duration."""
    from hil.replay import run_direct
    from shoe_ctl.machine.dealing import Dealing

    events: list[Any] = []
    emitted = [0]
    handle = Dealing.handle

    def keep(self: Any, event: object) -> Any:
        events.append(event)
        cmds = handle(self, event)
        emitted[0] += len(cmds)
        return cmds

    Dealing.handle = keep  # type: ignore[method-assign]
    try:
        recorder, dealer = run_direct(scripts, profs, display=False)
    finally:
        Dealing.handle = handle  # type: ignore[method-assign]
    if dealer.stalled or len(recorder.hands) != len(scripts):
        raise RuntimeError(f"direct replay stopped after {len(recorder.hands)} hands: {dealer.stalled}")
    return events, emitted[0]


def engine_replay(events: Sequence[Any], profs: dict[str, Any]) -> int:
    """The dealing machine alone: a new :class:`Dealing` handed the recorded events (no PHH
    parse, no simulated dealer, no recorder); the number of commands it answered them with."""
    from shoe_ctl.machine.dealing import Dealing

    machine = Dealing(profs, default_rules="tda", display=False)
    machine.start()
    n = 0
    handle = machine.handle
    for event in events:
        n += len(handle(event))
    return n


def pokerkit_histories(files: Sequence[Path]) -> list[Any]:
    import pokerkit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [pokerkit.HandHistory.loads(f.read_text()) for f in files]


def pokerkit_engine(histories: Sequence[Any]) -> None:
    """Pokerkit's engine alone: every state of each already parsed hand history."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for hh in histories:
            for _ in hh:
                pass


def analyze_replay(files: Sequence[Path], profs: dict[str, Any]) -> int:
    """What ``shoe-ctl analyze`` does per file (``analyze_file``: read, then the rules core's
    decisions), without printing; the number of reports without an error."""
    from shoe_ctl.analyze import analyze_file

    profile = profs["tda"]
    return sum(analyze_file(f, profile).error is None for f in files)


def bench_replays(files: Sequence[Path], reps: int) -> dict[str, Any]:
    """Direct replay (parse + rules core + machine) against pokerkit on the same files; the full
    replay through the pty once."""
    from hil.replay import run_direct, run_full

    profs = profiles()
    n = len(files)
    skipped = None
    try:
        accepted, rejected = pokerkit_accepts(files)
    except ImportError:  # pokerkit is in the "test" extra: without it, no comparison
        accepted, rejected = [], []
        skipped = POKERKIT_MISSING
    if not accepted and skipped is None:
        skipped = f"pokerkit accepted none of the {n} hands: replay comparison skipped"
    scripts = _scripts(files)
    fns: dict[str, Callable[[], Any]] = {
        "direct": lambda: direct_replay(files, profs),
        "parse": lambda: _scripts(files),
        "deal": lambda: run_direct(scripts, profs, display=False),
    }
    if accepted:
        fns["direct_common"] = lambda: direct_replay(accepted, profs)
        fns["pokerkit"] = lambda: pokerkit_replay(accepted)
    runs = _interleaved(fns, reps)
    other: dict[str, Callable[[], Any]] = {}
    if accepted:  # each pair interleaved, in one run each, after the main ratio
        events, emitted = recorded_events(_scripts(accepted), profs)
        if engine_replay(events, profs) != emitted:
            raise RuntimeError("the machine handed the recorded events answers differently")
        histories = pokerkit_histories(accepted)
        other = {"engine": lambda: engine_replay(events, profs),
                 "pokerkit_engine": lambda: pokerkit_engine(histories),
                 "analyze": lambda: analyze_replay(accepted, profs),
                 "pokerkit_again": lambda: pokerkit_replay(accepted)}
    runs.update(_interleaved(other, 1) if other else {})
    t = {name: _medians(r) for name, r in runs.items()}
    t0 = time.perf_counter()
    recorder, dealer = run_full(_scripts(files), profs, timeout=120.0)
    t_full = time.perf_counter() - t0
    k = len(accepted)

    def ratio(num: str, den: str) -> tuple[float | None, float | None]:
        if not k:
            return None, None
        wall, cpu = paired_ratio(runs[num], runs[den])
        return round(wall, 2), round(cpu, 2)

    direct, engine, analyze = (ratio("pokerkit", "direct_common"), ratio("pokerkit_engine", "engine"),
                               ratio("pokerkit_again", "analyze"))
    return {
        "replay_hands": n,
        "replay_direct_hands_per_s": round(n / t["direct"][0], 1),
        "replay_direct_parse_ms_per_hand": round(t["parse"][0] / n * 1000, 3),
        "replay_direct_deal_ms_per_hand": round(t["deal"][0] / n * 1000, 3),
        "replay_full_hands_per_s": round(len(recorder.hands) / t_full, 1),
        "replay_full_cards": dealer.stats.pulls,
        "replay_full_complete": len(recorder.hands) == n and not dealer.stalled,
        "pokerkit_hands": k,
        "pokerkit_skipped": skipped,
        "pokerkit_rejected": len(rejected),
        "pokerkit_hands_per_s": round(k / t["pokerkit"][0], 1) if k else None,
        "replay_direct_common_hands_per_s": round(k / t["direct_common"][0], 1) if k else None,
        "ratio_direct_vs_pokerkit": direct[0],
        "ratio_direct_vs_pokerkit_cpu": direct[1],
        "replay_reps": reps,
        "engine_hands_per_s": round(k / t["engine"][0], 1) if k else None,
        "pokerkit_engine_hands_per_s": round(k / t["pokerkit_engine"][0], 1) if k else None,
        "ratio_engine_vs_pokerkit": engine[0],
        "ratio_engine_vs_pokerkit_cpu": engine[1],
        "analyze_hands_per_s": round(k / t["analyze"][0], 1) if k else None,
        "ratio_analyze_vs_pokerkit": analyze[0],
        "ratio_analyze_vs_pokerkit_cpu": analyze[1],
    }


# ---------------------------------------------------------------------------------- whole processes


def run_process(argv: Sequence[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> tuple[float, float]:
    """Run ``argv`` to its end (output discarded): (wall seconds, CPU seconds of the process, user
    and system, every thread). Its exit status must be 0.

    :raises RuntimeError: the process failed (its last lines of stderr said why).
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])}... exited {proc.returncode}: {err[-400:].decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime


def alternate(cmds: dict[str, Sequence[str]], pairs: int) -> dict[str, Any]:
    """Each command run as a whole process, alternately, ``pairs`` times (after one warm-up run of
    each; the order within a pair swaps from one pair to the next so neither always runs first).
    Per command the median wall and CPU seconds; for the first command against each other, the
    median over the pairs of (other's time / first's time), wall and CPU."""
    names = list(cmds)
    for name in names:
        run_process(cmds[name])
    runs: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for k in range(pairs):
        for name in (names if k % 2 == 0 else names[::-1]):
            runs[name].append(run_process(cmds[name]))
    first = names[0]
    out: dict[str, Any] = {n: {"wall_s": round(statistics.median(w for w, _ in r), 4),
                               "cpu_s": round(statistics.median(c for _, c in r), 4),
                               "runs_wall_s": [round(w, 3) for w, _ in r]} for n, r in runs.items()}
    for other in names[1:]:
        wall, cpu = paired_ratio(runs[other], runs[first])
        out[f"{other}_over_{first}"] = round(wall, 2)
        out[f"{other}_over_{first}_cpu"] = round(cpu, 2)
    return out


def compile_bytecode() -> bool:
    """Compile the project's code to bytecode as ``scripts/setup.sh`` does at install, so the
    processes timed here import ``.pyc`` files as an installed service does (the libraries' were
    compiled by pip). True when every file compiled."""
    import compileall

    return all(compileall.compile_dir(str(ROOT / d), quiet=1) for d in ("shoe_ctl", "drivers", "hil"))


ONE_CORE = min(os.sched_getaffinity(0))
"""The core the start-up figures run on alone (``taskset -c``): a Pi's service may share its
cores, and a second core hides what the start-up costs."""

PROCESS_PAIRS = 7
"""Alternated pairs of whole processes for ``replay_process``."""


def bench_replay_process(files: Sequence[Path], pairs: int = PROCESS_PAIRS) -> dict[str, Any]:
    """``shoe-ctl replay --direct --json`` and pokerkit (``bench/pokerkit_replay.py``) on the same
    files, each a whole process from its start to its exit, alternately (:func:`alternate`)."""
    try:
        accepted, _ = pokerkit_accepts(files)
    except ImportError:
        return {"replay_process_skipped": POKERKIT_MISSING}
    if not accepted:
        return {"replay_process_skipped": "pokerkit accepted none of the hands: whole-process comparison skipped"}
    compiled = compile_bytecode()
    paths = [str(f) for f in accepted]
    t = alternate({"shoe_ctl": [*_shoe_ctl(), "replay", "--direct", "--json", *paths],
                   "pokerkit": [sys.executable, str(ROOT / "bench" / "pokerkit_replay.py"), *paths]}, pairs)
    return {
        "replay_process_hands": len(paths),
        "replay_process_pairs": pairs,
        "replay_process_bytecode_compiled": compiled,
        "replay_process_s": {"shoe_ctl": t["shoe_ctl"], "pokerkit": t["pokerkit"]},
        "ratio_replay_process_vs_pokerkit": t["pokerkit_over_shoe_ctl"],
        "ratio_replay_process_vs_pokerkit_cpu": t["pokerkit_over_shoe_ctl_cpu"],
    }


# ---------------------------------------------------------------------------------- soak


def bench_soak(hands: int, seed: int = 11) -> dict[str, Any]:
    """Random 8-seat hands through virtual shoe, pty, ShoeLink, controller and machine."""
    from hil.dealer import random_hands
    from hil.replay import run_full

    profs = profiles()
    run_full(random_hands(seed + 1, count=2), profs)  # warm-up
    t0 = time.perf_counter()
    recorder, dealer = run_full(random_hands(seed, count=hands), profs, timeout=200.0)
    seconds = time.perf_counter() - t0
    return {
        "soak_cards": dealer.stats.pulls,
        "soak_hands": len(recorder.hands),
        "soak_seconds": round(seconds, 2),
        "soak_cards_per_s": round(dealer.stats.pulls / seconds, 1),
    }


# ---------------------------------------------------------------------------------- service


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get_state(port: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/state", timeout=1.0) as r:
            return dict(json.loads(r.read()))
    except (OSError, ValueError):
        return None


def _rss(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def _cpu_of(pid: int) -> float | None:
    """CPU seconds (user + system, every thread) process ``pid`` has used, to a clock tick."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 3)


def _shoe_ctl() -> list[str]:
    exe = Path(sys.executable).with_name("shoe-ctl")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "import sys; from shoe_ctl.cli import main; sys.exit(main())"]


def bench_service(hands: int, timeout: float = 60.0, journal_hands: int = 0, cpu: int | None = None) -> dict[str, Any]:
    """A real ``shoe-ctl run`` child: time to its ``READY=1``, RSS after ``hands`` hands.
    ``journal_hands``: start on a journal that already holds that many finished hands (built by
    :mod:`bench.journal_large`; its build time and size are reported too). ``cpu``: the child runs
    on that one core alone (as ``taskset -c CPU``; every thread it starts inherits it). The
    project's bytecode is compiled first, as the install compiles it."""
    compiled = compile_bytecode()
    port = _free_port()
    built: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="shoe-bench-svc-") as tmp:
        if journal_hands:
            from bench.journal_large import build
            from shoe_ctl.config import load_table_config

            cfg = load_table_config(ROOT / "config" / "table.toml")
            built = build(Path(tmp) / "svc.journal", journal_hands, table=cfg.table, profile=cfg.rules)
        notify_path = str(Path(tmp) / "notify")
        nsock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        nsock.bind(notify_path)
        nsock.settimeout(0.05)
        ready_notify: list[float] = []
        ready_cpu: list[float | None] = []  # the child's CPU seconds (every thread) at its READY=1
        proc_box: list[subprocess.Popen[bytes]] = []
        stop = threading.Event()
        t0 = [0.0]

        def listen() -> None:
            while not stop.is_set():
                try:
                    data = nsock.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if b"READY=1" in data.split(b"\n") and not ready_notify:
                    ready_notify.append(time.perf_counter() - t0[0])
                    ready_cpu.append(_cpu_of(proc_box[0].pid) if proc_box else None)

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        env = dict(os.environ, NOTIFY_SOCKET=notify_path)
        env.pop("WATCHDOG_USEC", None)
        cmd = [*_shoe_ctl(), "run", "--shoe", "sim", "--pace", "0", "--count", str(hands + 50),
               "--display", f"127.0.0.1:{port}", "--journal", str(Path(tmp) / "svc.journal"), "--seed", "3"]
        err = open(Path(tmp) / "stderr", "w+")  # noqa: SIM115 - closed below
        t0[0] = time.perf_counter()
        pin = None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT, env=env, preexec_fn=pin)
        proc_box.append(proc)
        ready_state: float | None = None
        rss: dict[str, float] = {}
        dealt = 0
        try:
            end = t0[0] + timeout
            while time.perf_counter() < end and proc.poll() is None:
                state = _get_state(port)
                if state is not None:
                    if ready_state is None and (state.get("shoe") or {}).get("status") == "connected":
                        ready_state = time.perf_counter() - t0[0]
                    dealt = max(int(state.get("hand") or 0) - 1, 0)
                    if dealt >= hands:
                        rss = _rss(proc.pid)
                        break
                time.sleep(0.002 if ready_state is None else 0.05)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            stop.set()
            listener.join(1)
            nsock.close()
            err.seek(0)
            tail = err.read()[-400:]
            err.close()
    ready = ready_notify[0] if ready_notify else ready_state
    return {
        "rss_mb": rss.get("VmRSS"),
        "rss_peak_mb": rss.get("VmHWM"),
        "rss_after_hands": dealt,
        "ready_s": None if ready is None else round(ready, 3),
        "ready_via": "READY=1" if ready_notify else "display /state" if ready_state is not None else None,
        "ready_cpu_s": ready_cpu[0] if ready_cpu else None,
        "ready_cpus": "all" if cpu is None else [cpu],
        "ready_bytecode_compiled": compiled,
        "service_cmd": "shoe-ctl " + " ".join(cmd[len(_shoe_ctl()):]),
        **({"service_stderr": tail} if not rss else {}),
        **({"journal_built": built} if built else {}),
    }


def profile_direct(top: int = 25) -> None:
    """cProfile of one direct replay of every real hand (after a warm-up): the share of own time
    by module, then the functions with the most cumulative time."""
    import collections
    import cProfile
    import pstats

    from hil.replay import run_direct

    profs = profiles()
    scripts = _scripts(phh_files())
    run_direct(scripts, profs, display=False)
    prof = cProfile.Profile()
    prof.enable()
    run_direct(scripts, profs, display=False)
    prof.disable()
    stats = pstats.Stats(prof)
    by_module: collections.Counter[str] = collections.Counter()
    for (path, _line, _name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        key = path.split("site-packages/")[-1].split(str(ROOT) + "/")[-1]
        by_module[key.split("/")[0] if "site-packages/" in path else key] += tottime
    total = sum(by_module.values()) or 1.0
    print(f"direct replay of {len(scripts)} hands, own time by module:")
    for key, t in by_module.most_common(15):
        print(f"  {t / total * 100:5.1f}%  {key}")
    stats.sort_stats("cumulative").print_stats(top)


# ---------------------------------------------------------------------------------- report


def verdicts(r: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """(what, figure, target, met) for the table."""

    def ok(cond: Any) -> bool | None:
        try:
            return bool(cond())
        except (TypeError, KeyError):
            return None

    lat = r.get("latency_us", {})
    led = r.get("latency_led_us", {})
    return [
        ("card -> shoe LEDs p99 (us)", f"{led.get('p99')} (p50 {led.get('p50')}, max {led.get('max')}; "
         f"{r.get('latency_led_cards')} cards)", f"<= wire {r.get('wire_us')} + 1000",
         ok(lambda: led["p99"] <= r["wire_us"] + 1000)),
        ("card -> LED sinks p99 (us)", f"{lat.get('p99')} (p50 {lat.get('p50')}, max {lat.get('max')})", "-", None),
        ("direct replay / pokerkit", r["pokerkit_skipped"], "-", None) if r.get("pokerkit_skipped") else
        ("direct replay / pokerkit", f"{r.get('replay_direct_common_hands_per_s')} / {r.get('pokerkit_hands_per_s')} "
         f"hands/s = {r.get('ratio_direct_vs_pokerkit')}x", ">= 3x", ok(lambda: r["ratio_direct_vs_pokerkit"] >= 3)),
        ("replay process / pokerkit", r["replay_process_skipped"], "-", None) if r.get("replay_process_skipped") else
        ("replay process / pokerkit", f"{(r.get('replay_process_s') or {}).get('shoe_ctl', {}).get('wall_s')} / "
         f"{(r.get('replay_process_s') or {}).get('pokerkit', {}).get('wall_s')} s = "
         f"{r.get('ratio_replay_process_vs_pokerkit')}x (CPU {r.get('ratio_replay_process_vs_pokerkit_cpu')}x)",
         ">= 2.5x", ok(lambda: r["ratio_replay_process_vs_pokerkit"] >= 2.5)),
        ("full replay (hands/s)", str(r.get("replay_full_hands_per_s")), "-", None),
        ("CPU per card, full stack (us)", f"{r.get('cpu_us_per_card')} (idle {r.get('cpu_idle_ms_per_s')} ms/s; "
         f"floor {str(r.get('cpu_floor')).split(':')[0]})", "-", None),
        ("Pi 4 core at 2 cards/s (%)", f"{r.get('cpu_pi4_percent_at_2_cards_s')} (estimate, calibration)", "-", None),
        ("soak: link stack, no journal/display (cards/s)", str(r.get("soak_cards_per_s")), "-", None),
        ("loaded full stack (cards/s)", f"{r.get('latency_loaded_cards_per_s')} (the line carries "
         f"{r.get('line_cards_per_s')})", "-", None),
        ("service RSS (MiB)", str(r.get("rss_mb")), "<= 60", ok(lambda: r["rss_mb"] <= 60)),
        ("service ready, one core (s)", f"{r.get('ready_s')} ({r.get('ready_via')}; CPU {r.get('ready_cpu_s')}; "
         f"all cores {r.get('ready_all_cores_s')})", "<= 0.5", ok(lambda: r["ready_s"] <= 0.5)),
        ("ready on a large journal, one core (s)", f"{r.get('ready_large_journal_s')} ({r.get('ready_large_journal_hands')} hands)",
         "<= 1", ok(lambda: r["ready_large_journal_s"] <= 1)),
    ]


def table(r: dict[str, Any]) -> str:
    rows = [("figure", "measured", "target", "")]
    for what, fig, target, met in verdicts(r):
        rows.append((what, fig, target, "" if met is None else "met" if met else "MISSED"))
    w = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(row)).rstrip() for row in rows]
    m = r["machine"]
    lines.append("")
    lines.append("latency parts p50/p99 (us): " + ", ".join(
        f"{k} {v['p50']}/{v['p99']}" for k, v in r.get("latency_parts_us", {}).items()))
    if "latency_loaded_us" in r:
        ll = r["latency_loaded_us"]
        lines.append(f"latency with the dealer pulling at once (loaded, {r.get('latency_loaded_cards_per_s')} cards/s, "
                     f"the median of {r.get('latency_loaded_runs_cards_per_s')}): "
                     f"p50 {ll['p50']}, p99 {ll['p99']}, max {ll['max']} us")
    lines.append(f"journal synchronous={r.get('journal_sync')}; link {r.get('link_auth')}; card frame "
                 f"{r.get('card_frame_bytes')} bytes out, LED frame {r.get('led_frame_bytes')} bytes back "
                 f"(wire {r.get('wire_us')} us at {BAUD} baud); "
                 f"{r.get('latency_cards')} cards at pace {r.get('latency_pace_ms')} ms")
    lines.append(f"direct replay {r.get('replay_direct_hands_per_s')} hands/s on {r.get('replay_hands')} hands "
                 f"(parse {r.get('replay_direct_parse_ms_per_hand')} ms + deal {r.get('replay_direct_deal_ms_per_hand')} "
                 "ms per hand); " + (r["pokerkit_skipped"] if r.get("pokerkit_skipped") else
                                     f"pokerkit replayed {r.get('pokerkit_hands')}, rejected {r.get('pokerkit_rejected')}"))
    if r.get("ratio_engine_vs_pokerkit") is not None:
        lines.append(f"engine alone (recorded events, no parse, no dealer) / pokerkit's engine (parsed histories): "
                     f"{r.get('ratio_engine_vs_pokerkit')}x (CPU {r.get('ratio_engine_vs_pokerkit_cpu')}x); "
                     f"shoe-ctl analyze / pokerkit replay: {r.get('ratio_analyze_vs_pokerkit')}x "
                     f"(CPU {r.get('ratio_analyze_vs_pokerkit_cpu')}x); one run each")
    lines.append(f"machine: {m.get('cpu')} x{m.get('cpu_count')}, {m.get('mem_mb')} MiB, {m.get('platform')}, "
                 f"Python {m.get('python')}, " + ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()))
    if "scale" in r:
        from bench.bench_scale import summary as scale_summary

        lines.append(scale_summary(r["scale"]))
    cal = r.get("calibration") or {}
    if cal:
        ends = [cal[k] for k in ("start", "end") if k in cal]
        lines.append(f"calibration ({cal['iterations']} iterations of the Python loop, thread CPU): "
                     + " / ".join(f"{c['cpu_s']} s (load {c['load_avg'][0]})" for c in ends)
                     + f" at the start / end; a Pi 4 core: ~{cal['pi4_cpu_s_estimate']} s (estimate)")
    if r.get("load_avg_by_part"):
        lines.append("load average after each part: " + ", ".join(
            f"{k} {'/'.join(str(x) for x in v)}" for k, v in r["load_avg_by_part"].items()))
    lines.append(f"total {r.get('bench_seconds')} s")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object on one line")
    ap.add_argument("--quick", action="store_true", help="reduced sizes (a smoke run, figures not meaningful)")
    ap.add_argument("--cards", type=int, default=None, help="latency cards (default 10000; quick 300)")
    ap.add_argument("--pace-ms", type=float, default=0.5,
                    help="latency run: the simulated dealer pulls this long after the service has acked "
                    "(journaled) every earlier card (default 0.5 ms; < 0: at once, the service loaded)")
    ap.add_argument("--floor", choices=("on", "off"), default="on",
                    help="the CPU part's floor publisher (on: a Mosquitto on loopback, when one is installed)")
    ap.add_argument("--switch-ms", type=float, default=None, help="sys.setswitchinterval for this process (ms)")
    ap.add_argument("--only", default=None, help="comma list of parts: latency,replay,cpu,soak,service,large; "
                    "scale (bench/bench_scale.py) only when named")
    ap.add_argument("--profile", action="store_true",
                    help="instead: profile the direct replay (cProfile) and print where the time goes")
    args = ap.parse_args(argv)
    if args.profile:
        profile_direct()
        return 0
    quick = args.quick
    only = set(args.only.split(",")) if args.only else {"latency", "replay", "cpu", "soak", "service", "large"}
    if args.switch_ms is not None:
        sys.setswitchinterval(args.switch_ms / 1000)
    t0 = time.perf_counter()
    result: dict[str, Any] = {"quick": quick, "machine": machine_info()}
    calibration = {**describe(), "start": calibrate()}
    result["calibration"] = calibration
    loads: dict[str, list[float]] = {}
    result["load_avg_by_part"] = loads

    def _large() -> dict[str, Any]:
        large = bench_service(1, journal_hands=1500 if quick else 15_000, cpu=ONE_CORE)
        return {"ready_large_journal_s": large["ready_s"], "ready_large_journal_hands": 1500 if quick else 15_000,
                "ready_large_journal_file": large.get("journal_built")}

    def _service() -> dict[str, Any]:
        pinned = bench_service(1 if quick else 10, cpu=ONE_CORE)
        both = bench_service(1, cpu=None)
        return {**pinned, "ready_all_cores_s": both["ready_s"]}

    def _scale() -> dict[str, Any]:  # not in the default run: it has its own command, python -m bench.bench_scale
        from bench.bench_scale import measure as measure_scale

        return {"scale": measure_scale(quick)}

    parts: dict[str, Callable[[], dict[str, Any]]] = {
        "latency": lambda: {**bench_latency(args.cards or (300 if quick else 5_000), pace_s=args.pace_ms / 1000),
                            **bench_loaded(100 if quick else 3000, runs=1 if quick else LOADED_RUNS)},
        "replay": lambda: {**bench_replays(phh_files(24 if quick else None), reps=1 if quick else 5),
                           **bench_replay_process(phh_files(24 if quick else None), pairs=1 if quick else PROCESS_PAIRS)},
        "cpu": lambda: bench_cpu(100 if quick else CPU_CARDS, 1.0 if quick else CPU_IDLE_S,
                                 calibration_s=calibration["start"]["cpu_s"], floor_on=args.floor == "on"),
        "soak": lambda: bench_soak(6 if quick else 250),
        "service": _service,
        "scale": _scale,
        "large": _large,
    }
    for name, part in parts.items():
        if name in only:
            result.update(part())
            loads[name] = [round(x, 2) for x in os.getloadavg()]
    calibration["end"] = calibrate()
    result["bench_seconds"] = round(time.perf_counter() - t0, 1)
    result["machine"]["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    result["targets"] = {what: met for what, _, _, met in verdicts(result) if met is not None}
    if args.json:
        print(json.dumps(result, separators=(",", ":")), flush=True)
    else:
        print(table(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
