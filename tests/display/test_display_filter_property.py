"""The embargo filter (``shoe_ctl.embargo.public_state``) against its specification, on
generated states (hypothesis): the filter runs in one pass over the state, the specification
below in the two steps docs/display.md describes (drop the hidden keys at any depth, then
redact every card token that is not public), written for clarity, not speed. They must agree
on every state, including odd ones (upper-case hidden keys, tuples, non-``str`` keys, cards
glued to words, seats that are not mappings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shoe_ctl.embargo import (
    CARD_TOKEN,
    HIDDEN_KEYS,
    MUCKED_STATUSES,
    REDACTED,
    TOKENS,
    StateFilter,
    downcards_in,
    is_showdown,
    public_state,
)


def _strip(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _strip(v) for k, v in value.items() if str(k).lower() not in HIDDEN_KEYS}
    if isinstance(value, list | tuple):
        return [_strip(v) for v in value]
    return value


def _redact(value: Any, public: frozenset[str]) -> Any:
    if isinstance(value, str):
        return CARD_TOKEN.sub(lambda m: m.group(0) if m.group(0) in public else REDACTED, value)
    if isinstance(value, Mapping):
        return {k: _redact(v, public) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, public) for v in value]
    return value


def _cards(values: Any) -> list[str]:
    return [v for v in values if isinstance(v, str)] if isinstance(values, list | tuple) else []


def specification(state: Mapping[str, Any]) -> dict[str, Any]:
    """docs/display.md, "Hole-card embargo at the display", step by step."""
    showdown = is_showdown(state)
    shown_down: dict[int, list[str]] = {}
    seats = state.get("seats")
    if showdown and isinstance(seats, list):
        for i, s in enumerate(seats):
            if (isinstance(s, Mapping) and isinstance(s.get("status"), str) and s["status"] not in MUCKED_STATUSES
                    and isinstance(s.get("down"), list | tuple)):
                shown_down[i] = _cards(s["down"])
    out: dict[str, Any] = _strip(state)
    public: set[str] = set()
    if isinstance(out.get("seats"), list):
        for i, s in enumerate(out["seats"]):
            if not isinstance(s, dict):
                continue
            public.update(_cards(s.get("up")))
            if i in shown_down:
                s["down"] = shown_down[i]
                public.update(shown_down[i])
    if isinstance(out.get("community"), str):
        public.add(out["community"])
    return dict(_redact(out, frozenset(public)))


CARDS = st.sampled_from(["As", "Kd", "10h", "Tc", "2s", "9d", "Qh", "Jc"])
WORDS = st.sampled_from(["seat", "deal", "4th", "x", "", "??", "As2", "read"])
TEXT = st.lists(st.one_of(CARDS, WORDS), max_size=5).map(" ".join) | st.builds(lambda a, b: a + b, WORDS, CARDS)
KEYS = st.sampled_from(["text", "message", "up", "down", "Down", "HOLE", "burns", "muck", "stub_cards",
                        "note", "cards", "seat", "status", "deck"]) | st.integers(0, 3)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 60), st.floats(allow_nan=False), TEXT, CARDS)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(KEYS, inner, max_size=4)), max_leaves=20)
SEAT = st.fixed_dictionaries(
    {"seat": st.integers(1, 8), "up": st.lists(CARDS, max_size=4), "status": st.sampled_from(
        ["live", "all-in", "folded", "killed", "dead"]) | VALUES},
    optional={"down": st.lists(CARDS, max_size=3) | st.lists(CARDS, max_size=2).map(tuple),
              "hole_cards": st.lists(CARDS, max_size=2), "note": TEXT, "extra": VALUES})
STATES = st.fixed_dictionaries(
    {"state": st.sampled_from(["hand_dealing", "hand_showdown", "idle", "online_showdown"]),
     "seats": st.lists(st.one_of(SEAT, VALUES), max_size=5)},
    optional={"street": st.sampled_from(["3rd", "7th", "showdown", None]), "community": st.one_of(CARDS, VALUES),
              "instruction": VALUES, "alerts": st.lists(VALUES, max_size=3), "showdown": st.booleans(),
              "burns": VALUES, "Muck": VALUES, 3: VALUES})


@given(STATES)
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example({"state": "hand_showdown", "seats": [{"seat": 1, "up": ["As"], "status": "live", "down": ("Kd As2", "Qh")}],
          "instruction": {"text": "Kd and Qh, As", "DOWN": ["Kd"]}})
def test_the_filter_gives_what_its_specification_gives(state: dict[Any, Any]) -> None:
    out = public_state(state)
    assert out == specification(state)
    assert list(out) == list(specification(state))  # the same keys in the same order (the JSON)
    if not is_showdown(state):
        assert list(downcards_in(out)) == []


@given(st.lists(STATES, min_size=2, max_size=6), st.data())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_stream_of_states_sharing_seats_filters_as_each_alone(states: list[dict[Any, Any]],
                                                               data: st.DataObject) -> None:
    """:class:`StateFilter` on successive states whose seats are often the very objects of the
    state before (as the machine reuses an unchanged seat's entry), some changed in place in
    between: each state gives what the filter alone gives it, whatever the other public cards."""
    memo = StateFilter()
    before: list[Any] = []
    for state in states:
        seats = state["seats"]
        for i in range(min(len(seats), len(before))):
            if data.draw(st.booleans()):
                seats[i] = before[i]  # the same object as in the last state
                if isinstance(seats[i], dict) and data.draw(st.integers(0, 4)) == 0:
                    seats[i]["note"] = data.draw(TEXT)  # and changed in place since
        out = memo.public_state(state)
        assert out == public_state(state) == specification(state)
        assert list(out) == list(public_state(state))
        out_again = memo.public_state(state)
        for seat in out_again["seats"]:  # the caller may change what it is handed
            if isinstance(seat, dict):
                seat["up"] = ["Kd", "As"]
        assert memo.public_state(state) == out
        before = list(seats)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="0123456789TJQKAcdhsx ", max_size=4) | st.sampled_from(sorted(TOKENS)))
def test_the_card_tokens_are_the_pattern_s_whole_matches(text: str) -> None:
    """:data:`TOKENS`, the texts the filter keeps as one public card, are exactly the texts the
    card pattern matches whole."""
    assert (text in TOKENS) == (CARD_TOKEN.fullmatch(text) is not None)
    assert len(TOKENS) == 56 and all(CARD_TOKEN.fullmatch(t) for t in TOKENS)
