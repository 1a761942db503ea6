"""A card that is not the stub's deck's (docs/protocol.md section 16, FOREIGN): named by a FOREIGN
event to a host that took ``names-foreign``, as today's misread FAULT to any other host, at the
same sequence number, never lost or doubled across a host change or a shoe restart."""

from __future__ import annotations

import dataclasses
from typing import Any

from wire import Pump

from drivers import protocol as p
from drivers.session import LinkSession
from drivers.shoe_fw import codec as c
from drivers.shoe_fw.core import ShoeCore
from drivers.shoe_fw.firmware import Firmware
from drivers.shoe_fw.reader import ScriptedReader
from shoe_ctl.events import CardRead, FaultKind, ForeignCard, ForeignWhat, ShoeFault, StubDeck

AS = bytes.fromhex("04a10033")
NINE_C_D17 = bytes.fromhex("04b20001")
RETIRED_KH = bytes.fromhex("04c30002")
STRANGER = bytes.fromhex("04ffee0001")
LIVE = {AS: ("D12", 51), NINE_C_D17: ("D17", 28)}
RETIRED = {RETIRED_KH: ("D09", 46)}


class Beam:
    def __init__(self) -> None:
        self.state = False

    def broken(self) -> bool:
        return self.state


class OldHost(LinkSession):
    """A host of the revision before names-foreign: it does not know the capability bit (a
    receiver ignores bits it does not know), so its ACKs never take FOREIGN."""

    def _on_hello(self, hello: p.Hello, now: float) -> None:
        caps = tuple(x for x in hello.caps or () if x != "names-foreign")
        super()._on_hello(dataclasses.replace(hello, caps=caps), now)


class Shoe:
    def __init__(self, core: ShoeCore | None = None) -> None:
        self.core = core or ShoeCore("FW-1", names_foreign=True)
        self.reader = ScriptedReader(name="fake")
        self.beam = Beam()
        self.fw = Firmware(self.core, self.reader, self.beam, LIVE.get, retired=RETIRED.get)
        self.fw.start(0.0)

    def pass_alone(self, uid: bytes, at: float) -> list[Any]:
        """A pass at ``at`` with no host pumping: the messages it made, heartbeats left out."""
        self.reader.present = [uid]
        self.beam.state = True
        self.fw.step(at)
        self.beam.state = False
        self.fw.step(at + 0.05)
        frames = b"".join(self.core.frames_to_send())
        return [m for m in p.FrameDecoder().feed(frames) if not isinstance(m, p.Heartbeat)]

    def pull(self, pump: Pump, uid: bytes) -> None:
        self.reader.present = [uid]
        self.beam.state = True
        self.fw.step(pump.now)
        pump.run(0.03)
        self.beam.state = False
        self.fw.step(pump.now)
        self.reader.present = []
        pump.run(0.2)


def shoe_events(events: list[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, CardRead | ShoeFault | ForeignCard)]


def test_a_host_that_took_names_foreign_gets_the_card_named_in_place_of_the_misread() -> None:
    shoe = Shoe()
    pump = Pump(LinkSession(name="fw", auto_ack=True), shoe.core)
    pump.run(0.2)
    shoe.pull(pump, AS)  # the stub is deck D12
    shoe.pull(pump, STRANGER)
    shoe.pull(pump, NINE_C_D17)
    shoe.pull(pump, RETIRED_KH)
    got = shoe_events(pump.events)
    assert [type(e).__name__ for e in got] == ["CardRead"] + ["CardRead", "ForeignCard", "ShoeFault"] * 3
    assert [e.seq for e in got] == list(range(1, 11))
    unknown, other, retired = got[2], got[5], got[8]
    assert (unknown.what, unknown.tag, unknown.card, unknown.deck, unknown.stub) == (
        ForeignWhat.UNKNOWN, "04ffee0001", None, "", "D12")
    assert (other.what, str(other.card), other.deck, other.stub) == (ForeignWhat.OTHER_DECK, "9c", "D17", "D12")
    assert (retired.what, str(retired.card), retired.deck) == (ForeignWhat.RETIRED, "Kh", "D09")
    assert all(e.kind == FaultKind.MISREAD and e.cleared for e in got[3::3])  # the misread's end only
    assert other.describe() == "card of deck D17 in deck D12's shoe: the 9c (tag 04b20001)"
    assert unknown.describe().startswith("foreign card: tag 04ffee0001, not in deck D12")


