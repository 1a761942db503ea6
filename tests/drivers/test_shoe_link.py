"""ShoeLink error paths: a port that raises bare OSError (EIO) or a bug in a handler becomes a
``disconnected`` event and a reconnect, never a dead thread; URL handlers without locking."""

from __future__ import annotations

import errno
import logging
import os
import queue
import time
from typing import Any

import pytest
import serial
from waiting import wait_for

from drivers import protocol as p
from drivers.exc import ShoeUrlError
from drivers.shoe import ShoeLink, read_some
from shoe_ctl.events import CardRead, LinkChanged, LinkStatus
from shoe_ctl.rules.cards import Card


class FakePort:
    """A scripted port: answers HOST_HELLO with HELLO and one CARD, then fails as told."""

    opened = 0

    def __init__(self, fail: BaseException) -> None:
        FakePort.opened += 1
        self.fail = fail
        self.out = bytearray()
        self.reads = 0
        self.is_open = True

    @property
    def in_waiting(self) -> int:
        return len(self.out)

    def write(self, data: bytes) -> int:
        for msg in p.FrameDecoder().feed(data):
            if isinstance(msg, p.HostHello):
                self.out += p.encode(p.Hello(2, 1, 1, 1, 7, 1, 0, 0, ("rfid",), "fake", "F-1"))
                self.out += p.encode(p.CardMsg(1, Card.parse("Qs"), "rfid", 1))
        return len(data)

    def read(self, n: int = 1) -> bytes:
        if self.out:
            data, self.out[:] = bytes(self.out), b""
            return data
        self.reads += 1
        if self.reads > 3:
            raise self.fail
        time.sleep(0.01)
        return b""

    def close(self) -> None:
        self.is_open = False


def take(q: queue.Queue[Any], kind: type, timeout: float = 5.0) -> Any:
    end = time.monotonic() + timeout
    while True:
        ev = q.get(timeout=max(0.01, end - time.monotonic()))
        if isinstance(ev, kind):
            return ev


@pytest.mark.parametrize("fail", [OSError(errno.EIO, "Input/output error"),
                                  serial.SerialException("device disconnected"),
                                  RuntimeError("handler bug")])
def test_port_errors_become_events_and_the_link_reconnects(monkeypatch: pytest.MonkeyPatch,
                                                          fail: BaseException) -> None:
    FakePort.opened = 0
    monkeypatch.setattr(serial, "serial_for_url", lambda url, **kw: FakePort(fail))
    q: queue.Queue[Any] = queue.Queue()
    link = ShoeLink("loop://", q, backoff=(0.01, 0.05))
    with link:
        assert take(q, LinkChanged).status == LinkStatus.CONNECTED
        assert take(q, CardRead).card == Card.parse("Qs")
        lost = take(q, LinkChanged)
        assert lost.status == LinkStatus.DISCONNECTED
        assert str(fail) in lost.detail
        assert take(q, LinkChanged).status == LinkStatus.CONNECTED  # the thread lives on
        assert link._thread is not None and link._thread.is_alive()
    assert FakePort.opened >= 2
    assert link._thread is not None and not link._thread.is_alive()
    # the same card again after the reconnect is a duplicate, never a second CardRead
    reads = []
    while not q.empty():
        ev = q.get()
        if isinstance(ev, CardRead):
            reads.append(ev)
    assert reads == []


def test_open_failure_is_reported_once_and_retried(tmp_path: Any) -> None:
    q: queue.Queue[Any] = queue.Queue()
    with ShoeLink(str(tmp_path / "no-such-shoe"), q, backoff=(0.01, 0.02)) as link:
        assert wait_for(lambda: link.stats.port_errors >= 3)  # three failed opens, one event
    events = [q.get() for _ in range(q.qsize())]
    assert [e.status for e in events] == [LinkStatus.DISCONNECTED]
    assert "no-such-shoe" in events[0].detail


def test_loop_url_opens_with_exclusive_and_ignores_its_own_echo() -> None:
    q: queue.Queue[Any] = queue.Queue()
    with ShoeLink("loop://", q) as link:
        assert wait_for(lambda: link.stats.frames_out >= 2)  # HOST_HELLO repeated: nobody answers
        assert not link.connected
        assert link._thread is not None and link._thread.is_alive()
    assert q.empty()


