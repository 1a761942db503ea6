"""The firmware's loop (drivers/shoe_fw/firmware.py): passes of the card-out beam and the tags
seen during them, a beam stuck broken, and the reader's health supervision, through the
hardware seams (a scripted reader, a beam the test breaks and restores) on a virtual clock."""

from __future__ import annotations

from typing import Any

from wire import Pump

from drivers import protocol as p
from drivers.session import LinkSession
from drivers.shoe_fw.core import ShoeCore
from drivers.shoe_fw.firmware import Firmware
from drivers.shoe_fw.reader import ScriptedReader
from shoe_ctl.events import CardRead, FaultKind, ShoeFault

AS, KD = bytes.fromhex("04a10033"), bytes.fromhex("04a1002d")
NINE_C_D17 = bytes.fromhex("04b20001")
DECK = {AS: ("D12", 51), KD: ("D12", 45), NINE_C_D17: ("D17", 28)}


class Beam:
    """The beam seam: ``broken()`` is what the test set."""

    def __init__(self) -> None:
        self.state = False

    def broken(self) -> bool:
        return self.state


class Rig:
    def __init__(self, **kw: Any) -> None:
        self.core = ShoeCore("FW-1")
        self.reader = ScriptedReader(name="fake")
        self.beam = Beam()
        self.seen: list[tuple[bytes, str, int]] = []
        self.fw = Firmware(self.core, self.reader, self.beam, DECK.get, on_card=lambda *a: self.seen.append(a), **kw)
        self.now = 0.0
        self.fw.start(self.now)
        self.events: list[Any] = []

    def run(self, seconds: float, dt: float = 0.005) -> None:
        end = self.now + seconds
        while self.now < end:
            self.now += dt
            self.fw.step(self.now)

    def pass_card(self, *uids: bytes, seconds: float = 0.05) -> None:
        self.reader.present = list(uids)
        self.beam.state = True
        self.run(seconds)
        self.beam.state = False
        self.reader.present = []
        self.run(0.02)

    def messages(self) -> list[Any]:
        """The new events sent since the last call (resends of older ones left out)."""
        out = p.FrameDecoder().feed(b"".join(self.core.frames_to_send()))
        got = []
        for m in out:
            if not isinstance(m, p.Heartbeat) and m.seq > (self.events[-1].seq if self.events else 0):
                self.events.append(m)
                got.append(m)
        return got


def test_one_pass_with_one_tag_is_one_card_and_a_tag_with_no_pass_deals_nothing() -> None:
    rig = Rig()
    rig.reader.present = [AS]  # the front card sits at the mouth: seen, not dealt
    rig.run(1.0)
    assert rig.messages() == []
    rig.pass_card(AS)
    got = rig.messages()
    assert [(type(m).__name__, m.seq) for m in got] == [("CardMsg", 1)]
    assert got[0].card.code == 51 and got[0].reader == "rfid" and got[0].dispense == 1
    assert rig.seen == [(AS, "D12", 51)] and rig.fw.passes == 1


def test_two_tags_in_one_pass_are_a_double_pull_then_both_cards_in_the_order_seen() -> None:
    rig = Rig()
    rig.reader.feed([KD], [KD, AS])
    rig.beam.state = True
    rig.run(0.1)
    rig.beam.state = False
    rig.run(0.02)
    got = rig.messages()
    assert isinstance(got[0], p.FaultMsg) and got[0].kind == FaultKind.DOUBLE_PULL and not got[0].cleared
    assert [m.card.code for m in got[1:]] == [45, 51] and [m.dispense for m in got[1:]] == [1, 2]


def test_a_pass_with_no_tag_is_an_unreadable_card_and_a_misread_begun_and_ended() -> None:
    rig = Rig()
    rig.pass_card()
    got = rig.messages()
    assert isinstance(got[0], p.CardMsg) and got[0].card is None and got[0].reader == "none"
    assert [(m.kind, m.cleared) for m in got[1:]] == [(FaultKind.MISREAD, False), (FaultKind.MISREAD, True)]
    assert got[1].detail == "no tag read"


def test_a_foreign_tag_is_never_a_silent_unreadable_card() -> None:
    rig = Rig()
    rig.pass_card(bytes.fromhex("04ffee0001"))
    got = rig.messages()
    assert got[0].card is None and got[1].kind == FaultKind.MISREAD and got[1].detail == "foreign card, tag 04ffee0001"
    assert rig.seen == [(bytes.fromhex("04ffee0001"), "", -1)]


def test_a_card_of_another_live_deck_is_named_with_both_decks_never_taken_for_the_stubs() -> None:
    rig = Rig()
    rig.pass_card(AS)  # the stub's first known card: deck D12
    rig.pass_card(NINE_C_D17)
    got = rig.messages()
    assert got[0].card.code == 51
    assert got[1].card is None and got[2].detail == "9c of deck D17 in deck D12's stu"  # cut at 32 bytes
    assert rig.fw.deck == "D12" and rig.fw.refused == 1
    rig.core.receive_data(p.encode(p.ResetCounter(1, 7)), rig.now)  # a new deck is loaded
    rig.pass_card(NINE_C_D17)
    got = rig.messages()
    assert got[0].card.code == 28 and rig.fw.deck == "D17"


