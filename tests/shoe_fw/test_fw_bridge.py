"""The shoe bridge on the Pi (drivers/shoe_bridge.py) through its real pty, with the host's real
transport (drivers.shoe.ShoeLink): cards from the beam (gpiozero MockFactory) and a scripted
reader, pairing, the live decks, and the restart paths: shoe-ctl restarted and the bridge
restarted with events unacked lose no card and double none."""

from __future__ import annotations

import os
import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device, DigitalInputDevice
from gpiozero.pins.mock import MockFactory
from waiting import wait_for

from drivers.shoe import ShoeLink
from drivers.shoe_bridge import Bridge, BridgeError, GpioBeam, StateFile
from drivers.shoe_fw import deckmap
from drivers.shoe_fw.reader import ScriptedReader
from shoe_ctl.events import CardRead, ForeignCard, ForeignWhat, ShoeFault, ShoeRestarted

SECRET = bytes(range(32))
SERIAL = "BR-TEST"
UIDS = [bytes.fromhex(f"04a1{n:04x}") for n in range(52)]


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    old = Device.pin_factory
    Device.pin_factory = MockFactory()
    try:
        yield Device.pin_factory
    finally:
        Device.pin_factory.close()
        Device.pin_factory = old


class Rig:
    def __init__(self, tmp: Path, factory: MockFactory, paired: bool = True) -> None:
        self.tmp = tmp
        self.state = tmp / "bridge"
        self.decks = tmp / "decks"
        self.link = tmp / "run" / "shoe"
        self.decks.mkdir(exist_ok=True)
        if paired:
            self.state.mkdir(mode=0o700, exist_ok=True)
            path = self.state / "secret"
            path.write_text(SECRET.hex() + "\n")
            path.chmod(0o600)
            doc = {"format": deckmap.FORMAT, "deck": "D12", "enrolled": "2026-12-04T21:00:00Z", "by": "ann",
                   "cards": {deckmap.uid_hex(u): deckmap.card_name(i) for i, u in enumerate(UIDS)}}
            (self.decks / "D12.json").write_text(deckmap.dumps(doc, deckmap.seal_key(SECRET)))
        self.pin = factory.pin(17)
        self.pin.drive_high()  # the beam is whole
        self.beam = GpioBeam(DigitalInputDevice(17, pull_up=None, active_state=True))
        self.reader = ScriptedReader()
        self.bridge: Bridge | None = None

    def start(self, **kw: Any) -> Bridge:
        self.bridge = Bridge(state=self.state, link=self.link, serial=SERIAL, reader=self.reader, beam=self.beam,
                             decks=self.decks, **kw).start()
        return self.bridge

    def pull(self, n: int | bytes) -> None:
        """A card with tag ``UIDS[n]`` (or the tag ``n``) passes the beam."""
        assert self.bridge is not None
        self.reader.present = [n if isinstance(n, bytes) else UIDS[n]]
        sent = self.bridge.core.next_seq
        self.pin.drive_low()
        assert wait_for(lambda: self.bridge is not None and self.bridge.fw.broken, 5)
        self.pin.drive_high()
        assert wait_for(lambda: self.bridge is not None and self.bridge.core.next_seq > sent, 5)
        self.reader.present = []


def take_reads(events: queue.Queue[Any], n: int, timeout: float = 10.0) -> list[CardRead]:
    out: list[CardRead] = []
    while len(out) < n:
        ev = events.get(timeout=timeout)
        if isinstance(ev, CardRead):
            out.append(ev)
    return out


def test_cards_from_the_beam_reach_the_table_paired_with_their_codes(tmp_path: Path, factory: MockFactory) -> None:
    rig = Rig(tmp_path, factory)
    events: queue.Queue[Any] = queue.Queue()
    with rig.start(), ShoeLink(str(rig.link), events, auto_ack=True, secret=SECRET, serial=SERIAL) as link:
        info = link.wait_connected(10)
        assert info.serial == SERIAL and link.auth == "hmac"
        for n in (51, 0, 45):
            rig.pull(n)
        reads = take_reads(events, 3)
        assert [str(r.card) for r in reads] == ["As", "2c", "Kd"] and [r.dispense for r in reads] == [1, 2, 3]
        rig.reader.present = [UIDS[5]]  # a card at the mouth, never pulled: nothing dealt
        before = rig.bridge.core.next_seq if rig.bridge else 0
        assert not wait_for(lambda: rig.bridge is not None and rig.bridge.core.next_seq != before, 0.5)


