"""`opx.ingest.base.json_loads` (orjson where it reads a text exactly as json does, json
elsewhere) must give json.loads's values, types and errors for every text."""
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opx.ingest.base import FormatError, json_loads, loads_lenient


def _same(a, b) -> bool:
    """Equal values of equal types all the way down (1 != 1.0 != True here; NaN equals NaN)."""
    if a.__class__ is not b.__class__:
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(2 ** 80), max_value=2 ** 80) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES, st.booleans())
def test_json_loads_reads_every_json_text_as_json_does(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _same(json_loads(text), json.loads(text))


@pytest.mark.parametrize("text", [
    "123456789012345678901234567890",        # beyond 64 bits: orjson would give a float
    "-123456789012345678901234567890", "18446744073709551615", "18446744073709551616",
    "-9300000000000000000", "-9223372036854775809", "-9223372036854775808", "9223372036854775808",
    '{"max_num_seqs": -9999999999999999999}',
    "[0.00012345678901234567]", "1e400", "-1e400", "NaN", "[Infinity, -Infinity]",
    '"\\ud800"', '{"a": 1, "a": 2}', "  [1, 2]\n", "-0.0", "5e-324", "1.7976931348623157e308",
    '{"k": "\u00e9\u4e2d"}', "\ufeff{}",
])
def test_json_loads_edge_cases(text):
    try:
        expected = json.loads(text)
    except ValueError as exc:
        with pytest.raises(type(exc)):
            json_loads(text)
        return
    assert _same(json_loads(text), expected)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE-+ truefalsn\\u', max_size=40))
def test_json_loads_refuses_what_json_refuses(text):
    try:
        expected = json.loads(text)
    except (ValueError, RecursionError) as exc:
        with pytest.raises(type(exc)) as raised:
            json_loads(text)
        assert str(raised.value) == str(exc)       # json's message, with its line and column
        return
    assert _same(json_loads(text), expected)


def test_a_broken_file_is_named_by_line():
    with pytest.raises(FormatError) as exc:
        loads_lenient('{\n"a": 1,\n}')
    assert exc.value.where == "line 3"
