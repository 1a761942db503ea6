"""The floor gets every event of every table exactly once and in order, on a real Mosquitto,
while hands are dealt and the broker is restarted (twice: once cleanly, once SIGKILLed, losing
what it had not saved), one table's publisher is killed and started again from its outbox file,
and the tables' network is cut. A floor consumer that starts only at the end catches up from
the tables' journals by asking for replays."""

from __future__ import annotations

import time
from pathlib import Path

from floor_help import FLOORS, ROOM, dealt
from waiting import wait_for

from hil.dealer import random_hands
from hil.floor_rig import CutProxy, VirtualTable
from shoe_ctl.floor.broker import FLOOR_USER, Mosquitto
from shoe_ctl.floor.consumer import FloorConsumer


def test_every_event_once_in_order_across_broker_restarts_publisher_kill_and_cut(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    proxy = CutProxy(mosquitto.host, mosquitto.port).start()
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    names = ["t1", "t2"]
    tables = [VirtualTable(n, tmp_path / "tables", random_hands(10 + i, count=12), room=ROOM, host="127.0.0.1",
                           port=proxy.port, credentials=mosquitto.users[n], pace=0.01, seed=i)
              for i, n in enumerate(names)]
    late = None
    try:
        assert floor.connected.wait(10)
        for t in tables:
            t.start()
        assert wait_for(lambda: all(len(floor.seqs(n)) > 20 for n in names), 20), "events reach the floor"

        mosquitto.restart(down_s=0.5)                      # a clean broker restart
        assert not any(t.done for t in tables), "the broker restarted during the deal"
        assert wait_for(lambda: tables[0].publisher.connected, 15)
        tables[0].kill_publisher()                          # the Pi's publisher dies; a new one starts
        assert not tables[0].done, "the publisher was killed during the deal"
        time.sleep(0.3)
        proxy.cut(1.5)                                      # the tables' network goes away
        time.sleep(0.5)
        mosquitto.restart(hard=True, down_s=0.3)            # the broker is killed (SIGKILL)
        assert not all(t.done for t in tables), "the faults came while hands were dealt"

        lasts = dealt(tables)
        assert all(v > 200 for v in lasts.values()), lasts

        def caught_up(consumer: FloorConsumer) -> bool:
            return all(consumer.seqs(n)[-1:] == [lasts[n]] for n in names)

        assert wait_for(lambda: caught_up(floor), 30), {n: len(floor.seqs(n)) for n in names}
        for n in names:
            assert floor.seqs(n) == list(range(1, lasts[n] + 1)), f"{n}: every event once, in order"
        assert tables[0].publishers == 2 and tables[0].publisher.published > 0

        # a floor that was never subscribed gets everything from the tables' journals (replays)
        late = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                             credentials=mosquitto.users[FLOORS[1]], keep_seqs=True).start()
        assert wait_for(lambda: caught_up(late), 30), {n: len(late.seqs(n)) for n in names}
        for n in names:
            assert late.seqs(n) == list(range(1, lasts[n] + 1))
            assert late.tables[n].replays_asked >= 1
            assert late.tables[n].online and late.tables[n].state.get("state") == "idle"
    finally:
        for t in tables:
            t.close()
        if late is not None:
            late.close()
        floor.close()
        proxy.close()
