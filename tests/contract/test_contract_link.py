"""The shoe contract suite: the same tests against the virtual shoe (default) or a real shoe
(``pytest --shoe-url /dev/serial/by-id/...``). Tests marked ``faults`` need fault injection and
run on the virtual shoe only."""

from __future__ import annotations

import os
import queue
import random
import threading
import time
from typing import Any

import pytest
from waiting import wait_for

from drivers import protocol as p
from drivers.exc import LinkClosedError
from drivers.shoe import ShoeLink
from hil.conform import RawHost
from hil.deck import Deck
from hil.faults import LineNoise
from hil.pytest_plugin import ShoeTarget
from hil.shoe_device import NO_HOST_LED
from shoe_ctl.events import (
    CardRead,
    LinkChanged,
    LinkStatus,
    SequenceGap,
    ShoeButton,
    ShoeFault,
    ShoeRestarted,
)


def take(q: queue.Queue[Any], kind: type, timeout: float = 5.0) -> Any:
    """The next event of ``kind`` (others before it are skipped)."""
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {kind.__name__} within {timeout} s")
        ev = q.get(timeout=left)
        if isinstance(ev, kind):
            return ev


def drain(q: queue.Queue[Any], settle: float = 0.3) -> list[Any]:
    out = []
    while True:
        try:
            out.append(q.get(timeout=settle))
        except queue.Empty:
            return out


def test_handshake_reports_the_shoe(shoe_link: ShoeLink, shoe_events: queue.Queue[Any]) -> None:
    ev = take(shoe_events, LinkChanged)
    assert ev.status == LinkStatus.CONNECTED
    assert ev.info is not None and ev.info.protocol == 1
    assert ev.info.readers and set(ev.info.readers) <= {"rfid", "optical"}
    assert ev.info.serial and ev.info.boot_id != 0
    assert shoe_link.info == ev.info


def test_heartbeats_arrive(shoe_link: ShoeLink) -> None:
    shoe_link.wait_connected()
    assert wait_for(lambda: shoe_link.shoe_state is not None, 3.0)


def test_cards_arrive_once_in_order_with_the_dispense_counter(
        shoe_target: ShoeTarget, shoe_link: ShoeLink, shoe_events: queue.Queue[Any]) -> None:
    shoe_link.wait_connected()
    pulled = [shoe_target.pull() for _ in range(5)]
    reads = [take(shoe_events, CardRead) for _ in range(5)]
    assert [r.seq for r in reads] == sorted({r.seq for r in reads})
    assert all(b.seq == a.seq + 1 for a, b in zip(reads, reads[1:], strict=False))
    assert all(b.dispense == a.dispense + 1 for a, b in zip(reads, reads[1:], strict=False))
    if shoe_target.is_virtual:
        assert [r.card for r in reads] == pulled
        assert all(r.reader == "rfid" for r in reads)
    assert not [e for e in drain(shoe_events) if isinstance(e, CardRead)]


def test_leds_are_shown_and_reported(shoe_target: ShoeTarget, shoe_link: ShoeLink) -> None:
    shoe_link.wait_connected()
    shoe_link.send_leds({"name": "stop", "leds": ["red"], "mode": "blink", "on_ms": 250, "off_ms": 250})
    token = shoe_link._session.led_token
    assert wait_for(lambda: shoe_link.shoe_state is not None and shoe_link.shoe_state.led_token == token)
    if shoe_target.virtual is not None:
        led = shoe_target.virtual.led
        assert led is not None and (led.signal, led.leds, led.mode, led.on_ms) == ("stop", ("red",), "blink", 250)


def test_counter_reset_starts_the_count_again(
        shoe_target: ShoeTarget, shoe_link: ShoeLink, shoe_events: queue.Queue[Any]) -> None:
    shoe_link.wait_connected()
    shoe_target.pull()
    shoe_target.pull()
    assert take(shoe_events, CardRead).dispense + 1 == take(shoe_events, CardRead).dispense
    assert wait_for(lambda: shoe_link.shoe_state is not None and shoe_link.shoe_state.dispense >= 2)
    before = shoe_link.shoe_state
    shoe_link.reset_counter()
    assert wait_for(lambda: shoe_link.shoe_state is not None and shoe_link.shoe_state.dispense == 0
                 and before is not None and shoe_link.shoe_state.epoch != before.epoch)
    shoe_target.pull()
    assert take(shoe_events, CardRead).dispense == 1


