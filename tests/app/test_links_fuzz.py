"""Links are data: generated query strings, valid and not, never raise on any page.

Every page parameter of every page is generated (`models.view.QUERY_FIELDS` and the Simulate
page's `SimulateState` fields), numbers around each widget's range among them (just inside, just
outside, inf, nan, 1e400, negative), with the widget ranges as the oracle: a number the page keeps
is within its range, and one outside it gives a notice naming it. The exact accepted range of each
parameter is checked quickly, without Streamlit, in tests/unit/test_param_ranges.py.

CI runs thousands of examples (OPX_FUZZ_EXAMPLES: 250 on each of six pages when CI=true, 1,500 in all; 40 locally)."""
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from models import simulate_view
from models.pages import PAGES as REGISTRY
from models.view import QUERY_FIELDS, field_meta, page_fields, widget_range
from tests.conftest import ROOT

EXAMPLES = int(os.environ.get("OPX_FUZZ_EXAMPLES",
                              "250" if os.environ.get("CI", "").lower() == "true" else "40"))
SIM = "sim_"      # the Simulate page's widget keys: its fields with this prefix

# Every ranged parameter: (page name, field, range, whole numbers only, spelled as <hw>:<number>)
RANGED = ([(None, n, widget_range(n), field_meta(n)["kind"] == "whole_list",
            field_meta(n)["kind"] == "override")
           for n in QUERY_FIELDS if field_meta(n)["kind"] in ("number", "override", "whole_list")]
          + [("simulate", n, simulate_view.widget_range(n),
              simulate_view.SimulateState.model_fields[n].annotation is int, False)
             for n in simulate_view.NUMBER_FIELDS])


def edge_values(low, high, whole, override):
    """Numbers just inside and just outside a range, and ones no range holds."""
    if whole:
        numbers = [str(low), str(high), str(low - 1), str(high + 1), f"{low}.5"]
    else:
        numbers = [repr(v) for v in (low, high, math.nextafter(low, -math.inf),
                                     math.nextafter(high, math.inf), high * 10)]
    numbers += ["inf", "-inf", "nan", "1e400", "-1", "0"]
    return [f"gb300-nvl72:{v}" for v in numbers] if override else numbers


plausible = st.sampled_from([
    "vr-nvl72", "gb300", "GB300 NVL72", "h200", "p50", "p90", "p99", "p95", "total", "output",
    "input", "power", "387", "0", "-1", "1e309", "nan", "inf", "0.1", "100000", "1", "true",
    "none", "log", "linear", "measured", "deepseek-r1", "agentx", "1k1k", "../../etc/passwd",
    "<script>alert(1)</script>", "**bold**", "' OR 1=1 --", "\u202e", "%00", "a" * 300, ""])
values = st.lists(st.one_of(plausible, st.text(max_size=20)), min_size=1, max_size=4)
keys = st.one_of(st.sampled_from(tuple(dict.fromkeys(QUERY_FIELDS + simulate_view.SIM_FIELDS))),
                 st.text(min_size=1, max_size=10))
ranged_items = st.sampled_from(RANGED).flatmap(lambda r: st.tuples(
    st.just(r[1]),
    st.lists(st.sampled_from(edge_values(*r[2], r[3], r[4])), min_size=1, max_size=2)))
queries = st.lists(st.one_of(st.tuples(keys, values), ranged_items), max_size=8).map(dict)


@pytest.fixture(scope="module")
def db_env(seed_db):
    old = os.environ.get("OPX_DB")
    os.environ["OPX_DB"] = str(seed_db)
    yield
    if old is None:
        os.environ.pop("OPX_DB", None)
    else:
        os.environ["OPX_DB"] = old


def in_range(text: str, low, high, whole: bool) -> bool:
    """The oracle: a finite number within the widget's range (whole for a whole-number widget)."""
    try:
        v = float(text)
    except (ValueError, OverflowError):
        return False
    return math.isfinite(v) and low <= v <= high and (not whole or v.is_integer())


