"""The host's protocol session without I/O, byte by byte (docs/protocol.md sections 4-7): frames
in from the published vectors, the exact frames and events out, and its timers as deadlines."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire import decode_all, frame, message

from drivers import protocol as p
from drivers.exc import NotConnectedError, VersionError
from drivers.session import LinkSession
from shoe_ctl.events import CardRead, CounterReset, LinkChanged, LinkStatus, SequenceGap
from shoe_ctl.rules.cards import Card


def connected(resume_seq: int | None = 39, **kw: Any) -> LinkSession:
    """A session whose port opened at 0.0 and that took the ``hello`` vector at 0.01."""
    s = LinkSession(name="test-port", resume_seq=resume_seq, **kw)
    s.connection_made(0.0)
    s.frames_to_send()
    s.receive_data(frame("hello"), 0.01)
    s.frames_to_send()
    s.events()
    return s


def test_the_host_speaks_first_with_the_host_hello_vector_and_repeats_it_until_a_hello() -> None:
    s = LinkSession(name="test-port")
    s.connection_made(5.0)
    assert s.frames_to_send() == [frame("host-hello")]
    assert s.next_deadline() == pytest.approx(5.25)
    s.tick(5.2)
    assert s.frames_to_send() == [] and s.events() == []
    s.tick(5.25)
    assert s.frames_to_send() == [p.encode(p.HostHello(2))]
    assert not s.connected and s.info is None


def test_hello_then_a_hole_asks_for_a_resend_with_the_ack_resend_vector() -> None:
    s = LinkSession(name="test-port", resume_seq=39)
    s.connection_made(0.0)
    s.frames_to_send()
    s.receive_data(frame("hello"), 0.01)
    hello = message("hello")
    assert isinstance(hello, p.Hello)
    assert s.events() == [LinkChanged(LinkStatus.CONNECTED, "shoe SH-000123 firmware 2.1.0", hello.info())]
    assert s.frames_to_send() == [p.encode(p.Ack(2, 39, 40))]  # resume point 39 acked, 40 wanted
    s.receive_data(frame("card-unreadable"), 0.031)  # 41 before 40: a hole
    assert s.events() == []
    assert s.frames_to_send() == [frame("ack-resend")]
    s.receive_data(frame("card-unreadable"), 0.035)  # again within 20 ms: counted, not asked again
    assert s.frames_to_send() == [] and s.stats.duplicates_dropped == 1
    s.receive_data(frame("card"), 0.045)
    assert s.events() == [CardRead(40, Card.parse("As"), "rfid", 16, 3), CardRead(41, None, "none", 17, 3)]
    assert s.frames_to_send() == []
    assert s.next_deadline() == pytest.approx(0.051)  # want moved: said 20 ms after the last ACK
    s.tick(0.05)
    assert s.frames_to_send() == []
    s.tick(0.052)
    assert s.frames_to_send() == [p.encode(p.Ack(4, 39, 42))]
    s.ack(41, 0.06)  # within 20 ms of the last ACK: it waits for the next one
    assert s.frames_to_send() == []
    s.tick(0.075)
    assert s.frames_to_send() == [p.encode(p.Ack(5, 41, 42))]
    s.ack(40, 0.08)  # acks never go back
    assert s.frames_to_send() == [] and s.acked == 41
    with pytest.raises(ValueError):
        s.ack(42, 0.08)
    s.receive_data(frame("card"), 0.09)  # a duplicate: dropped, and the next tick says where we are
    assert s.events() == [] and s.stats.duplicates_dropped == 2
    s.tick(0.096)
    assert s.frames_to_send() == [p.encode(p.Ack(6, 41, 42))]
    assert s.stats.delivered == 2 and s.stats.resends == 1


def test_events_held_after_a_hole_come_out_in_order_once_the_hole_fills() -> None:
    s = connected(resume_seq=None)  # expected = first_seq 40
    cards = [p.CardMsg(seq, Card(seq - 40), "rfid", seq - 39, 3) for seq in range(40, 46)]
    for i in (5, 3, 1, 4, 2):
        s.receive_data(p.encode(cards[i]), 0.02 + i / 1000)
    assert s.events() == []
    s.receive_data(p.encode(cards[0]), 0.1)
    assert [e.seq for e in s.events()] == list(range(40, 46))


def test_a_shoe_that_lost_events_is_a_sequence_gap_after_the_connected_event() -> None:
    s = LinkSession(name="test-port", resume_seq=30)
    s.connection_made(0.0)
    s.receive_data(frame("hello"), 0.01)
    events = s.events()
    assert [type(e) for e in events] == [SequenceGap, LinkChanged]  # the gap first: no stale instruction between
    assert "events 31..39 lost by the shoe" in events[1].detail and events[0] == SequenceGap(31, 40)
    assert decode_all(s.frames_to_send())[-1] == p.Ack(2, 30, 40)


def test_no_common_version_is_the_vector_refused_with_a_disconnected_event() -> None:
    s = LinkSession(name="test-port")
    s.connection_made(0.0)
    with pytest.raises(VersionError):
        s.receive_data(frame("hello-no-common-version"), 0.01)
    (ev,) = s.events()
    assert ev.status is LinkStatus.DISCONNECTED and "no common version" in ev.detail
    assert not s.connected and not s.hello_seen


def test_an_led_pattern_is_repeated_until_the_shoe_reports_its_token() -> None:
    s = connected()
    spec = LinkSession.led_spec({"name": "deal", "leds": ["green"], "mode": "steady"})
    s.show_leds(spec, 1.0)
    (raw,) = s.frames_to_send()
    assert raw == p.encode(p.Led(3, 1, "deal", ("green",), "steady", 0, 0))
    (sent,) = decode_all([raw])
    assert s.next_deadline() <= 1.3
    s.tick(1.29)
    assert not [m for m in decode_all(s.frames_to_send()) if isinstance(m, p.Led)]
    s.tick(1.3)
    again = [m for m in decode_all(s.frames_to_send()) if isinstance(m, p.Led)]
    assert len(again) == 1 and again[0].token == 1 and again[0].seq > sent.seq
    s.receive_data(p.encode(p.Heartbeat(42, 17, 3, 1)), 1.31)  # the shoe shows token 1
    s.tick(1.7)
    assert not [m for m in decode_all(s.frames_to_send()) if isinstance(m, p.Led)]


def test_a_new_token_skips_the_one_the_shoe_shows() -> None:
    s = connected()  # the hello says token 7 is shown
    for _ in range(6):
        s.show_leds(LinkSession.led_spec({"name": "stop", "leds": ["red"]}), 1.0)
    assert s.led_token == 6
    s.show_leds(LinkSession.led_spec({"name": "stop", "leds": ["red"]}), 1.0)
    assert s.led_token == 8


def test_counter_reset_is_confirmed_by_an_event_before_the_first_card_of_the_new_epoch() -> None:
    s = connected()
    s.reset_counter()
    (sent,) = decode_all(s.frames_to_send())
    assert sent == p.ResetCounter(sent.seq, 4) and message("reset-counter") == p.ResetCounter(8, 4)
    s.tick(0.2)
    assert not [m for m in decode_all(s.frames_to_send()) if isinstance(m, p.ResetCounter)]
    s.tick(0.32)  # 0.3 s after the command: again
    assert [m.epoch for m in decode_all(s.frames_to_send()) if isinstance(m, p.ResetCounter)] == [4]
    s.receive_data(p.encode(p.CardMsg(40, Card.parse("3c"), "rfid", 16, 3)), 0.35)
    s.receive_data(p.encode(p.CardMsg(41, Card.parse("3d"), "rfid", 17, 3)), 0.36)
    s.events()
    s.receive_data(p.encode(p.CardMsg(42, Card.parse("2c"), "rfid", 1, 4)), 0.4)
    assert s.events() == [CounterReset(4), CardRead(42, Card.parse("2c"), "rfid", 1, 4)]


def test_a_card_made_before_the_reset_was_asked_never_confirms_it() -> None:
    """Epochs across boots : cards 40 and 41 were made before the host asked
    for epoch 4 (the HELLO said next 42), e.g. under an epoch 4 of an earlier boot of a shoe that
    keeps its buffer across a power loss; they cannot confirm the reset, only a later event or
    the shoe's own report can."""
    s = connected()
    s.reset_counter()
    s.frames_to_send()
    s.receive_data(p.encode(p.CardMsg(40, Card.parse("3c"), "rfid", 9, 4)), 0.1)
    s.receive_data(p.encode(p.CardMsg(41, Card.parse("3d"), "rfid", 10, 4)), 0.11)
    assert not [e for e in s.events() if isinstance(e, CounterReset)]
    s.tick(0.32)  # still asked for
    assert [m.epoch for m in decode_all(s.frames_to_send()) if isinstance(m, p.ResetCounter)] == [4]
    s.receive_data(p.encode(p.Heartbeat(42, 0, 4, 7)), 0.4)
    assert s.events() == [CounterReset(4)]


