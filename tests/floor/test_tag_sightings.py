"""One tag at two tables in one gaming day (docs/floor.md, "One tag at two tables"), and a hand
dealt in an earlier hand's order ("A deck dealt again in the same order"): the tables
send keyed hashes of their decks' tags and of foreign cards' tags with each hand's end
(``shoe_ctl.floor.card_health``), the floor pairs the tables that sent one hash on one gaming day
(``shoe_ctl.floor.sightings``), once per pair and day; the room's day, not the UTC one. With a
real Mosquitto: a card of table t1's deck turning up at t2 as a foreign card is flagged at t2,
and no message carries a tag's UID or the card."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from floor_help import ROOM, Tap
from test_card_health import HAND, KEY, Shoe
from waiting import wait_for

from shoe_ctl.events import CardRead, FaultKind, ForeignCard, ForeignWhat, ShoeFault
from shoe_ctl.floor import sightings as sightings_mod
from shoe_ctl.floor.broker import FLOOR_USER, MONITOR_USER, Mosquitto
from shoe_ctl.floor.card_health import CardHealth, JournalDeckTags, order_hash, tag_hash
from shoe_ctl.floor.consumer import FloorConsumer, TableView
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.floor.sightings import REPEATED_ORDER_CODE, TWO_TABLES_CODE, OrderSightings, TagSightings
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.decks import NEW_DECK_ORDER, DeckFolder
from shoe_ctl.service.gaming_day import parse_gaming_day
from shoe_ctl.service.journal import Journal


def uids_of(seed: int) -> list[bytes]:
    return [bytes([0x04, seed, n, 0xAA, 0x10, n, 0x80]) for n in range(52)]


def enrol(journal: Journal, folder: Path, deck: str, seed: int) -> list[bytes]:
    """A deck map written as ``shoe-ctl deck enrol`` writes it, and its ``deck-enrol`` record."""
    uids = uids_of(seed)
    path, _dm = DeckFolder(folder, os.urandom(32)).write(deck, "ana", NEW_DECK_ORDER, uids)
    journal.append_record("deck-enrol", {"deck": deck, "by": "ana", "cards": 52, "source": "uids", "file": str(path)})
    return uids


def foreign(journal: Journal, shoe: Shoe, uid: bytes, deck: str = "") -> None:
    """A card of no deck the shoe knows: CARD 0xFF, FOREIGN with its tag, the misread's end."""
    shoe.dispense += 1
    journal.append(CardRead(shoe._next(), None, "none", shoe.dispense, 1))
    journal.append(ForeignCard(shoe._next(), ForeignWhat.UNKNOWN if not deck else ForeignWhat.OTHER_DECK,
                               uid.hex(), None, deck, "D20"))
    journal.append(ShoeFault(shoe._next(), FaultKind.MISREAD, cleared=True))


@pytest.fixture
def journals(tmp_path: Path) -> Iterator[dict[str, Journal]]:
    js = {name: Journal(tmp_path / f"{name}.sqlite3", table=name, profile="tda", retention_days=0)
          for name in ("t1", "t2", "t3")}
    try:
        yield js
    finally:
        for j in js.values():
            j.close()


def test_a_table_sends_its_decks_tags_and_the_foreign_tags_by_keyed_hash(journals: dict[str, Journal],
                                                                        tmp_path: Path) -> None:
    j = journals["t1"]
    uids = enrol(j, tmp_path / "decks", "D17", 1)
    stranger = uids_of(9)[5]
    shoe = Shoe(j)
    shoe.hand(HAND)
    j.begin_hand({"game": "stud"})
    shoe.card("As")
    foreign(j, shoe, stranger)
    j.end_hand()
    health = CardHealth(KEY, deck_tags=JournalDeckTags(j))
    figures = [f for f in (health.feed(r) for r in j.records()) if f is not None]
    expected = sorted(tag_hash(KEY, u) for u in uids)
    assert figures[0]["seen"] == [{"deck": "D17", "tags": expected}], "all 52 tags of the deck, whatever was dealt"
    assert figures[1]["seen"] == [{"deck": "D17", "tags": expected},
                                  {"deck": "", "foreign": True, "tags": [tag_hash(KEY, stranger)]}]
    assert tag_hash(KEY, stranger) != tag_hash(bytes(32), stranger) and len(tag_hash(KEY, stranger)) == 16
    text = repr(figures)
    assert not any(u.hex() in text for u in uids + [stranger]) and "As" not in text
    assert "seen" not in CardHealth(None, deck_tags=JournalDeckTags(j)).feed(
        next(r for r in j.records() if r.kind == "hand-end"))  # type: ignore[operator]


def test_a_deck_map_that_cannot_be_read_sends_no_deck_tags(journals: dict[str, Journal], tmp_path: Path) -> None:
    j = journals["t1"]
    j.append_record("deck-enrol", {"deck": "D17", "by": "ana", "file": str(tmp_path / "gone.json")})
    assert JournalDeckTags(j)("D17") is None and JournalDeckTags(j)("D99") is None
    Shoe(j).hand(HAND)
    health = CardHealth(KEY, deck_tags=JournalDeckTags(j))
    (fig,) = [f for f in (health.feed(r) for r in j.records()) if f]
    assert fig["cards"] == len(HAND)
    assert fig["seen"] == []


