"""Reading a deck for enrolment (``shoe_ctl.service.decks.read_deck``) over a scripted reader and
a stepped clock: each card read twice, and every refusal naming the card and the tag."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from drivers.shoe_fw import deckmap
from drivers.shoe_fw.reader import ReaderError, ScriptedReader
from shoe_ctl.service.decks import (
    NEW_DECK_ORDER,
    DeckFolder,
    EnrolError,
    parse_order,
    read_deck,
    start_reader,
)

SECRET = bytes(range(32))


def uid(n: int) -> bytes:
    return bytes([0x04, 0x10, n, 0x20, 0x30, 0x40, 0x50])


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def script(uids: Sequence[bytes], reads: int = 2, gap: int = 1) -> list[list[bytes]]:
    steps: list[list[bytes]] = []
    for u in uids:
        steps += [[u]] * reads + [[]] * gap
    return steps


def run(steps: list, **kw) -> list[bytes]:
    clock = Clock()
    reader = ScriptedReader(steps)
    return read_deck(reader, NEW_DECK_ORDER, clock=clock, sleep=clock.sleep, interval_s=0.05, idle_s=5.0,
                     settle_s=1.0, **kw).uids


def test_factory_order_is_52_distinct_cards_spades_first() -> None:
    assert len(set(NEW_DECK_ORDER)) == 52
    assert NEW_DECK_ORDER[:2] == ("As", "2s") and NEW_DECK_ORDER[26] == "Kc" and NEW_DECK_ORDER[-1] == "Ah"
    assert all(deckmap.card_code(c) >= 0 for c in NEW_DECK_ORDER)


def test_a_deck_read_twice_per_card_gives_52_uids_in_order() -> None:
    uids = [uid(n) for n in range(52)]
    seen: list[tuple[int, str]] = []
    got = run(script(uids), on_card=lambda n, card, u: seen.append((n, card)))
    assert got == uids
    assert seen[0] == (1, "As") and seen[-1] == (52, "Ah")


def test_cards_back_to_back_without_an_empty_scan_still_count() -> None:
    uids = [uid(n) for n in range(52)]
    assert run(script(uids, reads=3, gap=0) + [[]]) == uids


def test_a_card_read_once_is_refused() -> None:
    uids = [uid(n) for n in range(52)]
    steps = script(uids[:3]) + [[uids[3]], []]
    with pytest.raises(EnrolError, match=r"card 4 \(4s\): tag 04100320304050 read 1 time"):
        run(steps)


def test_a_uid_that_changes_between_reads_is_refused() -> None:
    steps = script([uid(0)]) + [[uid(1)], [uid(2)]]
    with pytest.raises(EnrolError, match=r"card 2 \(2s\): the tag's UID changed between reads"):
        run(steps)


def test_a_random_id_tag_is_refused_at_once() -> None:
    with pytest.raises(EnrolError, match=r"card 1 \(As\): tag 08a1b2c3 is a random ID"):
        run([[bytes.fromhex("08a1b2c3")]])


def test_two_tags_at_once_are_refused() -> None:
    with pytest.raises(EnrolError, match=r"two tags in the field at once"):
        run(script([uid(0)]) + [[uid(1), uid(2)]])


def test_a_duplicate_uid_names_both_cards() -> None:
    with pytest.raises(EnrolError, match=r"card 3 \(3s\): tag 04100020304050 was already read as card 1 \(As\)"):
        run(script([uid(0), uid(1), uid(0)]))


def test_51_tags_then_nothing_is_refused_naming_the_missing_card() -> None:
    uids = [uid(n) for n in range(51)]
    with pytest.raises(EnrolError, match=r"51 tags read, a deck is 52: .*1 missing from card 52 \(Ah\)"):
        run(script(uids))


def test_a_53rd_tag_is_refused() -> None:
    uids = [uid(n) for n in range(53)]
    with pytest.raises(EnrolError, match=r"a 53rd tag \(04103420304050\)"):
        run(script(uids))


def test_a_uid_of_another_live_deck_is_refused(tmp_path) -> None:
    folder = DeckFolder(tmp_path, SECRET)
    other = [bytes([0x04, 0x99, n, 1, 2, 3, 4]) for n in range(52)]
    folder.write("D1", "ann", NEW_DECK_ORDER, other)
    book, problems = folder.load()
    assert problems == []
    steps = script([uid(0), other[5]])
    with pytest.raises(EnrolError, match=r"card 2 \(2s\): tag 04990501020304 is enrolled in live deck D1 as 6s"):
        run(steps, known=book)


def test_a_reader_error_gets_one_reset_then_stops_the_enrolment() -> None:
    uids = [uid(n) for n in range(52)]
    steps = script(uids[:1]) + [ReaderError("pn532: InListPassiveTarget: no answer")] + script(uids[1:])
    assert run(steps) == uids  # one reset and it reads on
    reader = ScriptedReader(script(uids[:1]))
    reader.dead = True
    clock = Clock()
    with pytest.raises(EnrolError, match=r"reader pn532:/dev/x: scripted: no answer .*after a reset"):
        read_deck(reader, NEW_DECK_ORDER, clock=clock, sleep=clock.sleep, where="pn532:/dev/x")


def test_the_sealed_map_reads_back_with_the_firmware_parser(tmp_path) -> None:
    folder = DeckFolder(tmp_path / "decks", SECRET)
    uids = [uid(n) for n in range(52)]
    path, dm = folder.write("house-red-1", "ann", NEW_DECK_ORDER, uids, enrolled="2026-12-04T21:00:00Z")
    assert path.name == "house-red-1.json" and (path.stat().st_mode & 0o777) == 0o600
    again = deckmap.parse(path.read_text(), deckmap.seal_key(SECRET), str(path))
    assert again.code(uids[0]) == deckmap.card_code("As") and again.code(uids[-1]) == deckmap.card_code("Ah")
    with pytest.raises(deckmap.DeckMapError, match="seal"):
        deckmap.parse(path.read_text(), deckmap.seal_key(bytes(32)), str(path))
    with pytest.raises(EnrolError, match="already live"):
        folder.write("house-red-1", "ann", NEW_DECK_ORDER, uids)
    retired = folder.retire("house-red-1")
    assert retired.parent.name == "retired" and not path.exists()
    assert folder.load()[0].lookup(uids[0]) is None  # a retired deck's tags are foreign
    with pytest.raises(EnrolError, match="not live"):
        folder.retire("house-red-1")


def test_parse_order_names_the_problem() -> None:
    text = " ".join(NEW_DECK_ORDER)
    assert parse_order(text + "  # all 52\n", "order.txt") == NEW_DECK_ORDER
    with pytest.raises(EnrolError, match="order.txt: 51 cards"):
        parse_order(" ".join(NEW_DECK_ORDER[:51]), "order.txt")
    with pytest.raises(EnrolError, match=r"order.txt: card 2: 'Xs' is not a card"):
        parse_order("As Xs", "order.txt")
    with pytest.raises(EnrolError, match=r"order.txt: card 3: As twice \(also card 1\)"):
        parse_order("As Ks As", "order.txt")


@pytest.mark.parametrize("where, words, not_words", [
    ("pn532:/dev/serial0?reset=25", "in HSU mode", "ttyACM"),
    ("pepper:/dev/ttyACM0", "plugged in", "HSU"),  # a USB reader has no wires or interface mode
])
def test_a_reader_that_does_not_start_gets_its_familys_hint(where: str, words: str, not_words: str) -> None:
    class Dead:
        name = where.partition(":")[0]

        def start(self) -> None:
            raise ReaderError(f"{self.name}: start: no answer")

    with pytest.raises(EnrolError) as caught:
        start_reader(Dead(), where)  # type: ignore[arg-type]
    text = str(caught.value)
    assert text.startswith(f"reader {where}: ") and "no answer" in text
    assert words in text and not_words not in text
