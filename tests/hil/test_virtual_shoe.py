"""The virtual shoe's parts: fault specs, line noise, decks, the stable pty link."""

from __future__ import annotations

import os
import queue
import random
import time
from pathlib import Path

import pytest
from paths import SHARED_PHH
from waiting import wait_for

from drivers import protocol as p
from drivers.exc import FaultSpecError
from drivers.shoe import ShoeLink
from hil.deck import Deck, DeckError, stacked_order
from hil.virtual_shoe import NO_HOST_LED, EmptyShoeError, Faults, LineNoise, VirtualShoe
from shoe_ctl.rules.cards import Card, full_deck, parse_cards


def test_fault_spec_parses_rates_counts_and_schedules() -> None:
    f = Faults.parse("corrupt=0.01,drop=0.001,garbage=0.001,unplug-every=1000,reboot-at=5:9,unreadable-at=2")
    assert (f.corrupt, f.drop, f.garbage, f.unplug_every) == (0.01, 0.001, 0.001, 1000)
    assert f.schedule == {5: ["reboot"], 9: ["reboot"], 2: ["unreadable"]}
    assert Faults.parse("") == Faults() == Faults.parse("none")


@pytest.mark.parametrize("spec", ["corrupt=2", "bogus=1", "unplug-every=x", "melt-at=3", "drop", "jam-at=0"])
def test_bad_fault_specs_say_what_is_wrong(spec: str) -> None:
    with pytest.raises(FaultSpecError) as info:
        Faults.parse(spec)
    assert spec.split("=")[0].split("-at")[0] in str(info.value)
    assert isinstance(info.value, ValueError)


def test_line_noise_hits_about_the_rate_asked() -> None:
    noise = LineNoise(Faults(corrupt=0.01, drop=0.005, garbage=0.005), random.Random(1))
    data = bytes(range(1, 201)) * 500
    out = b"".join(noise.apply(data[i:i + 37]) for i in range(0, len(data), 37))
    corrupt, drop, garbage = noise.counts
    assert 800 <= corrupt <= 1200 and 350 <= drop <= 650 and 350 <= garbage <= 650
    assert len(out) == len(data) - drop + garbage
    clean = LineNoise(Faults(), random.Random(1))
    assert clean.apply(data) is data


def test_decks() -> None:
    assert Deck.seeded(3).cards() == Deck.seeded(3).cards() != Deck.seeded(4).cards()
    assert sorted(Deck.seeded(3).cards()) == full_deck()
    top = parse_cards("As??Kd")
    d = Deck.with_prefix(top, seed=1)
    cards = d.cards()
    assert cards[0] == Card.parse("As") and cards[2] == Card.parse("Kd") and len(set(cards)) == 52
    with pytest.raises(DeckError):
        Deck.stacked([Card.parse("As"), Card.parse("As")])
    d.take()
    assert d.remaining() == 51 and d.dealt() == [Card.parse("As")]


@pytest.mark.parametrize("seed", [0, 1, 7, 186])
@pytest.mark.parametrize("top", ["", "??", "As??Kd", "??As????Kd??", "2c3c4c5c6c7c8c9cTcJcQcKcAc??2d??", "??" * 52])
def test_a_stacked_deck_is_its_top_then_the_rest_shuffled_by_the_seed(top: str, seed: int) -> None:
    first = parse_cards(top)
    # the order by its definition: every card not on top, in code order, shuffled by the seed,
    # fills the open places in order and then follows them
    rest = [c for c in full_deck() if c not in first]
    random.Random(seed).shuffle(rest)
    want = [c if c is not None else rest.pop(0) for c in first] + rest
    got = stacked_order(first, seed)
    assert got == want and sorted(got) == full_deck()
    assert Deck.with_prefix(first, seed).cards() == want
    assert stacked_order(first, seed, size=len(first)) == want[:len(first)]
    with pytest.raises(DeckError):
        stacked_order([*first, Card.parse("Ah"), Card.parse("Ah")], seed)