def test_a_foreign_tag_through_the_bridge_is_named_not_a_silent_unreadable(tmp_path: Path,
                                                                           factory: MockFactory) -> None:
    rig = Rig(tmp_path, factory)
    events: queue.Queue[Any] = queue.Queue()
    with rig.start(), ShoeLink(str(rig.link), events, auto_ack=True, secret=SECRET, serial=SERIAL) as link:
        link.wait_connected(10)
        rig.pull(bytes.fromhex("04ffee0001"))
        read = take_reads(events, 1)[0]
        named = events.get(timeout=10)
        while not isinstance(named, ForeignCard | ShoeFault):
            named = events.get(timeout=10)
        assert read.card is None and isinstance(named, ForeignCard)  # the bridge offers names-foreign
        assert (named.what, named.tag, named.seq) == (ForeignWhat.UNKNOWN, "04ffee0001", read.seq + 1)


def test_shoe_ctl_restarted_and_the_bridge_restarted_lose_no_card_and_double_none(tmp_path: Path,
                                                                                  factory: MockFactory) -> None:
    rig = Rig(tmp_path, factory)
    events: queue.Queue[Any] = queue.Queue()
    journal: list[CardRead] = []  # what the table durably recorded (acked)
    bridge = rig.start()
    link = ShoeLink(str(rig.link), events, secret=SECRET, serial=SERIAL).start()
    link.wait_connected(10)
    rig.pull(10)
    rig.pull(11)
    first = take_reads(events, 2)
    journal.append(first[0])
    link.ack(first[0].seq)  # the second is delivered, never journaled: shoe-ctl dies now
    link.close()
    rig.pull(12)  # pulled while shoe-ctl is down: the bridge holds it
    link = ShoeLink(str(rig.link), events := queue.Queue(), resume_seq=journal[-1].seq, secret=SECRET,
                    serial=SERIAL).start()
    link.wait_connected(10)
    again = take_reads(events, 2)
    assert [r.seq for r in again] == [2, 3]
    for r in again:
        journal.append(r)
        link.ack(r.seq)
    assert wait_for(lambda: bridge.core.unacked_count() == 0, 5)
    bridge.close()  # the bridge restarts while shoe-ctl runs: a shoe restart with counts
    bridge = rig.start()
    assert bridge.core.boot_count == 2 and bridge.core.next_seq == 4
    restarted = events.get(timeout=10)
    while not isinstance(restarted, ShoeRestarted):
        restarted = events.get(timeout=10)
    assert restarted.cards_counted == 0 and restarted.unreported == 0
    rig.pull(13)
    r = take_reads(events, 1)[0]
    journal.append(r)
    link.ack(r.seq)
    assert wait_for(lambda: bridge.core.unacked_count() == 0, 5)
    link.close()  # both go down with a card unacked in the bridge
    rig.pull(14)
    known_boot = bridge.core.boot_id  # the boot the table's journal last knew
    bridge.close()
    kept = StateFile(rig.state).load()
    assert kept is not None and [e[0] for e in kept[1]] == [5]
    bridge = rig.start()
    link = ShoeLink(str(rig.link), events := queue.Queue(), resume_seq=journal[-1].seq, secret=SECRET,
                    serial=SERIAL, resume_boot=(SERIAL, known_boot)).start()
    link.wait_connected(10)
    seen: list[Any] = []
    while not any(isinstance(e, CardRead) for e in seen):
        seen.append(events.get(timeout=10))
    # restarted while shoe-ctl was down: still a shoe restart, from the boot the journal knew
    [restart] = [e for e in seen if isinstance(e, ShoeRestarted)]
    assert (restart.boot_before, restart.boot_after) == (known_boot, bridge.core.boot_id)
    assert restart.cards_counted is None  # the counts before are not in the journal
    for r in [e for e in seen if isinstance(e, CardRead)]:
        journal.append(r)
        link.ack(r.seq)
    assert wait_for(lambda: bridge.core.unacked_count() == 0, 5)
    assert not wait_for(lambda: any(isinstance(e, CardRead) for e in list(events.queue)), 0.5)
    link.close()
    bridge.close()
    assert [str(r.card) for r in journal] == [deckmap.card_name(n) for n in (10, 11, 12, 13, 14)]
    assert [r.seq for r in journal] == [1, 2, 3, 4, 5]


def test_pairing_through_the_bridge_in_pairing_mode(tmp_path: Path, factory: MockFactory) -> None:
    rig = Rig(tmp_path, factory, paired=False)
    events: queue.Queue[Any] = queue.Queue()
    with rig.start(pairing=True):
        with ShoeLink(str(rig.link), events, serial=SERIAL) as link:
            link.wait_connected(10)
            link.pair(SECRET, 10)
            assert link.auth == "hmac"
    path = rig.state / "secret"
    assert bytes.fromhex(path.read_text()) == SECRET and (path.stat().st_mode & 0o777) == 0o600
    with rig.start(), ShoeLink(str(rig.link), queue.Queue(), secret=SECRET, serial=SERIAL) as link:
        assert link.wait_connected(10).serial == SERIAL


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not a bridge state"),
    ('{"format": "x"}', "format 'x'"),
    ('{"format": "shoe-ctl bridge state 1", "next_seq": 3, "boot_count": 1, "card_total": 0, "epoch": 0, '
     '"dispense": 0, "held": [[5, 16, "00"]]}', "out of order"),
])
def test_a_broken_state_file_stops_the_bridge_naming_it(tmp_path: Path, factory: MockFactory, content: str,
                                                        message: str) -> None:
    rig = Rig(tmp_path, factory)
    (rig.state / "state.json").write_text(content)
    with pytest.raises(BridgeError) as err:
        rig.start()
    assert str(rig.state / "state.json") in str(err.value) and message in str(err.value)
    assert "move it away" in str(err.value)


