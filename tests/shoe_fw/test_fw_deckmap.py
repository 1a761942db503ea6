"""Deck maps (drivers/shoe_fw/deckmap.py; the format: docs/build-a-shoe.md, "Deck map"): the
seal under the table's key, every refusal naming the file and the place, the canonical JSON
writer equal to CPython's, and the live decks' lookup."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.shoe_fw import deckmap as dm

SECRET = bytes(range(32))
KEY = dm.seal_key(SECRET)


def deck_doc(deck: str = "D12", first_uid: int = 0x04A10000) -> dict[str, Any]:
    cards = {f"{first_uid + i:08x}": dm.card_name(i) for i in range(52)}
    return {"format": dm.FORMAT, "deck": deck, "enrolled": "2026-12-04T21:00:00Z", "by": "ann", "cards": cards}


def test_card_codes_follow_the_protocol() -> None:
    assert dm.card_code("2c") == 0 and dm.card_code("2d") == 1 and dm.card_code("As") == 51
    assert dm.card_code("Td") == 8 * 4 + 1
    assert [dm.card_code(x) for x in ("10s", "as", "Ax", "", 5)] == [-1] * 5
    assert all(dm.card_code(dm.card_name(c)) == c for c in range(52))


def test_the_seal_is_hmac_sha256_of_the_canonical_bytes_under_the_derived_key() -> None:
    doc = deck_doc()
    text = dm.dumps(doc, KEY)
    key = hmac.new(SECRET, b"shoe-ctl deck map", hashlib.sha256).digest()
    body = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    assert json.loads(text)["seal"] == hmac.new(key, body, hashlib.sha256).hexdigest()
    got = dm.parse(text, KEY, "decks/D12.json")
    assert got.deck == "D12" and got.by == "ann" and len(got.cards) == 52
    assert got.code(bytes.fromhex("04a10033")) == 51 and got.code(b"\x01\x02\x03\x04") == -1


def test_a_map_written_by_cpythons_json_with_indentation_reads_the_same() -> None:
    doc = deck_doc()
    doc["seal"] = dm.seal_of(doc, KEY)
    assert dm.parse(json.dumps(doc, indent=2).encode(), KEY).deck == "D12"


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(format="shoe-ctl deck map 9"), "D12.json: format: \"shoe-ctl deck map 9\""),
    (lambda d: d.update(deck="D 12"), "D12.json: deck: \"D 12\" is not"),
    (lambda d: d.update(deck="x" * 33), "D12.json: deck: "),
    (lambda d: d.pop("by"), "D12.json: by: missing"),
    (lambda d: d["cards"].popitem(), "D12.json: cards: 51 cards, a deck is 52"),
    (lambda d: d["cards"].update({"04ffffff": "As"}), "D12.json: cards: 53 cards, a deck is 52"),
    (lambda d: d["cards"].update({"04a10000": "Xx"}), "cards: 04a10000: \"Xx\" is not a card"),
    (lambda d: d["cards"].update({"04a10000": "As"}), "cards: As twice (tags 04a10000 and 04a10033)"),
    (lambda d: d.update(cards={k.upper(): v for k, v in d["cards"].items()}), "is not a tag UID"),
    (lambda d: d.update(cards=[1, 2]), "cards: not an object"),
])
def test_a_bad_map_is_refused_naming_the_file_and_the_place(change: Any, message: str) -> None:
    doc = deck_doc()
    change(doc)
    with pytest.raises(dm.DeckMapError) as err:
        dm.parse(dm.dumps(doc, KEY), KEY, "decks/D12.json")
    assert message in str(err.value)
    assert str(err.value).startswith("decks/D12.json: ")


def test_a_duplicate_uid_in_the_file_is_named_not_taken_as_51_cards() -> None:
    text = dm.dumps(deck_doc(), KEY)
    dup = text.replace('"04a10001":"2d"', '"04a10000":"2d"')
    assert dup != text
    with pytest.raises(dm.DeckMapError, match=r"D12.json: duplicate key \"04a10000\" \(a duplicate UID\?\)"):
        dm.parse(dup, KEY, "D12.json")


def test_a_changed_card_or_another_tables_key_breaks_the_seal() -> None:
    text = dm.dumps(deck_doc(), KEY)
    swapped = text.replace('"04a10000":"2c"', '"04a10000":"Xc"').replace('"04a10033":"As"', '"04a10033":"2c"')
    swapped = swapped.replace('"Xc"', '"As"')
    assert swapped != text
    with pytest.raises(dm.DeckMapError, match="D12.json: seal: does not match"):
        dm.parse(swapped, KEY, "D12.json")
    with pytest.raises(dm.DeckMapError, match="seal: does not match"):
        dm.parse(text, dm.seal_key(os.urandom(32)), "D12.json")
    unsealed = json.dumps(deck_doc())
    with pytest.raises(dm.DeckMapError, match="seal: missing"):
        dm.parse(unsealed, KEY, "D12.json")
    assert dm.parse(unsealed, None).deck == "D12"  # a viewer that skips the seal


@pytest.mark.parametrize(("data", "message"), [
    (b"\xff\xfe{", "not UTF-8"), (b"{\"format\": ", "not JSON"), (b"[1, 2]", "not a JSON object"),
    (b"", "not JSON"),
])
def test_a_corrupt_file_is_refused_by_name(data: bytes, message: str) -> None:
    with pytest.raises(dm.DeckMapError, match=f"^decks/x.json: {message}"):
        dm.parse(data, KEY, "decks/x.json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12)


@given(json_values)
def test_the_canonical_writer_is_cpythons_json_dumps(value: Any) -> None:
    assert dm.canonical(value) == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def test_the_live_decks_name_each_uid_and_a_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "decks"
    (folder / "retired").mkdir(parents=True)
    (folder / "D12.json").write_text(dm.dumps(deck_doc("D12", 0x04A10000), KEY))
    (folder / "D17.json").write_text(dm.dumps(deck_doc("D17", 0x04B20000), KEY))
    (folder / "D18.json").write_text(dm.dumps(deck_doc("D18", 0x04A10000), KEY))  # D12's tags again
    (folder / "D19.json").write_text(dm.dumps(deck_doc("D20", 0x04C30000), KEY))  # named after another
    (folder / "D21.json").write_text("{")
    (folder / "retired" / "D01.json").write_text(dm.dumps(deck_doc("D01", 0x04D40000), KEY))

    def read(path: str) -> bytes:
        return Path(path).read_bytes()

    book, errors = dm.load_folder(str(folder), KEY, os.listdir, read)
    assert sorted(book.decks) == ["D12", "D17"] and len(book) == 2
    assert book.lookup(bytes.fromhex("04b20000")) == ("D17", 0)
    assert book.lookup(bytes.fromhex("04a10033")) == ("D12", 51)
    assert book.lookup(bytes.fromhex("04d40000")) is None  # retired: a foreign tag now
    assert len(errors) == 3
    assert any("D18.json: cards: tag 04a10000 is also in deck D12" in e for e in errors)
    assert any("D19.json: deck: \"D20\" in a file named D19.json" in e for e in errors)
    assert any("D21.json: not JSON" in e for e in errors)
    _, missing = dm.load_folder(str(tmp_path / "nowhere"), KEY, os.listdir, read)
    assert missing and "cannot list the live decks" in missing[0]
