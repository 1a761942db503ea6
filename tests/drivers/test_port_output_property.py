"""What a shoe reads from a port whose output buffer fills and empties at random
(``drivers.port_output.PortOutput``, docs/protocol.md section 7): every frame it reads is whole and
they come in the order sent (the host's frame counter only grows), no command is read twice, at
most one frame of each type a newer one supersedes (HOST_HELLO, ACK, LED, RESET_COUNTER, PAIR)
waits at any time, so no burst of them comes out when the port drains, and once the port has room again
the last frame of each of those types it reads is the newest sent: the shoe hears every
``acked`` and ``want``, the newest pattern, reset, challenge and secret, however many other frames
waited."""

from __future__ import annotations

import os

import pytest
from full_port import fill
from hypothesis import example, given, settings
from hypothesis import strategies as st

from drivers import protocol as p
from drivers.link_stats import LinkStats
from drivers.port_output import MAX_WAITING, PortOutput

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a non-blocking pipe: POSIX only")

_SUPERSEDED = (p.HostHello, p.Ack, p.Led, p.ResetCounter, p.Pair)
"""The host's messages a newer one of their type supersedes (docs/protocol.md, section 7)."""

_OPS = st.lists(st.one_of(st.just("ack"), st.just("led"), st.just("reset"), st.just("hello"), st.just("pair"),
                          st.tuples(st.just("room"), st.integers(1, 200)), st.just("full")),
                min_size=1, max_size=3 * MAX_WAITING + 10)


def _take(r: int, n: int) -> bytes:
    try:
        return os.read(r, n)
    except BlockingIOError:
        return b""


@settings(max_examples=150, deadline=None)
@given(_OPS)
@example(["ack", "led", *["reset"] * MAX_WAITING])  # resets repeated while an ACK and a LED frame wait
@example(["full", *["hello", "reset"] * MAX_WAITING])  # the challenges and resets of a long full port
@example(["pair", "ack", "pair", ("room", 200), "pair"])  # a newer secret while one waits
def test_the_shoe_reads_whole_frames_in_order_and_the_newest_of_each_superseded_type_last(ops: list[object]) -> None:
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    try:
        out = PortOutput(w, LinkStats())
        fill(w, b"\x00")  # the port starts full of frame delimiters (a decoder passes over them)
        read = bytearray()
        ctr = 0
        newest: dict[type, int] = {}
        for op in ops:
            if op == "full":
                if not out.waiting:  # (else a frame's rest would follow the filler)
                    fill(w, b"\x00")
                continue
            if isinstance(op, tuple):  # the shoe reads some bytes: room, then the reader's drain
                read += _take(r, op[1])
                out.drain()
                continue
            ctr += 1
            if op == "pair":  # version 2 framing only: sealed under its secret's hello key
                secret = ctr.to_bytes(32, "big")
                newest[p.Pair] = ctr
                out.send(p.seal(p.Pair(ctr, secret), p.hello_key(secret), 0))
            else:
                msg = {"ack": p.Ack(ctr, ctr - 1, ctr), "led": p.Led(ctr, ctr % 255 + 1, "deal", ("green",), "blink", 100, 100),
                       "reset": p.ResetCounter(ctr, ctr % 0xFFFF + 1), "hello": p.HostHello(ctr)}[op]  # type: ignore[index]
                newest[type(msg)] = ctr
                out.send(p.encode(msg))
            waiting = [kind for kind, _frame in out._waiting]
            assert all(waiting.count(kind.TYPE) <= 1 for kind in _SUPERSEDED), waiting
        while out.waiting:  # the shoe reads everything: room until nothing waits
            read += _take(r, 65536)
            out.drain()
        read += _take(r, 1 << 20)
    finally:
        os.close(r)
        os.close(w)
    decoder = p.SealedDecoder()  # the plain frames, and the sealed PAIRs
    got = [m.msg if isinstance(m, p.Sealed) else m for m in decoder.feed(bytes(read) + b"\x00")]
    assert decoder.stats.bad_frames == 0  # every frame whole
    seqs = [m.seq for m in got]
    assert seqs == sorted(set(seqs))  # in the order sent, none twice
    for kind in _SUPERSEDED:
        mine = [m.seq for m in got if isinstance(m, kind)]
        if kind in newest:
            assert mine and mine[-1] == newest[kind], f"the newest {kind.__name__} never reached the shoe"
