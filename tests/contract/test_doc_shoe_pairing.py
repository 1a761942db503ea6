"""Pairing (docs/protocol.md section 15) with the shoe written from the document alone
(tests/support/doc_shoe.py): the host's ShoeLink gives it a first secret in its pairing mode, then
rotates it inside the authenticated session; each time the shoe answers under the new secret, and
a card it sends is delivered under it."""

from __future__ import annotations

import os
import queue
import time
from typing import Any

from doc_shoe import PAIR, DocShoe, hmac256, sealed
from waiting import wait_for

from drivers.shoe import ShoeLink
from shoe_ctl.events import CardRead


def _card(q: queue.Queue[Any], timeout: float = 10.0) -> CardRead:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            ev = q.get(timeout=0.1)
        except queue.Empty:
            continue
        if isinstance(ev, CardRead):
            return ev
    raise AssertionError(f"no card within {timeout} s")


def test_the_document_shoe_is_paired_then_rotated_by_the_host() -> None:
    first, second = bytes(range(32)), bytes(range(50, 82))
    shoe = DocShoe(pairing=True)
    q: queue.Queue[Any] = queue.Queue()
    try:
        with ShoeLink(shoe.url, q, auto_ack=True, serial="DOC-7") as link:
            assert link.wait_connected(10).serial == "DOC-7" and link.auth == "off"
            link.pair(first, timeout=10)  # version 1, the shoe in its pairing mode
            assert shoe.secret == first and link.auth == "hmac"
            shoe.pull()
            assert _card(q).seq == 1
            # the card acked under the shoe's session: host and shoe hold the same one (a late
            # answer to a repeated challenge has come back)
            assert wait_for(lambda: not shoe.held, 10)
            link.pair(second, timeout=10)  # a rotation inside the session: the pad hides it
            assert shoe.secret == second and link.auth == "hmac"
            shoe.pull()
            assert _card(q).seq == 2
    finally:
        shoe.close()


def test_a_paired_document_shoe_takes_no_second_pairing_in_clear() -> None:
    """Once paired, a PAIR in clear (the first pairing's form, sealed under the new secret's own
    hello key) is dropped, even in pairing mode: the shoe keeps its secret and its host."""
    secret, other = bytes(range(32)), bytes(range(7, 39))
    shoe = DocShoe(secret=secret, pairing=True)
    q: queue.Queue[Any] = queue.Queue()
    try:
        with ShoeLink(shoe.url, q, auto_ack=True, secret=secret, serial="DOC-7") as link:
            link.wait_connected(10)
            bad = shoe.rx_bad
            fd = os.open(shoe.url, os.O_RDWR | os.O_NOCTTY)
            try:
                os.write(fd, sealed(PAIR, 1, other, hmac256(other, b"shoe-ctl/2 hello"), 0))
            finally:
                os.close(fd)
            assert wait_for(lambda: shoe.rx_bad > bad, 10)
            assert shoe.secret == secret
            shoe.pull()
            assert _card(q).seq == 1  # still the table's shoe, in its session
    finally:
        shoe.close()