def test_close_is_idempotent_and_joins(shoe_target: ShoeTarget) -> None:
    q: queue.Queue[Any] = queue.Queue()
    before = threading.active_count()
    with ShoeLink(shoe_target.url, q) as link:
        link.wait_connected()
    link.close()
    assert threading.active_count() <= before
    events = drain(q, 0.1)
    assert events[-1] == LinkChanged(LinkStatus.DISCONNECTED, "link closed")
    with pytest.raises(LinkClosedError):
        link.start()
    with pytest.raises(ConnectionError):
        link.send_leds("deal")


def test_events_unacked_by_the_consumer_come_again_to_the_next_host(
        shoe_target: ShoeTarget) -> None:
    q1: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe_target.url, q1) as link:
        link.wait_connected()
        shoe_target.pull()
        shoe_target.pull()
        first = take(q1, CardRead)
        second = take(q1, CardRead)
        link.ack(first.seq)
        with pytest.raises(ValueError):
            link.ack(second.seq + 5)
        time.sleep(0.3)
    q2: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe_target.url, q2) as link2:
        link2.wait_connected()
        again = take(q2, CardRead)
        assert again == second  # the unacked one, once; the acked one never again
        assert not [e for e in drain(q2) if isinstance(e, CardRead)]


def test_resume_seq_drops_what_the_journal_already_holds(shoe_target: ShoeTarget) -> None:
    q1: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe_target.url, q1) as link:
        link.wait_connected()
        for _ in range(3):
            shoe_target.pull()
        reads = [take(q1, CardRead) for _ in range(3)]
    # the journal recorded the first two before the host died, without acking them
    q2: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe_target.url, q2, resume_seq=reads[1].seq) as link2:
        link2.wait_connected()
        assert [e for e in drain(q2) if isinstance(e, CardRead)] == [reads[2]]
        link2.ack(reads[2].seq)


# ----------------------------------------------------------------- virtual shoe only

@pytest.mark.faults
def test_unplug_replug_loses_nothing(shoe_target: ShoeTarget, shoe_link: ShoeLink,
                                     shoe_events: queue.Queue[Any]) -> None:
    shoe = shoe_target.virtual
    assert shoe is not None
    shoe_link.wait_connected()
    sent = [shoe.pull() for _ in range(3)]
    shoe.unplug()
    assert not shoe.plugged
    if shoe.transport == "pty":
        assert not os.path.lexists(shoe.url)  # the udev-like link goes with the device
    sent += [shoe.pull() for _ in range(3)]  # pulled while unplugged: kept by the shoe
    shoe.replug()
    sent += [shoe.pull() for _ in range(2)]
    reads = [take(shoe_events, CardRead) for _ in range(8)]
    assert [r.card for r in reads] == sent
    assert [r.seq for r in reads] == list(range(reads[0].seq, reads[0].seq + 8))
    events = drain(shoe_events)
    assert not [e for e in events if isinstance(e, CardRead)]
    assert shoe_link.stats.reconnects >= 1


@pytest.mark.faults
def test_unplug_is_seen_as_disconnected_then_connected(shoe_target: ShoeTarget, shoe_link: ShoeLink,
                                                        shoe_events: queue.Queue[Any]) -> None:
    shoe = shoe_target.virtual
    assert shoe is not None
    assert take(shoe_events, LinkChanged).status == LinkStatus.CONNECTED
    shoe.unplug()
    ev = take(shoe_events, LinkChanged)
    assert ev.status == LinkStatus.DISCONNECTED and ev.detail
    shoe.replug()
    assert take(shoe_events, LinkChanged).status == LinkStatus.CONNECTED


