"""The floor's redaction (``shoe_ctl.floor.topics.redact``): its shortcuts for the exact JSON
types (a text without ``tag ``, no public card, a number, a key known to name nothing) give what
the plain walk over the abstract types gives, for texts and keys that name cards, tags and
neither, under any public cards; a mapping's keys are redacted as its values, and keys that
coincide once redacted keep every value; and the tile's remembered texts (``floor_tile``) give
what the whole filter and redaction give."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_ctl.embargo import CARD_TOKEN, REDACTED, public_state
from shoe_ctl.floor.topics import floor_tile, redact

TAG = re.compile(r"\btag [0-9a-fA-F]{8,20}\b")


def plain_redact(value: object, public: frozenset[str] = frozenset()) -> Any:
    """The walk without shortcuts: every value through the abstract types, every text through
    both patterns."""
    if isinstance(value, str):
        value = TAG.sub("tag " + REDACTED, value)
        return CARD_TOKEN.sub(lambda m: m.group(0) if m.group(0) in public else REDACTED, value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = first = plain_redact(str(k), public)
            n = 1
            while key in out:  # a key written as one before it: numbered, the first number free
                n += 1
                key = f"{first} ({n})"
            out[key] = plain_redact(v, public)
        return out
    if isinstance(value, list | tuple):
        return [plain_redact(v, public) for v in value]
    return value


CARDS = [r + s for r in ("2", "9", "10", "T", "J", "Q", "K", "A") for s in "cdhs"]
WORDS = st.sampled_from([*CARDS, "tag", "tag 04a1b2c3", "tag 04A1B2C3D4E5", "tag 04a1", "seat", "3", "x",
                         "10dd", "Ks,", "(Ah)", "tag", "TAG 04a1b2c3d4", "\u00e9", "-", ""])
TEXTS = st.lists(WORDS, max_size=8).map(" ".join) | st.text(max_size=20)
LEAVES = TEXTS | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
VALUES = st.recursive(LEAVES, lambda inner: (st.lists(inner, max_size=4)
                                              | st.lists(inner, max_size=4).map(tuple)
                                              | st.dictionaries(TEXTS | st.integers(), inner, max_size=4)
                                              | st.dictionaries(TEXTS, inner, max_size=3).map(MappingProxyType)),
                      max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(value=VALUES, public=st.frozensets(st.sampled_from(CARDS), max_size=6))
def test_the_shortcuts_redact_as_the_plain_walk_does(value: object, public: frozenset[str]) -> None:
    assert redact(value, public) == plain_redact(value, public)
    assert redact(value) == plain_redact(value)


def test_a_text_keeps_its_public_cards_and_loses_the_rest_and_its_tags() -> None:
    text = "seat 2 Kh, seat 3 As, 10d, tag 04a1b2c3d4 read"
    assert redact(text, frozenset({"Kh"})) == "seat 2 Kh, seat 3 ??, ??, tag ?? read"
    assert redact(text) == "seat 2 ??, seat 3 ??, ??, tag ?? read"
    assert redact({1: (text, 7, None, True)}) == {"1": ["seat 2 ??, seat 3 ??, ??, tag ?? read", 7, None, True]}


def test_a_key_is_redacted_as_a_value_is_and_no_value_is_lost() -> None:
    """A seat's mapping keyed by its cards, or a reader's counts keyed by tag UID: the keys lose
    every card that is not public and every tag UID; keys that coincide once redacted are numbered
    in the mapping's order, so each value is still there and no key tells the card it was."""
    by_card = {"As": "seat 1", "Kd": 2, "seat": 3, "Qh": [4]}
    assert redact(by_card) == {"??": "seat 1", "?? (2)": 2, "seat": 3, "?? (3)": [4]}
    assert redact(by_card, frozenset({"Kd"})) == {"??": "seat 1", "Kd": 2, "seat": 3, "?? (2)": [4]}
    assert redact({"tag 04a1b2c3d4": {"reads": 9}, "tag 04a1b2c3d5": 1}) == {"tag ??": {"reads": 9},
                                                                             "tag ?? (2)": 1}
    assert redact({"?? (2)": 0, "As": 1, "Kd": 2}) == {"?? (2)": 0, "??": 1, "?? (3)": 2}
    assert redact({1: "one", "1": "also one"}) == {"1": "one", "1 (2)": "also one"}
    assert redact(MappingProxyType({"seat 3 Ah": 1})) == {"seat 3 ??": 1}
    assert redact({("Ah", 3): 1}) == {"('??', 3)": 1}  # any key is written as its text, then redacted
    # a key kept because a card in it was public is kept only while that card is public
    assert redact({"Kd": 1}, frozenset({"Kd"})) == {"Kd": 1} and redact({"Kd": 1}) == {"??": 1}
    # a plain key stays as it is, whatever is public
    assert redact({"seat": 1}) == redact({"seat": 1}, frozenset({"Kd"})) == {"seat": 1}


def whole_tile(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The tile through the whole embargo filter and the redaction, with no shortcut."""
    part: dict[str, Any] = {k: raw[k] for k in ("hand", "game", "state", "street") if k in raw}
    for key, keys in (("stub", ("count", "required", "forecast")), ("shoe", ("status", "detail"))):
        sub = raw.get(key)
        if isinstance(sub, Mapping):
            part[key] = {k: sub[k] for k in keys if k in sub}
    return dict(redact(public_state(part)))


TILE_PARTS = st.fixed_dictionaries({}, optional={
    "count": VALUES, "required": LEAVES, "forecast": TEXTS, "status": VALUES, "detail": TEXTS, "drawn": VALUES})
RAW_STATES = st.fixed_dictionaries({}, optional={
    "hand": LEAVES, "game": TEXTS, "state": VALUES, "street": TEXTS, "stub": TILE_PARTS | VALUES,
    "shoe": TILE_PARTS | TILE_PARTS.map(MappingProxyType), "seats": VALUES, "community": st.sampled_from(CARDS)})


@settings(max_examples=400, deadline=None)
@given(raw=RAW_STATES)
def test_the_tile_is_the_whole_filter_s(raw: dict[str, Any]) -> None:
    """The tile's texts remembered once filtered give the same tile, key order included, as the
    whole filter and the redaction, whatever the state holds (texts naming cards and tags,
    numbers, lists and mappings where texts are expected)."""
    tile = floor_tile(raw)
    assert tile == whole_tile(raw)
    assert list(tile) == list(whole_tile(raw))
    assert json.dumps(tile) == json.dumps(whole_tile(raw))
