"""The virtual shoe's device without I/O, byte by byte (docs/protocol.md sections 3-5): host
frames in from the published vectors, the exact frames out, its timers as deadlines, and a
host session joined to it in memory."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire import Pump, decode_all, frame, message

from drivers import protocol as p
from drivers.session import LinkSession
from hil.deck import Deck
from hil.faults import Faults, LineNoise
from hil.shoe_device import DISPENSED_KEPT, NO_HOST_LED, EmptyShoeError, ShoeDevice
from shoe_ctl.events import CardRead, FaultKind, ForeignWhat
from shoe_ctl.rules.cards import Card, parse_cards


def shoe_at_vector_state() -> ShoeDevice:
    """A device standing where the vectors do: the 15th card of epoch 3 gone, next event 40."""
    dev = ShoeDevice(Deck.with_prefix(parse_cards("As2d"), seed=1), readers=("rfid", "optical"), now=0.0)
    dev.next_seq = 40
    dev.epoch = 3
    dev.dispense = 15
    return dev


def test_a_pull_sends_the_card_vector_byte_for_byte() -> None:
    dev = shoe_at_vector_state()
    done = dev.pull(0.0)
    assert done.card == Card.parse("As") and done.after is None
    assert dev.frames_to_send() == [frame("card")]
    assert dev.unacked() == [40] and dev.events == [message("card")]


def test_an_led_frame_is_applied_and_answered_with_the_heartbeat_vector() -> None:
    dev = shoe_at_vector_state()
    dev.pull(0.0)
    dev.pull(0.0)
    dev.frames_to_send()
    dev.receive_data(p.encode(p.Led(5, 7, "deal", ("green",))), 0.1)
    assert dev.frames_to_send() == [frame("heartbeat")]  # seq 42, 17 cards, epoch 3, token 7, 2 unacked
    assert dev.led is not None and dev.led.token == 7


def test_the_reset_counter_vector_starts_a_new_epoch_once() -> None:
    dev = shoe_at_vector_state()
    dev.receive_data(frame("reset-counter"), 0.1)
    (hb,) = decode_all(dev.frames_to_send())
    assert hb == p.Heartbeat(40, 0, 4, 0)
    dev.pull(0.2)
    dev.receive_data(frame("reset-counter"), 0.3)  # a repeat: harmless
    assert decode_all(dev.frames_to_send())[-1] == p.Heartbeat(41, 1, 4, 0, unacked=1)


def test_host_hello_vector_gets_hello_and_every_held_event_oldest_first() -> None:
    dev = shoe_at_vector_state()
    dev.pull(0.0)
    dev.pull(0.0)
    cards = dev.frames_to_send()
    dev.receive_data(frame("host-hello"), 0.1)
    out = dev.frames_to_send()
    hello = decode_all(out[:1])[0]
    assert isinstance(hello, p.Hello) and (hello.seq, hello.first_seq, hello.version) == (42, 40, 1)
    assert out[1:] == cards and dev.resent == 2 and dev.hellos == 1


def test_acks_free_events_and_a_resend_request_is_acted_on_once_per_holdoff() -> None:
    dev = shoe_at_vector_state()
    for _ in range(3):
        dev.pull(0.0)
    cards = dev.frames_to_send()
    dev.receive_data(frame("ack-resend"), 0.1)  # acked 39, want 40, resend
    assert dev.frames_to_send() == cards
    dev.receive_data(p.encode(p.Ack(4, 39, 40, True)), 0.11)  # within 20 ms: not again
    assert dev.frames_to_send() == []
    dev.receive_data(frame("ack"), 0.2)  # acked 39, want 42
    assert dev.unacked() == [40, 41, 42]
    dev.receive_data(p.encode(p.Ack(5, 41, 42)), 0.3)
    assert dev.unacked() == [42] and dev.frames_to_send() == []
    dev.receive_data(p.encode(p.Ack(6, 50, 51)), 0.4)  # acks what was never sent: ignored
    assert dev.unacked() == [42]


def test_timers_heartbeat_resend_on_timeout_and_the_no_host_pattern() -> None:
    dev = ShoeDevice(Deck.seeded(1), heartbeat_s=0.5, resend_s=0.3, host_silence_s=3.0, now=0.0)
    assert dev.next_deadline() == 0.0
    dev.tick(0.0)
    assert decode_all(dev.frames_to_send()) == [p.Heartbeat(1, 0, 0, 0)]
    dev.pull(0.1)
    card = dev.frames_to_send()
    assert dev.next_deadline() == pytest.approx(0.4)  # no progress for resend_s: the card again
    dev.tick(0.39)
    assert dev.frames_to_send() == []
    dev.tick(0.4)
    assert dev.frames_to_send() == card
    dev.tick(0.5)
    assert [type(m) for m in decode_all(dev.frames_to_send())] == [p.Heartbeat]
    dev.receive_data(p.encode(p.Led(1, 3, "deal", ("green",))), 1.0)
    dev.receive_data(p.encode(p.Ack(2, 1, 2)), 1.0)
    dev.frames_to_send()
    assert dev.next_deadline() == pytest.approx(1.0)  # the heartbeat after the one at 0.5
    dev.tick(3.99)
    assert dev.led is not None and dev.led.token == 3
    dev.tick(4.0)  # 3 s without a host frame
    assert dev.led is NO_HOST_LED
    assert decode_all(dev.frames_to_send())[-1] == p.Heartbeat(2, 1, 0, 0)


def test_a_double_pull_by_schedule_is_the_fault_then_both_cards() -> None:
    dev = ShoeDevice(Deck.stacked(parse_cards("KsQh")), faults=Faults.parse("double-pull-at=1,reboot-at=1"),
                     now=0.0)
    done = dev.pull(0.0)
    assert done.cards == (Card.parse("Ks"), Card.parse("Qh")) and done.after == "reboot"
    assert decode_all(dev.frames_to_send()) == [
        p.FaultMsg(1, FaultKind.DOUBLE_PULL, False, "2 cards left together"),
        p.CardMsg(2, Card.parse("Ks"), "rfid", 1, 0), p.CardMsg(3, Card.parse("Qh"), "rfid", 2, 0)]
    with pytest.raises(EmptyShoeError):
        dev.pull(0.1)


def test_a_reboot_keeps_the_sequence_and_may_lose_the_buffer() -> None:
    dev = shoe_at_vector_state()
    dev.persistent_counters = False  # a shoe of the first revision
    dev.pull(0.0)
    boot = dev.boot_id
    dev.reboot(lose_unacked=True)
    dev.say_hello()
    (hello,) = decode_all(dev.frames_to_send()[1:])
    assert isinstance(hello, p.Hello) and hello.boot_id != boot
    assert (hello.seq, hello.first_seq, hello.epoch, hello.led_token) == (41, 41, 0, 0)
    assert hello.caps is None and hello.boot_count is None
    assert dev.lost_on_reboot == 1 and dev.dispense == 0


def test_a_reboot_keeps_the_counters_of_a_shoe_that_stores_them() -> None:
    """docs/protocol.md section 12: epoch, dispense counter and card total survive a power cycle,
    the boot count goes up; a card pulled while off is counted only with counts-unpowered."""
    for unpowered in (False, True):
        dev = ShoeDevice(Deck.seeded(1), now=0.0, counts_unpowered=unpowered)
        dev.epoch, dev.dispense = 3, 15
        dev.pull(0.0)
        dev.frames_to_send()
        dev.pull_unpowered()
        dev.reboot(lose_unacked=False)
        dev.say_hello()
        (hello,) = decode_all(dev.frames_to_send())
        assert isinstance(hello, p.Hello)
        assert (hello.epoch, hello.boot_count, hello.first_seq, hello.seq) == (3, 2, 1, 2)
        assert (hello.dispense, hello.card_total) == ((17, 2) if unpowered else (16, 1))
        assert hello.caps == (("persistent-counters", "counts-unpowered") if unpowered
                              else ("persistent-counters",))


# ------------------------------------------------------------------ timers as deadlines

HOST_FRAMES = st.one_of(
    st.builds(lambda acked, want, resend: p.encode(p.Ack(1, acked, max(want, acked + 1), resend)),
              st.integers(0, 8), st.integers(1, 9), st.booleans()),
    st.just(frame("host-hello")),
    st.just(frame("led-stop")),
    st.just(frame("reset-counter")),
    st.binary(min_size=1, max_size=12),
)
STEPS = st.lists(st.tuples(st.floats(0.0, 4.0), st.one_of(
    HOST_FRAMES.map(lambda f: ("rx", f)), st.just(("pull", None)), st.just(("jam", None)))), max_size=30)


@settings(max_examples=100, deadline=None)
@given(STEPS)
def test_ticking_only_at_the_deadline_sends_exactly_what_ticking_always_sends(
        steps: list[tuple[float, tuple[str, Any]]]) -> None:
    always, at_deadline = (ShoeDevice(Deck.seeded(2), heartbeat_s=0.5, resend_s=0.3, host_silence_s=3.0)
                           for _ in range(2))
    now = 0.0
    for wait, (op, arg) in steps:
        end = now + wait
        while now < end:
            now = round(now + 0.002, 6)
            always.tick(now)
            if now >= at_deadline.next_deadline():
                at_deadline.tick(now)
            assert always.frames_to_send() == at_deadline.frames_to_send()
        for dev in (always, at_deadline):
            if op == "rx":
                dev.receive_data(arg, now)
            elif op == "pull" and dev.deck.remaining():
                dev.pull(now)
            elif op == "jam":
                dev.inject_fault("jam", now=now)
        assert always.frames_to_send() == at_deadline.frames_to_send()


# ------------------------------------------------------------------ session and device together

def test_a_noisy_line_in_memory_delivers_every_card_once_in_order() -> None:
    """The two sans-I/O halves joined without a port: 1 % corrupted, 0.1 % dropped and inserted
    bytes both ways; every card pulled reaches the consumer once, in order, unchanged."""
    faults = Faults.parse("corrupt=0.01,drop=0.001,garbage=0.001")
    dev = ShoeDevice(Deck.seeded(5), seed=5, heartbeat_s=0.5, resend_s=0.3, now=0.0)
    session = LinkSession(name="memory", auto_ack=True)
    pump = Pump(session, dev, (LineNoise(faults, random.Random(1)), LineNoise(faults, random.Random(2))))
    pump.run(0.05)
    pulled = []
    for i in range(300):
        if not dev.deck.remaining():
            dev.reload(Deck.seeded(100 + i))
        pulled.append(dev.pull(pump.now).card)
        pump.run(0.005)
    pump.run(3.0)
    reads = [e for e in pump.events if isinstance(e, CardRead)]
    assert [r.card for r in reads] == pulled
    assert [r.seq for r in reads] == list(range(1, 301))
    assert dev.unacked_count() == 0 and session.stats.bad_frames > 0 and dev.host_bad_frames > 0


@pytest.mark.parametrize("takes", [True, False], ids=["host-takes-foreign", "earlier-host"])
def test_a_names_foreign_shoe_sends_a_tag_of_no_deck_as_the_firmware_does(takes: bool) -> None:
    """Capability names-foreign offered (docs/protocol.md section 16): a ``foreign`` pull is CARD
    0xFF, FOREIGN ``unknown`` (to a host whose ACK took it; the misread FAULT naming the tag to
    another), FAULT misread cleared; nothing of it goes before the host's first ACK."""
    dev = ShoeDevice(Deck.seeded(1), names_foreign=True, faults=Faults(schedule={2: ["foreign"]}), now=0.0)
    dev.say_hello()
    (hello,) = decode_all(dev.frames_to_send())
    assert isinstance(hello, p.Hello) and "names-foreign" in (hello.caps or ())
    dev.receive_data(p.encode(p.HostHello(1, 1, 1)), 0.05)
    dev.frames_to_send()
    dev.pull(0.1)
    dev.pull(0.2)
    assert 3 not in [m.seq for m in decode_all(dev.frames_to_send())]  # the FOREIGN waits for the answer
    card, named, cleared = dev.events[1:]
    assert isinstance(card, p.CardMsg) and card.card is None and card.reader == "none"
    assert isinstance(named, p.ForeignMsg) and named.what is ForeignWhat.UNKNOWN and named.card is None
    assert 4 <= len(named.tag) <= 10 and named.deck == ""
    assert cleared == p.FaultMsg(4, FaultKind.MISREAD, True, "")
    dev.receive_data(p.encode(p.Ack(2, 2, 3, False, takes)), 0.3)
    sent = decode_all(dev.frames_to_send())
    assert [m.seq for m in sent if not isinstance(m, p.Heartbeat)] == [3, 4]
    if takes:
        assert sent[0] == named
    else:
        assert sent[0] == p.FaultMsg(3, FaultKind.MISREAD, False, f"foreign card, tag {named.tag.hex()}")
    assert sent[-1] == cleared