def test_send_leds_validates_in_the_callers_thread() -> None:
    link = ShoeLink("loop://", queue.Queue())
    with pytest.raises(ValueError):
        link.send_leds({"name": "deal", "leds": ["purple"]})
    with pytest.raises(ConnectionError):
        link.send_leds("deal")  # valid, kept for later, but no shoe now
    link.close()
    link.close()


def test_a_new_host_never_reuses_the_led_token_the_shoe_shows() -> None:
    """docs/protocol.md, LED: the token says which pattern is shown. A restarted host counts its
    tokens from 1 again; if it picked the token the shoe still shows (the previous host's
    pattern), a lost LED frame would look shown and the old pattern would stay on."""
    from hil.virtual_shoe import VirtualShoe

    with VirtualShoe() as shoe:
        with ShoeLink(shoe.url, queue.Queue(), auto_ack=True) as first:
            first.wait_connected()
            first.send_leds("stop")
            assert wait_for(lambda: first.shoe_state is not None and first.shoe_state.led_token == 1)
        shown = shoe.led
        assert shown is not None and shown.signal == "stop"
        real_on_led = shoe.device._on_led
        lose_leds = [True]

        def on_led(fields: tuple[int, ...], now: float) -> None:  # the line eats LED frames for a while
            if not lose_leds[0]:
                real_on_led(fields, now)

        shoe.device._on_led = on_led  # type: ignore[method-assign]
        with ShoeLink(shoe.url, queue.Queue(), auto_ack=True) as second:
            second.wait_connected()
            second.send_leds("deal")
            time.sleep(0.5)
            assert shoe.led is shown  # nothing got through yet
            lose_leds[0] = False
            assert wait_for(lambda: shoe.led is not None and shoe.led.signal == "deal", 3.0)


def test_a_shoe_whose_sequence_went_back_is_started_over_not_dropped_as_duplicates() -> None:
    """docs/protocol.md section 6: a HELLO whose next sequence is below what the host already
    received comes from a shoe that lost its non-volatile counter. Its new events reuse old
    numbers; taken for duplicates they would be real cards silently dropped."""
    from hil.virtual_shoe import VirtualShoe

    events: queue.Queue[Any] = queue.Queue()
    with VirtualShoe() as shoe, ShoeLink(shoe.url, events, auto_ack=True) as link:
        link.wait_connected()
        first = [shoe.pull() for _ in range(3)]
        got = [take(events, CardRead).card for _ in range(3)]
        assert got == first
        assert shoe.wait_acked()
        with shoe._lock:
            shoe.next_seq = 1  # the counter in non-volatile memory was lost
            shoe.reboot(lose_unacked=True)
        note = take(events, LinkChanged)
        while "went back" not in note.detail:
            note = take(events, LinkChanged)
        assert note.status == LinkStatus.CONNECTED and "next 1, host had received up to 3" in note.detail
        again = [shoe.pull() for _ in range(2)]
        reads = [take(events, CardRead) for _ in range(2)]
        assert [r.card for r in reads] == again and [r.seq for r in reads] == [1, 2]


def test_a_shoe_sending_a_malformed_event_is_reported_as_a_firmware_defect() -> None:
    """docs/protocol.md section 4: a frame with a valid CRC that breaks v1 is dropped every time;
    an event like that stalls delivery, and the host says why instead of blaming the line."""
    from cobs import cobs

    from hil.virtual_shoe import VirtualShoe

    events: queue.Queue[Any] = queue.Queue()
    with VirtualShoe() as shoe, ShoeLink(shoe.url, events, auto_ack=True) as link:
        link.wait_connected()
        with shoe._lock:  # a firmware bug: a CARD with dispense counter 0 under the next number
            seq = shoe.device.next_seq
            data = bytes([p.T_CARD]) + seq.to_bytes(4, "big") + bytes([5, 1, 0, 0, 0, 0])
            frame = b"\x00" + cobs.encode(data + p.crc32(data).to_bytes(4, "big")) + b"\x00"
            shoe.device.raw_event(frame, time.monotonic())  # held and sent under the next number
            shoe.line.flush()
        shoe.pull()  # a good card behind it: held, never delivered while the bad one blocks
        ev = take(events, LinkChanged)
        while ev.status != LinkStatus.DEGRADED:
            ev = take(events, LinkChanged)
        assert "firmware defect" in ev.detail and "dispense counter" in ev.detail
        assert not any(isinstance(e, CardRead) for e in list(events.queue))