@pytest.mark.faults
def test_reboot_that_loses_the_buffer_is_a_sequence_gap(shoe_target: ShoeTarget) -> None:
    shoe = shoe_target.virtual
    assert shoe is not None
    q: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe.url, q, auto_ack=True) as link:
        link.wait_connected()
        shoe.pull()
        first = take(q, CardRead)
        assert shoe.wait_acked(3.0)
        shoe.unplug()
        lost = [shoe.pull(), shoe.pull()]  # never reached the host
        shoe.reboot(lose_unacked=True)
        after = shoe.pull()
        gap = take(q, SequenceGap)
        assert (gap.expected, gap.got) == (first.seq + 1, first.seq + 3)
        rest = [gap, *drain(q, 1.0)]
        (read,) = [e for e in rest if isinstance(e, CardRead)]
        # the dispense counter goes on across the reboot (persistent counters)
        assert read.card == after and read.seq == first.seq + 3 and read.dispense == first.dispense + 3
        (restarted,) = [e for e in rest if isinstance(e, ShoeRestarted)]
        # the counters it keeps say two cards went unreported
        assert restarted.unreported == 2 and restarted.boot_count_after == restarted.boot_count_before + 1
        assert lost and shoe.lost_on_reboot == 2
        ev = [e for e in rest if isinstance(e, LinkChanged)]
        assert link.stats.gaps == 1
        assert all(e.status != LinkStatus.DEGRADED for e in ev)


@pytest.mark.faults
def test_noisy_line_delivers_every_event_once(shoe_target: ShoeTarget) -> None:
    shoe = shoe_target.virtual
    assert shoe is not None
    shoe.faults.corrupt, shoe.faults.drop, shoe.faults.garbage = 0.02, 0.002, 0.002
    shoe.line.noise_out = LineNoise(shoe.faults, random.Random(5))
    shoe.line.noise_in = LineNoise(shoe.faults, random.Random(6))
    q: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe.url, q, auto_ack=True) as link:
        link.wait_connected()
        sent = []
        for i in range(150):
            if not shoe.remaining():
                shoe.reload(Deck.seeded(i))
            sent.append(shoe.pull())
            if i == 70:
                shoe.inject_fault("jam", detail="exit roller")
                shoe.press(2)
        got = [take(q, CardRead, 10.0) for _ in range(150)]
        assert [r.card for r in got] == sent
        assert shoe.wait_acked(5.0)
        assert link.stats.bad_frames > 0  # the noise was real


@pytest.mark.faults
def test_faults_and_buttons_are_events_in_sequence(shoe_target: ShoeTarget, shoe_link: ShoeLink,
                                                    shoe_events: queue.Queue[Any]) -> None:
    shoe = shoe_target.virtual
    assert shoe is not None
    shoe_link.wait_connected()
    shoe.pull()
    shoe.inject_fault("cover-open")
    shoe.press(1)
    shoe.inject_fault("cover-open", cleared=True)
    card = take(shoe_events, CardRead)
    f1 = take(shoe_events, ShoeFault)
    b = take(shoe_events, ShoeButton)
    f2 = take(shoe_events, ShoeFault)
    assert (f1.kind, f1.cleared, b.button, f2.cleared) == ("cover-open", False, 1, True)
    assert [card.seq + 1, card.seq + 2, card.seq + 3] == [f1.seq, b.seq, f2.seq]


@pytest.mark.faults
def test_card_faults_by_schedule(shoe_target: ShoeTarget, shoe_link: ShoeLink,
                                 shoe_events: queue.Queue[Any]) -> None:
    shoe = shoe_target.virtual
    assert shoe is not None
    from hil.virtual_shoe import Faults
    shoe.faults = Faults.parse("unreadable-at=2,double-pull-at=3,duplicate-at=4")
    shoe_link.wait_connected()
    c1 = shoe.pull()
    shoe.pull()
    shoe.pull()
    pair = shoe.last_dispensed
    dup = shoe.pull()
    events: list[Any] = []  # everything up to the fifth card read, then whatever follows
    while sum(isinstance(e, CardRead) for e in events) < 5:
        events.append(shoe_events.get(timeout=10))
    events += drain(shoe_events)
    reads = [e for e in events if isinstance(e, CardRead)]
    assert len(reads) == 5
    assert reads[0].card == c1
    assert (reads[1].card, reads[1].reader) == (None, "none")
    assert [r.card for r in reads[2:4]] == list(pair) and len(pair) == 2
    assert reads[4].card == dup and dup in shoe.dispensed[:-1]
    assert [r.dispense for r in reads] == [1, 2, 3, 4, 5]
    faults = [e for e in events if isinstance(e, ShoeFault)]
    assert [f.kind for f in faults] == ["double-pull"] and faults[0].seq == reads[2].seq - 1


