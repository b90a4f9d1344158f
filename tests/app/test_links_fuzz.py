"""Links are data: generated query strings, valid and not, never raise on any page.

CI runs thousands of examples (OPX_FUZZ_EXAMPLES: 250 on each of six pages when CI=true, 1,500 in all; 40 locally)."""
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from models.pages import PAGES as REGISTRY
from models.view import QUERY_FIELDS
from tests.conftest import ROOT

EXAMPLES = int(os.environ.get("OPX_FUZZ_EXAMPLES",
                              "250" if os.environ.get("CI", "").lower() == "true" else "40"))
PAGES = [None if p.path == "/" else p.script for p in REGISTRY]

plausible = st.sampled_from([
    "vr-nvl72", "gb300", "GB300 NVL72", "h200", "p50", "p90", "p99", "p95", "total", "output",
    "input", "power", "387", "0", "-1", "1e309", "nan", "inf", "0.1", "100000", "1", "true",
    "none", "log", "linear", "measured", "deepseek-r1", "agentx", "1k1k", "../../etc/passwd",
    "<script>alert(1)</script>", "**bold**", "' OR 1=1 --", "\u202e", "%00", "a" * 300, ""])
values = st.lists(st.one_of(plausible, st.text(max_size=20)), min_size=1, max_size=4)
keys = st.one_of(st.sampled_from(QUERY_FIELDS), st.text(min_size=1, max_size=10))
queries = st.dictionaries(keys, values, max_size=8)


@pytest.fixture(scope="module")
def db_env(seed_db):
    old = os.environ.get("OPX_DB")
    os.environ["OPX_DB"] = str(seed_db)
    yield
    if old is None:
        os.environ.pop("OPX_DB", None)
    else:
        os.environ["OPX_DB"] = old


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in REGISTRY])
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(query=queries)
def test_any_link_opens_without_an_exception(db_env, page, query):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if page:
        at.switch_page(page)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, (query, [e.value for e in at.exception])
