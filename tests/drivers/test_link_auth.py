"""The shoe link under attack: pairing, authenticated frames, pinned serial.

Each scenario is one the issue names; each fails on the version-1 link, which took any shoe and
any frame: an unknown serial, a shoe swapped mid-hand, a stray HELLO of another serial, a
forged ACK from a second program, a forged CARD with the next sequence number, a replay.
The host session and the shoe device are joined in memory (``tests/support/wire.Pump``);
docs/protocol.md, "Authentication (version 2)".
"""

from __future__ import annotations

import os
from typing import Any

from wire import Pump

from drivers import protocol as p
from drivers.session import LinkSession
from hil.deck import Deck
from hil.shoe_device import ShoeDevice
from shoe_ctl.events import CardRead, LinkChanged, LinkStatus

SECRET = bytes(range(32))


def device(serial: str = "SH-1", secret: bytes | None = SECRET, **kw: Any) -> ShoeDevice:
    return ShoeDevice(Deck.seeded(1), serial=serial, secret=secret, **kw)


def pair_of(serial: str = "SH-1", secret: bytes | None = SECRET, pinned: str | None = "SH-1",
            shoe_secret: bytes | None = SECRET) -> Pump:
    pump = Pump(LinkSession(auto_ack=True, secret=secret, serial=pinned), device(serial, shoe_secret))
    pump.run(0.1)
    return pump


def cards(pump: Pump) -> list[CardRead]:
    return [e for e in pump.events if isinstance(e, CardRead)]


def refusals(pump: Pump) -> list[LinkChanged]:
    return [e for e in pump.events if isinstance(e, LinkChanged) and e.refused]


def test_a_paired_shoe_connects_authenticated_and_delivers_every_card() -> None:
    pump = pair_of()
    assert pump.session.connected and pump.session.version == p.AUTH_VERSION
    first = [e for e in pump.events if isinstance(e, LinkChanged)][0]
    assert first.status is LinkStatus.CONNECTED and first.auth == "hmac"
    for _ in range(5):
        pump.device.pull(pump.now)
    pump.run(0.2)
    assert [c.card for c in cards(pump)] == [e.card for e in pump.device.events]
    assert not pump.device.unacked() and not refusals(pump)
    # every frame on the line is sealed: none of them decodes as a version-1 frame
    frames = pump.device.frames_to_send()
    pump.device.pull(pump.now)
    for f in pump.device.frames_to_send() + frames:
        assert isinstance(p.SealedDecoder().feed(f)[0], p.Sealed)


def test_an_unknown_serial_is_refused_with_a_latched_reason_and_nothing_delivered() -> None:
    pump = pair_of(serial="SH-9", pinned="SH-1", secret=None, shoe_secret=None)  # a bench link, v1
    pump.device.pull(pump.now)
    pump.run(0.2)
    assert not pump.session.connected and not cards(pump)
    assert [r.refused for r in refusals(pump)] == ["unknown-shoe"]
    assert "SH-9" in refusals(pump)[0].detail and pump.device.unacked()  # never acked


def test_an_unpaired_shoe_is_refused_by_a_paired_table() -> None:
    pump = pair_of(shoe_secret=None)
    pump.device.say_hello()
    pump.device.pull(pump.now)
    pump.run(0.5)
    assert not pump.session.connected and not cards(pump)
    assert {r.refused for r in refusals(pump)} == {"unpaired"}
    assert len(refusals(pump)) == 1  # said once, not once per frame


def test_a_shoe_paired_with_another_secret_is_refused() -> None:
    pump = pair_of(shoe_secret=os.urandom(32))
    pump.device.pull(pump.now)
    pump.run(3.5)  # its frames verify under no key of this table: said once the port stays silent
    assert not pump.session.connected and not cards(pump)
    assert [r.refused for r in refusals(pump)] == ["auth-failed"]