def at(hour: int, day: int = 14, minute: int = 0) -> float:
    return datetime(2026, 3, day, hour, minute, tzinfo=UTC).timestamp()


def test_the_floor_pairs_two_tables_once_per_gaming_day() -> None:
    s = TagSightings(parse_gaming_day("06:00", "UTC"))
    deck = [{"deck": "D17", "tags": [f"{n:016x}" for n in range(52)]}]
    assert s.seen("t1", at(7), deck) == []
    assert s.seen("t1", at(8), deck) == [], "a table's own tags again"
    assert s.seen("t3", at(8), [{"deck": "D20", "tags": [f"{n:016x}" for n in range(100, 152)]}]) == []
    (found,) = s.seen("t2", at(9), [{"deck": "", "foreign": True, "tags": [f"{7:016x}"]}])
    assert (found.day, found.table, found.deck, found.other, found.other_deck, found.tags) == \
        (date(2026, 3, 14), "t2", "", "t1", "D17", 1)
    assert s.seen("t2", at(10), [{"deck": "", "tags": [f"{8:016x}"]}]) == [], "one finding per pair and day"
    assert s.seen("t1", at(11), [{"deck": "D17", "tags": [f"{8:016x}"]}]) == [], "the same pair the other way"
    # 05:59 on the 15th is still the 14th's gaming day; 06:00 begins the next, where t1's deck is new
    assert s.seen("t3", at(5, 15, 59), [{"deck": "", "tags": [f"{1:016x}"]}])[0].other == "t1"
    assert s.seen("t2", at(6, 15), [{"deck": "", "tags": [f"{7:016x}"]}]) == []
    broken = [{"deck": 5, "tags": ["zz", 7, "ABCDEF0123456789"]}, "x", {"tags": "no"}]
    assert s.seen("t4", at(7, 15), broken) == [] and len(s.days) == 2


def test_tags_beyond_a_days_bound_are_counted_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sightings_mod, "MAX_TAGS_PER_DAY", 10)
    s = TagSightings()
    s.seen("t1", at(7), [{"deck": "D1", "tags": [f"{n:016x}" for n in range(52)]}])
    assert len(s.days[date(2026, 3, 14)]) == 10 and s.dropped == 42
    assert s.seen("t2", at(8), [{"deck": "", "tags": [f"{3:016x}", f"{40:016x}"]}])[0].tags == 1


def test_a_card_of_one_tables_deck_at_another_is_flagged_on_the_floor(mosquitto: Mosquitto, tmp_path: Path,
                                                                      journals: dict[str, Journal]) -> None:
    decks = tmp_path / "decks"
    d17 = enrol(journals["t1"], decks, "D17", 1)
    enrol(journals["t3"], decks, "D20", 2)
    monitor = mosquitto.users[MONITOR_USER]
    tap = Tap(mosquitto.host, mosquitto.port, monitor.username, monitor.password, f"{ROOM}/#")
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True,
                          gaming_day=parse_gaming_day("06:00", "Asia/Macau")).start()
    pubs = [FloorPublisher(j, table=name, room=ROOM, host=mosquitto.host, port=mosquitto.port,
                           credentials=mosquitto.users[name],
                           health=CardHealth(KEY, deck_tags=JournalDeckTags(j))).start()
            for name, j in journals.items()]
    try:
        assert floor.connected.wait(10) and tap.subscribed.wait(10)
        Shoe(journals["t1"]).hand(HAND)
        Shoe(journals["t3"]).hand(HAND, deck="D20")
        firsts = {n: max(r.seq for r in journals[n].records()) for n in ("t1", "t3")}
        assert wait_for(lambda: all(floor.seqs(n)[-1:] == [last] for n, last in firsts.items()), 20), "t1 first"
        t2 = journals["t2"]
        shoe = Shoe(t2)
        t2.begin_hand({"game": "stud"})
        shoe.card("Kh")
        foreign(t2, shoe, d17[30])
        t2.end_hand()
        lasts = {name: max(r.seq for r in j.records()) for name, j in journals.items()}
        assert wait_for(lambda: all(floor.seqs(n) == list(range(1, last + 1)) for n, last in lasts.items()), 20)
        assert wait_for(lambda: sum(1 for t, _r, d in tap.snapshot() if d and d.get("kind") == "hand-end") == 3, 10)
        rows = {r["table"]: r for r in floor.snapshot()["tables"]}
    finally:
        for p in pubs:
            p.close()
        floor.close()
        tap.close()
    flagged = {name: [a for a in row["alerts"] if a["code"] == TWO_TABLES_CODE] for name, row in rows.items()}
    assert [len(flagged[n]) for n in ("t1", "t2", "t3")] == [0, 1, 0]
    (alert,) = flagged["t2"]
    assert alert["severity"] == "warning" and alert["hand"] == 1
    day = parse_gaming_day("06:00", "Asia/Macau").day_of(datetime.now(UTC)).isoformat()
    assert alert["message"] == (f"1 tag(s) at two tables on gaming day {day}: read here as a card of no deck it "
                                "knows, at table t1 earlier as deck D17")
    for _topic, raw, _data in tap.snapshot():
        assert not any(u.hex() in raw.decode() for u in d17), "no tag UID on the broker"


