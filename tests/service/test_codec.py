"""The journal's JSON codec: every event and command round-trips; bad records say what and where."""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_ctl import events
from shoe_ctl.rules.cards import Card
from shoe_ctl.service import codec

cards = st.builds(Card, st.integers(0, 51))
opt_cards = st.none() | cards
text = st.text(max_size=12)
small = st.integers(-(2**40), 2**40)
json_scalar = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
json_obj = st.dictionaries(text, json_value, max_size=4)
opt_str = st.none() | text
streets = st.none() | st.sampled_from(["3rd", "4th", "5th", "6th", "7th"])
shoe_info = st.builds(events.ShoeInfo, small, text, text, st.lists(text, max_size=3).map(tuple))

STRATEGIES: dict[type[Any], st.SearchStrategy[Any]] = {
    events.ShoeInfo: shoe_info,
    events.CardRead: st.builds(events.CardRead, small, opt_cards, text, small, st.none() | small),
    events.ShoeFault: st.builds(events.ShoeFault, small, st.sampled_from(events.FaultKind), st.booleans(), text),
    events.ShoeButton: st.builds(events.ShoeButton, small, small),
    events.ForeignCard: st.builds(events.ForeignCard, small, st.sampled_from(events.ForeignWhat), text, opt_cards,
                                  text, text),
    events.StubDeck: st.builds(events.StubDeck, small, text),
    events.LinkChanged: st.builds(
        events.LinkChanged, st.sampled_from(events.LinkStatus), text, st.none() | shoe_info, st.booleans()
    ),
    events.SequenceGap: st.builds(events.SequenceGap, small, small),
    events.CounterReset: st.builds(events.CounterReset, small),
    events.ShoeRestarted: st.builds(events.ShoeRestarted, text, small, small, st.none() | small, st.none() | small,
                                    st.none() | small, small, st.booleans(), small),
    events.DealerInput: st.builds(
        events.DealerInput, st.sampled_from(events.DealerAction), st.none() | st.integers(1, 8), json_obj
    ),
    events.TimerFired: st.builds(events.TimerFired, text, text),
    events.Instruction: st.builds(
        events.Instruction,
        st.sampled_from(events.Signal),
        text,
        st.none() | st.integers(1, 8),
        st.none() | st.sampled_from(["up", "down"]),
        streets,
        st.lists(text, max_size=4).map(tuple),
    ),
    events.Alert: st.builds(events.Alert, text, text, streets, st.none() | st.integers(1, 8), st.booleans()),
    events.DisplayUpdate: st.builds(events.DisplayUpdate, json_obj),
    events.ShoeCommand: st.builds(events.ShoeCommand, text, json_obj),
}

anything = st.one_of(*STRATEGIES.values())


def test_every_event_and_command_type_is_covered() -> None:
    """A class added to shoe_ctl.events without a codec entry (and a test strategy) fails here."""
    found = {
        obj
        for _, obj in inspect.getmembers(events, inspect.isclass)
        if dataclasses.is_dataclass(obj) and obj.__module__ == events.__name__
    }
    assert found == set(codec.TYPES.values())
    assert found == set(STRATEGIES)


@settings(max_examples=300, deadline=None)
@given(anything)
def test_round_trip(obj: Any) -> None:
    text_ = codec.dumps(obj)
    back = codec.loads(text_)
    assert back == obj
    assert type(back) is type(obj)
    assert codec.dumps(back) == text_  # stable: equal values, equal text
    data = json.loads(text_)
    assert data["v"] == codec.VERSION and data["type"] == type(obj).__name__