@pytest.mark.faults
def test_a_second_host_cannot_take_an_exclusive_port(shoe_target: ShoeTarget, shoe_link: ShoeLink) -> None:
    if not shoe_target.url.startswith("/"):
        pytest.skip("exclusive locking applies to device paths")
    shoe_link.wait_connected()
    q: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe_target.url, q) as other:
        ev = take(q, LinkChanged)
        assert ev.status == LinkStatus.DISCONNECTED and "lock" in ev.detail
        assert not other.connected
    assert shoe_link.connected


def test_codec_vectors_cover_what_the_shoe_sends(shoe_target: ShoeTarget, shoe_link: ShoeLink) -> None:
    """Whatever the shoe said so far decoded under v1 (nothing unknown or bad on a clean line)."""
    shoe_link.wait_connected()
    # the HELLO and one HEARTBEAT: a shoe may wait up to 1 s for it (docs/protocol.md section 4)
    assert wait_for(lambda: shoe_link.stats.frames_in >= 2, 1.5)
    stats = shoe_link.stats
    assert stats.unknown_frames == 0
    assert p.PROTOCOL_VERSION == shoe_link.info.protocol  # type: ignore[union-attr]


@pytest.mark.faults
def test_a_resume_point_the_shoe_never_issued_is_ignored_and_said(shoe_target: ShoeTarget) -> None:
    shoe = shoe_target.virtual
    assert shoe is not None
    q: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe.url, q, resume_seq=10_000, auto_ack=True) as link:
        ev = take(q, LinkChanged)
        assert ev.status == LinkStatus.CONNECTED and "resume ignored" in ev.detail
        card = shoe.pull()
        assert take(q, CardRead).card == card
        assert link.acked < 10_000


@pytest.mark.faults
def test_silence_is_degraded_and_the_next_frame_recovers(shoe_target: ShoeTarget) -> None:
    shoe = shoe_target.virtual
    assert shoe is not None
    shoe.heartbeat_s = 30.0
    time.sleep(0.15)  # let the heartbeat already due go out
    q: queue.Queue[Any] = queue.Queue()
    with ShoeLink(shoe.url, q, silence_s=0.4) as link:
        assert take(q, LinkChanged).status == LinkStatus.CONNECTED
        ev = take(q, LinkChanged, 3.0)
        assert ev.status == LinkStatus.DEGRADED and "no frame" in ev.detail
        assert link.connected  # still in session: degraded is not disconnected
        shoe.pull()
        assert take(q, LinkChanged, 3.0).status == LinkStatus.CONNECTED


def test_without_a_host_the_shoe_drops_the_hosts_led_pattern(shoe_target: ShoeTarget) -> None:
    """Protocol, LED: no valid host frame for 3 s -> the shoe's own no-host pattern, token 0, so
    a stale "deal" light never stays on while nobody tracks the deal."""
    with ShoeLink(shoe_target.url, queue.Queue()) as link:
        link.wait_connected()
        link.send_leds("deal")
        assert wait_for(lambda: link.shoe_state is not None and link.shoe_state.led_token == link._session.led_token)
    # no host now: listen without sending a frame (one would end the silence) until a heartbeat
    # reports the no-host pattern
    listener = RawHost(shoe_target.url)
    listener.open()
    try:
        assert listener.wait_for(lambda m: isinstance(m, p.Heartbeat) and m.led_token == 0, 10.0) is not None
    finally:
        listener.close()
    if shoe_target.virtual is not None:
        assert shoe_target.virtual.led is NO_HOST_LED
    with ShoeLink(shoe_target.url, queue.Queue()) as link:
        link.wait_connected()
        assert wait_for(lambda: link.shoe_state is not None)
        state = link.shoe_state
        assert state is not None and state.led_token == 0