def test_a_secret_others_may_read_is_refused(tmp_path: Path, factory: MockFactory) -> None:
    rig = Rig(tmp_path, factory)
    os.chmod(rig.state / "secret", 0o644)
    with pytest.raises(BridgeError, match="mode 0644"):
        rig.start()


def test_shoe_ctl_bridge_stops_on_a_broken_state_file_naming_it(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from shoe_ctl.cli import main

    state = tmp_path / "bridge"
    state.mkdir()
    (state / "state.json").write_text("not json")
    code = main(["bridge", "--serial", "BR-1", "--reader", "pn532:/dev/null", "--state", str(state),
                 "--link", str(tmp_path / "shoe")])
    assert code == 2
    assert f"{state / 'state.json'}: not a bridge state" in capsys.readouterr().err


@pytest.mark.parametrize("paired", [False, True], ids=["version-1", "version-2"])
def test_the_conformance_kit_passes_the_bridge_unchanged(tmp_path: Path, factory: MockFactory, paired: bool) -> None:
    """``shoe-ctl conform`` against the bridge's pty, an operator driving the beam and the
    reader: every test of the kit passes, unpaired (version 1) and paired (version 2, the kit
    given the secret); untimed, as for the other simulated shoes on this loaded machine (the
    bridge's thread and the kit's reads can stall past any limit; tests/contract)."""
    import time

    from hil.conform import CallableOperator, Kit

    rig = Rig(tmp_path, factory, paired=paired)
    shoe = [rig.start()]
    n = [0]

    def pull() -> float:
        at = time.time()
        rig.pull(n[0] % 52)
        n[0] += 1
        return at

    def power_cycle() -> None:
        shoe[0].close()
        shoe[0] = rig.start()

    def pull_foreign() -> float:
        at = time.time()
        rig.pull(bytes.fromhex("05f0e1d2c3b4a5"))  # a tag of no deck
        return at

    operator = CallableOperator({"pull-card": pull, "pull-foreign": pull_foreign,  # type: ignore[dict-item]
                                 "power-cycle": power_cycle, "unplug": lambda: shoe[0].unplug(),
                                 "replug": lambda: shoe[0].replug()})
    try:
        report = Kit(str(rig.link), operator, time_scale=3.0, secret=SECRET if paired else None, timed=False).run()
    finally:
        shoe[0].close()
    failed = [(r["name"], r["message"]) for r in report["results"] if r["status"] != "passed"]
    assert failed == []
    assert report["summary"]["passed"] == 16 and report["shoe"]["serial"] == SERIAL
    assert report["protocol"] == (2 if paired else 1)
    assert report["shoe"]["caps"] == ["persistent-counters", "keeps-buffer", "names-foreign"]


def test_a_bad_deck_file_is_named_and_the_other_decks_still_load(tmp_path: Path, factory: MockFactory) -> None:
    rig = Rig(tmp_path, factory)
    (rig.decks / "D13.json").write_text('{"format": "shoe-ctl deck map 1", "deck": "D13"')
    with rig.start() as bridge:
        assert sorted(bridge.book.decks) == ["D12"]
        assert bridge.deck_errors == [f"{rig.decks / 'D13.json'}: not JSON (" + bridge.deck_errors[0].split("(", 1)[1]]
        assert bridge.lookup(UIDS[51]) == ("D12", 51)


def test_the_bridge_says_at_start_whether_it_is_paired(tmp_path: Path, factory: MockFactory,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Its first line tells the technician what ``shoe-ctl pair`` will meet: a paired shoe (pairing
    mode takes no new secret then), one in pairing mode, or one that speaks version 1."""
    import logging

    caplog.set_level(logging.INFO, logger="drivers.shoe_bridge")
    (tmp_path / "a").mkdir()
    unpaired = Rig(tmp_path / "a", factory, paired=False)
    for kw, said in (({}, "not paired (protocol version 1)"), ({"pairing": True}, "in pairing mode: run shoe-ctl pair")):
        with unpaired.start(**kw):
            pass
        assert said in caplog.text
        caplog.clear()
    unpaired.beam.device.close()
    (tmp_path / "b").mkdir()
    paired = Rig(tmp_path / "b", factory)
    with paired.start(pairing=True):
        pass
    assert f"paired (secret in {paired.state / 'secret'}; pairing mode takes no new secret)" in caplog.text
