"""The link's writes to a device port never wait for room (``drivers.port_output``): what a full
output buffer leaves waits, in order, and goes out as room comes; meanwhile only the newest
frame of each type the host sends waits (HOST_HELLO, ACK, LED, RESET_COUNTER, PAIR), and at most
``MAX_WAITING`` frames. A pipe stands for the port: its buffer is full exactly when a write is refused (docs/protocol.md, section 7)."""

from __future__ import annotations

import os

import pytest
from full_port import fill

from drivers import port_output
from drivers import protocol as p
from drivers.link_stats import LinkStats
from drivers.port_output import MAX_WAITING, PortOutput, Unwritten, frame_type

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a non-blocking pipe: POSIX only")


def _read_all(fd: int, n: int) -> bytes:
    got = bytearray()
    while len(got) < n:
        got += os.read(fd, n - len(got))
    return bytes(got)


def _ack(ctr: int, acked: int, want: int) -> bytes:
    return p.encode(p.Ack(ctr, acked, want, False, False))


def _led(ctr: int, token: int) -> bytes:
    return p.encode(p.Led(ctr, token, "deal", ("green",), "blink", 100, 100))


def test_a_frame_goes_out_at_once_when_the_port_has_room(pipe: tuple[int, int]) -> None:
    r, w = pipe
    stats = LinkStats()
    out = PortOutput(w, stats)
    frame = _ack(1, 3, 4)
    out.send(frame)
    assert not out.waiting and stats.frames_out == 1
    assert os.read(r, 100) == frame


def test_a_full_port_keeps_the_newest_ack_and_led_in_order_and_room_lets_them_out(pipe: tuple[int, int]) -> None:
    r, w = pipe
    stats = LinkStats()
    out = PortOutput(w, stats)
    filled = fill(w)
    frames = [_ack(1, 1, 2), _led(2, 5), _ack(3, 2, 3), p.encode(p.ResetCounter(4, 9)), _ack(5, 3, 4), _led(6, 6)]
    for frame in frames:
        out.send(frame)  # returns at once: nothing waits for room
    assert out.waiting and stats.frames_out == 0
    assert out.dropped == 3  # two older ACKs and one older LED frame, none of them begun
    assert _read_all(r, filled) == b"x" * filled
    out.drain()
    assert not out.waiting and stats.frames_out == 3
    sent = list(p.FrameDecoder().feed(os.read(r, 4096)))
    assert [type(m) for m in sent] == [p.ResetCounter, p.Ack, p.Led]
    ack = sent[1]
    assert isinstance(ack, p.Ack) and (ack.acked, ack.want) == (3, 4)  # the newest says everything
    assert isinstance(sent[2], p.Led) and sent[2].token == 6


def test_a_frame_begun_is_finished_before_any_other(pipe: tuple[int, int]) -> None:
    r, w = pipe
    out = PortOutput(w, LinkStats())
    filled = fill(w)
    _read_all(r, 4096)  # a page of room: part of the frame below
    first = _ack(1, 1, 2) + b"\x01" * 5000 + b"\x00"  # longer than the room: begun, the rest waits
    out.send(first)
    assert out.waiting
    out.send(_ack(2, 2, 3))  # another ACK: it waits behind the begun frame, which is not replaced
    assert out.dropped == 0
    _read_all(r, filled - 4096)
    out.drain()
    assert not out.waiting
    assert os.read(r, 65536) == first + _ack(2, 2, 3)


def test_a_full_port_lets_out_one_host_hello_and_one_reset_the_newest(pipe: tuple[int, int]) -> None:
    """A port full while the host challenges every 0.25 s and repeats its reset every 0.3 s: once
    it drains the shoe reads one HOST_HELLO and one RESET_COUNTER, the newest, not a burst."""
    r, w = pipe
    out = PortOutput(w, LinkStats())
    filled = fill(w)
    ctr = 0
    for _ in range(MAX_WAITING):
        ctr += 1
        out.send(p.encode(p.HostHello(ctr)))
        ctr += 1
        out.send(p.encode(p.ResetCounter(ctr, 7)))
    out.send(_ack(ctr + 1, 1, 2))
    assert out.dropped == 2 * (MAX_WAITING - 1)
    _read_all(r, filled)
    out.drain()
    sent = list(p.FrameDecoder().feed(os.read(r, 4096)))
    assert [(type(m), m.seq) for m in sent] == [(p.HostHello, ctr - 1), (p.ResetCounter, ctr), (p.Ack, ctr + 1)]