def test_a_host_that_did_not_take_it_keeps_todays_misread_with_its_text() -> None:
    shoe = Shoe()
    pump = Pump(OldHost(name="old", auto_ack=True), shoe.core)
    pump.run(0.2)
    shoe.pull(pump, AS)
    shoe.pull(pump, STRANGER)
    shoe.pull(pump, NINE_C_D17)
    got = shoe_events(pump.events)
    assert not any(isinstance(e, ForeignCard) for e in got)
    assert [(e.kind, e.cleared, e.detail) for e in got if isinstance(e, ShoeFault)] == [
        (FaultKind.MISREAD, False, "foreign card, tag 04ffee0001"), (FaultKind.MISREAD, True, ""),
        (FaultKind.MISREAD, False, "9c of deck D17 in deck D12's stu"), (FaultKind.MISREAD, True, "")]
    assert pump.session.stats.unknown_frames == 0  # nothing it cannot read ever came


def test_a_version_1_host_on_the_wire_gets_no_foreign_frame_and_no_ack_flag_it_cannot_send() -> None:
    core = ShoeCore("FW-1", names_foreign=True)
    shoe = Shoe(core)
    core.receive_data(p.encode(p.HostHello(1, 1, 1)), 0.0)
    hello = [m for m in p.FrameDecoder().feed(b"".join(core.frames_to_send())) if isinstance(m, p.Hello)][-1]
    assert "names-foreign" in (hello.caps or ())
    core.receive_data(p.encode(p.Ack(2, 0, hello.seq)), 0.01)  # the old host: flag bit 1 clear
    sent = shoe.pass_alone(STRANGER, 0.02)
    assert [type(m).__name__ for m in sent] == ["CardMsg", "FaultMsg", "FaultMsg"]
    assert sent[1].detail == "foreign card, tag 04ffee0001" and core.naming.ok is False


def test_it_waits_for_the_hosts_first_ack_and_a_changed_host_gets_its_own_form_at_the_same_number() -> None:
    """Made with no host, then a new host takes it as FOREIGN but dies before acking; the next
    host, an old one, gets the same event number as a misread: neither lost nor doubled."""
    core = ShoeCore("FW-1", names_foreign=True)
    shoe = Shoe(core)
    made = shoe.pass_alone(STRANGER, 0.0)
    assert [type(m).__name__ for m in made] == ["CardMsg", "FaultMsg"]  # seq 2 waits: no host has said yet
    assert [m.seq for m in made] == [1, 3] and core.unacked() == [1, 2, 3]
    new = Pump(LinkSession(name="new"), core, now=1.0)  # never acks: its journal died
    new.run(0.5)
    got = shoe_events(new.events)
    assert [(type(e).__name__, e.seq) for e in got] == [("CardRead", 1), ("ForeignCard", 2), ("ShoeFault", 3)]
    old = Pump(OldHost(name="old", auto_ack=True), core, now=2.0)
    old.run(0.5)
    got = shoe_events(old.events)
    assert [(type(e).__name__, e.seq) for e in got] == [("CardRead", 1), ("ShoeFault", 2), ("ShoeFault", 3)]
    assert got[1].detail == "foreign card, tag 04ffee0001" and not got[1].cleared
    assert core.unacked() == []


