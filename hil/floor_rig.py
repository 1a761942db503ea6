"""Virtual tables and a cuttable network for the floor's tests and ``shoe-ctl hil floor``.

:class:`VirtualTable` is one table's service in-process, built as every table is
(:class:`~shoe_ctl.table.Table`): its journal (SQLite, a file of its own), the dealing machine and
the controller thread, a simulated dealer pulling from a shoe without a wire
(:class:`hil.dealer.DirectShoe`: each pull is a ``CardRead`` with the shoe's sequence and
dispense counters) and the :class:`~shoe_ctl.floor.publisher.FloorPublisher` as a sink. Many of
them run in one process. :class:`CutProxy` stands for the network between the tables and the
broker: :meth:`CutProxy.cut` drops every connection and refuses new ones for a while.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hil.dealer import DirectShoe, SimulatedDealer
from hil.replay import HandRecorder
from shoe_ctl.config import TableConfig, load_profile
from shoe_ctl.events import DisplayUpdate, Event
from shoe_ctl.floor.config import Credentials
from shoe_ctl.floor.netloop import NetLoop
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.machine import Dealing
from shoe_ctl.service import shoes
from shoe_ctl.service.controller import Controller
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import HandMarks
from shoe_ctl.table import Table

__all__ = ["BurstDealer", "CutProxy", "VirtualTable"]


class VirtualTable:
    """One table dealing ``scripts`` with a publisher to ``host:port``, built as every table is
    (:class:`~shoe_ctl.table.Table`) on a shoe without a wire (:data:`shoe_ctl.service.shoes.DIRECT`).

    :param name: the table (and broker user) name.
    :param folder: where its journal and outbox files go.
    :param scripts: :class:`hil.dealer.HandScript` hands to deal.
    :param pace: the simulated dealer's pause before each action (seconds).
    :param record: keep a :class:`hil.replay.HandRecorder` (every hand's cards, for tests).
    :param synchronous: the journal's ``synchronous`` (``"NORMAL"`` spares the disk with many tables).
    :param others: further brokers ``(host, port)`` the publisher moves to (docs/floor.md, "Two brokers").
    :param loop: the publisher's network loop (default: the process's, ``shared_loop``).
    :param bursts: the dealer's pauses come in bursts (:class:`BurstDealer`), ``pace`` their mean.
    :param display: the publisher also sends the whole public state (``display`` topic).
    """

    def __init__(self, name: str, folder: str | Path, scripts: Iterable[Any], *, room: str, host: str, port: int,
                 credentials: Credentials | None, pace: float = 0.0, seed: int = 0, record: bool = False,
                 synchronous: str = "NORMAL", window: int = 200, others: Iterable[tuple[str, int]] = (),
                 keepalive: int = 5, loop: NetLoop | None = None, bursts: bool = False, display: bool = False) -> None:
        self.name, self.room, self.host, self.port = name, room, host, port
        self.others, self.keepalive = list(others), keepalive
        self.loop = loop
        self.display = display
        self.credentials = credentials
        self.window = window
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.journal_path = folder / f"{name}.sqlite3"
        self.outbox = folder / f"{name}.sqlite3.floor"
        self.journal = Journal(self.journal_path, table=name, profile="tda", retention_days=0,
                               synchronous=synchronous)
        profiles = {"tda": load_profile("tda"), "house": load_profile("house")}
        self.machine = Dealing(profiles, default_rules="tda")
        controller = Controller(self.machine, journal=self.journal)
        marks = HandMarks(self.journal, self.machine)
        controller.add_hook(marks.after_event)
        self.recorder = HandRecorder(self.machine) if record else None
        self.publisher = self._publisher()
        self.publishers = 1
        dealers: list[SimulatedDealer] = []

        def dealer(device: Any, post: Callable[[Event], object]) -> SimulatedDealer:  # no device: no wire
            kind = BurstDealer if bursts else SimulatedDealer
            dealers.append(kind(DirectShoe(post), post, scripts, pace=pace, seed=seed, auto_ack=True))
            return dealers[-1]

        if self.recorder is not None:
            controller.add_sink(self.recorder)
        controller.add_sink(self.publisher)  # a test may take it out before the start: no floor
        self.table = Table(TableConfig(table=name), controller, shoes.DIRECT, journal=self.journal, dealer_io=False,
                           dealer=dealer)
        self._dealers = dealers

    @property
    def controller(self) -> Controller:
        return self.table.controller

    @property
    def dealer(self) -> SimulatedDealer:
        """The simulated dealer (made when the table starts)."""
        return self._dealers[0]

    def _publisher(self) -> FloorPublisher:
        return FloorPublisher(self.journal, table=self.name, room=self.room, host=self.host, port=self.port,
                              credentials=self.credentials, outbox=self.outbox, window=self.window,
                              keepalive=self.keepalive, reconnect_max_s=2, others=self.others, loop=self.loop,
                              display=self.display)

    def start(self) -> VirtualTable:
        self.publisher.start()
        self.table.start()
        return self

    @property
    def done(self) -> bool:
        """The dealer dealt every hand (or stalled: see ``dealer.stalled``)."""
        return self.dealer.done.is_set()

    def kill_publisher(self) -> None:
        """The publisher dies as a crash would; a new one starts from the outbox file (what a
        restarted Pi does) and takes its place among the controller's sinks."""
        old = self.publisher
        old.kill()
        new = self._publisher()
        sinks = self.controller.sinks
        sinks[sinks.index(old)] = new  # the controller thread reads the list; one slot changes
        self.publisher = new.start()
        self.publishers += 1
        # a restarted service's machine publishes its state at start; here the controller thread does
        self.controller.call_soon(lambda: new.handle(DisplayUpdate(self.machine.public_state())))

    def last_seq(self) -> int:
        """The journal's newest sequence."""
        last = 0
        for rec in self.journal.records(0):
            last = rec.seq
        return last

    def close(self) -> None:
        """The dealer, the controller (and its sinks: the publisher), the journal."""
        if self._dealers:
            self.dealer.close()
            self.controller.wait_idle(5)
        self.table.close()