def test_without_names_foreign_a_foreign_pull_is_read_as_a_card_not_of_the_stub() -> None:
    dev = ShoeDevice(Deck(parse_cards("As2d3c")), faults=Faults(schedule={1: ["foreign"]}), now=0.0)
    dev.say_hello()
    (hello,) = decode_all(dev.frames_to_send())
    assert "names-foreign" not in (hello.caps or ())
    done = dev.pull(0.0)
    assert done.card not in parse_cards("As2d3c")
    assert dev.events == [p.CardMsg(1, done.card, "rfid", 1, 0)]


def test_a_shoe_dealing_deck_after_deck_keeps_a_bounded_record_of_the_cards_dealt() -> None:
    # as `shoe-ctl sim --pace` deals for days: deck after deck, the next loaded when one runs out
    dev = ShoeDevice(Deck.seeded(0), faults=Faults.parse("duplicate=0.1,double-pull=0.05"), seed=3, record=False)
    decks, duplicates, longest = 0, 0, 0
    while decks < 60:
        if dev.deck.remaining() == 0:
            decks += 1
            dev.reload(Deck.seeded(decks))
        loaded = set(dev.deck.dealt()) | set(dev.deck.cards())
        left = dev.deck.remaining()
        done = dev.pull(float(dev.pulls))
        dev.frames_to_send()
        if left - dev.deck.remaining() < len(done.cards):  # a card left that the deck did not give
            duplicates += 1
            assert done.card in dev.dispensed[:-1]  # a copy of a card of this deck already dealt
        assert set(dev.dispensed) <= loaded
        longest = max(longest, len(dev.dispensed))
    assert duplicates > 60  # the fault still fires, deck after deck
    assert dev.pulls > 60 * 52 and longest < 2 * 52  # one deck's cards and its copies, not every deck's


def test_a_shoe_that_only_copies_cards_keeps_at_most_the_bounded_record() -> None:
    dev = ShoeDevice(Deck.seeded(0), faults=Faults.parse("duplicate-at=2"), seed=1, record=False)
    dev.pull(0.0)
    dev.faults = Faults.parse("duplicate=1.0")  # the deck never runs out: every pull a copy
    for i in range(3 * DISPENSED_KEPT):
        dev.pull(float(i))
        dev.frames_to_send()
    assert len(dev.dispensed) == DISPENSED_KEPT and dev.deck.remaining() == 51
    assert dev.pulls == 3 * DISPENSED_KEPT + 1