def test_a_beam_stuck_broken_is_a_jam_and_the_card_is_reported_when_it_clears() -> None:
    rig = Rig(jam_s=2.0)
    rig.reader.present = [AS]
    rig.beam.state = True
    rig.run(1.9)
    assert rig.messages() == []
    rig.run(0.2)
    got = rig.messages()
    assert [(m.kind, m.cleared, m.detail) for m in got] == [(FaultKind.JAM, False, "card-out beam blocked")]
    rig.run(5.0)
    assert rig.messages() == []  # one begin, however long it lasts
    rig.beam.state = False
    rig.run(0.02)
    got = rig.messages()
    assert (got[0].kind, got[0].cleared) == (FaultKind.JAM, True)
    assert isinstance(got[1], p.CardMsg) and got[1].card.code == 51


def test_a_failing_reader_is_reported_at_once_reset_with_a_growing_backoff_then_its_end() -> None:
    rig = Rig(check_s=1.0, backoff=(0.1, 0.8))
    resets_at: list[float] = []
    real_reset = rig.reader.reset

    def reset() -> None:
        resets_at.append(rig.now)
        real_reset()

    rig.reader.reset = reset  # type: ignore[method-assign]
    rig.run(0.5)
    rig.reader.dead = True
    rig.run(0.51)  # the next check fails
    got = rig.messages()
    assert [(m.kind, m.cleared, m.detail) for m in got] == [(FaultKind.READER_ERROR, False, "rfid")]
    rig.run(3.0)
    gaps = [round(b - a, 2) for a, b in zip(resets_at, resets_at[1:], strict=False)]
    assert gaps[:4] == [0.1, 0.2, 0.4, 0.8] and max(gaps) <= 0.8 + 0.01  # doubling, then capped
    assert rig.messages() == []  # still in error: one begin only
    hb = [m for m in p.FrameDecoder().feed(b"".join(rig.core.frames_to_send())) if isinstance(m, p.Heartbeat)]
    assert hb == [] or hb[-1].reader_error
    rig.pass_card(AS)  # a card pulled meanwhile: unreadable, never lost
    got = rig.messages()
    assert got[0].card is None and got[1].detail == "reader error"
    rig.reader.dead = False
    rig.run(1.0)
    got = rig.messages()
    assert [(m.kind, m.cleared) for m in got] == [(FaultKind.READER_ERROR, True)]
    rig.pass_card(AS)
    assert rig.messages()[0].card.code == 51


def test_a_stale_answer_after_reset_keeps_the_reader_in_error_until_a_check_passes() -> None:
    rig = Rig(backoff=(0.1, 0.4))
    rig.reader.failures = 4  # a scan answers wrongly, then the checks after three resets answer stale
    rig.run(2.0)
    got = rig.messages()
    assert [(m.kind, m.cleared) for m in got] == [(FaultKind.READER_ERROR, False), (FaultKind.READER_ERROR, True)]
    assert rig.fw.health.resets == 4


def test_the_host_gets_every_pass_in_order_through_the_link() -> None:
    rig = Rig()
    pump = Pump(LinkSession(name="fw", auto_ack=True), rig.core)
    pump.run(0.2)
    for uids in ([AS], [KD], []):
        rig.pass_card(*uids)
        pump.run(0.1)
    reads = [e for e in pump.events if isinstance(e, CardRead)]
    faults = [e for e in pump.events if isinstance(e, ShoeFault)]
    assert [r.card.code if r.card else None for r in reads] == [51, 45, None]
    assert [r.dispense for r in reads] == [1, 2, 3] and len(faults) == 2


def test_a_reader_that_never_answers_is_a_reader_error_from_power_up_and_retried_for_ever() -> None:
    core = ShoeCore("FW-1")
    reader = ScriptedReader(name="pn532")
    reader.dead = True
    fw = Firmware(core, reader, Beam(), DECK.get, backoff=(0.1, 1.0))
    fw.start(0.0)
    assert not fw.health.ok and fw.health.error == "pn532: no answer to SAMConfiguration"
    now = 0.0
    while now < 30.0:
        now += 0.01
        fw.step(now)
    faults = [m for m in p.FrameDecoder().feed(b"".join(core.frames_to_send())) if isinstance(m, p.FaultMsg)]
    assert {(m.seq, m.kind, m.cleared) for m in faults} == {(1, FaultKind.READER_ERROR, False)}
    assert 25 <= reader.resets <= 35 and fw.health.error == "pn532: no answer after reset"  # 1 s apart at most


def test_a_beam_broken_at_power_up_is_a_jam_within_the_limit() -> None:
    rig = Rig(jam_s=2.0)
    rig.beam.state = True  # blocked before the shoe started
    rig.run(2.1)
    got = rig.messages()
    assert [(m.kind, m.cleared) for m in got] == [(FaultKind.JAM, False)]