def _pair(ctr: int, secret: bytes) -> bytes:
    return p.seal(p.Pair(ctr, secret), p.hello_key(secret), 0)


def test_a_newer_pair_replaces_a_waiting_one_and_the_cap_never_drops_it(pipe: tuple[int, int]) -> None:
    """A shoe in pairing mode takes the first PAIR it reads and no other (docs/protocol.md
    section 15), and the host speaks under the newest secret: the shoe must read the newest."""
    r, w = pipe
    out = PortOutput(w, LinkStats())
    filled = fill(w)
    out.send(_pair(1, b"\x01" * 32))
    out.send(_ack(2, 1, 2))
    out.send(_pair(3, b"\x02" * 32))
    assert out.dropped == 1
    for n in range(MAX_WAITING + 3):  # frames of a type the host does not send: only the cap bounds them
        out.send(bytes((0, 9, 0x86)) + n.to_bytes(8, "big").replace(b"\x00", b"\x01") + b"\x00")
    assert len(out._waiting) == MAX_WAITING
    assert [kind for kind, _frame in out._waiting][:2] == [p.T_ACK, p.T_PAIR]  # the cap dropped the others
    _read_all(r, filled)
    out.drain()
    sealed = [m for m in p.SealedDecoder().feed(os.read(r, 65536)) if isinstance(m, p.Sealed)]
    assert [m.msg.secret for m in sealed] == [b"\x02" * 32]


def test_at_most_max_waiting_frames_wait(pipe: tuple[int, int]) -> None:
    _r, w = pipe
    out = PortOutput(w, LinkStats())
    fill(w)
    for n in range(MAX_WAITING + 5):  # a type outside LATEST_ONLY: only the cap bounds it
        out.send(bytes((0, 9, 0x86)) + (n + 1).to_bytes(8, "big").replace(b"\x00", b"\x01") + b"\x00")
    assert len(out._waiting) == MAX_WAITING and out.dropped == 5
    out.send(_ack(99, 1, 2))  # the cap drops another, never the newest of a type a newer one replaces
    assert len(out._waiting) == MAX_WAITING and out._waiting[-1][0] == p.T_ACK and out.dropped == 6


def test_the_frame_type_is_read_from_the_frame_as_sent() -> None:
    assert frame_type(_ack(1, 1, 2)) == p.T_ACK
    assert frame_type(_led(1, 2)) == p.T_LED
    assert frame_type(b"\x00") == 0 and frame_type(b"\x00\x01\x00") == 0
    assert frame_type(p.encode(p.HostHello(1))) == p.T_HOST_HELLO
    assert frame_type(p.seal(p.Pair(1, bytes(32)), bytes(32), 1)) == p.T_PAIR
    assert port_output.LATEST_ONLY == {p.T_HOST_HELLO, p.T_ACK, p.T_LED, p.T_RESET, p.T_PAIR}


def test_what_the_port_has_not_taken_of_a_type_is_told_apart(pipe: tuple[int, int]) -> None:
    """``unwritten``: nothing, a frame waiting whole (a newer one replaces it) or one begun (its
    rest goes first): the session makes no ACK while one is begun (docs/protocol.md section 7)."""
    r, w = pipe
    out = PortOutput(w, LinkStats())
    out.send(_ack(1, 1, 2))
    assert out.unwritten(p.T_ACK) is Unwritten.NONE
    _read_all(r, len(_ack(1, 1, 2)))
    filled = fill(w)
    long_ack = _ack(2, 2, 3) + b"\x01" * 5000 + b"\x00"  # longer than the room made below (a pipe takes a short write whole or not at all)
    out.send(long_ack)
    assert out.unwritten(p.T_ACK) is Unwritten.WAITING and out.unwritten(p.T_LED) is Unwritten.NONE
    _read_all(r, 4096)  # a page of room: part of it
    out.drain()
    assert out.unwritten(p.T_ACK) is Unwritten.BEGUN
    out.send(_led(3, 4))
    assert out.unwritten(p.T_LED) is Unwritten.WAITING and out.unwritten(p.T_ACK) is Unwritten.BEGUN
    _read_all(r, filled - 4096)
    out.drain()
    assert out.unwritten(p.T_ACK) is Unwritten.NONE and out.unwritten(p.T_LED) is Unwritten.NONE
    assert os.read(r, 65536) == long_ack + _led(3, 4)