def test_commands_while_away_are_kept_and_sent_on_the_next_hello() -> None:
    s = LinkSession(name="test-port")
    s.connection_made(0.0)
    s.frames_to_send()
    with pytest.raises(NotConnectedError, match="test-port"):
        s.show_leds(LinkSession.led_spec({"name": "deal", "leds": ["green"]}), 0.0)
    with pytest.raises(NotConnectedError):
        s.reset_counter()
    assert s.frames_to_send() == []
    s.receive_data(frame("hello"), 0.01)
    sent = decode_all(s.frames_to_send())
    assert [type(m) for m in sent] == [p.ResetCounter, p.Led, p.Ack]
    # the token after the one the first hello says is shown (7): a fresh host never reuses it
    assert sent[0].epoch == 4 and sent[1].token == 8  # type: ignore[union-attr]
    assert p.encode(p.Led(5, sent[1].token, **spec(s))) == frame("led-deal")  # type: ignore[union-attr]


def spec(s: LinkSession) -> dict[str, Any]:
    return dict(s._commands.led or {})


def test_silence_is_degraded_and_host_hellos_go_out_each_second() -> None:
    s = connected(silence_s=3.0)
    s.tick(3.0)
    assert s.events() == []
    s.tick(3.01)
    (ev,) = s.events()
    assert ev.status is LinkStatus.DEGRADED and "no frame from the shoe for 3.0 s" in ev.detail
    assert p.HostHello in [type(m) for m in decode_all(s.frames_to_send())]
    s.tick(3.5)
    assert p.HostHello not in [type(m) for m in decode_all(s.frames_to_send())]
    s.tick(4.01)
    assert p.HostHello in [type(m) for m in decode_all(s.frames_to_send())]
    s.receive_data(p.encode(p.Heartbeat(42, 17, 3, 7)), 4.1)
    s.tick(4.1)
    assert s.events() == [LinkChanged(LinkStatus.CONNECTED, "link recovered", s.info)]


