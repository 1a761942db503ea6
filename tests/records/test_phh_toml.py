"""The PHH TOML reader (shoe_ctl.phh_toml) against ``tomllib``: on generated files of the PHH
shape and its near misses, and on mutated real hands, the same texts are accepted and refused and
the values are the same, type for type (``True`` is not ``1``, ``inf`` is a float)."""

import math
import random
import tomllib
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from paths import EXAMPLES, SHARED_PHH
from phh_mutate import mutate, real_records

from shoe_ctl.phh_toml import TomlError, loads, loads_fast

RECORDS = [p.read_text() for p in real_records(SHARED_PHH, EXAMPLES)]


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types, all the way down (nan equals nan)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def tomllib_outcome(text: str) -> tuple[bool, Any]:
    try:
        return True, tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):  # ValueError: over 4,300 digits
        return False, None


def differences_from_tomllib(text: str) -> list[str]:
    """Where the reader (``loads`` and its fast path) departs from ``tomllib`` on ``text``:
    accepted / refused, values type for type, the error's line; empty when they agree."""
    ok, expected = tomllib_outcome(text)
    problems: list[str] = []
    fast = loads_fast(text)
    if fast is not None and not (ok and same(fast, expected)):  # answers only where tomllib accepts
        problems.append("the fast path read what tomllib refuses, or other values")
    try:
        got = loads(text)
    except TomlError as exc:
        if ok:
            problems.append(f"refused what tomllib accepts: {exc}")
        if not 1 <= exc.line <= text.count("\n") + 1:
            problems.append(f"error line {exc.line} outside the text")
        return problems
    if not ok:
        problems.append("accepted what tomllib refuses")
    elif not same(got, expected):
        problems.append("values differ from tomllib's")
    return problems


# -- generated files: the PHH shape and its near misses ---------------------------------------

KEYS = st.sampled_from(["variant", "antes", "actions", "a", "_seats", "1", "a-b", "a.b", '"q"', "a b", "", "x"])
EQUALS = st.sampled_from([" = ", "=", "\t=\t", "  =", " == ", " : "])
CHARS = st.sampled_from(list('abc dh p1 Ac?#"\\\t\x00\x1f\x7f\u00e9\u0663\u2028\n\'[]{},=') + ["\\n", "\\u00e9"])
STRING = st.lists(CHARS, max_size=12).map(lambda cs: '"' + "".join(cs) + '"')
NUMBER = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.sampled_from(["0", "00", "007", "+1", "-0", "1_000", "1__0", "_1", "1_", "0x1F", "0o7", "0b1", "1.5",
                     "1e3", "inf", "+inf", "-inf", "nan", "infinity", "true", "false", "True", "1979-05-27",
                     "9" * 18, "9" * 19, "1" + "0" * 18, "9" * 4301]),
)
GAP = st.lists(st.sampled_from([" ", "\t", "\n", "# note\n", "#x", "\r\n"]), max_size=3).map("".join)


@st.composite
def arrays(draw: st.DrawFn, depth: int = 0) -> str:
    items = [draw(st.one_of(STRING, NUMBER) if depth >= 2 else st.one_of(STRING, NUMBER, arrays(depth + 1)))
             for _ in range(draw(st.integers(0, 4)))]
    seps = [draw(st.sampled_from([",", ", ", " ,", ",,", ""])) for _ in items]
    body = "".join(draw(GAP) + item + draw(GAP) + sep for item, sep in zip(items, seps, strict=True))
    return "[" + body + draw(GAP) + "]"


VALUE = st.one_of(STRING, NUMBER, arrays(), st.sampled_from(["{a = 1}", "'lit'", '"""x"""', "", "[", "null"]))
ENDING = st.sampled_from(["\n", "\n", "\r\n", "\r", "", " # c\n", "\n\n"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(st.sampled_from(["# comment", "", "   ", "[table]", "\t# x"])) + draw(ENDING))
        else:
            lines.append(draw(st.sampled_from(["", " ", "\t"])) + draw(KEYS) + draw(EQUALS) + draw(VALUE) + draw(ENDING))
    return "".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
@example('variant = "F7S"\nantes = [1, 1]\nstarting_stacks = [inf, 5]\nx = true\n')
@example('a = [\n  "x", # c\n  2,\n]\n')
@example("a = 1\na = 2\n")
@example('a = "\\u00e9"\n')
@example("a = 1\r\n")
@example("a = [1, [2]]\n")
@example('a = [ "[", "]" ,\n "",\t"p1 cc",]\n')  # strings alone: split at the quotes
@example('a = ["x", true, "y"]\nb = ["x" "y"]\n')  # a scalar among them; no comma
@example("a = " + "9" * 4301 + "\n")
@example("a = " + "[" * 3000 + "]" * 3000 + "\n")
def test_generated_files_read_as_tomllib_reads_them(text: str) -> None:
    assert differences_from_tomllib(text) == [], text


# -- mutated real hands -----------------------------------------------------------------------


@pytest.mark.skipif(not RECORDS, reason="no PHH records found")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(min_value=0, max_value=10**6))
def test_mutated_real_hands_read_as_tomllib_reads_them(rnd: random.Random, k: int) -> None:
    data = mutate(RECORDS[k % len(RECORDS)], rnd)
    text = data.decode("utf-8", "replace")
    assert differences_from_tomllib(text) == [], text


def test_every_real_hand_takes_the_fast_path() -> None:
    """The point of the fast reader: real records never need ``tomllib``."""
    if not RECORDS:
        pytest.skip("no PHH records found")
    for text in RECORDS:
        fast = loads_fast(text)
        assert fast is not None and same(fast, tomllib.loads(text))
