"""The firmware's link core (drivers/shoe_fw/core.py) beyond what the virtual shoe's tests
cover: the fixed ring's full-buffer rule (docs/protocol.md section 5), the one timer table, and
the kept state a power cycle restores."""

from __future__ import annotations

from wire import Pump

from drivers import protocol as p
from drivers.session import LinkSession
from drivers.shoe_fw import codec as c
from drivers.shoe_fw.core import NO_HOST_LED, STOP_LED, ShoeCore
from shoe_ctl.events import FaultKind


def heartbeats(frames: list[bytes]) -> list[p.Heartbeat]:
    return [m for m in p.FrameDecoder().feed(b"".join(frames)) if isinstance(m, p.Heartbeat)]


def test_a_full_buffer_makes_no_event_counts_the_card_and_stops_the_dealer_until_an_ack() -> None:
    core = ShoeCore("FW-1", capacity=4)
    core.receive_data(p.encode(p.Led(1, 7, "deal", ("green",), "steady", 0, 0)), 0.0)
    assert core.lights.led == (7, 2, 1, 0, 0, 0)
    seqs = [core.card(n, c.READER_RFID, 0.1) for n in range(4)]
    assert seqs == [1, 2, 3, 4] and core.lights.full and core.lights.led is STOP_LED
    hb = heartbeats(core.frames_to_send())[-1]
    assert hb.reader_error and hb.led_token == 0 and hb.unacked == 4
    assert core.card(9, c.READER_RFID, 0.2) == 0  # counted, no number taken
    assert core.fault(c.FAULT_JAM, False, "", 0.2) == 0
    assert core.next_seq == 5 and core.dispense == 5 and core.card_total == 5 and core.stats.counted_while_full == 1
    core.receive_data(p.encode(p.Led(2, 8, "stop", ("red",), "steady", 0, 0)), 0.3)  # kept for later
    assert core.lights.led is STOP_LED
    core.frames_to_send()
    core.receive_data(p.encode(p.Ack(3, 2, 3, False)), 0.4)
    assert not core.lights.full and core.lights.led == (8, 9, 0x10, 0, 0, 0) and core.unacked() == [3, 4, 5]
    after = p.FrameDecoder().feed(b"".join(core.frames_to_send()))
    jam = [m for m in after if isinstance(m, p.FaultMsg)]
    assert [(m.seq, m.kind, m.cleared) for m in jam] == [(5, FaultKind.JAM, False)]  # still jammed: reported now
    assert not [m for m in after if isinstance(m, p.Heartbeat)][-1].reader_error


def test_tick_and_next_deadline_read_the_same_timer_table() -> None:
    core = ShoeCore("FW-1", heartbeat_s=0.5, resend_s=0.3, host_silence_s=3.0, now=10.0)
    assert core.next_deadline() == 10.0  # the first heartbeat at once
    core.tick(10.0)
    assert len(heartbeats(core.frames_to_send())) == 1
    assert core.next_deadline() == 10.5
    core.tick(10.49)
    assert core.frames_to_send() == []  # before the deadline: nothing
    core.card(5, c.READER_RFID, 10.2)
    core.frames_to_send()
    assert core.next_deadline() == 10.5  # min(heartbeat 10.5, resend 10.2 + 0.3)
    for name in ShoeCore.TIMERS:
        assert callable(getattr(core, "_" + name + "_due")) and callable(getattr(core, "_" + name))
    core.tick(12.9)
    core.frames_to_send()
    assert core.lights.led is None
    core.tick(13.0)
    assert core.lights.led is NO_HOST_LED


def test_a_restored_shoe_goes_on_numbering_and_resends_the_events_it_kept() -> None:
    first = ShoeCore("FW-1", keeps_buffer=True)
    for n in range(3):
        first.card(n, c.READER_RFID, 0.0)
    first.receive_data(p.encode(p.Ack(1, 1, 2, False)), 0.0)
    kept, held = first.kept(), first.ring.held()
    assert kept[0] == 4 and [e[0] for e in held] == [2, 3]
    again = ShoeCore("FW-1", keeps_buffer=True)
    again.restore(kept, held, now=5.0)
    assert again.next_seq == 4 and again.boot_count == 2 and again.card_total == 3 and again.dispense == 3
    assert again.boot_id != 0
    pump = Pump(LinkSession(name="fw", resume_seq=1), again, now=5.0)
    pump.run(0.5)
    reads = [e for e in pump.events if type(e).__name__ == "CardRead"]
    assert [r.seq for r in reads] == [2, 3] and [r.card.code for r in reads] == [1, 2]
    hello = p.FrameDecoder().feed(b"".join(ShoeCore("X").frames_to_send()))
    assert hello == []