def test_a_port_with_no_shoe_is_said_once_per_connection() -> None:
    s = LinkSession(name="test-port", silence_s=1.0)
    s.connection_made(0.0)
    s.receive_data(b"\x00\x05garbage\x00", 0.5)
    s.tick(1.0)
    (ev,) = s.events()
    assert ev.status is LinkStatus.DISCONNECTED and "port test-port open but no HELLO" in ev.detail
    assert "(1 bad frames so far)" in ev.detail
    s.tick(2.0)
    assert s.events() == []


# ------------------------------------------------------------------ timers as deadlines

SHOE_FRAMES = st.one_of(
    st.builds(lambda seq: p.encode(p.CardMsg(seq, Card((seq * 7) % 52), "rfid", 1 + seq % 60, 3)),
              st.integers(38, 50)),
    st.builds(lambda seq, epoch, token: p.encode(p.Heartbeat(seq, 5, epoch, token)),
              st.integers(40, 52), st.integers(3, 5), st.integers(0, 9)),
    st.just(frame("hello")),
    st.binary(min_size=1, max_size=20),
)
STEPS = st.lists(st.tuples(st.floats(0.0, 1.5), st.one_of(
    SHOE_FRAMES.map(lambda f: ("rx", f)),
    st.just(("ack", None)),
    st.just(("led", None)),
    st.just(("reset", None)),
    st.just(("wait", None)),
)), max_size=40)


def _apply(s: LinkSession, op: str, arg: Any, now: float) -> None:
    try:
        if op == "rx":
            s.receive_data(arg, now)
        elif op == "ack":
            s.ack(max(s.acked, (s._window.expected or 1) - 1), now)
        elif op == "led":
            s.show_leds(LinkSession.led_spec({"name": "deal", "leds": ["green"]}), now)
        elif op == "reset":
            s.reset_counter()
    except NotConnectedError:
        pass


@settings(max_examples=150, deadline=None)
@given(STEPS, st.booleans(), st.floats(0.3, 3.0))
def test_ticking_only_at_the_deadline_sends_exactly_what_ticking_always_sends(
        steps: list[tuple[float, tuple[str, Any]]], auto_ack: bool, silence_s: float) -> None:
    """The transport runs the timers only when :meth:`next_deadline` has come; a session ticked
    every millisecond must put out the same frames and events at the same moments."""
    always = LinkSession(name="x", auto_ack=auto_ack, silence_s=silence_s)
    at_deadline = LinkSession(name="x", auto_ack=auto_ack, silence_s=silence_s)
    now = 0.0
    for s in (always, at_deadline):
        s.connection_made(now)
    for wait, (op, arg) in steps:
        end = now + wait
        while now < end:
            now = round(now + 0.001, 6)
            always.tick(now)
            if now >= at_deadline.next_deadline():
                at_deadline.tick(now)
            assert always.frames_to_send() == at_deadline.frames_to_send()
            assert always.events() == at_deadline.events()
        for s in (always, at_deadline):
            _apply(s, op, arg, now)
        assert always.frames_to_send() == at_deadline.frames_to_send()
        assert always.events() == at_deadline.events()


