"""Compare through AppTest, against hand-computed figures from the built-in published data."""
import pytest
from streamlit.testing.v1 import AppTest

from opx import store

from opx.store import queries
from tests.app.address import shown_address
from tests.conftest import ROOT


@pytest.fixture
def app(seed_db, monkeypatch):
    monkeypatch.setenv("OPX_DB", str(seed_db))

    def run(**params):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page("app_pages/compare.py")
        for k, v in params.items():
            at.query_params[k] = v
        return at.run()
    return run


def metric_values(at):
    return [m.value for m in at.metric]


def test_default_compare_is_the_seed_case(app):
    at = app()
    assert not at.exception
    assert metric_values(at)[:2] == ["58×", "2.7×"]
    assert len(at.get("vega_lite_chart")) == 2


def test_gb200_against_gb300_by_hand(app):
    at = app(a="gb200-nvl72", b="gb300-nvl72", model="deepseek-r1", workload="1k1k", pct="p50",
             target="50")
    assert not at.exception
    at_target, at_peak = metric_values(at)[:2]
    assert at_target == "no multiple"                           # GB300's only 1k1k point: 14.9
    assert "GB300 NVL72 cannot reach 50" in " ".join(c.value for c in at.caption)
    assert at_peak == f"{15003 / 18321:.3g}×"                    # peaks 15,003 vs 18,321
    assert "only GB200 NVL72 reaches" in " ".join(m.value for m in at.markdown)


def test_cost_metric_with_an_edited_price_by_hand(app):
    at = app(y="usd_per_mtok", price="gb300-nvl72:2")
    assert not at.exception
    rubin = 3.71 / (1.7e6 * 3600 / 1e6)                          # catalog price, assumed
    gb300 = 2.0 / (29310 * 3600 / 1e6)                           # price set in the link
    assert metric_values(at)[0] == f"{gb300 / rubin:.3g}× cheaper"    # A/B below 1: A cheaper
    assert at.number_input(key="price_gb300-nvl72").value == 2.0
    assert any("set in this view" in c.value.replace("\\", "") for c in list(at.caption) + list(at.markdown))


def test_two_runs_of_one_hardware(app, seed_db):
    with store.reading(seed_db) as con:
        runs = queries.runs_overview(con)
    gb200 = runs[(runs.hardware == "gb200-nvl72") & (runs.workload == "1k1k")]
    frontier = gb200[gb200.points == 4].id.iloc[0]
    disagg = gb200[gb200.label.str.contains("disagg")].id.iloc[0]
    at = app(ra=frontier, rb=disagg, model="deepseek-r1", workload="1k1k", pct="p50", target="17.8")
    assert not at.exception
    # the frontier run has no point at 17.8 (its lowest is 43.3): its slowest point meets it, an
    # at-least figure, and the caption says so
    assert metric_values(at)[0].endswith("×")
    assert any(c.value.startswith("≥ ") for c in at.caption)
    at = app(ra=disagg, rb=frontier, model="deepseek-r1", workload="1k1k", pct="p50", target="50")
    assert metric_values(at)[0] == "no multiple"
    assert "cannot reach 50" in " ".join(c.value for c in at.caption)


def test_two_measured_runs_at_the_mean(app, seed_db):
    """The built-in measurements state the mean TPOT only: two of their runs compare at the
    mean (its interactivity is 1 / the mean TPOT), with no exception."""
    with store.reading(seed_db) as con:
        runs = queries.runs_overview(con)
    mine = runs[(runs.model == "deepseek-r1") & (runs.workload == "1k1k")]
    a = mine[mine.hardware == "b200"].id.iloc[0]
    b = mine[mine.hardware == "h200"].id.iloc[0]
    at = app(ra=a, rb=b, model="deepseek-r1", workload="1k1k", pct="mean", target="30")
    assert not at.exception
    assert not at.warning
    assert (shown_address(at)["ra"], shown_address(at)["rb"]) == ([a], [b])


def test_a_run_gone_from_the_link_is_said_once_and_dropped(app, seed_db):
    with store.reading(seed_db) as con:
        runs = queries.runs_overview(con)
    a = runs[runs.hardware == "gb200-nvl72"].id.iloc[0]
    at = app(ra=a, rb="ffffffffffffffff", pct="p90")
    assert not at.exception
    assert any("no longer exists" in w.value for w in at.warning)
    assert "ra" not in shown_address(at) and "rb" not in shown_address(at)
    at.number_input(key="target").set_value(200.0).run()
    assert not at.exception and not any("no longer exists" in w.value for w in at.warning)
