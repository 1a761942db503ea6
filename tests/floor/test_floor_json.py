"""The floor's JSON: its payloads (``shoe_ctl.floor.topics.dumps``) and the journal's record bodies it
reads (``shoe_ctl.floor.card_health.record_body``). orjson writes the payloads, the
standard library what orjson refuses; the values read back are the same as the standard
library's writing gives, byte for byte where the standard library writes, and a value JSON cannot
hold is still refused; orjson reads a body, the standard library one that orjson would read
otherwise (an integer past 64 bits) or refuses, so every body reads as the standard library
reads it."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_ctl.floor.topics import dumps


def stdlib(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


LEAVES = (st.text(max_size=12) | st.integers(min_value=-(2**63), max_value=2**63 - 1)
          | st.floats(allow_nan=False, allow_infinity=False) | st.booleans() | st.none())
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                           max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(payload=st.dictionaries(st.text(max_size=8), VALUES, max_size=6))
def test_the_values_read_back_are_the_standard_librarys(payload: dict[str, Any]) -> None:
    out = dumps(payload)
    assert json.loads(out) == json.loads(stdlib(payload))
    floatless = json.loads(out, parse_float=lambda _text: 0.0)
    assert dumps(floatless) == stdlib(floatless), "byte for byte but for how a float is spelt"


class Street(enum.StrEnum):
    THIRD = "third"


@pytest.mark.parametrize("payload", [
    {"seat": {3: "up"}},  # a key that is not a string
    {"big": 2**70},  # an integer beyond 64 bits
    {"street": Street.THIRD},  # a subclass of str
    {"text": "naïve ☃", "n": [1, 2.5, None, True]},
])
def test_what_orjson_refuses_is_written_by_the_standard_library(payload: dict[str, Any]) -> None:
    assert dumps(payload) == stdlib(payload)


def test_a_value_json_cannot_hold_is_refused() -> None:
    @dataclasses.dataclass
    class Hidden:
        card: str

    with pytest.raises(TypeError):
        dumps({"x": Hidden("As")})  # never written field by field, past the redaction
    with pytest.raises(TypeError):
        dumps({"x": {"As"}})


class _Rec:
    def __init__(self, body: str) -> None:
        self.body = body


def read_as_stdlib(text: str) -> dict[str, Any]:
    try:
        body = json.loads(text) if text else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


BODIES = st.recursive(LEAVES | st.integers() | st.floats(), lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(body=st.dictionaries(st.text(max_size=8), BODIES, max_size=6) | BODIES)
def test_a_record_body_reads_as_the_standard_library_reads_it(body: Any) -> None:
    """Integers of any size, NaN and infinities among them: read as the standard library reads them."""
    from shoe_ctl.floor.card_health import record_body

    text = json.dumps(body)
    got, want = record_body(_Rec(text)), read_as_stdlib(text)  # type: ignore[arg-type]
    assert json.dumps(got) == json.dumps(want)  # NaN != NaN: compared as text
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]


@pytest.mark.parametrize("text", ['{"x": 12345678901234567890123}', '{"x": -9223372036854775809}', '{"x": NaN}',
                                  '{"x": 1e400}', '{"x": "\\ud800"}', '{"a": 1, "a": 2}', "[1]", "not json", ""])
def test_what_orjson_reads_otherwise_is_read_by_the_standard_library(text: str) -> None:
    from shoe_ctl.floor.card_health import record_body

    got = record_body(_Rec(text))  # type: ignore[arg-type]
    assert json.dumps(got) == json.dumps(read_as_stdlib(text))
    assert [type(v) for v in got.values()] == [type(v) for v in read_as_stdlib(text).values()]
