"""Reader and card health counted from a table's journal (``shoe_ctl.floor.card_health``;
docs/floor.md, "Reader and card health"): retries booked to the tag of the card read before the
misread, the deck named by the shoe after its first card, the card to replace named once its tag
passes the limits, never before the hand's end, and counted once across a restart."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from shoe_ctl.config import ConfigError
from shoe_ctl.events import CardRead, FaultKind, ForeignCard, ForeignWhat, ShoeFault, StubDeck
from shoe_ctl.floor.card_health import CardHealth, HealthLimits, tag_index
from shoe_ctl.floor.config import Credentials, load_credentials, parse_floor
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.journal.records import Record

KEY = bytes(range(32))


class Shoe:
    """Writes a shoe's events for whole hands into a journal."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.seq = 0
        self.dispense = 0

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def card(self, name: str | None, *, epoch: int = 1, retried: bool = False) -> None:
        self.dispense += 1
        card = Card.parse(name) if name else None
        self.journal.append(CardRead(self._next(), card, "rfid" if card else "none", self.dispense, epoch))
        if retried or card is None:
            self.journal.append(ShoeFault(self._next(), FaultKind.MISREAD))
            self.journal.append(ShoeFault(self._next(), FaultKind.MISREAD, cleared=True))

    def hand(self, cards: Sequence[str | None], *, retried: Sequence[str] = (), deck: str | None = "D17",
             epoch: int = 1) -> None:
        self.journal.begin_hand({"game": "stud"})
        for n, name in enumerate(cards):
            self.card(name, epoch=epoch, retried=name in retried)
            if n == 0 and deck is not None:
                self.journal.append(StubDeck(epoch, deck))  # the shoe names the deck after its first card
        self.journal.end_hand()


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    j = Journal(tmp_path / "t.sqlite3", table="t1", profile="tda", retention_days=0)
    try:
        yield j
    finally:
        j.close()


def figures_of(health: CardHealth, records: list[Record]) -> list[dict]:
    out = []
    for rec in records:
        got = health.feed(rec)
        if got is not None:
            assert rec.kind == "hand-end"
            out.append(got)
    return out


HAND = ["9c", "Ah", "Kd", "2s", "7h", "Tc", "3d"]


def test_a_retry_is_booked_to_the_tag_of_the_card_before_it(journal: Journal) -> None:
    shoe = Shoe(journal)
    shoe.hand(HAND, retried=["9c", "Tc"])
    shoe.hand(HAND + [None], retried=["9c"])
    health = CardHealth(KEY, HealthLimits(per_1000=100, min_reads=10))
    first, second = figures_of(health, list(journal.records()))
    assert first["cards"] == 7 and first["retries"] == 2 and first["misreads"] == 2 and first["unreadable"] == 0
    assert second["cards"] == 15 and second["unreadable"] == 1 and second["misreads"] == 4 and second["retries"] == 3
    assert second["readers"] == {"rfid": 14}
    by_tag = {t["tag"]: (t["reads"], t["retries"]) for t in second["tags"]}
    assert by_tag == {tag_index(KEY, "D17", Card.parse("9c").code): (2, 2),
                      tag_index(KEY, "D17", Card.parse("Tc").code): (2, 1)}
    assert second["tags"][0]["tag"] == tag_index(KEY, "D17", Card.parse("9c").code), "the highest rate first"
    assert second["replace"] == [], "two reads are fewer than the limits ask"
    assert "9c" not in repr(second["tags"]) and all(t["deck"] == "D17" for t in second["tags"])