@pytest.mark.parametrize("url", ["bogus://shoe", "BOGUS://x", "://nothing", "socket.io://host:1"])
def test_a_url_whose_scheme_pyserial_does_not_know_fails_at_once(url: str) -> None:
    """A configuration error, not a port to retry: refused when the link is made, naming the URL
    and the supported forms; no thread, no event."""
    q: queue.Queue[Any] = queue.Queue()
    with pytest.raises(ShoeUrlError) as err:
        ShoeLink(url, q)
    text = str(err.value)
    assert repr(url) in text and "/dev/serial/by-id/" in text
    for form in ("socket://", "rfc2217://", "loop://", "spy://"):
        assert form in text
    assert isinstance(err.value, ValueError) and q.empty()


@pytest.mark.parametrize("url", ["/dev/ttyUSB\udcff", "socket://h\ud800:1"])
def test_a_url_that_is_no_utf8_text_fails_at_once(url: str) -> None:
    """A device path typed on the command line with a byte that is no UTF-8 (the system keeps it as
    a lone surrogate): refused when the link is made, naming the URL escaped; before, the link's
    events named it as it was and the journal could not write them."""
    q: queue.Queue[Any] = queue.Queue()
    with pytest.raises(ShoeUrlError) as err:
        ShoeLink(url, q)
    text = str(err.value)
    assert repr(url) in text and "no UTF-8 text" in text and q.empty()
    text.encode("utf-8")  # the error itself can be printed, logged and journaled


def test_known_schemes_and_device_paths_are_accepted() -> None:
    q: queue.Queue[Any] = queue.Queue()
    for url in ("/dev/serial/by-id/usb-shoe", "COM3", "socket://127.0.0.1:9", "SOCKET://h:1", "loop://",
                "rfc2217://h:2", "spy:///dev/ttyUSB0"):
        link = ShoeLink(url, q)
        link.close()
        assert link.url == url and q.empty()


@pytest.mark.parametrize("fail", [serial.SerialException("could not open port"), RuntimeError("handler bug")])
def test_each_failed_open_is_one_log_line_without_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture,
                                                              fail: BaseException) -> None:
    def refuse(url: str, **kw: Any) -> Any:
        raise fail

    monkeypatch.setattr(serial, "serial_for_url", refuse)
    caplog.set_level(logging.DEBUG, logger="drivers.shoe")
    q: queue.Queue[Any] = queue.Queue()
    with ShoeLink("loop://", q, backoff=(0.01, 0.02)) as link:
        assert wait_for(lambda: link.stats.port_errors >= 3)
    attempts = link.stats.port_errors  # the thread has ended: no attempt after this one
    shown = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert all(r.exc_info is None and "Traceback" not in r.getMessage() for r in shown)
    assert all(str(fail) in r.getMessage() for r in shown)
    attempt_lines = [r for r in caplog.records if "open loop://" in r.getMessage()]
    retrying = [r for r in attempt_lines if r.getMessage().endswith("(retrying)")]
    assert len(retrying) == attempts  # one line per attempt, no more
    assert len(attempt_lines) == attempts + 1  # and the one ``disconnected`` event
    assert sum(r.levelno >= logging.WARNING for r in attempt_lines) == 1  # the first; repeats at DEBUG


def test_the_port_is_claimed_with_tiocexcl_so_a_second_open_is_refused(tmp_path: Any) -> None:
    """pyserial's exclusive=True is an advisory flock that another program need not
    ask for; with TIOCEXCL the kernel refuses its open() (EBUSY) while the link holds the port."""
    import pty

    import serial

    from drivers.shoe import claim_exclusive

    master, slave = pty.openpty()
    path = os.ttyname(slave)
    os.close(slave)
    try:
        ser = serial.serial_for_url(path, exclusive=True, timeout=0.1)
        try:
            os.close(os.open(path, os.O_RDWR | os.O_NOCTTY))  # the flock alone stops nobody
            assert claim_exclusive(ser)
            if os.geteuid() != 0:  # root (CAP_SYS_ADMIN) passes TIOCEXCL by design
                with pytest.raises(OSError) as err:
                    os.open(path, os.O_RDWR | os.O_NOCTTY)
                assert err.value.errno == errno.EBUSY
        finally:
            ser.close()
        os.close(os.open(path, os.O_RDWR | os.O_NOCTTY))  # released with the port
    finally:
        os.close(master)


