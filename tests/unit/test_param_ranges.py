"""Every number a link can carry is accepted over exactly its widget's range (issue #15, class 6).

Each range is stated once, in the model field's metadata (`models.view.param(..., low, high)`,
`models.view.ranged`), and read from there by the parser, the model's validation and the widgets
(`widget_range`). The oracle here is that range: a value inside it is kept as is, anything else (just
outside, inf, nan, 1e400, negative, not a number) is dropped with a notice naming it, and nothing
raises. Fast: `from_query` only, no Streamlit (the pages' own links are in tests/app/test_links_fuzz.py).
"""
import ast
import math
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from models import simulate_view
from models.simulate_view import SimulateState
from models.view import QUERY_FIELDS, ViewState, field_meta, widget_range
from tests.conftest import ROOT

HW = "gb300-nvl72"
VIEW_NUMBERS = tuple(n for n in QUERY_FIELDS if field_meta(n)["kind"] == "number")
VIEW_OVERRIDES = tuple(n for n in QUERY_FIELDS if field_meta(n)["kind"] == "override")
# lists of numbers, each in the field's range (`gpus=4&gpus=8`, `at=20,50`)
VIEW_LISTS = tuple(n for n in QUERY_FIELDS if field_meta(n)["kind"] in ("whole_list",
                                                                       "number_list"))
SIM_NUMBERS = simulate_view.NUMBER_FIELDS

# (model, field, how a link spells a value, the field's range)
CASES = ([(ViewState, n, str, widget_range(n)) for n in VIEW_NUMBERS]
         + [(ViewState, n, lambda v: f"{HW}:{v}", widget_range(n)) for n in VIEW_OVERRIDES]
         + [(ViewState, n, str, widget_range(n)) for n in VIEW_LISTS]
         + [(SimulateState, n, str, simulate_view.widget_range(n)) for n in SIM_NUMBERS])
IDS = [f"{m.__name__}.{n}" for m, n, _, _ in CASES]

# The ranges the pages' widgets show (issue #15); the model is the one place they are stated.
EXPECTED = {
    "target": (0.1, 100_000), "price": (0.01, 1000), "power": (1, 100_000),
    "conc": (1, 10_000_000), "ttft": (0.01, 3600), "sessions": (1, 1e9), "tps": (1, 1e12),
    "gpus": (1, 100_000), "at": (0.1, 100_000),
    "sim.gpus": (0, 100_000), "sim.mtp": (0, 4), "sim.accept": (0, 0.99), "sim.hit": (0, 0.99),
    "sim.fp4": (0.1, 1000), "sim.hbm": (0.1, 1000), "sim.target": (0.1, 100_000),
}


def is_whole(model, name):
    return (model.model_fields[name].annotation is int
            or model is ViewState and name in VIEW_LISTS and field_meta(name)["kind"] == "whole_list")


def around(low, high, whole):
    """Values around a range: its ends, just inside, just outside, far outside, non-numbers."""
    if whole:
        inside = [low, high, (low + high) // 2, low + 1, high - 1]
        outside = [low - 1, high + 1, low + 0.5, -1]
    else:
        inside = [low, high, (low + high) / 2, math.nextafter(low, math.inf),
                  math.nextafter(high, -math.inf)]
        outside = [math.nextafter(low, -math.inf), math.nextafter(high, math.inf), low / 2 - 1,
                   high * 10, -low - 1]
    texts = [repr(v) if isinstance(v, float) else str(v) for v in inside + outside]
    return (list(zip(texts[:len(inside)], [True] * len(inside)))
            + list(zip(texts[len(inside):], [False] * len(outside)))
            + [(t, False) for t in ("inf", "-inf", "nan", "1e400", "-1e400", "-0.5", "abc", "",
                                    "1,5", "0x10")])


def parse(model, name, spelled):
    return model.from_query({name: [spelled]})


def parsed_value(model, name, state):
    value = getattr(state, name)
    if model is ViewState and name in VIEW_OVERRIDES:
        return state.overrides(name).get(HW)
    if model is ViewState and name in VIEW_LISTS:
        return value[0] if value else None
    return value


def test_the_ranges_are_the_widgets():
    got = {n: widget_range(n) for n in VIEW_NUMBERS + VIEW_OVERRIDES + VIEW_LISTS}
    got |= {f"sim.{n}": simulate_view.widget_range(n) for n in SIM_NUMBERS}
    assert got == EXPECTED


def test_every_number_a_link_carries_has_a_range():
    """A new numeric field without a range fails here (and so cannot drift from its widget)."""
    for model, fields, ranged in ((ViewState, QUERY_FIELDS, VIEW_NUMBERS + VIEW_OVERRIDES
                                   + VIEW_LISTS),
                                  (SimulateState, simulate_view.SIM_FIELDS, SIM_NUMBERS)):
        for name in fields:
            annotation = model.model_fields[name].annotation
            types = set(get_args(annotation)) or {annotation}
            types |= {t for arg in get_args(annotation) for t in get_args(arg)}   # tuple[int, ...]
            if types & {int, float} or name in VIEW_OVERRIDES:
                assert name in ranged, f"{model.__name__}.{name} has no range"


@pytest.mark.parametrize("model, name, spell, bounds", CASES, ids=IDS)
def test_a_link_is_accepted_exactly_over_the_widget_range(model, name, spell, bounds):
    low, high = bounds
    whole = is_whole(model, name)
    default = parsed_value(model, name, model())
    for text, accepted in around(low, high, whole):
        if text == "1,5" and model is ViewState and field_meta(name)["kind"] == "number_list":
            continue                # two numbers in a comma list (tested in test_overview.py)
        raw = spell(text)
        state, notices = parse(model, name, raw)
        value = parsed_value(model, name, state)
        if accepted:
            assert notices == [], (raw, notices)
            assert value == float(text) and low <= value <= high, (raw, value)
        else:
            assert value == default, (raw, value)
            assert len(notices) == 1 and raw[:40] in notices[0], (raw, notices)


@pytest.mark.parametrize("model, name, spell, bounds", CASES, ids=IDS)
def test_the_model_refuses_what_the_link_refuses(model, name, spell, bounds):
    """The same range holds for a state built in code (from the widgets, a saved view)."""
    low, high = bounds
    outside = [math.nextafter(low, -math.inf), math.nextafter(high, math.inf), math.inf,
               math.nan]
    for v in outside:
        value = ((spell(repr(v)),) if name in VIEW_OVERRIDES
                 else (v,) if model is ViewState and name in VIEW_LISTS else v)
        with pytest.raises(ValidationError):
            model(**{name: value})
    model(**{name: (spell(repr(low)), spell(repr(high))) if name in VIEW_OVERRIDES
             else (low, high) if model is ViewState and name in VIEW_LISTS else low})


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                    st.integers(-10**6, 10**13).map(str),
                    st.sampled_from(["1e400", "-1e400", "nan", "+inf", "1_000", " 5 ", "0.", ".5"]),
                    st.text(max_size=12))