class BurstDealer(SimulatedDealer):
    """A simulated dealer at a dealer's pace with bursts: seven pauses in ten short (0.4 × pace: a
    street dealt card after card, a quick check), three long (2.4 × pace: a player thinking, the
    betting); their mean is ``pace``. Seeded by ``seed``."""

    def __init__(self, *args: Any, seed: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, seed=seed, **kwargs)
        self._burst_rng = random.Random(seed)

    def _pause(self) -> None:
        if self.pace > 0:
            self._stop.wait(self.pace * (0.4 if self._burst_rng.random() < 0.7 else 2.4))


class CutProxy:
    """A TCP relay ``127.0.0.1:<port>`` → ``target`` that can cut the network (its own thread
    and event loop).

    :meth:`cut` closes every relayed connection at once (no FIN to the broker's peer is sent in
    order: both sides see the connection drop) and refuses connections for ``seconds``.
    """

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.cuts = 0
        self._loop = asyncio.new_event_loop()
        self._writers: set[asyncio.StreamWriter] = set()
        self._refuse_until = 0.0
        self._server: asyncio.AbstractServer | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="cut-proxy", daemon=True)
        self._ready = threading.Event()

    def start(self) -> CutProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(10)
        return self

    async def _serve(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._loop.time() < self._refuse_until:
            writer.transport.abort()
            return
        try:
            up_r, up_w = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_w))

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(pump(reader, up_w), pump(up_r, writer))
        self._writers.discard(writer)
        self._writers.discard(up_w)

    def cut(self, seconds: float) -> None:
        """Drop every connection now and refuse new ones for ``seconds``."""

        def do() -> None:
            self._refuse_until = self._loop.time() + seconds
            for w in list(self._writers):
                w.transport.abort()
            self._writers.clear()

        self.cuts += 1
        self._loop.call_soon_threadsafe(do)

    def close(self) -> None:
        def stop() -> None:
            if self._server is not None:
                self._server.close()
            for w in list(self._writers):
                w.transport.abort()
            self._loop.stop()

        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(stop)
        self._thread.join(5)