def test_another_holder_of_the_device_is_found_in_proc_and_reported(tmp_path: Any) -> None:
    import subprocess
    import sys

    from drivers.shoe import port_holders
    from hil.virtual_shoe import VirtualShoe

    with VirtualShoe() as shoe:
        device = os.path.realpath(shoe.url)
        reader = subprocess.Popen([sys.executable, "-c", "import sys,time; f=open(sys.argv[1],'rb',0); "
                                   "print('open', flush=True); time.sleep(30)", device], stdout=subprocess.PIPE)
        try:
            assert reader.stdout is not None and reader.stdout.readline().strip() == b"open"
            holders = port_holders(shoe.url)
            assert [pid for pid, _ in holders] == [reader.pid] and "time.sleep" in holders[0][1]
            events: queue.Queue[Any] = queue.Queue()
            with ShoeLink(shoe.url, events, auto_ack=True) as link:
                link.wait_connected()
                ev = take(events, LinkChanged)
                while not ev.refused:
                    ev = take(events, LinkChanged)
                assert ev.refused == "port-shared" and str(reader.pid) in ev.detail
        finally:
            reader.kill()
            reader.wait()
        assert port_holders(shoe.url) == []


class CountingPort:
    """A device port holding ``waiting`` bytes, recording each pyserial call a reader makes."""

    def __init__(self, waiting: bytes) -> None:
        self.buf = bytearray(waiting)
        self.calls: list[tuple[str, int]] = []

    @property
    def in_waiting(self) -> int:
        self.calls.append(("in_waiting", len(self.buf)))
        return len(self.buf)

    def read(self, n: int = 1) -> bytes:
        data, self.buf[:] = bytes(self.buf[:n]), self.buf[n:]
        self.calls.append(("read", n))
        return data


def test_a_device_turn_reads_the_first_byte_then_the_rest_in_one_read() -> None:
    """A reader turn that waits with pyserial (a port the link's reader does not wait on itself:
    the conformance kit's host) is read(1) (the wait), in_waiting, one read of the rest: a whole
    frame in a turn, no in_waiting asked before the wait (docs/protocol.md, section 7)."""
    frame = p.encode(p.CardMsg(1, Card.parse("Qs"), "rfid", 1))
    port = CountingPort(frame)
    assert read_some(port, socket_port=False) == frame
    assert port.calls == [("read", 1), ("in_waiting", len(frame) - 1), ("read", len(frame) - 1)]
    port = CountingPort(b"\x00")
    assert read_some(port, socket_port=False) == b"\x00"
    assert port.calls == [("read", 1), ("in_waiting", 0)]
    port = CountingPort(b"")
    assert read_some(port, socket_port=False) == b""  # the timeout passed: nothing more asked
    assert port.calls == [("read", 1)]


