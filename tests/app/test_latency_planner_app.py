"""Latency and Planner pages through AppTest, with figures checked by hand."""
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


@pytest.fixture
def run_page(seed_db, monkeypatch):
    monkeypatch.setenv("OPX_DB", str(seed_db))

    def run(page, **params):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page(page)
        for k, v in params.items():
            at.query_params[k] = v
        return at.run()
    return run


def test_latency_shows_the_mooncake_pair(run_page):
    at = run_page("app_pages/latency.py", pct="p50", conc="4800")
    assert not at.exception
    kv = next(d.value for d in at.dataframe if "KV-cache pool" in d.value.columns)
    assert sorted(float(v) for v in kv["TTFT P50 (s)"]) == pytest.approx([4.2, 29.8])
    assert any("+68%" in c.value for c in at.caption)
    assert len(at.get("vega_lite_chart")) == 1


def test_latency_defaults_and_bad_links(run_page):
    at = run_page("app_pages/latency.py")
    assert not at.exception
    at = run_page("app_pages/latency.py", conc="-4", run="zz")
    assert not at.exception
    assert len(at.warning) == 2


def test_planner_page_by_hand(run_page, app_db, catalog):
    import math
    from models import ViewState
    from opx.answers.explorer import explore
    at = run_page("app_pages/planner.py", model="deepseek-r1", workload="1k1k",
                  hw=["gb200-nvl72", "gb300-nvl72"], pct="p50", target="40", sessions="10000")
    assert not at.exception
    table = at.dataframe[0].value.set_index("Hardware")
    gb200 = table.loc["GB200 NVL72"]
    # sized with exactly the Explorer's figure at the target, in whole deployments of the
    # configuration behind it: sessions x the interactivity it sits at / output tok/s per deployment
    view = explore(app_db, ViewState(model="deepseek-r1", workload="1k1k",
                                     hw=("gb200-nvl72", "gb300-nvl72"), pct="p50", target=40),
                   catalog)
    a = next(s.answer for s in view.summaries if s.hardware == "gb200-nvl72")
    deployed = max(a.configs, key=lambda c: c.x)
    w = catalog.workloads["1k1k"]
    out = a.tput * w.osl / (w.isl + w.osl)
    gpus = math.ceil(10_000 * a.x / (out * deployed.gpus_total)) * deployed.gpus_total
    assert gb200["GPUs"] == f"{gpus:,}"
    assert gb200["At target (tok/s/GPU)"] == a.cell(__import__("opx.curves.metrics", fromlist=["y_metric"]).y_metric("total"))
    assert gb200["$/hour"] == f"${gpus * 2.21:,.0f}"
    assert list(table.columns[1:5]) == ["GPUs", "Racks", "MW", "$/hour"]
    assert "None" not in table.to_string()
    assert any("sized with its figure at the target" in c.value for c in at.caption)
    assert any("Excluded" in c.value and "GB300" in c.value for c in at.caption)
    labels = [b.label for b in at.get("download_button")]
    assert "CSV data" in labels and "JSON summary" in labels


def test_explorer_marks_an_operating_point(run_page):
    import json
    at = run_page("app_pages/explorer.py", model="deepseek-r1", workload="1k1k",
                  hw="gb200-nvl72", pct="p50", conc="2253")
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert "c=2,253" in json.dumps(spec) or any(
        "op_label" in json.dumps(layer) for layer in spec["layer"])


def test_latency_picks_go_with_a_change_of_model_without_a_notice(run_page, seed_db, catalog):
    """Runs picked on Latency belong to its view: a change of model, here or on another page,
    drops them in that one change, silently and from the address; a link's run that is not of
    its view is said once on arrival."""
    from models import ViewState
    from opx.answers import latency
    from tests.app.address import shown_address

    def said(at):
        return [w.value for w in list(at.warning) + list(at.info) if "in the link" in w.value]
    link = dict(model="gpt-oss-120b", workload="1k8k", hw=["h100", "h200"], pct="mean",
                target="20")
    at = run_page("app_pages/latency.py", **link)
    assert not at.exception
    state = ViewState(**{**link, "hw": tuple(link["hw"]), "target": 20.0})
    picked = latency.latency(seed_db, state, catalog).runs.run_id.iloc[0]
    at.multiselect(key="run").set_value([picked]).run()
    assert not at.exception and shown_address(at)["run"] == [picked]
    at.selectbox(key="model").set_value("llama-3.1-70b").run()
    assert not at.exception and not said(at)
    assert "run" not in shown_address(at) and not at.session_state["run"]
    # the same after a change made on another page, back by the sidebar
    at = run_page("app_pages/latency.py", **link)
    at.multiselect(key="run").set_value([picked]).run()
    at.switch_page("app_pages/explorer.py")
    for key in list(at.query_params):
        del at.query_params[key]
    at.run()
    at.selectbox(key="model").set_value("llama-3.1-70b").run()
    at.switch_page("app_pages/latency.py")
    for key in list(at.query_params):
        del at.query_params[key]
    at.run()
    assert not at.exception and not said(at) and "run" not in shown_address(at)
    # a link that names a run of another view says so
    at = run_page("app_pages/latency.py", **link, run="0123456789abcdef")
    assert said(at) and "run" not in shown_address(at)