@settings(max_examples=300, deadline=None)
@given(anything)
def test_text_is_that_of_json_dumps(obj: Any) -> None:
    """The codec's one encoder writes the very text ``json.dumps`` writes with the journal's
    options (the records' CRCs and chain links cover this text: it must never change)."""
    expected = json.dumps(codec.encode(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert codec.dumps(obj) == expected


def test_readable_form() -> None:
    read = events.CardRead(seq=17, card=Card.parse("As"), reader="rfid", dispense=9)
    assert codec.dumps(read) == '{"card":"As","dispense":9,"epoch":null,"reader":"rfid","seq":17,"type":"CardRead","v":1}'
    unreadable = events.CardRead(seq=18, card=None, reader="none", dispense=10)
    assert json.loads(codec.dumps(unreadable))["card"] is None
    fault = events.ShoeFault(seq=3, kind=events.FaultKind.DOUBLE_PULL)
    assert json.loads(codec.dumps(fault))["kind"] == "double-pull"


def test_missing_defaulted_field_takes_default() -> None:
    """An older record without a field added later (with a default) still decodes."""
    back = codec.decode({"v": 1, "type": "ShoeFault", "seq": 4, "kind": "jam"})
    assert back == events.ShoeFault(seq=4, kind=events.FaultKind.JAM, cleared=False, detail="")


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ('{"v":1,"type":"CardRead","seq":1,"card":"Zz","reader":"rfid","dispense":1}', "CardRead.card"),
        ('{"v":1,"type":"CardRead","seq":"1","card":"As","reader":"rfid","dispense":1}', "CardRead.seq"),
        ('{"v":1,"type":"CardRead","card":"As","reader":"rfid","dispense":1}', "missing field 'seq'"),
        ('{"v":1,"type":"CardRead","seq":1,"card":"As","reader":"rfid","dispense":1,"x":2}', "unknown field(s) x"),
        ('{"v":1,"type":"Nonsense"}', "unknown type 'Nonsense'"),
        ('{"type":"CardRead"}', "format version"),
        ('{"v":9,"type":"CardRead"}', "newer than this program reads"),
        ('{"v":1,"type":"ShoeFault","seq":1,"kind":"melted"}', "ShoeFault.kind: 'melted' is not a FaultKind"),
        ('{"v":1,"type":"SequenceGap","expected":true,"got":2}', "SequenceGap.expected"),
        ('[1,2]', "expected a JSON object"),
        ('{"v":1,"type":"CardRe', "not JSON"),
    ],
)
def test_garbled_records_name_what_and_where(data: str, needle: str) -> None:
    with pytest.raises(codec.CodecError) as err:
        codec.loads(data, where="journal record 812")
    assert needle in str(err.value)
    assert "journal record 812" in str(err.value)


def test_encode_rejects_foreign_objects() -> None:
    with pytest.raises(codec.CodecError, match="not an event or command"):
        codec.encode(Card.parse("As"))  # type: ignore[arg-type]
    with pytest.raises(codec.CodecError, match=r"DealerInput\.args"):
        codec.encode(events.DealerInput(events.DealerAction.FOLD, 1, {"x": {1, 2}}))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=60))
def test_garbage_never_decodes_silently(raw: bytes) -> None:
    """Random bytes are either rejected with CodecError or are a genuine, re-encodable record."""
    try:
        obj = codec.loads(raw)
    except codec.CodecError:
        return
    assert codec.loads(codec.dumps(obj)) == obj


def test_json_python_cannot_read_is_a_codec_error() -> None:
    """A nesting bomb or an integer of thousands of digits in a journal record or a dealer-port
    line: a CodecError naming where, not a RecursionError or a bare ValueError."""
    from shoe_ctl.service import codec as codec_mod

    for text, what in (("[" * 50_000 + "]" * 50_000, "nested too deeply"),
                       ('{"type": "CardRead", "seq": ' + "9" * 5000 + "}", "an integer too long")):
        with pytest.raises(codec_mod.CodecError, match=what) as info:
            codec_mod.loads(text, "journal record 7")
        assert "journal record 7" in str(info.value)


@pytest.mark.parametrize(("obj", "field"), [
    (events.DealerInput(events.DealerAction.UNDO, None, {"note": "seat 2 \ud800"}), "DealerInput.args.note"),
    (events.DealerInput(events.DealerAction.UNDO, None, {"\udcff": 1}), "DealerInput.args.\\udcff"),
    (events.DealerInput(events.DealerAction.NEW_HAND, None, {"seats": [1, "\udfff"]}), "DealerInput.args.seats[1]"),
    (events.Alert("shoe-lost", "cannot open /dev/ttyUSB\udcff"), "Alert.message"),
])
def test_a_text_utf8_cannot_encode_is_refused_naming_the_field(obj: Any, field: str) -> None:
    """A lone surrogate (a Python text can hold one; SQLite cannot write it): refused here, where
    the controller turns it into ``input-invalid``, rather than failing the journal's writer, which
    kept retrying the append for good. The same texts with the code point replaced are written."""
    with pytest.raises(codec.CodecError, match="UTF-8 cannot encode") as info:
        codec.dumps(obj)
    assert str(info.value).startswith(field + ":")
    fixed = json.loads(json.dumps(codec.encode(obj)).replace("\\udcff", "\\ufffd").replace("\\ud800", "\\ufffd")
                       .replace("\\udfff", "\\ufffd"))
    assert codec.loads(codec.dumps(codec.decode(fixed))) == codec.decode(fixed)