def test_has_output_says_whether_an_ack_left_anything_to_write() -> None:
    """ShoeLink flushes after an ack only when the session has output: an ack within 20 ms of
    the last ACK leaves none (it goes out with the next ACK), one after that leaves the ACK."""
    s = connected(resume_seq=None)  # expected 40: the HELLO's ACK went out at 0.01
    s.receive_data(p.encode(p.CardMsg(40, Card(1), "rfid", 1, 3)), 0.015)
    s.events()
    assert not s.has_output
    s.ack(40, 0.02)  # within ACK_MIN_GAP of the HELLO's ACK: waits
    assert not s.has_output and s.frames_to_send() == []
    s.tick(0.031)
    assert s.frames_to_send() == [p.encode(p.Ack(3, 40, 41))]
    s.receive_data(p.encode(p.CardMsg(41, Card(2), "rfid", 2, 3)), 0.04)
    assert s.has_output  # the CardRead waits for the transport
    s.events()
    s.ack(41, 0.06)  # 29 ms after the last ACK: written at once
    assert s.has_output and s.frames_to_send() == [p.encode(p.Ack(4, 41, 42))]
    assert not s.has_output


def test_a_card_in_order_costs_one_ack_carrying_its_want_and_its_ack() -> None:
    """A card delivered in order does not send an ACK for its ``want`` alone: the consumer's ack
    (after the journal's commit) says both in one frame (docs/protocol.md section 5)."""
    s = connected(resume_seq=None)  # expected 40: the HELLO's ACK went out at 0.01
    s.receive_data(p.encode(p.CardMsg(40, Card(1), "rfid", 1, 3)), 0.5)
    s.events()
    assert s.next_deadline() == pytest.approx(0.5 + LinkSession.WANT_WAIT_S)
    s.tick(0.503)
    assert s.frames_to_send() == []
    s.ack(40, 0.503)  # the commit: one ACK, at once, with the ack and the want
    assert s.frames_to_send() == [p.encode(p.Ack(3, 40, 41))]
    assert s.next_deadline() == pytest.approx(0.503 + LinkSession.ACK_KEEPALIVE)
    assert s.stats.acks == 2  # the HELLO's and the card's


def test_a_want_nobody_acks_is_said_alone_want_wait_after_the_card() -> None:
    """A consumer that does not ack (a journal that cannot write) still lets the shoe know what
    arrived, WANT_WAIT_S after the first event the last ACK did not cover, before the shoe's own
    0.3 s resend timeout; more events meanwhile wait for the same ACK."""
    s = connected(resume_seq=None)
    s.receive_data(p.encode(p.CardMsg(40, Card(1), "rfid", 1, 3)), 0.5)
    s.receive_data(p.encode(p.CardMsg(41, Card(2), "rfid", 2, 3)), 0.55)
    s.events()
    due = 0.5 + LinkSession.WANT_WAIT_S
    assert due < 0.5 + 0.3 and s.next_deadline() == pytest.approx(due)
    s.tick(due - 0.001)
    assert s.frames_to_send() == []
    s.tick(due)
    assert s.frames_to_send() == [p.encode(p.Ack(3, 0, 42))]  # nothing acked yet, 40 and 41 arrived


def test_led_fields_checked_once_are_still_refused_when_they_change() -> None:
    """led_spec keeps the fields it has checked (a few signal patterns); any other fields are
    still checked against the protocol, also right after a good pattern with the same name."""
    good = {"name": "deal", "leds": ["green"], "mode": "steady"}
    assert LinkSession.led_spec(good) == LinkSession.led_spec(dict(good))
    for bad in ({**good, "leds": ["purple"]}, {**good, "mode": "flicker"}, {**good, "on_ms": 70000},
                {**good, "leds": [["green"]]}):
        with pytest.raises(ValueError):
            LinkSession.led_spec(bad)


def test_tick_acts_on_silence_exactly_when_next_deadline_says() -> None:
    """next_deadline adds the silence to the last frame's time; tick compares the same sum (it
    used to compare ``now - last`` with ``silence_s``, which rounds the other way at some times:
    0.616 + 1.1 is above 1.716, 1.716 - 0.616 is not below 1.1)."""
    s = LinkSession(name="test-port", silence_s=1.1)
    s.connection_made(0.0)
    s.receive_data(frame("hello"), 0.616)
    s.frames_to_send()
    s.events()
    while (deadline := s.next_deadline()) < 1.7:  # the keepalive ACKs before the silence
        s.tick(deadline)
        assert [type(m) for m in decode_all(s.frames_to_send())] == [p.Ack]
    assert deadline == 0.616 + 1.1 > 1.716
    s.tick(1.716)
    assert s.frames_to_send() == [] and s.events() == []  # not yet, as the deadline says
    s.tick(deadline)
    assert [type(m) for m in decode_all(s.frames_to_send())] == [p.HostHello]
    assert [e.status for e in s.events()] == [LinkStatus.DEGRADED]