@pytest.mark.shared
def test_deck_from_a_real_phh_hand_deals_in_physical_order() -> None:
    path = SHARED_PHH / "wsop-2023-ppc" / "10.phh"
    deck = Deck.from_phh(path)
    # 5 players: 3rd street goes one card to each in turn: P1..P5 first downcards, then second
    firsts = [c.code for c in deck.cards()[:5]]
    assert [str(Card(c)) for c in firsts] == ["5d", "7h", "Js", "Ts", "Qc"]
    assert [str(c) for c in deck.cards()[10:15]] == ["Ad", "4h", "9d", "Qh", "9s"]


def test_empty_shoe_and_pty_link(tmp_path: Path) -> None:
    link = tmp_path / "by-id-shoe"
    with VirtualShoe([Card.parse("2c")], link_path=link) as shoe:
        assert shoe.url == str(link) and os.path.islink(link)
        target = os.readlink(link)
        shoe.unplug()
        assert not os.path.lexists(link)
        shoe.replug()
        assert os.path.islink(link) and os.readlink(link) == target  # same name, new device
        assert shoe.pull() == Card.parse("2c")
        with pytest.raises(EmptyShoeError):
            shoe.pull()
        assert shoe.events[-1] == p.CardMsg(1, Card.parse("2c"), "rfid", 1, 0)
    assert not os.path.lexists(link)


def test_leds_fall_back_to_the_no_host_pattern_when_the_host_goes_silent() -> None:
    """docs/protocol.md, LED: no valid host frame for the silence time -> the shoe's own no-host
    pattern, reported as token 0, so the host's last "deal" light does not stay on."""
    with VirtualShoe(host_silence_s=2.0) as shoe:
        with ShoeLink(shoe.url, queue.Queue(), auto_ack=True) as link:
            link.wait_connected()
            link.send_leds("deal")
            assert wait_for(lambda: shoe.led is not None and shoe.led.signal == "deal")
            # for longer than the silence time the host's ACKs (every 0.5 s) alone keep its pattern
            # on, all the time; 2 s of silence leave room for a late thread on either side
            end = time.monotonic() + 2.5
            while time.monotonic() < end:
                assert shoe.led is not None and shoe.led.signal == "deal"
                time.sleep(0.01)
        assert wait_for(lambda: shoe.led is NO_HOST_LED, 10.0)
        with ShoeLink(shoe.url, queue.Queue(), auto_ack=True) as link:
            assert link.wait_connected().serial == "VS-0001"
            assert wait_for(lambda: link.shoe_state is not None and link.shoe_state.led_token == 0)
            link.send_leds("stop")
            assert wait_for(lambda: shoe.led is not None and shoe.led.signal == "stop")


@pytest.mark.parametrize("serial", ["", "S" * 33])
def test_a_virtual_shoe_needs_a_serial_number_the_protocol_can_carry(serial: str) -> None:
    with pytest.raises(ValueError, match="serial"):
        VirtualShoe(serial=serial)


def test_heartbeat_flags_mirror_the_open_fault_conditions() -> None:
    """docs/protocol.md, HEARTBEAT: flags = the conditions of FAULT kinds 4, 2, 5 as they are now."""
    with VirtualShoe(heartbeat_s=0.05) as shoe, ShoeLink(shoe.url, queue.Queue(), auto_ack=True) as link:
        link.wait_connected()
        shoe.inject_fault("jam")
        shoe.inject_fault("misread")  # not a condition the heartbeat carries
        assert wait_for(lambda: link.shoe_state is not None and link.shoe_state.jammed)
        state = link.shoe_state
        assert state is not None and not state.cover_open and not state.reader_error
        shoe.inject_fault("jam", cleared=True)
        shoe.inject_fault("cover-open")
        assert wait_for(lambda: link.shoe_state is not None and link.shoe_state.cover_open
                      and not link.shoe_state.jammed)