DEAL = ["9c", "Ah", "Kd", "2s", "7h", "Tc", "3d", "Qs", "4c", "Jh", "8d", "5s", "6h"]


def test_a_hand_sends_the_fingerprint_of_its_first_12_cards_in_order(journals: dict[str, Journal]) -> None:
    j = journals["t1"]
    shoe = Shoe(j)
    shoe.hand(DEAL)
    shoe.hand(DEAL[:12] + ["As"])  # the same first 12: the same fingerprint
    shoe.hand(DEAL[1::-1] + DEAL[2:])  # two cards swapped
    shoe.hand(DEAL[:11])  # fewer than 12 cards: none
    shoe.hand([None] + DEAL[1:])
    health = CardHealth(KEY)
    figures = [f for f in (health.feed(r) for r in j.records()) if f is not None]
    orders = [f.get("order") for f in figures]
    assert orders[0] == orders[1] == order_hash(KEY, [Card.parse(c).code for c in DEAL[:12]])
    assert orders[2] not in (None, orders[0]) and orders[3] is None and orders[4] not in (None, orders[0])
    keyless = CardHealth(None)
    assert all("order" not in f for f in (keyless.feed(r) for r in j.records()) if f is not None)


def test_the_floor_finds_a_hand_dealt_in_an_earlier_hands_order() -> None:
    s = OrderSightings(parse_gaming_day("06:00", "UTC"))
    first, other = "0123456789abcdef", "fedcba9876543210"
    assert s.seen("t1", 4, at(7), first) is None
    assert s.seen("t1", 4, at(7), first) is None, "the same hand again is no repeat"
    assert s.seen("t1", 5, at(8), other) is None
    assert s.seen("t1", 9, at(9), first) == ("t1", 4)
    assert s.seen("t2", 1, at(5, 15), first) == ("t1", 4), "the day before is still remembered"
    assert s.seen("t2", 2, at(7, 16), first) is None, "two gaming days later it is forgotten"
    assert s.seen("t3", 1, at(7, 16), "not a hash") is None and s.seen("t3", 1, at(7, 16), 5) is None


def test_a_repeated_order_is_flagged_on_the_floor(mosquitto: Mosquitto, journals: dict[str, Journal]) -> None:
    floor = FloorConsumer(host=mosquitto.host, port=mosquitto.port, room=ROOM,
                          credentials=mosquitto.users[FLOOR_USER], keep_seqs=True).start()
    j = journals["t1"]
    pub = FloorPublisher(j, table="t1", room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users["t1"], health=CardHealth(KEY)).start()
    try:
        assert floor.connected.wait(10)
        shoe = Shoe(j)
        for deal in (DEAL, DEAL[::-1], DEAL):
            shoe.hand(deal)
        last = max(r.seq for r in j.records())
        assert wait_for(lambda: floor.seqs("t1") == list(range(1, last + 1)), 20)
        (row,) = floor.snapshot()["tables"]
    finally:
        pub.close()
        floor.close()
    (alert,) = [a for a in row["alerts"] if a["code"] == REPEATED_ORDER_CODE]
    assert alert["hand"] == 3 and alert["severity"] == "warning"
    assert alert["message"].startswith("hand 3 was dealt in the same order as hand 1 at this table (its first 12 cards)")


def test_a_forged_hand_end_cannot_grow_the_floor_or_name_a_false_card() -> None:
    floor = FloorConsumer(host="127.0.0.1", port=1, room=ROOM)  # never started: events applied by hand
    view = floor.tables["t9"] = TableView("t9")
    base = {"v": 1, "table": "t9", "session": 1, "kind": "hand-end", "hand": 1, "time_us": int(at(9) * 1e6)}
    forged = [
        {"health": "lots"},
        {"health": {"cards": "x", "tags": "no", "seen": 5, "order": 7, "replace": {"card": "9c"}}},
        {"health": {"cards": 10, "readers": {f"r{n}": n for n in range(100)},
                    "tags": [{"deck": "D", "tag": "a" * 12, "reads": 1, "retries": 1}] * 1000,
                    "seen": [{"deck": "D", "tags": [f"{k * 1000 + n:016x}" for n in range(200)]} for k in range(100)],
                    "replace": [{"deck": "D", "card": "Zz", "reads": 1, "retries": 1},
                                {"deck": "D", "card": "9c", "reads": 0, "retries": 5},
                                {"deck": "D", "card": "9c", "reads": "4", "retries": 5}]}},
    ]
    with floor.lock:
        for seq, extra in enumerate(forged, start=1):
            floor._event(view, {**base, "seq": seq, **extra}, at(9))
    assert view.expected == 4 and view.alerts == []
    assert view.health is not None and len(view.health["tags"]) == 52 and len(view.health["readers"]) == 8
    assert sum(len(d) for d in floor.sightings.days.values()) == 52 * 104, "52 entries of 104 tags at most"
    floor.close()