def test_an_ack_held_for_the_next_ack_frame_wakes_the_reader_to_send_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/protocol.md section 5: a card's ``want`` waits for the consumer's ack; an ack that
    comes within ACK_MIN_GAP of the last ACK waits for the next ACK frame, which the reader sends.
    The reader, waiting for the ``want``'s own deadline, is woken for it: with that deadline and
    every other timer made far longer than the test waits, the ack still reaches the shoe."""
    import drivers.shoe
    from drivers import link_window
    from hil.virtual_shoe import VirtualShoe

    monkeypatch.setattr(link_window, "ACK_MIN_GAP", 1.0)  # the ack is held behind the HELLO's ACK ...
    monkeypatch.setattr(link_window, "WANT_WAIT_S", 600.0)  # ... while the reader waits long for the want
    monkeypatch.setattr(drivers.shoe, "IDLE_WAIT_MAX", 600.0)  # (not woken by its own idle bound either)
    events: queue.Queue[Any] = queue.Queue()
    with VirtualShoe(heartbeat_s=600.0, resend_s=600.0, host_silence_s=600.0) as shoe, \
            ShoeLink(shoe.url, events, silence_s=600.0) as link:
        link.wait_connected()
        shoe.pull()
        card = take(events, CardRead)
        assert wait_for(lambda: link._idle.until > 0, 5.0)  # the reader waits for the want's deadline
        link.ack(card.seq)  # within 1 s of the HELLO's ACK: held
        assert shoe.wait_acked(10.0) and shoe.unacked_count() == 0


def test_an_led_frame_is_written_in_the_callers_thread_when_it_needs_no_wait() -> None:
    """``try_send_leds`` (the controller's way to the shoe's LEDs, docs/protocol.md section 7):
    through the pty to the virtual shoe, the frame written by the caller; with the link's lock
    held by another thread (the reader in its turn, an ack being written) nothing is done and
    False says to send it from a thread that may wait; a URL port (whose write may wait) too."""
    import threading

    from cobs import cobs

    from hil.virtual_shoe import VirtualShoe

    with VirtualShoe() as shoe, ShoeLink(shoe.url, queue.Queue(), auto_ack=True) as link:
        link.wait_connected()
        written: list[tuple[int, str]] = []  # (message type, thread) of each frame written
        write = link._write

        def noted(frame: bytes, *args: Any) -> None:
            written.append((cobs.decode(frame.strip(b"\0"))[0] if frame else -1, threading.current_thread().name))
            write(frame, *args)

        link._write = noted  # type: ignore[method-assign]
        assert link.try_send_leds({"name": "burn", "leds": ["amber"], "mode": "steady"})
        assert [who for kind, who in written if kind == p.T_LED] == [threading.current_thread().name]
        assert wait_for(lambda: shoe.led is not None and shoe.led.signal == "burn", 3.0)
        held = threading.Event()
        release = threading.Event()

        def hold_the_link() -> None:
            with link._lock:
                held.set()
                release.wait(5.0)

        holder = threading.Thread(target=hold_the_link)
        holder.start()
        try:
            assert held.wait(5.0)
            assert not link.try_send_leds({"name": "deal", "leds": ["green"], "mode": "steady"})
        finally:
            release.set()
            holder.join()
        time.sleep(0.5)  # longer than the link's LED repeat: a pattern it had taken would show by now
        assert shoe.led.signal == "burn"
    with ShoeLink("loop://", queue.Queue()) as url_link:
        assert wait_for(lambda: url_link._ser is not None, 5.0)  # the port is open (no shoe on it)
        assert not url_link.try_send_leds({"name": "deal", "leds": ["green"], "mode": "steady"})


def test_an_led_frame_the_port_takes_in_part_is_finished_before_the_next_frame(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A full output buffer: the caller's one write takes only the frame's first bytes; the
    reader, woken, writes the rest (waiting as it may), ahead of any other frame, so the shoe gets
    the frame whole and shows the pattern, and the link's next frames still pass."""
    import drivers.port_output
    from hil.virtual_shoe import VirtualShoe

    cut = [True]
    real = drivers.port_output.write_some

    def a_full_buffer(fd: int, data: bytes) -> int:
        if cut[0]:
            cut[0] = False
            return real(fd, data[:5])
        return real(fd, data)

    monkeypatch.setattr(drivers.port_output, "write_some", a_full_buffer)
    events: queue.Queue[Any] = queue.Queue()
    with VirtualShoe() as shoe, ShoeLink(shoe.url, events) as link:
        link.wait_connected()
        assert link.try_send_leds({"name": "scramble", "leds": ["blue", "amber"], "mode": "blink",
                                   "on_ms": 400, "off_ms": 400})
        assert not cut[0]
        assert wait_for(lambda: shoe.led is not None and shoe.led.signal == "scramble", 3.0)
        assert link._idle.out is not None and not link._idle.out.waiting
        shoe.pull()
        card = take(events, CardRead)
        link.ack(card.seq)
        assert shoe.wait_acked(5.0) and shoe.unacked_count() == 0


def test_an_led_pattern_handed_over_while_the_shoe_is_unplugged_is_shown_once_it_is_back() -> None:
    """Unplugged: the controller's hand-over says the shoe is away (the sink counts it) and the
    link keeps the pattern; plugged back, the link sends it and the shoe shows it."""
    from drivers.exc import NotConnectedError
    from hil.virtual_shoe import VirtualShoe

    with VirtualShoe() as shoe, ShoeLink(shoe.url, queue.Queue(), auto_ack=True,
                                         backoff=(0.02, 0.1)) as link:
        link.wait_connected()
        shoe.unplug()
        assert wait_for(lambda: not link.connected, 5.0)
        with pytest.raises(NotConnectedError):
            link.try_send_leds({"name": "stop", "leds": ["red"], "mode": "blink", "on_ms": 250, "off_ms": 250})
        shoe.replug()
        link.wait_connected(10.0)
        assert wait_for(lambda: shoe.led is not None and shoe.led.signal == "stop", 5.0)