def test_a_shoe_restart_keeps_the_foreign_event_and_sends_it_once() -> None:
    core = ShoeCore("FW-1", names_foreign=True, keeps_buffer=True)
    shoe = Shoe(core)
    pump = Pump(LinkSession(name="fw"), core)
    pump.run(0.2)
    shoe.pull(pump, NINE_C_D17)  # the stub's first known card is D17's
    shoe.pull(pump, AS)  # then a D12 card: another live deck
    kept, held = core.kept(), core.ring.held()
    assert [e[1] for e in held] == [c.T_CARD, c.T_CARD, c.T_FOREIGN, c.T_FAULT]  # nothing acked yet
    again = ShoeCore("FW-1", names_foreign=True, keeps_buffer=True)
    again.restore(kept, held, 5.0)
    host = Pump(LinkSession(name="fw", auto_ack=True), again, now=5.0)
    host.run(0.5)
    got = shoe_events(host.events)
    assert [e.seq for e in got] == [1, 2, 3, 4]
    assert [type(e).__name__ for e in got].count("ForeignCard") == 1
    foreign = got[2]
    assert (foreign.what, str(foreign.card), foreign.deck, foreign.stub) == (ForeignWhat.OTHER_DECK, "As", "D12", "D17")


def test_a_foreign_event_from_a_shoe_that_did_not_offer_it_is_dropped_by_its_row() -> None:
    session = LinkSession(name="host")
    session.connection_made(0.0)
    hello = p.Hello(1, 1, 1, 1, 7, 1, 0, 0, ("rfid",), "x", "S-1")
    msg = p.ForeignMsg(1, ForeignWhat.UNKNOWN, None, STRANGER)
    session.receive_data(p.encode(hello) + p.encode(msg), 0.01)
    assert not any(isinstance(e, ForeignCard) for e in session.events())
    assert session.stats.rejected.get("FG-UNOFFERED") == 1


def test_the_shoes_foreign_payload_is_the_hosts_byte_for_byte() -> None:
    for what, code, uid, deck in ((c.FOREIGN_UNKNOWN, 0xFF, STRANGER, ""), (c.FOREIGN_OTHER_DECK, 28, NINE_C_D17, "D17"),
                                  (c.FOREIGN_RETIRED, 46, RETIRED_KH, "D09")):
        body = c.body_v1(c.T_FOREIGN, 9, c.foreign_payload(what, code, uid, deck, "D12"))
        msg = p.decode_body(body)
        assert isinstance(msg, p.ForeignMsg) and msg.tag == uid and msg.stub == "D12" and msg.deck == deck
        assert p.encode_body(msg) == body


def test_a_host_that_took_names_foreign_is_told_the_stubs_deck_once_its_first_card_is_read() -> None:
    shoe = Shoe()
    pump = Pump(LinkSession(name="fw", auto_ack=True), shoe.core)
    pump.run(1.0)
    assert not [e for e in pump.events if isinstance(e, StubDeck)]  # no card read yet: no deck
    shoe.pull(pump, AS)
    pump.run(1.2)  # a STUB follows each HEARTBEAT: told within a second, delivered once
    assert [e for e in pump.events if isinstance(e, StubDeck)] == [StubDeck(0, "D12")]
    shoe.core.receive_data(p.encode(p.ResetCounter(1, 4)), pump.now)  # a new stub: its deck unknown again
    pump.run(1.0)
    shoe.pull(pump, NINE_C_D17)
    pump.run(1.2)
    assert [e for e in pump.events if isinstance(e, StubDeck)] == [StubDeck(0, "D12"), StubDeck(4, "D17")]


def test_a_host_that_did_not_take_it_is_never_sent_a_stub() -> None:
    shoe = Shoe()
    pump = Pump(OldHost(name="old", auto_ack=True), shoe.core)
    pump.run(0.2)
    shoe.pull(pump, AS)
    pump.run(1.5)
    assert not [e for e in pump.events if isinstance(e, StubDeck)]
    assert pump.session.stats.rejected.get("FG-UNOFFERED") is None and pump.session.stats.unknown_frames == 0


def test_the_shoes_stub_payload_is_the_hosts_byte_for_byte() -> None:
    body = c.body_v1(c.T_STUB, 12, c.stub_payload(4, "D17"))
    msg = p.decode_body(body)
    assert msg == p.StubMsg(12, 4, "D17") and p.encode_body(msg) == body