def test_the_worn_card_is_named_once_at_the_hand_end_that_passes_the_limits(journal: Journal) -> None:
    shoe = Shoe(journal)
    for n in range(6):
        shoe.hand(HAND, retried=["9c"] if n % 2 else [])
    health = CardHealth(KEY, HealthLimits(per_1000=400, min_reads=5))
    figures = figures_of(health, list(journal.records()))
    named = [(n, f["replace"]) for n, f in enumerate(figures) if f["replace"]]
    # retries after hands 2, 4, 6: 1/2, 2/4, 3/6 reads; at least 5 reads first reached at hand 6 (3 of 6 = 500)
    assert named == [(5, [{"deck": "D17", "card": "9c", "reads": 6, "retries": 3}])]
    shoe.hand(HAND, retried=["9c"])
    again = figures_of(health, list(journal.records(since=health.upto)))
    assert again[0]["replace"] == [], "named once in the deck's life"


def test_a_deck_enrolled_again_counts_its_tags_from_nothing(journal: Journal) -> None:
    shoe = Shoe(journal)
    for _ in range(3):
        shoe.hand(HAND, retried=["9c"])
    health = CardHealth(KEY, HealthLimits(per_1000=500, min_reads=3))
    assert figures_of(health, list(journal.records()))[-1]["replace"][0]["card"] == "9c"
    journal.append_record("deck-enrol", {"deck": "D17", "by": "alice"})
    shoe.hand(HAND, retried=["9c"])
    last = figures_of(health, list(journal.records(since=health.upto)))[-1]
    assert last["tags"][0]["reads"] == 1 and last["replace"] == []


def test_no_room_key_lists_no_tag_but_still_names_the_worn_card(journal: Journal) -> None:
    shoe = Shoe(journal)
    for _ in range(2):
        shoe.hand(HAND, retried=["Kd"])
    figures = figures_of(CardHealth(None, HealthLimits(per_1000=500, min_reads=2)), list(journal.records()))
    assert figures[-1]["tags"] == []
    assert figures[-1]["replace"] == [{"deck": "D17", "card": "Kd", "reads": 2, "retries": 2}]


def test_the_tag_index_is_opaque_without_the_key_and_differs_by_deck() -> None:
    a = tag_index(KEY, "D17", 30)
    assert a == tag_index(KEY, "D17", 30) and len(a) == 12
    assert a != tag_index(KEY, "D18", 30) and a != tag_index(bytes(32), "D17", 30)
    assert len({tag_index(KEY, "D17", c) for c in range(52)}) == 52


def test_a_foreign_card_is_no_unreadable_card_and_no_tag(journal: Journal) -> None:
    shoe = Shoe(journal)
    journal.begin_hand({"game": "stud"})
    shoe.card("As")
    journal.append(StubDeck(1, "D17"))
    shoe.dispense += 1
    journal.append(CardRead(shoe._next(), None, "none", shoe.dispense, 1))
    journal.append(ForeignCard(shoe._next(), ForeignWhat.OTHER_DECK, "04b20001c0ffee", Card.parse("9c"), "D12", "D17"))
    journal.append(ShoeFault(shoe._next(), FaultKind.MISREAD, cleared=True))
    journal.end_hand()
    (fig,) = figures_of(CardHealth(KEY), list(journal.records()))
    assert (fig["cards"], fig["unreadable"], fig["foreign"], fig["misreads"], fig["retries"]) == (2, 0, 1, 0, 0)


def test_reads_before_the_deck_is_named_wait_for_it_and_a_shoe_that_never_names_one(journal: Journal) -> None:
    shoe = Shoe(journal)
    shoe.hand(HAND, retried=["9c"], deck=None, epoch=1)
    shoe.hand(HAND, retried=["9c"], deck="D20", epoch=2)
    figures = figures_of(CardHealth(KEY), list(journal.records()))
    assert figures[0]["tags"] == [] and figures[0]["retries"] == 1, "reader counts without a deck, no tag"
    assert [(t["deck"], t["reads"], t["retries"]) for t in figures[1]["tags"]] == [("D20", 1, 1)]