def test_a_shoe_swapped_mid_hand_is_refused_and_numbering_never_changes() -> None:
    pump = pair_of()
    for _ in range(3):
        pump.device.pull(pump.now)
    pump.run(0.1)
    seqs = [c.seq for c in cards(pump)]
    assert seqs == [1, 2, 3]
    # the cable now leads to another shoe, v1 and unpaired, whose numbers start over
    other = device("SH-2", secret=None)
    pump.session.connection_lost()
    pump.session.connection_made(pump.now)
    pump.device = other
    other.plugged_in(pump.now)
    for _ in range(4):
        other.pull(pump.now)
    pump.run(0.5)
    assert [c.seq for c in cards(pump)] == seqs  # not one of its 4 cards dealt into the hand
    assert refusals(pump) and refusals(pump)[0].refused == "unpaired"
    assert other.unacked_count() == 4
    # even a swapped shoe with the same secret but another serial is refused
    third = device("SH-3")
    pump.session.connection_lost()
    pump.session.connection_made(pump.now)
    pump.device = third
    third.plugged_in(pump.now)
    third.pull(pump.now)
    pump.run(0.5)
    assert [c.seq for c in cards(pump)] == seqs
    assert "unknown-shoe" in [r.refused for r in refusals(pump)]


def test_a_stray_hello_of_another_serial_does_not_make_the_host_drop_real_cards() -> None:
    """The v1 host took any HELLO: one from another serial reset its numbering, and every later
    real card was dropped as a duplicate while the link said connected."""
    for secret in (None, SECRET):
        pump = pair_of(secret=secret, shoe_secret=secret, pinned=None)
        for _ in range(20):
            pump.device.pull(pump.now)
        pump.run(0.2)
        stray = p.Hello(1, 1, 1, 1, 0x1234, 1, 0, 0, ("rfid",), "x", "OTHER-7")
        pump.to_host += p.encode(stray)
        for _ in range(20):
            pump.device.pull(pump.now)
        pump.run(0.3)
        assert [c.seq for c in cards(pump)] == list(range(1, 41)), secret
        assert pump.session.connected and refusals(pump), secret


def test_a_forged_ack_from_a_second_program_erases_nothing_on_the_shoe() -> None:
    pump = Pump(LinkSession(auto_ack=False, secret=SECRET, serial="SH-1"), device())
    pump.run(0.1)
    for _ in range(4):
        pump.device.pull(pump.now)
    pump.run(0.1)
    assert len(cards(pump)) == 4 and pump.device.unacked() == [1, 2, 3, 4]  # not recorded yet
    # another program writes ACKs: plain v1, and sealed with a guessed key and a high counter
    pump.to_shoe += p.encode(p.Ack(999, 4, 5))
    pump.to_shoe += p.seal(p.Ack(999, 4, 5), os.urandom(32), 10**6)
    pump.run(0.1)
    assert pump.device.unacked() == [1, 2, 3, 4]
    assert pump.device.host_refused >= 2
    pump.session.ack(4, pump.now)  # the real host's ack, after the journal write, works
    pump.run(0.1)
    assert pump.device.unacked() == []


def test_a_forged_card_with_the_next_sequence_number_never_replaces_the_real_one() -> None:
    pump = pair_of()
    pump.device.pull(pump.now)
    pump.run(0.1)
    nxt = pump.device.next_seq
    forged = p.CardMsg(nxt, None, "none", 2)
    pump.to_host += p.encode(forged) + p.seal(forged, os.urandom(32), 10**6)
    pump.run(0.05)
    real = pump.device.pull(pump.now)
    pump.run(0.2)
    got = cards(pump)
    assert [c.seq for c in got] == [1, 2] and got[1].card == real.card
    assert [r.refused for r in refusals(pump)] == ["forged"]
    assert pump.session.connected


def test_a_replayed_frame_is_refused() -> None:
    pump = pair_of()
    captured: list[bytes] = []
    pump.device.pull(pump.now)
    captured += pump.device.frames_to_send()
    pump.to_host += b"".join(captured)
    pump.run(0.1)
    assert len(cards(pump)) == 1
    pump.to_host += b"".join(captured)  # the same bytes again
    pump.run(0.1)
    assert len(cards(pump)) == 1
    assert [r.refused for r in refusals(pump)] == ["replay"]