def check_ranges(at, page_name: str, query: dict) -> None:
    """Each ranged parameter of the page: its widget holds a value within range (or none), and a
    link value outside the range was named in a notice."""
    if page_name == "data":          # the Data page shows no view and reads none of these
        return
    # as the page shows them: Markdown escapes and word joiners (ui/text.py) taken out
    notices = " ".join(w.value.replace("\\", "").replace("\u2060", "") for w in at.warning)
    for owner, name, (low, high), whole, override in RANGED:
        if (owner == "simulate") != (page_name == "simulate"):
            continue
        if owner is None and name not in page_fields(page_name):
            continue
        key = SIM + name if owner == "simulate" else name
        held = at.session_state[key] if key in at.session_state else None
        listed = override or owner is None and field_meta(name)["kind"] == "whole_list"
        items = held if listed else [] if held is None else [held]
        for item in items or ():
            number = str(item).rpartition(":")[2] if override else repr(float(item))
            assert in_range(number, low, high, whole), (name, held, query)
        raw = query.get(name) or []
        for text in raw if listed else raw[-1:]:
            number = text.rpartition(":")[2] if override else text
            if not in_range(number, low, high, whole) and "\\" not in text:
                assert text[:40] in notices, (name, text, notices)


def open_link(spec, query: dict):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if spec.path != "/":
        at.switch_page(spec.script)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("spec", REGISTRY, ids=[p.name for p in REGISTRY])
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(query=queries)
def test_any_link_opens_without_an_exception(db_env, spec, query):
    at = open_link(spec, query)
    assert not at.exception, (query, [e.value for e in at.exception])
    check_ranges(at, spec.name, query)


# Links that raised on the page (issue #15), each dropped with a notice; the page's widgets show
# the ranges the model states.
LINKS = [
    ("simulate", {"gpus": "inf"}), ("simulate", {"mtp": "inf"}), ("simulate", {"gpus": "1e400"}),
    ("simulate", {"accept": "0.995"}),
    ("compare", {"y": "usd_per_mtok", "price": "gb300-nvl72:0.005"}),
    ("compare", {"y": "j_per_token", "power": "gb300-nvl72:0.5"}),
    ("planner", {"ttft": "0.001", "sessions": "0.5", "tps": "1e400", "target": "100001"}),
    ("latency", {"conc": "0.5"}),
]


@pytest.mark.parametrize("page, query", LINKS, ids=["&".join(f"{k}={v}" for k, v in q.items())
                                                    for _, q in LINKS])
def test_links_outside_a_widget_range_are_dropped_with_a_notice(db_env, page, query):
    at = open_link(next(p for p in REGISTRY if p.name == page), query)
    assert not at.exception, [e.value for e in at.exception]
    assert at.warning
    check_ranges(at, page, {k: [v] for k, v in query.items()})
    ranges = {(SIM if owner else "") + name: bounds for owner, name, bounds, _, _ in RANGED}
    shown = 0
    for w in list(at.number_input) + list(at.slider):
        key = w.key.split("_")[0] if w.key.startswith(("price_", "power_")) else w.key
        if key in ranges:
            assert (w.min, w.max) == ranges[key], (w.key, w.min, w.max)
            shown += 1
    assert shown


@pytest.mark.parametrize("page", ["app_pages/explorer.py", "app_pages/compare.py",
                                  "app_pages/planner.py", "app_pages/latency.py",
                                  "app_pages/simulate.py", "app_pages/embed.py"])
def test_a_link_too_long_to_read_is_a_notice(app_db, page):
    """The address the browser's check reopens a too-long link at (models.view.TOO_LONG_PARAM)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(page)
    at.query_params["too_long"] = "5000x600"
    at.run()
    assert not at.exception
    assert any("This link was too long to read (5,000 values, 600 KiB)" in w.value.replace("\\", "")
               for w in at.warning), [w.value for w in at.warning]