def test_a_restart_counts_each_record_once(journal: Journal) -> None:
    shoe = Shoe(journal)
    for _ in range(3):
        shoe.hand(HAND, retried=["9c"])
    records = list(journal.records())
    whole = figures_of(CardHealth(KEY, HealthLimits(per_1000=100, min_reads=3)), records)
    cut = next(r.seq for r in records if r.kind == "hand-end") + 4  # stopped inside the second hand
    restarted = CardHealth(KEY, HealthLimits(per_1000=100, min_reads=3))
    restarted.seed(iter(records), cut)
    after = figures_of(restarted, [r for r in records if r.seq > cut])  # published from the outbox's sequence on
    assert after == whole[1:]
    assert figures_of(restarted, records[:-1]) == [], "a record published again is not counted again"
    seeded = CardHealth(KEY, HealthLimits(per_1000=100, min_reads=3))
    seeded.seed(iter(records), records[-1].seq)
    shoe.hand(HAND, retried=["9c"])
    more = figures_of(seeded, list(journal.records(since=records[-1].seq)))
    assert more[0]["replace"] == [], "named before the restart: not named again"
    end = next(r for r in journal.records(since=records[-1].seq) if r.kind == "hand-end")
    assert seeded.feed(end) == more[0], "the newest hand-end read again carries the same figures"


def test_the_limits_and_the_room_key_are_checked(tmp_path: Path) -> None:
    cfg = parse_floor("t.toml", {"tag_retries_per_1000": 250, "tag_retries_min_reads": 20})
    assert (cfg.tag_retries_per_1000, cfg.tag_retries_min_reads) == (250, 20)
    assert (parse_floor("t.toml", {}).tag_retries_per_1000, parse_floor("t.toml", {}).tag_retries_min_reads) == (100, 10)
    for key, value in (("tag_retries_per_1000", 0), ("tag_retries_per_1000", 1001), ("tag_retries_min_reads", 0),
                       ("tag_retries_min_reads", "10")):
        with pytest.raises(ConfigError, match=f"floor.{key}"):
            parse_floor("t.toml", {key: value})
    path = tmp_path / "creds.toml"

    def creds(extra: str) -> Credentials:
        path.write_text('username = "t1"\npassword = "pw"\n' + extra)
        path.chmod(0o600)
        return load_credentials(path)

    assert creds("").room_key is None
    got = creds(f'room_key = "{KEY.hex()}"\n')
    assert got.room_key == KEY and KEY.hex() not in repr(got)
    for bad in ('"abc"', '"' + "zz" * 16 + '"', "12", '"' + "ab" * 65 + '"'):
        with pytest.raises(ConfigError, match="room_key"):
            creds(f"room_key = {bad}\n")


def test_a_body_handed_in_counts_and_publishes_as_the_record_read_again(journal: Journal) -> None:
    """The publisher parses each record's body once and hands it to the payload and the counts:
    both give what each reading the record itself gives, record by record."""
    from shoe_ctl.floor.card_health import record_body
    from shoe_ctl.floor.topics import event_payload

    shoe = Shoe(journal)
    shoe.hand(["As", "Kd", None, "9c"], retried=["Kd"])
    shoe.hand(["2h", "3h"], deck="D18", epoch=2)
    journal.append(ForeignCard(shoe._next(), ForeignWhat.OTHER_DECK, tag="04a1b2c3", card=None, deck="D9", stub="D18"))
    journal.append_record("deck-retire", {"deck": "D17"})
    records = list(journal.records(None))
    assert {"CardRead", "ShoeFault", "StubDeck", "ForeignCard", "hand-end", "deck-retire"} <= {r.kind for r in records}
    alone, handed = CardHealth(), CardHealth()
    for rec in records:
        body = record_body(rec)
        assert handed.feed(rec, body) == alone.feed(rec)
        assert (event_payload(rec, table="t1", session=2, body=body)
                == event_payload(rec, table="t1", session=2))
    assert handed.figures() == alone.figures() and alone.figures()["cards"] == 6