def test_a_recorded_hello_never_opens_a_session_and_accuses_nobody() -> None:
    """A HELLO answering a challenge the host no longer holds is the table's own shoe's (its MAC
    verifies under the table's secret), so nothing is refused: it opens no session, the shoe is
    challenged again, and the cards go on (docs/protocol.md section 14, "Handshake")."""
    pump = Pump(LinkSession(auto_ack=True, secret=SECRET, serial="SH-1"), device())
    pump._carry()
    pump.device.receive_data(pump.to_shoe, pump.now)
    pump.to_shoe = b""
    old_hello = pump.device.frames_to_send()[0]
    pump.run(0.5)
    assert pump.session.connected
    hellos = pump.device.hellos
    pump.to_host += old_hello  # the answer to an old challenge, once more
    pump.run(0.05)
    assert refusals(pump) == [] and pump.session.stats.stale_hellos == 1
    assert pump.device.hellos == hellos + 1  # challenged again at once, and answered
    pump.device.pull(pump.now)
    pump.run(0.5)
    assert len(cards(pump)) == 1 and pump.session.connected


def test_a_rebooted_shoe_is_challenged_again_without_an_alert() -> None:
    pump = pair_of()
    pump.device.pull(pump.now)
    pump.run(0.1)
    pump.device.reboot(lose_unacked=False)
    pump.device.say_hello()
    pump.device.pull(pump.now)
    pump.run(0.5)
    assert [c.seq for c in cards(pump)] == [1, 2] and not refusals(pump)
    assert pump.session.connected


def test_rotation_gives_the_shoe_a_new_secret_hidden_on_the_line() -> None:
    kept: list[bytes] = []
    pump = Pump(LinkSession(auto_ack=True, secret=SECRET, serial="SH-1"), device(on_secret=kept.append))
    pump.run(0.1)
    new = os.urandom(32)
    pump.session.pair(new)
    line = b"".join(pump.session.frames_to_send())
    pump.to_shoe += line
    assert new not in line
    pump.run(0.3)
    assert pump.device.secret == new and kept[-1] == new and pump.session.connected
    pump.device.pull(pump.now)
    pump.run(0.1)
    assert len(cards(pump)) == 1 and not refusals(pump)


def test_pairing_an_unpaired_shoe_needs_its_pairing_mode() -> None:
    for mode in (False, True):
        pump = Pump(LinkSession(auto_ack=True, serial="SH-1"), device(secret=None, pairing=mode))
        pump.run(0.1)
        new = os.urandom(32)
        pump.session.pair(new)
        pump.run(0.3)
        assert (pump.device.secret == new) is mode
        assert pump.session.connected is mode


class _Garble:
    """Shoe-to-host noise: every byte changed while ``on`` (no frame survives its CRC)."""

    def __init__(self) -> None:
        self.on = False

    def apply(self, data: bytes) -> bytes:
        return bytes(b ^ 0x5A for b in data) if self.on else data


class _Clean:
    def apply(self, data: bytes) -> bytes:
        return data


def test_frames_of_a_session_whose_hello_was_lost_on_a_noisy_line_are_not_called_forged() -> None:
    """A garbled line: the host hears nothing and challenges the shoe again; the shoe opens a new
    session whose HELLO is lost in the noise and seals its frames under it. Once the line is
    clean, those frames fail the old session's MAC: that is the shoe, not a second program. The
    host ignores them and challenges again (no ``forged`` stop); the card arrives."""
    garble = _Garble()
    pump = Pump(LinkSession(auto_ack=True, secret=SECRET, serial="SH-1"), device(), noise=(garble, _Clean()))
    pump.run(0.1)
    pump.device.pull(pump.now)
    pump.run(0.1)
    garble.on = True
    pump.device.pull(pump.now)  # this card's frame is garbled
    pump.run(3.0)
    garble.on = False
    pump.run(2.0)
    assert [c.seq for c in cards(pump)] == [1, 2]
    assert [r.refused for r in refusals(pump)] == []
    assert pump.session.connected and not pump.device.unacked()
