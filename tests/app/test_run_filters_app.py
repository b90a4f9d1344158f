"""The run filters in the app: set on one page, they hold on every page that draws runs, narrow
what is drawn, and are in the address; the mean statistic draws the InferenceX measurements."""
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_journeys_app import PAGES, go
from tests.conftest import ROOT

SLICE = {"model": "deepseek-r1", "workload": "1k1k", "hw": ["b200", "h200"], "pct": "mean",
         "target": "50"}


@pytest.fixture
def at(seed_db, monkeypatch):
    monkeypatch.setenv("OPX_DB", str(seed_db))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(SLICE)
    return at


def test_mean_interactivity_draws_the_measurements(at):
    at.run()
    assert not at.exception and not at.warning
    assert [m.value for m in at.metric][:2] == ["0.165×", "0.304×"]     # H200 / B200, derived


def test_a_filter_set_on_the_explorer_holds_on_every_page(at):
    at.run()
    at.multiselect(key="framework").set_value(["sglang"]).run()
    at.multiselect(key="gpus").set_value([8]).run()
    assert not at.exception
    narrowed = [m.value for m in at.metric][:2]
    assert narrowed != ["0.165×", "0.304×"]
    assert any("Only runs with framework sglang; 8 GPUs per deployment" in c.value
               for c in at.caption) or any("framework sglang" in m.value for m in at.markdown)
    for page in PAGES:
        go(at, page)
        assert not at.exception, page
        assert at.session_state["_opx_query"]["framework"] == ["sglang"], page
        assert at.session_state["_opx_query"]["gpus"] == ["8"], page
        if not page.endswith(("simulate.py", "data.py")):
            assert at.multiselect(key="framework").value == ["sglang"], page
    go(at, "app_pages/explorer.py")
    assert [m.value for m in at.metric][:2] == narrowed


def test_filter_values_no_stored_run_has_stay_pickable(at):
    at.query_params.update({"framework": "no-such-engine", "mode": "disagg", "mtp": "on",
                            "since": "2026-01-01", "until": "2026-06-30"})
    at.run()
    assert not at.exception and not at.warning
    assert at.multiselect(key="framework").value == ["no-such-engine"]
    assert at.session_state["mode"] == "disagg" and at.session_state["mtp"] == "on"


@pytest.mark.parametrize("query, words", [
    ({"gpus": "0"}, "GPUs per deployment `0`"), ({"since": "2026-02-30"}, "Measured from"),
    ({"mode": "both"}, "serving mode `both`"), ({"framework": "<b>x</b>"}, "framework="),
    ({"since": "2026-05-01", "until": "2026-01-01"}, "ends before it starts")])
def test_bad_filter_values_are_dropped_with_a_notice(at, query, words):
    at.query_params.update(query)
    at.run()
    assert not at.exception
    assert any(words in w.value.replace("\\", "") for w in at.warning), [w.value for w in at.warning]


def test_the_filter_lists_offer_what_the_slice_has(at, seed_db):
    """The framework, precision and GPU lists are those of the runs of the model, workload and
    hardware shown, not of every stored run."""
    import duckdb
    at.run()
    with duckdb.connect(str(seed_db), read_only=True) as con:
        def values(expr, where=""):
            return sorted(r[0] for r in con.execute(
                f"SELECT DISTINCT {expr} FROM runs WHERE {expr} IS NOT NULL {where}").fetchall())
        mine = ("AND model = 'deepseek-r1' AND workload = '1k1k' "
                "AND hardware IN ('b200', 'h200')")
        for key, expr in (("framework", "lower(framework)"), ("precision", "lower(precision)")):
            offered = sorted(at.multiselect(key=key).options)
            assert offered == [str(v) for v in values(expr, mine)], key
            assert len(values(expr)) > len(offered), key      # the whole store has more