@settings(max_examples=300, deadline=None, database=None)
@given(case=st.sampled_from(CASES), text=numbers)
def test_any_number_is_kept_within_range_or_dropped_with_a_notice(case, text):
    model, name, spell, (low, high) = case
    raw = spell(text)
    state, notices = parse(model, name, raw)       # never raises
    value = parsed_value(model, name, state)
    if notices:
        assert value == parsed_value(model, name, model())
    else:
        assert value is not None and low <= value <= high and math.isfinite(value)
        if is_whole(model, name):
            assert float(value).is_integer()


def test_the_listed_links_are_dropped_with_a_notice():
    for query in ({"gpus": "inf"}, {"mtp": "inf"}, {"gpus": "1e400"}, {"accept": "0.995"}):
        state, notices = SimulateState.from_query(query)
        assert state == SimulateState() and len(notices) == 1, (query, notices)
    for query in ({"y": "usd_per_mtok", "price": f"{HW}:0.005"},
                  {"y": "j_per_token", "power": f"{HW}:0.5"}):
        state, notices = ViewState.from_query(query)
        assert state.price == state.power == () and len(notices) == 1, (query, notices)


# Widgets keyed by these names set these fields; the Simulate page's keys carry its prefix.
WIDGET_FILES = ["ui/widgets.py", *(f"app_pages/{p}.py" for p in
                                   ("explorer", "compare", "planner", "latency", "simulate"))]


def test_every_ranged_widget_reads_its_range_from_the_model():
    """Each number_input or slider that sets a ranged field passes `*widget_range(<field>)` as
    its min and max, never literals, so the widget and the link cannot drift apart."""
    seen = set()
    for rel in WIDGET_FILES:
        for call in ast.walk(ast.parse((ROOT / rel).read_text())):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr in ("number_input", "slider")):
                continue
            field = _field_of(call)
            if field is None:
                continue
            star = [a for a in call.args if isinstance(a, ast.Starred)]
            assert len(star) == 1 and len(call.args) == 2, f"{rel}:{call.lineno}"
            inner = star[0].value
            assert (isinstance(inner, ast.Call) and getattr(inner.func, "id", None) == "widget_range"
                    and ast.literal_eval(inner.args[0]) == field), f"{rel}:{call.lineno}"
            seen.add(field)
    assert seen == {"target", "price", "power", "conc", "ttft", "sessions", "tps", "gpus", "mtp",
                    "accept", "hit", "fp4", "hbm"}


def _field_of(call: ast.Call) -> str | None:
    """The field a widget sets, from its key (`"conc"`, `f"{PREFIX}gpus"`, `f"price_{hw}"`)."""
    key = next((k.value for k in call.keywords if k.arg == "key"), None)
    if isinstance(key, ast.Constant):
        name = key.value
    elif isinstance(key, ast.JoinedStr):
        name = "".join(v.value for v in key.values if isinstance(v, ast.Constant)).strip("_")
    else:
        return None
    ranged = set(VIEW_NUMBERS + VIEW_OVERRIDES + SIM_NUMBERS)
    return name if name in ranged else None
